// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-lib-args.c: barrierctl's command line (lib/barrierctl-args.c):
 * every command in its valid forms, and every kind of bad argument as a
 * usage error with a message and the result untouched; the number
 * parsers; the errno -> exit code table the man page documents.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "barrierctl.h"

#define MAXARGS 16

/* Split a command line at spaces ("" stays an empty argument via "''"). */
static int split(const char *line, char *buf, size_t size, char **argv)
{
	int argc = 0;
	char *save = NULL, *tok;

	snprintf(buf, size, "%s", line);
	argv[argc++] = (char *)"barrierctl";
	for (tok = strtok_r(buf, " ", &save); tok && argc < MAXARGS; tok = strtok_r(NULL, " ", &save))
		argv[argc++] = strcmp(tok, "''") ? tok : (char *)"";
	argv[argc] = NULL;
	return argc;
}

static struct bctl_args parse_ok(const char *line)
{
	/* Static: the result points into it until the next call. */
	static char buf[512], *argv[MAXARGS + 1];
	char err[256] = "";
	struct bctl_args a;
	int argc = split(line, buf, sizeof(buf), argv), r;

	r = bctl_parse_args(argc, argv, &a, err, sizeof(err));
	if (r != 0)
		fail_msg("'%s': %d: %s", line, r, err);
	return a;
}

/* Must be a usage error whose message contains want. */
static void parse_bad(const char *line, const char *want)
{
	char buf[512], err[256] = "", *argv[MAXARGS + 1];
	struct bctl_args a, canary;
	int argc = split(line, buf, sizeof(buf), argv), r;

	memset(&a, 0x3c, sizeof(a));
	memcpy(&canary, &a, sizeof(a));
	r = bctl_parse_args(argc, argv, &a, err, sizeof(err));
	if (r != -EINVAL)
		fail_msg("'%s': got %d, want -EINVAL", line, r);
	if (memcmp(&a, &canary, sizeof(a)))
		fail_msg("'%s': the result was changed on error", line);
	if (!strstr(err, want))
		fail_msg("'%s': message '%s' lacks '%s'", line, err, want);
}

static void test_create(void **state)
{
	struct bctl_args a = parse_ok("create safe /dev/sda");

	assert_int_equal(a.verb, BCTL_CREATE);
	assert_string_equal(a.name, "safe");
	assert_string_equal(a.device, "/dev/sda");
	assert_false(a.have_mode || a.have_fallback || a.have_hold || a.have_offset ||
		     a.have_length);

	a = parse_ok("create x 8:0 --mode drain --fallback=drain --hold-on-flush-error 60000 "
		     "--offset=8 --length 1024");
	assert_true(a.have_mode);
	assert_int_equal(a.mode, DMB_MODE_DRAIN);
	assert_int_equal(a.fallback, DMB_FALLBACK_DRAIN);
	assert_int_equal(a.hold_ms, 60000);
	assert_int_equal(a.offset, 8);
	assert_int_equal(a.length, 1024);

	/* Options before the command, and after "--" nothing is an option. */
	a = parse_ok("--json --mode fua create y /dev/sdb");
	assert_true(a.json);
	assert_int_equal(a.mode, DMB_MODE_FUA);
	a = parse_ok("create -- -odd /dev/sdb");
	assert_string_equal(a.name, "-odd");
	a = parse_ok("create z /dev/sdc --offset 0");
	assert_true(a.have_offset);
	assert_int_equal(a.offset, 0);
	a = parse_ok("create z /dev/sdc --offset 18446744073709551615");
	assert_true(a.offset == UINT64_MAX);
}

static void test_create_bad(void **state)
{
	parse_bad("create", "missing argument");
	parse_bad("create safe", "missing argument");
	parse_bad("create safe /dev/sda extra", "unexpected argument 'extra'");
	parse_bad("create a/b /dev/sda", "not a valid name");
	parse_bad("create '' /dev/sda", "empty");
	parse_bad("create safe ''", "empty");
	parse_bad("create . /dev/sda", "not a valid name");
	parse_bad("create "
		  "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn"
		  "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn /dev/sda",
		  "not a valid name");
	parse_bad("create safe /dev/sda --mode", "needs a value");
	parse_bad("create safe /dev/sda --mode bogus", "unknown mode 'bogus'");
	parse_bad("create safe /dev/sda --mode FLUSH", "unknown mode");
	parse_bad("create safe /dev/sda --mode=", "unknown mode ''");
	parse_bad("create safe /dev/sda --fallback fua", "not none or drain");
	parse_bad("create safe /dev/sda --hold-on-flush-error 60001", "0 to 60000");
	parse_bad("create safe /dev/sda --hold-on-flush-error -1", "0 to 60000");
	parse_bad("create safe /dev/sda --hold-on-flush-error 5s", "0 to 60000");
	parse_bad("create safe /dev/sda --hold-on-flush-error 99999999999999999999", "0 to 60000");
	parse_bad("create safe /dev/sda --offset -8", "not a number of sectors");
	parse_bad("create safe /dev/sda --offset 0x10", "not a number of sectors");
	parse_bad("create safe /dev/sda --offset 18446744073709551616", "not a number of sectors");
	parse_bad("create safe /dev/sda --offset ''", "not a number of sectors");
	parse_bad("create safe /dev/sda --length 0", "at least 1");
	parse_bad("create safe /dev/sda --length 1.5", "at least 1");
	parse_bad("create safe /dev/sda --mode drain --mode fua", "given twice");
	parse_bad("create safe /dev/sda --offset 1 --offset=2", "given twice");
	parse_bad("create safe /dev/sda --timeout 5", "does not apply to create");
}

static void test_other_verbs(void **state)
{
	struct bctl_args a;

	a = parse_ok("reload safe");
	assert_int_equal(a.verb, BCTL_RELOAD);
	assert_null(a.device);
	a = parse_ok("reload safe /dev/sdb --hold-on-flush-error 100 --fallback drain");
	assert_string_equal(a.device, "/dev/sdb");
	assert_true(a.have_hold && a.have_fallback && !a.have_mode);
	a = parse_ok("remove safe");
	assert_int_equal(a.verb, BCTL_REMOVE);
	assert_string_equal(a.name, "safe");
	a = parse_ok("list");
	assert_int_equal(a.verb, BCTL_LIST);
	assert_null(a.name);
	a = parse_ok("list -n");
	assert_true(a.no_legend);
	a = parse_ok("status");
	assert_int_equal(a.verb, BCTL_STATUS);
	assert_null(a.name);
	a = parse_ok("status safe --json");
	assert_string_equal(a.name, "safe");
	assert_true(a.json);
	a = parse_ok("set-mode safe passthrough");
	assert_int_equal(a.verb, BCTL_SET_MODE);
	assert_int_equal(a.mode, DMB_MODE_PASSTHROUGH);
	a = parse_ok("barrier safe");
	assert_int_equal(a.verb, BCTL_BARRIER);
	a = parse_ok("reset-stats safe");
	assert_int_equal(a.verb, BCTL_RESET_STATS);
	a = parse_ok("write-cache /dev/sda");
	assert_int_equal(a.verb, BCTL_WRITE_CACHE);
	assert_int_equal(a.write_cache, BCTL_WC_QUERY);
	assert_string_equal(a.device, "/dev/sda");
	a = parse_ok("write-cache /dev/sda off");
	assert_int_equal(a.write_cache, BCTL_WC_OFF);
	a = parse_ok("write-cache /dev/sda on");
	assert_int_equal(a.write_cache, BCTL_WC_ON);
	a = parse_ok("wait-event safe");
	assert_int_equal(a.verb, BCTL_WAIT_EVENT);
	assert_int_equal(a.timeout_ms, -1);
	assert_false(a.have_event_nr);
	a = parse_ok("wait-event safe --timeout 2.5 --event-nr 4294967295");
	assert_int_equal(a.timeout_ms, 2500);
	assert_true(a.have_event_nr);
	assert_true(a.event_nr == UINT32_MAX);
	a = parse_ok("wait-event safe --timeout=0");
	assert_int_equal(a.timeout_ms, 0);
	a = parse_ok("-vv --bus list");
	assert_int_equal(a.verbose, 2);
	assert_true(a.bus);
	a = parse_ok("-v list -v --verbose");
	assert_int_equal(a.verbose, 3);
	a = parse_ok("-nv list");
	assert_true(a.no_legend);
	assert_int_equal(a.verbose, 1);
}

static void test_other_verbs_bad(void **state)
{
	parse_bad("", "no command given");
	parse_bad("--json", "no command given");
	parse_bad("frobnicate", "unknown command 'frobnicate'");
	parse_bad("LIST", "unknown command");
	parse_bad("list extra", "unexpected argument 'extra'");
	parse_bad("status a b", "unexpected argument 'b'");
	parse_bad("reload", "missing argument");
	parse_bad("reload a b c", "unexpected argument 'c'");
	parse_bad("reload a --timeout 1", "does not apply to reload");
	parse_bad("reload a --length 0", "at least 1");
	parse_bad("--bus reload a", "no --bus form");
	parse_bad("remove", "missing argument");
	parse_bad("remove a b", "unexpected argument");
	parse_bad("set-mode safe", "missing argument");
	parse_bad("set-mode safe bogus", "unknown mode 'bogus'");
	parse_bad("set-mode safe drain extra", "unexpected argument");
	parse_bad("barrier", "missing argument");
	parse_bad("reset-stats", "missing argument");
	parse_bad("write-cache", "missing argument");
	parse_bad("write-cache /dev/sda 0", "neither on nor off");
	parse_bad("write-cache /dev/sda ON", "neither on nor off");
	parse_bad("write-cache /dev/sda on off", "unexpected argument");
	parse_bad("wait-event", "missing argument");
	parse_bad("wait-event safe --timeout", "needs a value");
	parse_bad("wait-event safe --timeout -1", "not a number of seconds");
	parse_bad("wait-event safe --timeout 1.2345", "not a number of seconds");
	parse_bad("wait-event safe --timeout 1.", "not a number of seconds");
	parse_bad("wait-event safe --timeout .5", "not a number of seconds");
	parse_bad("wait-event safe --timeout 1e3", "not a number of seconds");
	parse_bad("wait-event safe --timeout 5s", "not a number of seconds");
	parse_bad("wait-event safe --timeout 2147484", "not a number of seconds");
	parse_bad("wait-event safe --event-nr 4294967296", "0 to 4294967295");
	parse_bad("wait-event safe --event-nr -1", "0 to 4294967295");
	parse_bad("wait-event safe --mode drain", "does not apply to wait-event");
	parse_bad("list --offset 5", "does not apply to list");
	parse_bad("list --frob", "unknown option '--frob'");
	parse_bad("list --json=yes", "takes no value");
	parse_bad("list --json --json", "given twice");
	parse_bad("list -x", "unknown option '-x'");
	parse_bad("list -nx", "unknown option '-x'");
	parse_bad("--version list", "--version takes no command");
	parse_bad("status "
		  "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn"
		  "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn",
		  "longer than 127");
}

static void test_bus_options(void **state)
{
	struct bctl_args a;

	a = parse_ok("--bus set-mode safe drain --pin");
	assert_true(a.bus && a.pin && a.have_mode);
	assert_int_equal(a.mode, DMB_MODE_DRAIN);
	a = parse_ok("set-mode safe auto --bus");
	assert_true(a.mode_auto);
	assert_false(a.have_mode);
	a = parse_ok("--bus create x /dev/sda --mode fua --pin");
	assert_true(a.pin);
	a = parse_ok("--bus write-cache safe off");
	assert_string_equal(a.device, "safe");
	assert_int_equal(a.write_cache, BCTL_WC_OFF);

	parse_bad("set-mode safe drain --pin", "only with --bus");
	parse_bad("create x /dev/sda --mode fua --pin", "only with --bus");
	parse_bad("--bus create x /dev/sda --pin", "needs --mode");
	parse_bad("set-mode safe auto", "only with --bus");
	parse_bad("--bus set-mode safe auto --pin", "without --pin");
	parse_bad("--bus set-mode safe bogus", "auto)");
	parse_bad("--bus wait-event safe", "no --bus form");
	parse_bad("--bus list --pin", "does not apply to list");
	parse_bad("--bus barrier safe --pin", "does not apply to barrier");
}

static void test_help_version(void **state)
{
	assert_int_equal(parse_ok("--help").verb, BCTL_HELP);
	assert_int_equal(parse_ok("-h").verb, BCTL_HELP);
	assert_int_equal(parse_ok("help").verb, BCTL_HELP);
	/* --help wins over anything else on the line, as with systemctl. */
	assert_int_equal(parse_ok("create --help").verb, BCTL_HELP);
	assert_int_equal(parse_ok("--version").verb, BCTL_VERSION);
}

static void test_numbers(void **state)
{
	uint64_t v = 9;
	int ms = 9;

	assert_int_equal(bctl_parse_u64("0", &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(bctl_parse_u64("18446744073709551615", &v), 0);
	assert_true(v == UINT64_MAX);
	v = 9;
	assert_int_equal(bctl_parse_u64("18446744073709551616", &v), -ERANGE);
	assert_int_equal(bctl_parse_u64(" 1", &v), -EINVAL);
	assert_int_equal(bctl_parse_u64("1 ", &v), -EINVAL);
	assert_int_equal(bctl_parse_u64("", &v), -EINVAL);
	assert_int_equal(bctl_parse_u64(NULL, &v), -EINVAL);
	assert_int_equal(v, 9);

	assert_int_equal(bctl_parse_seconds("5", &ms), 0);
	assert_int_equal(ms, 5000);
	assert_int_equal(bctl_parse_seconds("0.5", &ms), 0);
	assert_int_equal(ms, 500);
	assert_int_equal(bctl_parse_seconds("0.05", &ms), 0);
	assert_int_equal(ms, 50);
	assert_int_equal(bctl_parse_seconds("1.001", &ms), 0);
	assert_int_equal(ms, 1001);
	assert_int_equal(bctl_parse_seconds("2147483", &ms), 0);
	assert_int_equal(ms, 2147483000);
	assert_int_equal(bctl_parse_seconds("2147483.647", &ms), 0);
	assert_int_equal(ms, INT_MAX);
	ms = 9;
	assert_int_equal(bctl_parse_seconds("2147483.648", &ms), -ERANGE);
	assert_int_equal(bctl_parse_seconds("99999999999999999999999", &ms), -ERANGE);
	assert_int_equal(bctl_parse_seconds("1.2.3", &ms), -EINVAL);
	assert_int_equal(bctl_parse_seconds("1.-2", &ms), -EINVAL);
	assert_int_equal(ms, 9);
}

static void test_exit_codes(void **state)
{
	assert_int_equal(bctl_exit_code(0), BCTL_EXIT_OK);
	assert_int_equal(bctl_exit_code(-ENOENT), BCTL_EXIT_NOT_FOUND);
	assert_int_equal(bctl_exit_code(-ENXIO), BCTL_EXIT_NOT_FOUND);
	assert_int_equal(bctl_exit_code(-EMEDIUMTYPE), BCTL_EXIT_NOT_FOUND);
	assert_int_equal(bctl_exit_code(-ENOTTY), BCTL_EXIT_NOT_SUPPORTED);
	assert_int_equal(bctl_exit_code(-EOPNOTSUPP), BCTL_EXIT_NOT_SUPPORTED);
	assert_int_equal(bctl_exit_code(-ETIMEDOUT), BCTL_EXIT_TIMEOUT);
	assert_int_equal(bctl_exit_code(-EHOSTDOWN), BCTL_EXIT_NO_DAEMON);
	assert_int_equal(bctl_exit_code(-EIO), BCTL_EXIT_FAILURE);
	assert_int_equal(bctl_exit_code(-EINVAL), BCTL_EXIT_FAILURE);
	assert_int_equal(bctl_exit_code(-EEXIST), BCTL_EXIT_FAILURE);
	/* The documented values themselves (barrierctl(8), --help). */
	assert_int_equal(BCTL_EXIT_USAGE, 2);
	assert_int_equal(BCTL_EXIT_NOT_FOUND, 3);
	assert_int_equal(BCTL_EXIT_NOT_SUPPORTED, 4);
	assert_int_equal(BCTL_EXIT_TIMEOUT, 5);
	assert_int_equal(BCTL_EXIT_NO_DAEMON, 6);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create),	     cmocka_unit_test(test_create_bad),
		cmocka_unit_test(test_other_verbs),   cmocka_unit_test(test_other_verbs_bad),
		cmocka_unit_test(test_bus_options),  cmocka_unit_test(test_help_version),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_exit_codes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
