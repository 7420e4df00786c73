// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-lib-status.c: the pure parsers of lib/status.c: the target's
 * fifteen-field status line (and fields a newer 1.x appends), the target
 * version check, its table line, device numbers, numbers,
 * mode/fallback names and mapping names.  Every malformed form must be
 * refused with -EBADMSG/-EINVAL and leave the output untouched; every form
 * the kernel prints must parse to the right values.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>

#include <cmocka.h>

#include "libdmbarrier-private.h"

#define GOOD "flush writeback nofua 1 2 3 4 5 6 7 8 9 10 11 12"

/* Parse a line that must fail; the struct must come back untouched. */
static void status_bad(const char *line, const char *why)
{
	struct dmb_status st, canary;
	char err[160] = "";
	int r;

	memset(&st, 0xa5, sizeof(st));
	memcpy(&canary, &st, sizeof(st));
	r = dmb_status_parse(line, &st, err, sizeof(err));
	if (r != -EBADMSG)
		fail_msg("'%s' (%s): got %d, want -EBADMSG", line, why, r);
	assert_memory_equal(&st, &canary, sizeof(st));
	if (!*err)
		fail_msg("'%s' (%s): no error message", line, why);
}

static void test_status_good(void **state)
{
	struct dmb_status st;
	char err[160];

	assert_int_equal(dmb_status_parse(GOOD, &st, err, sizeof(err)), 0);
	assert_int_equal(st.mode, DMB_MODE_FLUSH);
	assert_true(st.cache_writeback);
	assert_false(st.fua);
	assert_int_equal(st.barriers, 1);
	assert_int_equal(st.flushes, 2);
	assert_int_equal(st.fua_writes, 3);
	assert_int_equal(st.flush_errors, 4);
	assert_int_equal(st.fallbacks, 5);
	assert_int_equal(st.held, 6);
	assert_int_equal(st.max_drain_us, 7);
	assert_int_equal(st.shared, 8);
	assert_int_equal(st.no_cache, 9);
	assert_int_equal(st.refused, 10);
	assert_int_equal(st.replayed, 11);
	assert_int_equal(st.cache_changes, 12);

	assert_int_equal(dmb_status_parse("none writethrough fua 0 0 0 0 0 0 0 0 0 0 0 0", &st,
					  NULL, 0),
			 0);
	assert_int_equal(st.mode, DMB_MODE_NONE);
	assert_false(st.cache_writeback);
	assert_true(st.fua);
	assert_int_equal(st.barriers, 0);
}

static void test_status_every_mode(void **state)
{
	for (int m = 0; m < _DMB_MODE_MAX; m++) {
		struct dmb_status st;
		char line[128];

		snprintf(line, sizeof(line), "%s writeback fua 0 0 0 0 0 0 0 0 0 0 0 0",
			 dmb_mode_to_string(m));
		assert_int_equal(dmb_status_parse(line, &st, NULL, 0), 0);
		assert_int_equal(st.mode, m);
	}
}

static void test_status_limits(void **state)
{
	struct dmb_status st;

	/* Counters are u64, held is u32. */
	assert_int_equal(dmb_status_parse("drain writeback nofua 18446744073709551615 0 0 0 0 "
					  "4294967295 18446744073709551615 0 0 0 0 0",
					  &st, NULL, 0),
			 0);
	assert_true(st.barriers == UINT64_MAX);
	assert_true(st.held == UINT32_MAX);
	assert_true(st.max_drain_us == UINT64_MAX);
	status_bad("drain writeback nofua 18446744073709551616 0 0 0 0 0 0 0 0 0 0 0",
		   "u64 overflow by one");
	status_bad("drain writeback nofua 99999999999999999999999 0 0 0 0 0 0 0 0 0 0 0",
		   "u64 overflow, long");
	status_bad("drain writeback nofua 0 0 0 0 0 4294967296 0 0 0 0 0 0", "held over u32");
}

static void test_status_field_count(void **state)
{
	status_bad("", "empty");
	status_bad("flush", "one field");
	status_bad("flush writeback nofua 1 2 3 4 5 6 7 8 9 10 11", "14 fields");
	status_bad("1 2 3 4 5 6 7 8 9 10 11 12", "counters only");
}

/* What a newer 1.x target may print: the fifteen fields, then more. */
static void status_appended(const char *line, const char *why)
{
	struct dmb_status st, want;
	char err[160] = "";
	int r;

	assert_int_equal(dmb_status_parse(GOOD, &want, NULL, 0), 0);
	memset(&st, 0xa5, sizeof(st));
	r = dmb_status_parse(line, &st, err, sizeof(err));
	if (r != 0)
		fail_msg("'%s' (%s): got %d (%s), want 0", line, why, r, err);
	/* The appended fields are skipped: the known fifteen read as without them. */
	assert_memory_equal(&st, &want, sizeof(st));
}

static void test_status_appended_fields(void **state)
{
	status_appended(GOOD " 13", "16 fields");
	status_appended(GOOD " 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27", "30 fields");
	status_appended(GOOD " newfeature", "a word");
	status_appended(GOOD " key=value 0 -1 01", "forms the known fields refuse");
	/* The line's own rules still hold for what is appended. */
	status_bad(GOOD " 13 ", "trailing space after an appended field");
	status_bad(GOOD "  13", "double space before an appended field");
	status_bad(GOOD " 13\t14", "tab in the appended part");
	status_bad(GOOD " \x01", "control character in the appended part");
	/* And the known fields stay as strict as ever. */
	status_bad("flush writeback nofua 1 2 3 4 5 6 7 8 9 10 11 x 13", "bad field 15, then more");
	status_bad("flush writeback nofua 1 2 3 4 5 6 7 8 9 10 11", "still 14 is too few");
}

static void test_target_version(void **state)
{
	char err[256];
	struct {
		unsigned int v[3];
		int want;
	} cases[] = {
		{ { 1, 0, 0 }, 0 },
		{ { 1, 0, 7 }, 0 },
		{ { 1, 1, 0 }, 0 },			/* newer minor: appended fields */
		{ { 1, 4294967295U, 0 }, 0 },
		{ { 0, 9, 0 }, -EPROTONOSUPPORT },	/* older major */
		{ { 2, 0, 0 }, -EPROTONOSUPPORT },	/* newer major */
		{ { 2, 5, 1 }, -EPROTONOSUPPORT },
		{ { 4294967295U, 0, 0 }, -EPROTONOSUPPORT },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int r;

		err[0] = '\0';
		r = target_version_check(cases[i].v, err, sizeof(err));
		if (r != cases[i].want)
			fail_msg("%u.%u.%u: got %d, want %d", cases[i].v[0], cases[i].v[1],
				 cases[i].v[2], r, cases[i].want);
		if (r < 0 && !strstr(err, "is version"))
			fail_msg("%u.%u.%u: message '%s'", cases[i].v[0], cases[i].v[1],
				 cases[i].v[2], err);
	}
	/* The message names both versions, for the user to act on. */
	target_version_check((unsigned int[3]){ 2, 3, 4 }, err, sizeof(err));
	assert_non_null(strstr(err, "2.3.4"));
	assert_non_null(strstr(err, "1.0 or a newer 1.x"));
	/* A NULL/0 buffer is fine. */
	assert_int_equal(target_version_check((unsigned int[3]){ 3, 0, 0 }, NULL, 0),
			 -EPROTONOSUPPORT);
}

static void test_status_whitespace(void **state)
{
	status_bad(" " GOOD, "leading space");
	status_bad(GOOD " ", "trailing space");
	status_bad(GOOD "\n", "trailing newline");
	status_bad("flush  writeback nofua 1 2 3 4 5 6 7 8 9 10 11 12", "double space");
	status_bad("flush\twriteback nofua 1 2 3 4 5 6 7 8 9 10 11 12", "tab");
	status_bad("flush writeback nofua 1 2 3 4 5 6 7\r8 9 10 11 12", "carriage return");
	status_bad(" ", "one space");
}

static void test_status_numbers(void **state)
{
	status_bad("flush writeback nofua x 2 3 4 5 6 7 8 9 10 11 12", "letter");
	status_bad("flush writeback nofua -1 2 3 4 5 6 7 8 9 10 11 12", "negative");
	status_bad("flush writeback nofua +1 2 3 4 5 6 7 8 9 10 11 12", "plus sign");
	status_bad("flush writeback nofua 01 2 3 4 5 6 7 8 9 10 11 12", "leading zero");
	status_bad("flush writeback nofua 00 2 3 4 5 6 7 8 9 10 11 12", "double zero");
	status_bad("flush writeback nofua 0x1 2 3 4 5 6 7 8 9 10 11 12", "hex");
	status_bad("flush writeback nofua 1.5 2 3 4 5 6 7 8 9 10 11 12", "fraction");
	status_bad("flush writeback nofua 1e3 2 3 4 5 6 7 8 9 10 11 12", "exponent");
	status_bad("flush writeback nofua 1 2 3 4 5 6 7 8 9 10 11 12x", "trailing garbage");
	status_bad("flush writeback nofua 1 2 3 4 5 6 7 8 9 10 11 x12", "leading garbage");
	status_bad("flush writeback nofua 1 2 3 4 5 6 7 8 9 10 11 \xc3\xa9", "non-ASCII");
	status_bad("flush writeback nofua 1 2 3 4 5 -6 7 8 9 10 11 12", "negative held");
}

static void test_status_words(void **state)
{
	status_bad("FLUSH writeback nofua 1 2 3 4 5 6 7 8 9 10 11 12", "upper-case mode");
	status_bad("flushy writeback nofua 1 2 3 4 5 6 7 8 9 10 11 12", "unknown mode");
	status_bad("fl writeback nofua 1 2 3 4 5 6 7 8 9 10 11 12", "mode prefix");
	status_bad("0 writeback nofua 1 2 3 4 5 6 7 8 9 10 11 12", "numeric mode");
	status_bad("averyveryverylongmodename writeback nofua 1 2 3 4 5 6 7 8 9 10 11 12",
		   "long mode");
	status_bad("flush writebackx nofua 1 2 3 4 5 6 7 8 9 10 11 12", "cache word");
	status_bad("flush write-back nofua 1 2 3 4 5 6 7 8 9 10 11 12", "cache spelling");
	status_bad("flush nofua writeback 1 2 3 4 5 6 7 8 9 10 11 12", "swapped fields");
	status_bad("flush writeback yes 1 2 3 4 5 6 7 8 9 10 11 12", "fua word");
	status_bad("flush writeback 1 nofua 2 3 4 5 6 7 8 9 10 11 12", "fua position");
}

static void test_status_embedded_nul(void **state)
{
	/* What a C caller sees of a line with a NUL in it: the part before. */
	char line[] = GOOD;

	line[strlen("flush writeback nofua 1 2")] = '\0';
	status_bad(line, "NUL after field 5");
	line[0] = '\0';
	status_bad(line, "NUL first");
}

static void test_status_messages(void **state)
{
	struct dmb_status st;
	char err[160];

	dmb_status_parse("flush writeback nofua 1 2 3 4 5 6 7 8 9 10 11 1x", &st, err, sizeof(err));
	assert_non_null(strstr(err, "cache_changes"));
	dmb_status_parse("flush writeback nofua 1 2 3 4 5 99999999999 7 8 9 10 11 1", &st, err,
			 sizeof(err));
	assert_non_null(strstr(err, "held"));
	assert_non_null(strstr(err, "out of range"));
	dmb_status_parse("flush writeback", &st, err, sizeof(err));
	assert_non_null(strstr(err, "2 fields"));
	/* A tiny buffer is cut, not overrun. */
	memset(err, 'x', sizeof(err));
	dmb_status_parse("x", &st, err, 4);
	assert_int_equal(strlen(err), 3);
	assert_int_equal(dmb_status_parse(NULL, &st, NULL, 0), -EINVAL);
	assert_int_equal(dmb_status_parse(GOOD, NULL, NULL, 0), -EINVAL);
}

/* ------------------------------------------------------------ table */

static void table_bad(const char *line, const char *why)
{
	struct dmb_table t, canary;
	char err[160] = "";
	int r;

	memset(&t, 0x5a, sizeof(t));
	memcpy(&canary, &t, sizeof(t));
	r = dmb_table_parse(line, &t, err, sizeof(err));
	if (r != -EBADMSG)
		fail_msg("'%s' (%s): got %d, want -EBADMSG", line, why, r);
	assert_memory_equal(&t, &canary, sizeof(t));
	if (!*err)
		fail_msg("'%s' (%s): no error message", line, why);
}

static void test_table_good(void **state)
{
	struct dmb_table t;

	assert_int_equal(dmb_table_parse("8:0 0", &t, NULL, 0), 0);
	assert_true(t.backing == makedev(8, 0));
	assert_int_equal(t.offset, 0);
	assert_int_equal(t.mode, DMB_MODE_FLUSH);
	assert_int_equal(t.fallback, DMB_FALLBACK_NONE);
	assert_int_equal(t.hold_ms, 0);
	assert_int_equal(t.length, 0);

	/* The line docs/dm-barrier.rst shows, and every order of features. */
	assert_int_equal(dmb_table_parse("8:0 0 2 mode:drain hold_on_flush_error:5000", &t, NULL, 0),
			 0);
	assert_int_equal(t.mode, DMB_MODE_DRAIN);
	assert_int_equal(t.hold_ms, 5000);
	assert_int_equal(dmb_table_parse("253:17 8 3 hold_on_flush_error:60000 fallback:drain "
					 "mode:passthrough",
					 &t, NULL, 0),
			 0);
	assert_true(t.backing == makedev(253, 17));
	assert_int_equal(t.offset, 8);
	assert_int_equal(t.mode, DMB_MODE_PASSTHROUGH);
	assert_int_equal(t.fallback, DMB_FALLBACK_DRAIN);
	assert_int_equal(t.hold_ms, 60000);
	assert_int_equal(dmb_table_parse("4095:1048575 18446744073709551615 1 fallback:none", &t,
					 NULL, 0),
			 0);
	assert_true(t.backing == makedev(4095, 1048575));
	assert_true(t.offset == UINT64_MAX);
}

static void test_table_bad(void **state)
{
	table_bad("", "empty");
	table_bad("8:0", "no offset");
	table_bad("sda 0", "a name, not major:minor");
	table_bad("/dev/sda 0", "a path");
	table_bad("8 0", "no colon");
	table_bad("8: 0", "no minor");
	table_bad(":0 0", "no major");
	table_bad("8:0:1 0", "two colons");
	table_bad("4096:0 0", "major too big");
	table_bad("8:1048576 0", "minor too big");
	table_bad("08:0 0", "leading zero");
	table_bad("8:0 -1", "negative offset");
	table_bad("8:0 x", "offset garbage");
	table_bad("8:0 18446744073709551616", "offset overflow");
	table_bad("8:0 0 ", "trailing space");
	table_bad("8:0  0", "double space");
	table_bad("8:0 0 0", "count 0 (never printed)");
	table_bad("8:0 0 4 mode:drain fallback:drain hold_on_flush_error:1 mode:fua", "count 4");
	table_bad("8:0 0 1", "count without feature");
	table_bad("8:0 0 2 mode:drain", "count 2, one feature");
	table_bad("8:0 0 1 mode:drain fallback:drain", "count 1, two features");
	table_bad("8:0 0 mode:drain", "feature without count");
	table_bad("8:0 0 1 mode:", "empty mode");
	table_bad("8:0 0 1 mode:FLUSH", "upper-case mode");
	table_bad("8:0 0 1 mode:bogus", "unknown mode");
	table_bad("8:0 0 1 fallback:fua", "fallback fua");
	table_bad("8:0 0 1 fallback:", "empty fallback");
	table_bad("8:0 0 1 hold_on_flush_error:60001", "hold over limit");
	table_bad("8:0 0 1 hold_on_flush_error:-1", "hold negative");
	table_bad("8:0 0 1 hold_on_flush_error:", "hold empty");
	table_bad("8:0 0 1 hold_on_flush_error:05", "hold leading zero");
	table_bad("8:0 0 1 hold_on_flush_error:99999999999999999999999", "hold long");
	table_bad("8:0 0 2 mode:drain mode:fua", "duplicate mode");
	table_bad("8:0 0 2 fallback:drain fallback:none", "duplicate fallback");
	table_bad("8:0 0 1 speed:fast", "unknown feature");
	table_bad("8:0 0 1 mode", "feature without colon");
	table_bad("8:0 0 1 mode:drain\n", "trailing newline");
	table_bad("8:0 0 1 mode:verylongmodenamethatdoesnotfitatall", "long value");
}

static void test_table_format_roundtrip(void **state)
{
	const uint32_t holds[] = { 0, 1, 5000, DMB_HOLD_MS_MAX };

	for (int m = 0; m < _DMB_MODE_MAX; m++)
		for (int f = 0; f < _DMB_FALLBACK_MAX; f++)
			for (size_t h = 0; h < sizeof(holds) / sizeof(holds[0]); h++) {
				struct dmb_table in = {
					.backing = makedev(8, 16),
					.offset = 2048,
					.mode = m,
					.fallback = f,
					.hold_ms = holds[h],
				},
						 out;
				char buf[256];

				assert_int_equal(table_format(&in, buf, sizeof(buf)), 0);
				assert_int_equal(dmb_table_parse(buf, &out, NULL, 0), 0);
				assert_memory_equal(&in, &out, sizeof(in));
			}
}

static void test_table_format_kernel_form(void **state)
{
	/* Exactly what the target's STATUSTYPE_TABLE prints for the same table. */
	struct dmb_table t = { .backing = makedev(8, 0), .mode = DMB_MODE_DRAIN, .hold_ms = 5000 };
	char buf[256];

	assert_int_equal(table_format(&t, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "8:0 0 2 mode:drain hold_on_flush_error:5000");
	t = (struct dmb_table){ .backing = makedev(8, 32), .offset = 8 };
	assert_int_equal(table_format(&t, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "8:32 8");
	t = (struct dmb_table){ .backing = makedev(8, 32), .offset = 8, .mode = DMB_MODE_FUA,
				.fallback = DMB_FALLBACK_DRAIN, .hold_ms = 2500 };
	assert_int_equal(table_format(&t, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "8:32 8 3 mode:fua fallback:drain hold_on_flush_error:2500");
	/* Too small a buffer, or values out of range, are errors. */
	assert_int_equal(table_format(&t, buf, 8), -ENOBUFS);
	t.hold_ms = DMB_HOLD_MS_MAX + 1;
	assert_int_equal(table_format(&t, buf, sizeof(buf)), -EINVAL);
	t.hold_ms = 0;
	t.mode = _DMB_MODE_MAX;
	assert_int_equal(table_format(&t, buf, sizeof(buf)), -EINVAL);
}

/* ------------------------------------------------- numbers and names */

static void test_u64_devnum(void **state)
{
	uint64_t v = 7;
	dev_t d;

	assert_int_equal(u64_parse("0", 1, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(u64_parse("18446744073709551615", 20, &v), 0);
	assert_true(v == UINT64_MAX);
	v = 7;
	assert_int_equal(u64_parse("18446744073709551616", 20, &v), -ERANGE);
	assert_int_equal(u64_parse("", 0, &v), -EINVAL);
	assert_int_equal(u64_parse("012", 3, &v), -EINVAL);
	assert_int_equal(u64_parse("1a", 2, &v), -EINVAL);
	assert_int_equal(u64_parse("abcdefghijklmnopqrstuvwxyz", 26, &v), -EINVAL);
	assert_int_equal(v, 7);
	/* The length bounds what is read: "12" of "123". */
	assert_int_equal(u64_parse("123", 2, &v), 0);
	assert_int_equal(v, 12);

	assert_int_equal(devnum_parse("8:0", &d), 0);
	assert_true(d == makedev(8, 0));
	assert_int_equal(devnum_parse("8:0 ", &d), -EINVAL);
	assert_int_equal(devnum_parse("", &d), -EINVAL);
	assert_int_equal(devnum_parse(NULL, &d), -EINVAL);
	assert_int_equal(devnum_parse("/dev/sda", &d), -EINVAL);
}

static void test_names(void **state)
{
	enum dmb_mode m;
	enum dmb_fallback f;
	char long_name[DMB_NAME_MAX + 8];
	size_t max = DMB_NAME_MAX - 1 - strlen(DMB_UUID_PREFIX);

	for (int i = 0; i < _DMB_MODE_MAX; i++) {
		assert_int_equal(dmb_mode_from_string(dmb_mode_to_string(i), &m), 0);
		assert_int_equal(m, i);
	}
	assert_null(dmb_mode_to_string(_DMB_MODE_MAX));
	assert_null(dmb_mode_to_string((enum dmb_mode)-1));
	assert_int_equal(dmb_mode_from_string("Flush", &m), -EINVAL);
	assert_int_equal(dmb_mode_from_string("", &m), -EINVAL);
	assert_int_equal(dmb_mode_from_string(NULL, &m), -EINVAL);
	assert_int_equal(dmb_fallback_from_string("drain", &f), 0);
	assert_int_equal(f, DMB_FALLBACK_DRAIN);
	assert_int_equal(dmb_fallback_from_string("flush", &f), -EINVAL);
	assert_null(dmb_fallback_to_string(_DMB_FALLBACK_MAX));

	assert_int_equal(dmb_name_check("safe"), 0);
	assert_int_equal(dmb_name_check("a-b_c.d:e@f=g+h#1"), 0);
	assert_int_equal(dmb_name_check(""), -EINVAL);
	assert_int_equal(dmb_name_check(NULL), -EINVAL);
	assert_int_equal(dmb_name_check("."), -EINVAL);
	assert_int_equal(dmb_name_check(".."), -EINVAL);
	assert_int_equal(dmb_name_check("a/b"), -EINVAL);
	assert_int_equal(dmb_name_check("a b"), -EINVAL);
	assert_int_equal(dmb_name_check("a\nb"), -EINVAL);
	assert_int_equal(dmb_name_check("caf\xc3\xa9"), -EINVAL);
	assert_int_equal(dmb_name_check("a*b"), -EINVAL);
	memset(long_name, 'n', max);
	long_name[max] = '\0';
	assert_int_equal(dmb_name_check(long_name), 0);
	long_name[max] = 'n';
	long_name[max + 1] = '\0';
	assert_int_equal(dmb_name_check(long_name), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_status_good),
		cmocka_unit_test(test_status_every_mode),
		cmocka_unit_test(test_status_limits),
		cmocka_unit_test(test_status_field_count),
		cmocka_unit_test(test_status_appended_fields),
		cmocka_unit_test(test_target_version),
		cmocka_unit_test(test_status_whitespace),
		cmocka_unit_test(test_status_numbers),
		cmocka_unit_test(test_status_words),
		cmocka_unit_test(test_status_embedded_nul),
		cmocka_unit_test(test_status_messages),
		cmocka_unit_test(test_table_good),
		cmocka_unit_test(test_table_bad),
		cmocka_unit_test(test_table_format_roundtrip),
		cmocka_unit_test(test_table_format_kernel_form),
		cmocka_unit_test(test_u64_devnum),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
