// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-lib-output.c: what barrierctl prints (lib/barrierctl-output.c): the
 * list table's exact layout, and the JSON of list, status, write-cache and
 * wait-event parsed back with json-c, including the largest counters and
 * the smaller record the D-Bus back end fills.
 */
#include <errno.h>
#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include <cmocka.h>

#include "barrierctl.h"

struct capture {
	FILE *f;
	char *buf;
	size_t len;
};

static void cap_open(struct capture *c)
{
	c->buf = NULL;
	c->len = 0;
	c->f = open_memstream(&c->buf, &c->len);
	assert_non_null(c->f);
}

static char *cap_close(struct capture *c)
{
	fclose(c->f);
	return c->buf;
}

static struct bctl_mapping full(const char *name, const char *backing)
{
	struct bctl_mapping m = { .have_dm = true, .full_status = true };

	snprintf(m.name, sizeof(m.name), "%s", name);
	snprintf(m.uuid, sizeof(m.uuid), "BARRIER-%s", name);
	snprintf(m.backing, sizeof(m.backing), "%s", backing);
	m.devnum = makedev(253, 0);
	m.backing_devnum = makedev(8, 0);
	m.event_nr = 3;
	m.table = (struct dmb_table){ .length = 2048, .backing = makedev(8, 0), .offset = 8,
				      .mode = DMB_MODE_DRAIN, .fallback = DMB_FALLBACK_DRAIN,
				      .hold_ms = 5000 };
	m.status = (struct dmb_status){ .mode = DMB_MODE_DRAIN, .cache_writeback = true,
					.barriers = 12, .flushes = 24, .flush_errors = 1,
					.fallbacks = 1, .held = 2, .cache_changes = UINT64_MAX };
	/* The two views differ here (hdparm -W0 sends no uevent): both must show. */
	m.drive_cache = 0;
	return m;
}

/* The "cache" object of a mapping's JSON: exactly {kernel, drive}. */
static struct json_object *cache_of(struct json_object *o)
{
	struct json_object *c;

	assert_true(json_object_object_get_ex(o, "cache", &c));
	assert_true(json_object_is_type(c, json_type_object));
	assert_int_equal(json_object_object_length(c), 2);
	return c;
}

static void test_list_table(void **state)
{
	struct bctl_mapping m[2] = { full("safe", "sda"), full("a-much-longer-name", "sdb") };
	struct capture c;
	char *out;

	m[1].status.barriers = 1234567;
	cap_open(&c);
	assert_int_equal(bctl_print_list(c.f, m, 2, false, true), 0);
	out = cap_close(&c);
	assert_string_equal(out,
			    "NAME               BACKING MODE  CACHE     BARRIERS FLUSHES ERRORS FALLBACKS\n"
			    "safe               sda     drain writeback       12      24      1         1\n"
			    "a-much-longer-name sdb     drain writeback  1234567      24      1         1\n");
	free(out);

	cap_open(&c);
	assert_int_equal(bctl_print_list(c.f, m, 1, false, false), 0);
	out = cap_close(&c);
	assert_string_equal(out, "safe sda drain writeback 12 24 1 1\n");
	free(out);

	/* Nothing to list: nothing printed (lsblk), but JSON is an empty list. */
	cap_open(&c);
	assert_int_equal(bctl_print_list(c.f, m, 0, false, true), 0);
	out = cap_close(&c);
	assert_string_equal(out, "");
	free(out);
}

static struct json_object *parse(const char *s)
{
	struct json_object *o = json_tokener_parse(s);

	if (!o)
		fail_msg("not JSON: %s", s);
	return o;
}

static const char *jstr(struct json_object *o, const char *k)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, k, &v))
		fail_msg("no key '%s'", k);
	return json_object_get_string(v);
}

static uint64_t ju64(struct json_object *o, const char *k)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, k, &v))
		fail_msg("no key '%s'", k);
	return json_object_get_uint64(v);
}

static bool has(struct json_object *o, const char *k)
{
	return json_object_object_get_ex(o, k, NULL);
}

static void test_list_json(void **state)
{
	struct bctl_mapping m[2] = { full("safe", "sda"), full("other", "sdb") };
	struct json_object *root, *arr, *e;
	struct capture c;
	char *out;

	cap_open(&c);
	assert_int_equal(bctl_print_list(c.f, m, 2, true, true), 0);
	out = cap_close(&c);
	root = parse(out);
	assert_true(json_object_object_get_ex(root, "mappings", &arr));
	assert_int_equal(json_object_array_length(arr), 2);
	e = json_object_array_get_idx(arr, 0);
	assert_string_equal(jstr(e, "name"), "safe");
	assert_string_equal(jstr(e, "uuid"), "BARRIER-safe");
	assert_string_equal(jstr(e, "backing"), "sda");
	assert_string_equal(jstr(e, "devnum"), "253:0");
	assert_string_equal(jstr(e, "backing_devnum"), "8:0");
	assert_string_equal(jstr(e, "mode"), "drain");
	assert_string_equal(jstr(e, "fallback"), "drain");
	assert_string_equal(jstr(cache_of(e), "kernel"), "write back");
	assert_string_equal(jstr(cache_of(e), "drive"), "off");
	assert_int_equal(ju64(e, "hold_on_flush_error"), 5000);
	assert_int_equal(ju64(e, "offset"), 8);
	assert_int_equal(ju64(e, "length"), 2048);
	assert_int_equal(ju64(e, "barriers"), 12);
	assert_int_equal(ju64(e, "held"), 2);
	assert_int_equal(ju64(e, "event_nr"), 3);
	assert_true(ju64(e, "cache_changes") == UINT64_MAX);
	assert_false(has(e, "pinned"));
	json_object_put(root);
	free(out);

	cap_open(&c);
	assert_int_equal(bctl_print_list(c.f, m, 0, true, true), 0);
	out = cap_close(&c);
	root = parse(out);
	assert_true(json_object_object_get_ex(root, "mappings", &arr));
	assert_int_equal(json_object_array_length(arr), 0);
	json_object_put(root);
	free(out);
}

static void test_status(void **state)
{
	struct bctl_mapping bus = { .have_daemon = true, .pinned = true, .state = "pinned" };
	struct bctl_mapping m = full("safe", "sda");
	struct json_object *root, *o, *arr;
	struct capture c;
	char *out;

	/* One named mapping: an object, not a list. */
	cap_open(&c);
	assert_int_equal(bctl_print_status(c.f, &m, 1, true, true), 0);
	out = cap_close(&c);
	o = parse(out);
	assert_string_equal(jstr(o, "name"), "safe");
	assert_int_equal(ju64(o, "flushes"), 24);
	json_object_put(o);
	free(out);

	/* The D-Bus record: what it has, nothing it has not. */
	snprintf(bus.name, sizeof(bus.name), "viabus");
	snprintf(bus.backing, sizeof(bus.backing), "/dev/sdb");
	bus.status.mode = DMB_MODE_NONE;
	bus.table.fallback = DMB_FALLBACK_DRAIN;
	bus.table.hold_ms = 10000;
	bus.status.held = 1;
	bus.status.flushes = 5;
	bus.drive_cache = 1;
	cap_open(&c);
	assert_int_equal(bctl_print_status(c.f, &bus, 1, true, false), 0);
	out = cap_close(&c);
	root = parse(out);
	assert_true(json_object_object_get_ex(root, "mappings", &arr));
	o = json_object_array_get_idx(arr, 0);
	assert_string_equal(jstr(o, "mode"), "none");
	assert_string_equal(jstr(cache_of(o), "kernel"), "write through");
	assert_string_equal(jstr(cache_of(o), "drive"), "on");
	assert_true(json_object_get_boolean(json_object_object_get(o, "pinned")));
	assert_int_equal(ju64(o, "flushes"), 5);
	assert_int_equal(ju64(o, "held"), 1);
	assert_int_equal(ju64(o, "hold_on_flush_error"), 10000);
	assert_string_equal(jstr(o, "fallback"), "drain");
	assert_string_equal(jstr(o, "state"), "pinned");
	assert_false(has(o, "uuid"));
	assert_false(has(o, "shared"));
	assert_false(has(o, "event_nr"));
	json_object_put(root);
	free(out);

	/* Human: every field of the full record appears. */
	cap_open(&c);
	assert_int_equal(bctl_print_status(c.f, &m, 1, false, true), 0);
	out = cap_close(&c);
	assert_non_null(strstr(out, "safe\n"));
	assert_non_null(strstr(out, "uuid: BARRIER-safe\n"));
	assert_non_null(strstr(out, "backing: sda (8:0), sectors 8-2055\n"));
	assert_non_null(strstr(out, "mode: drain\n"));
	assert_non_null(strstr(out, "hold: 5000 ms\n"));
	assert_non_null(strstr(out, "cache: writeback, nofua\n"));
	assert_non_null(strstr(out, "drive_cache: off\n"));
	assert_non_null(strstr(out, "cache_changes: 18446744073709551615\n"));
	assert_non_null(strstr(out, "event_nr: 3\n"));
	free(out);
}

/*
 * Issue 14 item 9: "cache" meant the drive's view with --bus and the
 * kernel's without.  Now a record from either back end with the same two
 * views prints the same "cache" object, and an unknown drive is null.
 */
static void test_cache_same_shape(void **state)
{
	struct bctl_mapping direct = full("safe", "sda");
	struct bctl_mapping bus = { .have_daemon = true, .drive_cache = 0 };
	struct json_object *a, *b;
	struct capture c;
	char *out1, *out2;

	snprintf(bus.name, sizeof(bus.name), "safe");
	snprintf(bus.backing, sizeof(bus.backing), "sda");
	bus.status.cache_writeback = true;
	cap_open(&c);
	assert_int_equal(bctl_print_status(c.f, &direct, 1, true, true), 0);
	out1 = cap_close(&c);
	cap_open(&c);
	assert_int_equal(bctl_print_status(c.f, &bus, 1, true, true), 0);
	out2 = cap_close(&c);
	a = parse(out1);
	b = parse(out2);
	assert_true(json_object_equal(cache_of(a), cache_of(b)));
	assert_string_equal(jstr(cache_of(b), "kernel"), "write back");
	assert_string_equal(jstr(cache_of(b), "drive"), "off");
	json_object_put(a);
	json_object_put(b);
	free(out1);
	free(out2);

	/* A drive that cannot be asked: null, not a guess from the kernel. */
	bus.drive_cache = -1;
	cap_open(&c);
	assert_int_equal(bctl_print_status(c.f, &bus, 1, true, true), 0);
	out1 = cap_close(&c);
	a = parse(out1);
	assert_true(has(cache_of(a), "drive"));
	assert_null(json_object_object_get(cache_of(a), "drive"));
	json_object_put(a);
	free(out1);

	/* write-cache --bus: barrierd's verdict and both views, write-cache's names. */
	bus.drive_cache = 0;
	cap_open(&c);
	assert_int_equal(bctl_print_bus_write_cache(c.f, "safe", &bus, true), 0);
	out1 = cap_close(&c);
	a = parse(out1);
	assert_string_equal(jstr(a, "write_cache"), "off");
	assert_string_equal(jstr(a, "kernel"), "write back");
	assert_string_equal(jstr(a, "drive"), "off");
	assert_string_equal(jstr(a, "device"), "sda");
	json_object_put(a);
	free(out1);
}

static void test_write_cache_and_event(void **state)
{
	struct dmb_write_cache wc = { .disk = makedev(8, 0), .name = "sda", .kernel = true,
				      .drive = 1 };
	struct json_object *o;
	struct capture c;
	char *out;

	cap_open(&c);
	assert_int_equal(bctl_print_write_cache(c.f, &wc, NULL, true), 0);
	out = cap_close(&c);
	o = parse(out);
	assert_string_equal(jstr(o, "device"), "sda");
	assert_string_equal(jstr(o, "devnum"), "8:0");
	assert_string_equal(jstr(o, "kernel"), "write back");
	assert_string_equal(jstr(o, "drive"), "on");
	assert_false(has(o, "drive_error"));
	json_object_put(o);
	free(out);

	wc.kernel = false;
	wc.drive = -ENOTTY;
	cap_open(&c);
	assert_int_equal(bctl_print_write_cache(c.f, &wc, "not an ATA disk", true), 0);
	out = cap_close(&c);
	o = parse(out);
	assert_string_equal(jstr(o, "kernel"), "write through");
	assert_null(jstr(o, "drive"));
	assert_string_equal(jstr(o, "drive_error"), "not an ATA disk");
	json_object_put(o);
	free(out);

	cap_open(&c);
	assert_int_equal(bctl_print_write_cache(c.f, &wc, "not an ATA disk", false), 0);
	out = cap_close(&c);
	assert_non_null(strstr(out, "drive: unknown: not an ATA disk\n"));
	free(out);

	cap_open(&c);
	assert_int_equal(bctl_print_event(c.f, "safe", UINT32_MAX, true), 0);
	out = cap_close(&c);
	o = parse(out);
	assert_string_equal(jstr(o, "name"), "safe");
	assert_true(ju64(o, "event_nr") == UINT32_MAX);
	json_object_put(o);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_list_table),
		cmocka_unit_test(test_list_json),
		cmocka_unit_test(test_status),
		cmocka_unit_test(test_cache_same_shape),
		cmocka_unit_test(test_write_cache_and_event),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
