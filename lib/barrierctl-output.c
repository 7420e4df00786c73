// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * barrierctl-output.c: what barrierctl prints, from plain records: tables
 * (list, like lsblk), key/value blocks (status, like systemctl status) and
 * the same data as JSON (json-c) for scripts.  Both back ends, libdmbarrier
 * and barrierd over D-Bus, print through here, so their output matches.
 */
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "barrierctl.h"
#include "macro.h"

static inline void json_object_putp(struct json_object **o)
{
	if (*o)
		json_object_put(*o);
}
#define _cleanup_json_ _cleanup_(json_object_putp)

static const char *cache_str(const struct bctl_mapping *m)
{
	return m->status.cache_writeback ? "writeback" : "writethrough";
}

static const char *drive_cache_str(int drive)
{
	return drive == 1 ? "on" : drive == 0 ? "off" : NULL;
}

static void devnum_str(dev_t d, char *buf, size_t size)
{
	snprintf(buf, size, "%u:%u", major(d), minor(d));
}

static void add_str(struct json_object *o, const char *k, const char *v)
{
	json_object_object_add(o, k, v ? json_object_new_string(v) : NULL);
}

static void add_u64(struct json_object *o, const char *k, uint64_t v)
{
	json_object_object_add(o, k, json_object_new_uint64(v));
}

static void add_bool(struct json_object *o, const char *k, bool v)
{
	json_object_object_add(o, k, json_object_new_boolean(v));
}

/*
 * The write cache's two views, named, the same from either back end:
 * "cache": { "kernel": "write back" | "write through" (queue/write_cache,
 * as the target reports it), "drive": "on" | "off" | null (ATA IDENTIFY;
 * null where the drive cannot be asked) }.  The words are write-cache's.
 */
static void add_cache(struct json_object *o, bool kernel, int drive)
{
	struct json_object *c = json_object_new_object();

	add_str(c, "kernel", kernel ? "write back" : "write through");
	add_str(c, "drive", drive_cache_str(drive));
	json_object_object_add(o, "cache", c);
}

/* One mapping as JSON: what every back end knows, then what only some do. */
static struct json_object *mapping_json(const struct bctl_mapping *m)
{
	struct json_object *o = json_object_new_object();
	char buf[32];

	if (!o)
		return NULL;
	add_str(o, "name", m->name);
	add_str(o, "backing", m->backing);
	add_str(o, "mode", dmb_mode_to_string(m->status.mode));
	add_str(o, "fallback", dmb_fallback_to_string(m->table.fallback));
	add_u64(o, "hold_on_flush_error", m->table.hold_ms);
	add_cache(o, m->status.cache_writeback, m->drive_cache);
	add_bool(o, "fua", m->status.fua);
	add_u64(o, "barriers", m->status.barriers);
	add_u64(o, "flushes", m->status.flushes);
	add_u64(o, "flush_errors", m->status.flush_errors);
	add_u64(o, "fallbacks", m->status.fallbacks);
	add_u64(o, "held", m->status.held);
	if (m->have_dm) {
		add_str(o, "uuid", m->uuid);
		devnum_str(m->devnum, buf, sizeof(buf));
		add_str(o, "devnum", buf);
		devnum_str(m->backing_devnum, buf, sizeof(buf));
		add_str(o, "backing_devnum", buf);
		add_u64(o, "offset", m->table.offset);
		add_u64(o, "length", m->table.length);
		add_u64(o, "event_nr", m->event_nr);
	}
	if (m->full_status) {
		add_u64(o, "fua_writes", m->status.fua_writes);
		add_u64(o, "max_drain_us", m->status.max_drain_us);
		add_u64(o, "shared", m->status.shared);
		add_u64(o, "no_cache", m->status.no_cache);
		add_u64(o, "refused", m->status.refused);
		add_u64(o, "replayed", m->status.replayed);
		add_u64(o, "cache_changes", m->status.cache_changes);
	}
	if (m->have_daemon) {
		add_bool(o, "pinned", m->pinned);
		add_str(o, "state", m->state);
	}
	return o;
}

static int json_print(FILE *f, struct json_object *o)
{
	const char *s = json_object_to_json_string_ext(
		o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE);

	if (!s)
		return -ENOMEM;
	fprintf(f, "%s\n", s);
	return 0;
}

static int mappings_json(FILE *f, const struct bctl_mapping *m, size_t n)
{
	_cleanup_json_ struct json_object *root = json_object_new_object();
	struct json_object *arr = json_object_new_array();

	if (!root || !arr) {
		json_object_put(arr);
		return -ENOMEM;
	}
	json_object_object_add(root, "mappings", arr);
	for (size_t i = 0; i < n; i++) {
		struct json_object *o = mapping_json(&m[i]);

		if (!o)
			return -ENOMEM;
		json_object_array_add(arr, o);
	}
	return json_print(f, root);
}

/* ------------------------------------------------------------ list */

#define LIST_COLS 8
static const char *const list_headers[LIST_COLS] = {
	"NAME", "BACKING", "MODE", "CACHE", "BARRIERS", "FLUSHES", "ERRORS", "FALLBACKS",
};

static void list_row(const struct bctl_mapping *m, char cells[LIST_COLS][DMB_NAME_MAX])
{
	snprintf(cells[0], DMB_NAME_MAX, "%s", m->name);
	snprintf(cells[1], DMB_NAME_MAX, "%s", m->backing);
	snprintf(cells[2], DMB_NAME_MAX, "%s", dmb_mode_to_string(m->status.mode));
	snprintf(cells[3], DMB_NAME_MAX, "%s", cache_str(m));
	snprintf(cells[4], DMB_NAME_MAX, "%llu", (unsigned long long)m->status.barriers);
	snprintf(cells[5], DMB_NAME_MAX, "%llu", (unsigned long long)m->status.flushes);
	snprintf(cells[6], DMB_NAME_MAX, "%llu", (unsigned long long)m->status.flush_errors);
	snprintf(cells[7], DMB_NAME_MAX, "%llu", (unsigned long long)m->status.fallbacks);
}

static void print_cells(FILE *f, const char *const *cells, const int *width)
{
	for (int c = 0; c < LIST_COLS; c++) {
		/* Text left, numbers right, no trailing blanks. */
		if (c < 4)
			fprintf(f, "%-*s", width[c], cells[c]);
		else
			fprintf(f, "%*s", width[c], cells[c]);
		fputs(c == LIST_COLS - 1 ? "\n" : " ", f);
	}
}

int bctl_print_list(FILE *f, const struct bctl_mapping *m, size_t n, bool json, bool legend)
{
	char cells[LIST_COLS][DMB_NAME_MAX];
	const char *row[LIST_COLS];
	int width[LIST_COLS];

	if (json)
		return mappings_json(f, m, n);
	if (n == 0)
		return 0;
	for (int c = 0; c < LIST_COLS; c++)
		width[c] = legend ? (int)strlen(list_headers[c]) : 0;
	for (size_t i = 0; i < n; i++) {
		list_row(&m[i], cells);
		for (int c = 0; c < LIST_COLS; c++)
			if ((int)strlen(cells[c]) > width[c])
				width[c] = (int)strlen(cells[c]);
	}
	if (legend)
		print_cells(f, list_headers, width);
	for (size_t i = 0; i < n; i++) {
		list_row(&m[i], cells);
		for (int c = 0; c < LIST_COLS; c++)
			row[c] = cells[c];
		print_cells(f, row, width);
	}
	return 0;
}

/* ---------------------------------------------------------- status */

_printf_(3, 4) static void kv(FILE *f, const char *key, const char *format, ...)
{
	va_list args;

	fprintf(f, "  %14s: ", key);
	va_start(args, format);
	vfprintf(f, format, args);
	va_end(args);
	fputc('\n', f);
}

static void status_block(FILE *f, const struct bctl_mapping *m)
{
	const struct dmb_status *s = &m->status;
	char d1[32], d2[32];

	fprintf(f, "%s\n", m->name);
	if (m->have_dm) {
		devnum_str(m->devnum, d1, sizeof(d1));
		devnum_str(m->backing_devnum, d2, sizeof(d2));
		kv(f, "uuid", "%s", *m->uuid ? m->uuid : "-");
		kv(f, "device", "/dev/mapper/%s (%s)", m->name, d1);
		kv(f, "backing", "%s (%s), sectors %llu-%llu", m->backing, d2,
		   (unsigned long long)m->table.offset,
		   (unsigned long long)(m->table.offset + m->table.length - 1));
	} else {
		kv(f, "backing", "%s", m->backing);
	}
	kv(f, "mode", "%s%s", dmb_mode_to_string(s->mode),
	   m->have_daemon && m->pinned ? " (pinned)" : "");
	if (m->have_daemon)
		kv(f, "state", "%s", m->state);
	kv(f, "fallback", "%s", dmb_fallback_to_string(m->table.fallback));
	kv(f, "hold", "%u ms", m->table.hold_ms);
	kv(f, "cache", "%s, %s", cache_str(m), s->fua ? "fua" : "nofua");
	kv(f, "drive_cache", "%s", m->drive_cache >= 0 ? drive_cache_str(m->drive_cache) : "unknown");
	kv(f, "barriers", "%llu", (unsigned long long)s->barriers);
	kv(f, "flushes", "%llu", (unsigned long long)s->flushes);
	if (m->full_status)
		kv(f, "fua_writes", "%llu", (unsigned long long)s->fua_writes);
	kv(f, "flush_errors", "%llu", (unsigned long long)s->flush_errors);
	kv(f, "fallbacks", "%llu", (unsigned long long)s->fallbacks);
	kv(f, "held", "%u", s->held);
	if (m->full_status) {
		kv(f, "max_drain", "%llu us", (unsigned long long)s->max_drain_us);
		kv(f, "shared", "%llu", (unsigned long long)s->shared);
		kv(f, "no_cache", "%llu", (unsigned long long)s->no_cache);
		kv(f, "refused", "%llu", (unsigned long long)s->refused);
		kv(f, "replayed", "%llu", (unsigned long long)s->replayed);
		kv(f, "cache_changes", "%llu", (unsigned long long)s->cache_changes);
	}
	if (m->have_dm)
		kv(f, "event_nr", "%u", m->event_nr);
}

int bctl_print_status(FILE *f, const struct bctl_mapping *m, size_t n, bool json, bool single)
{
	if (json && single) {
		_cleanup_json_ struct json_object *o = n ? mapping_json(&m[0]) : NULL;

		return o ? json_print(f, o) : -ENOMEM;
	}
	if (json)
		return mappings_json(f, m, n);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc('\n', f);
		status_block(f, &m[i]);
	}
	return 0;
}

/* ------------------------------------------------------ write cache */

int bctl_print_write_cache(FILE *f, const struct dmb_write_cache *wc, const char *drive_error,
			   bool json)
{
	const char *drive = wc->drive == 1 ? "on" : wc->drive == 0 ? "off" : NULL;
	char d[32];

	devnum_str(wc->disk, d, sizeof(d));
	if (json) {
		_cleanup_json_ struct json_object *o = json_object_new_object();

		if (!o)
			return -ENOMEM;
		add_str(o, "device", wc->name);
		add_str(o, "devnum", d);
		add_str(o, "kernel", wc->kernel ? "write back" : "write through");
		add_bool(o, "fua", wc->kernel_fua);
		add_str(o, "drive", drive);
		if (!drive)
			add_str(o, "drive_error", drive_error);
		return json_print(f, o);
	}
	fprintf(f, "%s (%s)\n", wc->name, d);
	kv(f, "kernel", "%s%s", wc->kernel ? "write back" : "write through",
	   wc->kernel_fua ? ", fua" : "");
	if (drive)
		kv(f, "drive", "%s", drive);
	else
		kv(f, "drive", "unknown: %s", drive_error);
	return 0;
}

int bctl_print_event(FILE *f, const char *name, uint32_t event_nr, bool json)
{
	if (json) {
		_cleanup_json_ struct json_object *o = json_object_new_object();

		if (!o)
			return -ENOMEM;
		add_str(o, "name", name);
		add_u64(o, "event_nr", event_nr);
		return json_print(f, o);
	}
	fprintf(f, "%s: event %u\n", name, event_nr);
	return 0;
}

int bctl_print_bus_write_cache(FILE *f, const char *mapping, const struct bctl_mapping *m,
			       bool json)
{
	/* barrierd's WriteCache: the drive's answer where there is one. */
	bool on = m->drive_cache >= 0 ? m->drive_cache > 0 : m->status.cache_writeback;
	const char *drive = drive_cache_str(m->drive_cache);

	if (json) {
		_cleanup_json_ struct json_object *o = json_object_new_object();

		if (!o)
			return -ENOMEM;
		add_str(o, "mapping", mapping);
		add_str(o, "device", m->backing);
		add_str(o, "write_cache", on ? "on" : "off");
		/* The same two views, with the same names, as write-cache without --bus. */
		add_str(o, "kernel", m->status.cache_writeback ? "write back" : "write through");
		add_str(o, "drive", drive);
		return json_print(f, o);
	}
	fprintf(f, "%s (under %s)\n", m->backing, mapping);
	kv(f, "write_cache", "%s", on ? "on" : "off");
	kv(f, "kernel", "%s", m->status.cache_writeback ? "write back" : "write through");
	kv(f, "drive", "%s", drive ? drive : "unknown");
	return 0;
}
