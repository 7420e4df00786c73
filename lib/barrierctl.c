// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * barrierctl.c: the barrierctl program: parse (barrierctl-args.c), then run
 * each command on libdmbarrier directly, or hand it to barrierd over D-Bus
 * with --bus (barrierctl-bus.c); print through barrierctl-output.c.  Errors
 * are one line on stderr and a documented exit code.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <syslog.h>

#include "barrierctl.h"
#include "macro.h"

#define BARRIERCTL_VERSION "1.0.0"

static inline void dmb_ctx_unrefp(struct dmb_ctx **c)
{
	dmb_ctx_unref(*c);
}

static void log_stderr(void *data, int priority, const char *file, int line, const char *fn,
		       const char *format, va_list args)
{
	fprintf(stderr, "barrierctl: %s: ", priority <= LOG_ERR ? "error" : fn);
	vfprintf(stderr, format, args);
	fputc('\n', stderr);
}

/* Report a library failure once, with the library's sentence. */
static int fail(struct dmb_ctx *ctx, int r)
{
	const char *msg = ctx ? dmb_ctx_get_error(ctx) : "";

	fprintf(stderr, "barrierctl: %s\n", *msg ? msg : strerror(-r));
	return bctl_exit_code(r);
}

static int mapping_fill(struct dmb_ctx *ctx, const char *name, struct bctl_mapping *m)
{
	struct dmb_mapping_info info;
	struct dmb_write_cache wc;
	dev_t disk;
	int r;

	*m = (struct bctl_mapping){};
	r = dmb_mapping_table(ctx, name, &m->table, &info);
	if (r < 0)
		return r;
	/* The status comes second: its mode and event number are the newest. */
	r = dmb_mapping_status(ctx, name, &m->status, &info);
	if (r < 0)
		return r;
	snprintf(m->name, sizeof(m->name), "%s", info.name);
	snprintf(m->uuid, sizeof(m->uuid), "%s", info.uuid);
	m->devnum = info.devnum;
	m->event_nr = info.event_nr;
	m->backing_devnum = m->table.backing;
	if (dmb_disk_name(ctx, m->table.backing, m->backing, sizeof(m->backing)) < 0)
		snprintf(m->backing, sizeof(m->backing), "%u:%u", major(m->table.backing),
			 minor(m->table.backing));
	m->have_dm = true;
	m->full_status = true;
	/* The drive's view too, so JSON has the same shape as barrierd's (--bus). */
	m->drive_cache = -1;
	if (dmb_disk_whole(ctx, m->table.backing, &disk) == 0 &&
	    dmb_disk_write_cache_get(ctx, disk, &wc) == 0 && wc.drive >= 0)
		m->drive_cache = wc.drive > 0;
	return 0;
}

static int cmd_show(struct dmb_ctx *ctx, const struct bctl_args *a)
{
	_cleanup_(freep) struct bctl_mapping *maps = NULL;
	char **names = NULL;
	size_t n = 0;
	int r;

	if (a->name) {
		maps = calloc(1, sizeof(*maps));
		if (!maps)
			return fail(NULL, -ENOMEM);
		r = mapping_fill(ctx, a->name, &maps[0]);
		if (r < 0)
			return fail(ctx, r);
		n = 1;
	} else {
		r = dmb_mapping_list(ctx, &names);
		if (r < 0)
			return fail(ctx, r);
		maps = calloc((size_t)r + 1, sizeof(*maps));
		if (!maps) {
			dmb_strv_free(names);
			return fail(NULL, -ENOMEM);
		}
		for (char **s = names; *s; s++) {
			r = mapping_fill(ctx, *s, &maps[n]);
			if (r == -ENOENT)
				continue; /* removed since the list was taken */
			if (r < 0) {
				dmb_strv_free(names);
				return fail(ctx, r);
			}
			n++;
		}
		dmb_strv_free(names);
	}
	if (a->verb == BCTL_LIST)
		r = bctl_print_list(stdout, maps, n, a->json, !a->no_legend);
	else
		r = bctl_print_status(stdout, maps, n, a->json, a->name != NULL);
	return r < 0 ? fail(NULL, r) : BCTL_EXIT_OK;
}

static int cmd_create(struct dmb_ctx *ctx, const struct bctl_args *a)
{
	struct dmb_spec spec;
	int r;

	dmb_spec_init(&spec);
	spec.device = a->device;
	if (a->have_mode)
		spec.mode = a->mode;
	if (a->have_fallback)
		spec.fallback = a->fallback;
	if (a->have_hold)
		spec.hold_ms = a->hold_ms;
	if (a->have_offset)
		spec.offset = a->offset;
	if (a->have_length)
		spec.length = a->length;
	r = dmb_mapping_create(ctx, a->name, &spec);
	return r < 0 ? fail(ctx, r) : BCTL_EXIT_OK;
}

/* What is not given keeps the mapping's current value. */
static int cmd_reload(struct dmb_ctx *ctx, const struct bctl_args *a)
{
	struct dmb_table cur;
	struct dmb_spec spec;
	char devnum[32];
	int r;

	r = dmb_mapping_table(ctx, a->name, &cur, NULL);
	if (r < 0)
		return fail(ctx, r);
	dmb_spec_init(&spec);
	snprintf(devnum, sizeof(devnum), "%u:%u", major(cur.backing), minor(cur.backing));
	spec.device = a->device ? a->device : devnum;
	/* Another device: from --offset (or 0) to its end unless told. */
	spec.offset = a->have_offset ? a->offset : a->device ? 0 : cur.offset;
	spec.length = a->have_length ? a->length : a->device || a->have_offset ? 0 : cur.length;
	spec.mode = a->have_mode ? a->mode : cur.mode;
	spec.fallback = a->have_fallback ? a->fallback : cur.fallback;
	spec.hold_ms = a->have_hold ? a->hold_ms : cur.hold_ms;
	r = dmb_mapping_reload(ctx, a->name, &spec);
	return r < 0 ? fail(ctx, r) : BCTL_EXIT_OK;
}

static const char *drive_error(int drive)
{
	switch (-drive) {
	case ENOTTY:
		return "not an ATA disk";
	case EOPNOTSUPP:
		return "the drive has no switchable write cache";
	default:
		return strerror(-drive);
	}
}

static int cmd_write_cache(struct dmb_ctx *ctx, const struct bctl_args *a)
{
	struct dmb_write_cache wc;
	dev_t dev;
	int r;

	r = dmb_disk_from_path(ctx, a->device, &dev);
	if (r < 0)
		return fail(ctx, r);
	if (a->write_cache == BCTL_WC_QUERY)
		r = dmb_disk_write_cache_get(ctx, dev, &wc);
	else
		r = dmb_disk_write_cache_set(ctx, dev, a->write_cache == BCTL_WC_ON, &wc);
	if (r < 0)
		return fail(ctx, r);
	r = bctl_print_write_cache(stdout, &wc, wc.drive < 0 ? drive_error(wc.drive) : NULL,
				   a->json);
	return r < 0 ? fail(NULL, r) : BCTL_EXIT_OK;
}

static int cmd_wait_event(struct dmb_ctx *ctx, const struct bctl_args *a)
{
	struct dmb_mapping_info info;
	struct dmb_table tab;
	uint32_t nr;
	int r;

	/* Only barrier mappings; and "now" is the counter it has now. */
	r = dmb_mapping_table(ctx, a->name, &tab, &info);
	if (r < 0)
		return fail(ctx, r);
	r = dmb_mapping_wait_event(ctx, a->name, a->have_event_nr ? a->event_nr : info.event_nr,
				   a->timeout_ms, &nr);
	if (r < 0)
		return fail(ctx, r);
	r = bctl_print_event(stdout, a->name, nr, a->json);
	return r < 0 ? fail(NULL, r) : BCTL_EXIT_OK;
}

static int run(struct dmb_ctx *ctx, const struct bctl_args *a)
{
	int r;

	switch (a->verb) {
	case BCTL_CREATE:
		return cmd_create(ctx, a);
	case BCTL_RELOAD:
		return cmd_reload(ctx, a);
	case BCTL_REMOVE:
		r = dmb_mapping_remove(ctx, a->name, DMB_REMOVE_RETRY);
		break;
	case BCTL_LIST:
	case BCTL_STATUS:
		return cmd_show(ctx, a);
	case BCTL_SET_MODE:
		r = dmb_mapping_set_mode(ctx, a->name, a->mode);
		break;
	case BCTL_BARRIER:
		r = dmb_mapping_barrier(ctx, a->name);
		break;
	case BCTL_RESET_STATS:
		r = dmb_mapping_reset_stats(ctx, a->name);
		break;
	case BCTL_WRITE_CACHE:
		return cmd_write_cache(ctx, a);
	case BCTL_WAIT_EVENT:
		return cmd_wait_event(ctx, a);
	default:
		fprintf(stderr, "barrierctl: internal error: command %d\n", (int)a->verb);
		return BCTL_EXIT_FAILURE;
	}
	return r < 0 ? fail(ctx, r) : BCTL_EXIT_OK;
}

/*
 * --version: the kernel's side too.  libkmod says whether dm_barrier is
 * loaded (anyone may ask); the target's version needs the dm control
 * device (root).  Never loads anything: the kernel does, on a table load.
 */
static void print_target(struct dmb_ctx *ctx)
{
	enum dmb_module_state st;
	unsigned int v[3];
	int r;

	r = dmb_module_state(ctx, &st);
	if (r < 0) {
		printf("dm-barrier: unknown (%s)\n", dmb_ctx_get_error(ctx));
		return;
	}
	if (st == DMB_MODULE_ABSENT) {
		printf("dm-barrier: not loaded (the kernel loads it with the first barrier table)\n");
		return;
	}
	r = dmb_target_version(ctx, v);
	if (r < 0) {
		printf("dm-barrier: %s, target version unknown (%s)\n",
		       dmb_module_state_to_string(st), dmb_ctx_get_error(ctx));
		return;
	}
	r = dmb_target_load(ctx);
	printf("dm-barrier: %s, target version %u.%u.%u%s%s\n", dmb_module_state_to_string(st),
	       v[0], v[1], v[2], r == -EPROTONOSUPPORT ? ": " : "",
	       r == -EPROTONOSUPPORT ? dmb_ctx_get_error(ctx) : "");
}

int main(int argc, char **argv)
{
	_cleanup_(dmb_ctx_unrefp) struct dmb_ctx *ctx = NULL;
	struct bctl_args a;
	char err[256];
	int r;

	r = bctl_parse_args(argc, argv, &a, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "barrierctl: %s\n", err);
		return BCTL_EXIT_USAGE;
	}
	if (a.verb == BCTL_HELP) {
		bctl_usage(stdout);
		return BCTL_EXIT_OK;
	}
	if (a.verb == BCTL_VERSION && a.bus) {
		printf("barrierctl %s\n", BARRIERCTL_VERSION);
		return BCTL_EXIT_OK;
	}
	if (a.bus)
		return bctl_bus_run(&a);

	r = dmb_ctx_new(&ctx);
	if (r < 0)
		return fail(NULL, r);
	if (a.verb == BCTL_VERSION) {
		printf("barrierctl %s\n", BARRIERCTL_VERSION);
		print_target(ctx);
		return BCTL_EXIT_OK;
	}
	/* Quiet by default: a failure is reported once, by fail(). */
	if (a.verbose) {
		dmb_ctx_set_log_fn(ctx, log_stderr, NULL);
		dmb_ctx_set_log_priority(ctx, a.verbose > 1 ? LOG_DEBUG : LOG_INFO);
	}
	return run(ctx, &a);
}
