// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-lib-ctx.c: the context (refcount, log function and priority,
 * $DMB_LOG, error messages) and the argument checks every call makes
 * before it touches device-mapper or a disk.  The host has no
 * device-mapper: a check that came too late would fail with "device-mapper
 * is not available" instead of the expected -EINVAL/-ENOTBLK, so these
 * tests also show that bad input is refused before anything is done.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include <cmocka.h>

#include "libdmbarrier.h"

struct logged {
	int count;
	int last_priority;
	char last[512];
};

static void log_capture(void *data, int priority, const char *file, int line, const char *fn,
			const char *format, va_list args)
{
	struct logged *l = data;

	l->count++;
	l->last_priority = priority;
	vsnprintf(l->last, sizeof(l->last), format, args);
}

static int setup(void **state)
{
	struct dmb_ctx *ctx;

	unsetenv("DMB_LOG");
	if (dmb_ctx_new(&ctx) < 0)
		return -1;
	*state = ctx;
	return 0;
}

static int teardown(void **state)
{
	dmb_ctx_unref(*state);
	return 0;
}

static void expect_error(struct dmb_ctx *ctx, int r, int want, const char *text)
{
	if (r != want)
		fail_msg("got %d (%s), want %d; message: %s", r, strerror(-r), want,
			 dmb_ctx_get_error(ctx));
	if (!strstr(dmb_ctx_get_error(ctx), text))
		fail_msg("message '%s' lacks '%s'", dmb_ctx_get_error(ctx), text);
}

static void test_refcount(void **state)
{
	struct dmb_ctx *ctx = *state;

	assert_ptr_equal(dmb_ctx_ref(ctx), ctx);
	assert_null(dmb_ctx_unref(ctx));
	assert_null(dmb_ctx_unref(NULL));
	assert_null(dmb_ctx_ref(NULL));
	assert_int_equal(dmb_ctx_new(NULL), -EINVAL);
	assert_string_equal(dmb_ctx_get_error(ctx), "");
}

static void test_log_priority(void **state)
{
	struct dmb_ctx *ctx = *state;
	struct logged l = {};
	dev_t dev;

	assert_int_equal(dmb_ctx_get_log_priority(ctx), LOG_ERR);
	dmb_ctx_set_log_fn(ctx, log_capture, &l);
	/* Failures are logged at debug: nothing reaches an LOG_ERR logger. */
	assert_int_equal(dmb_disk_from_path(ctx, "/nonexistent/disk", &dev), -ENOENT);
	assert_int_equal(l.count, 0);
	dmb_ctx_set_log_priority(ctx, LOG_DEBUG);
	assert_int_equal(dmb_ctx_get_log_priority(ctx), LOG_DEBUG);
	assert_int_equal(dmb_disk_from_path(ctx, "/nonexistent/disk", &dev), -ENOENT);
	assert_int_equal(l.count, 1);
	assert_int_equal(l.last_priority, LOG_DEBUG);
	assert_non_null(strstr(l.last, "/nonexistent/disk"));
	/* No log function: silent, and no crash. */
	dmb_ctx_set_log_fn(ctx, NULL, NULL);
	assert_int_equal(dmb_disk_from_path(ctx, "/nonexistent/disk", &dev), -ENOENT);
	assert_int_equal(l.count, 1);
}

static void test_env_priority(void **state)
{
	static const struct {
		const char *value;
		int prio;
	} cases[] = { { "debug", LOG_DEBUG }, { "info", LOG_INFO }, { "warning", LOG_WARNING },
		      { "err", LOG_ERR },     { "6", LOG_INFO },     { "0", LOG_EMERG },
		      { "8", LOG_ERR },	      { "-1", LOG_ERR },     { "bogus", LOG_ERR },
		      { "", LOG_ERR },	      { "7x", LOG_ERR } };

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct dmb_ctx *c;

		setenv("DMB_LOG", cases[i].value, 1);
		assert_int_equal(dmb_ctx_new(&c), 0);
		if (dmb_ctx_get_log_priority(c) != cases[i].prio)
			fail_msg("DMB_LOG=%s: priority %d, want %d", cases[i].value,
				 dmb_ctx_get_log_priority(c), cases[i].prio);
		dmb_ctx_unref(c);
	}
	unsetenv("DMB_LOG");
}

static void test_disk_paths(void **state)
{
	struct dmb_ctx *ctx = *state;
	dev_t dev = 77;

	expect_error(ctx, dmb_disk_from_path(ctx, "/nonexistent/disk", &dev), -ENOENT,
		     "/nonexistent/disk");
	expect_error(ctx, dmb_disk_from_path(ctx, "/dev/null", &dev), -ENOTBLK,
		     "/dev/null is not a block device");
	expect_error(ctx, dmb_disk_from_path(ctx, "", &dev), -EINVAL, "no device");
	expect_error(ctx, dmb_disk_from_path(ctx, NULL, &dev), -EINVAL, "no device");
	expect_error(ctx, dmb_disk_from_path(ctx, "4095:1048575", &dev), -ENOENT,
		     "no block device 4095:1048575");
	assert_int_equal(dev, 77);
}

static void test_create_checks(void **state)
{
	struct dmb_ctx *ctx = *state;
	struct dmb_spec spec;

	dmb_spec_init(&spec);
	assert_null(spec.device);
	assert_int_equal(spec.mode, DMB_MODE_FLUSH);
	assert_int_equal(spec.fallback, DMB_FALLBACK_NONE);
	assert_int_equal(spec.hold_ms, 0);
	assert_int_equal(spec.offset, 0);
	assert_int_equal(spec.length, 0);
	assert_null(spec.uuid);

	expect_error(ctx, dmb_mapping_create(ctx, "a/b", &spec), -EINVAL, "not a valid mapping name");
	expect_error(ctx, dmb_mapping_create(ctx, NULL, &spec), -EINVAL, "not a valid mapping name");
	expect_error(ctx, dmb_mapping_create(ctx, "ok", NULL), -EINVAL, "no backing device");
	expect_error(ctx, dmb_mapping_create(ctx, "ok", &spec), -EINVAL, "no backing device");
	spec.device = "/dev/null";
	expect_error(ctx, dmb_mapping_create(ctx, "ok", &spec), -ENOTBLK, "not a block device");
	spec.mode = _DMB_MODE_MAX;
	expect_error(ctx, dmb_mapping_create(ctx, "ok", &spec), -EINVAL, "invalid mode");
	spec.mode = DMB_MODE_DRAIN;
	spec.fallback = (enum dmb_fallback)7;
	expect_error(ctx, dmb_mapping_create(ctx, "ok", &spec), -EINVAL, "invalid fallback");
	spec.fallback = DMB_FALLBACK_DRAIN;
	spec.hold_ms = DMB_HOLD_MS_MAX + 1;
	expect_error(ctx, dmb_mapping_create(ctx, "ok", &spec), -EINVAL, "over the limit");
	spec.hold_ms = 0;
	spec.uuid = "LVM-something";
	expect_error(ctx, dmb_mapping_create(ctx, "ok", &spec), -EINVAL, "must be 'BARRIER-'");
	spec.uuid = "BARRIER-";
	expect_error(ctx, dmb_mapping_create(ctx, "ok", &spec), -EINVAL, "must be 'BARRIER-'");
	spec.uuid = "BARRIER-a b";
	expect_error(ctx, dmb_mapping_create(ctx, "ok", &spec), -EINVAL, "blank");
	expect_error(ctx, dmb_mapping_reload(ctx, "", &spec), -EINVAL, "no mapping name");
}

static void test_lookup_checks(void **state)
{
	struct dmb_ctx *ctx = *state;
	struct dmb_status st;
	struct dmb_table t;
	struct dmb_mapping_info info;
	char name[200];

	expect_error(ctx, dmb_mapping_status(ctx, "", &st, NULL), -EINVAL, "no mapping name");
	expect_error(ctx, dmb_mapping_table(ctx, NULL, &t, NULL), -EINVAL, "no mapping name");
	expect_error(ctx, dmb_mapping_info(ctx, "a/b", &info), -EINVAL, "not a device-mapper name");
	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	expect_error(ctx, dmb_mapping_info(ctx, name, &info), -EINVAL, "not a device-mapper name");
	expect_error(ctx, dmb_mapping_set_mode(ctx, "ok", _DMB_MODE_MAX), -EINVAL, "invalid mode");
	expect_error(ctx, dmb_mapping_remove(ctx, "ok", 1u << 7), -EINVAL, "unknown flags");
	expect_error(ctx, dmb_mapping_barrier(ctx, ""), -EINVAL, "no mapping name");
	expect_error(ctx, dmb_mapping_wait_event(ctx, "", 0, 0, NULL), -EINVAL, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_refcount, setup, teardown),
		cmocka_unit_test_setup_teardown(test_log_priority, setup, teardown),
		cmocka_unit_test(test_env_priority),
		cmocka_unit_test_setup_teardown(test_disk_paths, setup, teardown),
		cmocka_unit_test_setup_teardown(test_create_checks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lookup_checks, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
