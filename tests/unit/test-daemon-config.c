// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-daemon-config.c: barrierd.conf (daemon/config.c).  Every malformed
 * line must be refused with its file, line number and reason, and leave the
 * configuration exactly as it was (nothing half-applied), within one file
 * and across the main file and its drop-ins; every valid form must give
 * the right values; the value parsers must refuse what they do not take.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"

static int parse(struct config *c, const char *text, char *err, size_t errsize)
{
	return config_parse(c, "test.conf", text, strlen(text), err, errsize);
}

/* A config with one mapping and non-default scalars: what a failure must keep. */
static void base(struct config *c)
{
	char err[CONFIG_ERROR_MAX];

	config_init(c);
	assert_int_equal(parse(c,
			       "[Daemon]\nPollIntervalSec=0.5\nOnFlushError=drain\n"
			       "[Mapping]\nName=first\nDevice=/dev/sda\n",
			       err, sizeof(err)),
			 0);
}

static void same_as_base(const struct config *c)
{
	assert_int_equal(c->poll_interval_usec, 500 * USEC_PER_MSEC);
	assert_int_equal(c->policy.on_flush_error, ON_FLUSH_ERROR_DRAIN);
	assert_int_equal(c->hold_ms, 10000);
	assert_int_equal(c->n_mappings, 1);
	assert_string_equal(c->mappings[0].name, "first");
	assert_string_equal(c->mappings[0].device, "/dev/sda");
}

struct bad {
	const char *text;
	const char *where;	/* "test.conf:N: " */
	const char *reason;	/* a part of the message */
};

static void test_malformed(void **unused)
{
	static const struct bad bad[] = {
		{ "Name=x\n", "test.conf:1: ", "outside a section" },
		{ "# c\n\n[Daemon\n", "test.conf:3: ", "malformed section header" },
		{ "[]\n", "test.conf:1: ", "malformed section header" },
		{ "[Daemons]\n", "test.conf:1: ", "unknown section [Daemons]" },
		{ "[daemon]\n", "test.conf:1: ", "unknown section [daemon]" },
		{ "[Daemon]\njust words\n", "test.conf:2: ", "neither Key=Value" },
		{ "[Daemon]\n=5\n", "test.conf:2: ", "a value without a key" },
		{ "[Daemon]\nPollIntervalSec=\n", "test.conf:2: ", "PollIntervalSec= has no value" },
		{ "[Daemon]\nPollInterval=2\n", "test.conf:2: ", "unknown key 'PollInterval' in [Daemon]" },
		{ "[Daemon]\npollintervalsec=2\n", "test.conf:2: ", "unknown key" },
		{ "[Daemon]\nName=x\n", "test.conf:2: ", "unknown key 'Name' in [Daemon]" },
		{ "[Mapping]\nName=a\nDevice=/dev/sda\nPollIntervalSec=1\n", "test.conf:4: ",
		  "unknown key 'PollIntervalSec' in [Mapping]" },
		{ "[Daemon]\nPollIntervalSec=1\nPollIntervalSec=2\n", "test.conf:3: ", "given twice" },
		{ "[Daemon]\nPollIntervalSec=0.05\n", "test.conf:2: ", "0.1 to 60" },
		{ "[Daemon]\nPollIntervalSec=61\n", "test.conf:2: ", "0.1 to 60" },
		{ "[Daemon]\nPollIntervalSec=1s\n", "test.conf:2: ", "0.1 to 60" },
		{ "[Daemon]\nPollIntervalSec=-1\n", "test.conf:2: ", "0.1 to 60" },
		{ "[Daemon]\nPollIntervalSec=1.\n", "test.conf:2: ", "0.1 to 60" },
		{ "[Daemon]\nPollIntervalSec=.5\n", "test.conf:2: ", "0.1 to 60" },
		{ "[Daemon]\nPollIntervalSec=0.1234567\n", "test.conf:2: ", "0.1 to 60" },
		{ "[Daemon]\nOnFlushError=ignore\n", "test.conf:2: ", "disable-cache, drain or none" },
		{ "[Daemon]\nHoldDownSec=86401\n", "test.conf:2: ", "0 to 86400" },
		{ "[Daemon]\nHoldDownMaxSec=x\n", "test.conf:2: ", "0 to 86400" },
		{ "[Daemon]\nFallback=flush\n", "test.conf:2: ", "none or drain" },
		{ "[Daemon]\nHoldOnFlushErrorMSec=60001\n", "test.conf:2: ", "0 to 60000" },
		{ "[Daemon]\nHoldOnFlushErrorMSec=1e3\n", "test.conf:2: ", "0 to 60000" },
		{ "[Daemon]\nAdoptHoldOnFlushErrorMSec=+5\n", "test.conf:2: ", "0 to 60000" },
		{ "[Daemon]\nHoldOnFlushErrorMSec=99999999999999999999999\n", "test.conf:2: ",
		  "0 to 60000" },
		{ "[Mapping]\n", "test.conf:1: ", "[Mapping] without Name=" },
		{ "\n[Mapping]\nDevice=/dev/sda\n", "test.conf:2: ", "[Mapping] without Name=" },
		{ "[Mapping]\nName=a\n[Daemon]\n", "test.conf:1: ", "[Mapping] 'a' without Device=" },
		{ "[Mapping]\nName=a\nDevice=/dev/sda\nPin=yes\n", "test.conf:1: ", "Pin=yes needs Mode=" },
		{ "[Mapping]\nName=a/b\n", "test.conf:2: ", "not a valid mapping name" },
		{ "[Mapping]\nName=..\n", "test.conf:2: ", "not a valid mapping name" },
		{ "[Mapping]\nName=a b\n", "test.conf:2: ", "not a valid mapping name" },
		{ "[Mapping]\nName=a\nName=b\n", "test.conf:3: ", "given twice" },
		{ "[Mapping]\nName=a\nDevice=sda\n", "test.conf:3: ", "absolute path or major:minor" },
		{ "[Mapping]\nName=a\nDevice=/dev/sda\nOffset=-1\n", "test.conf:4: ", "a sector number" },
		{ "[Mapping]\nName=a\nDevice=/dev/sda\nLength=0x10\n", "test.conf:4: ", "number of sectors" },
		{ "[Mapping]\nName=a\nDevice=/dev/sda\nMode=Flush\n", "test.conf:4: ",
		  "flush, fua, drain, passthrough or none" },
		{ "[Mapping]\nName=a\nDevice=/dev/sda\nMode=auto\n", "test.conf:4: ", "flush, fua, drain" },
		{ "[Mapping]\nName=a\nDevice=/dev/sda\nPin=maybe\n", "test.conf:4: ", "yes or no" },
		{ "[Mapping]\nName=a\nDevice=/dev/sda\nFallback=fua\n", "test.conf:4: ", "none or drain" },
		{ "[Mapping]\nName=a\nDevice=/dev/sda\nHoldOnFlushErrorMSec=700000\n", "test.conf:4: ",
		  "0 to 60000" },
		{ "[Mapping]\nName=first\nDevice=/dev/sdb\n", "test.conf:2: ",
		  "Name=first: already configured at test.conf:4" },
		{ "[Mapping]\nName=b\nDevice=/dev/sdb\n[Mapping]\nName=b\nDevice=/dev/sdc\n",
		  "test.conf:5: ", "Name=b: already configured at test.conf:1" },
		{ "[Daemon]\nPollIntervalSec=2\n[Mapping]\nName=ok\nDevice=/dev/sdb\n[Mapping]\nName=bad\n",
		  "test.conf:6: ", "[Mapping] 'bad' without Device=" },
	};
	char err[CONFIG_ERROR_MAX];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct config c;
		int r;

		base(&c);
		err[0] = '\0';
		r = parse(&c, bad[i].text, err, sizeof(err));
		if (r != -EINVAL)
			fail_msg("#%zu accepted (%d): %s", i, r, bad[i].text);
		if (strncmp(err, bad[i].where, strlen(bad[i].where)) || !strstr(err, bad[i].reason))
			fail_msg("#%zu: message '%s', want '%s...%s'", i, err, bad[i].where,
				 bad[i].reason);
		same_as_base(&c);
		config_done(&c);
	}
}

static void test_nul_and_long_lines(void **unused)
{
	char err[CONFIG_ERROR_MAX], *text;
	struct config c;
	size_t n = CONFIG_LINE_MAX + 20;

	base(&c);
	assert_int_equal(config_parse(&c, "t", "[Daemon]\n\nx\0y\n", 13, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "t:3: NUL byte in the file");
	same_as_base(&c);

	text = malloc(n + 32);
	assert_non_null(text);
	strcpy(text, "[Daemon]\n# ");
	memset(text + strlen(text), 'x', n);
	text[11 + n] = '\0';
	assert_int_equal(parse(&c, text, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "test.conf:2: line longer than"));
	same_as_base(&c);
	free(text);
	config_done(&c);
}

static void test_too_many_mappings(void **unused)
{
	char err[CONFIG_ERROR_MAX], *text, *p;
	struct config c;

	config_init(&c);
	text = malloc((CONFIG_MAPPINGS_MAX + 1) * 64);
	assert_non_null(text);
	p = text;
	for (int i = 0; i <= CONFIG_MAPPINGS_MAX; i++)
		p += sprintf(p, "[Mapping]\nName=m%d\nDevice=/dev/sda\n", i);
	assert_int_equal(parse(&c, text, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "more than 256 [Mapping] sections"));
	assert_int_equal(c.n_mappings, 0);
	free(text);
	config_done(&c);
}

static void test_defaults(void **unused)
{
	char err[CONFIG_ERROR_MAX];
	struct config c;

	config_init(&c);
	assert_int_equal(parse(&c, "", err, sizeof(err)), 0);
	assert_int_equal(parse(&c, "# nothing\n; nothing\n\n   \n", err, sizeof(err)), 0);
	assert_int_equal(c.poll_interval_usec, USEC_PER_SEC);
	assert_true(c.poll_interval_usec <= 2 * USEC_PER_SEC);
	assert_int_equal(c.policy.on_flush_error, ON_FLUSH_ERROR_DISABLE_CACHE);
	assert_int_equal(c.policy.holddown_usec, 30 * USEC_PER_SEC);
	assert_int_equal(c.policy.holddown_max_usec, 600 * USEC_PER_SEC);
	assert_int_equal(c.fallback, DMB_FALLBACK_DRAIN);
	assert_int_equal(c.hold_ms, 10000);
	/* Opt-in: adopting must not reload tables barrierd did not make (issue 14). */
	assert_int_equal(c.adopt_hold_ms, 0);
	assert_int_equal(c.n_mappings, 0);
	config_done(&c);
}

static void test_good(void **unused)
{
	char err[CONFIG_ERROR_MAX];
	struct config c;
	const struct config_mapping *m;

	config_init(&c);
	assert_int_equal(parse(&c,
			       "# barrierd\n"
			       "[Daemon]\n"
			       "  PollIntervalSec = 0.25  \n"
			       "OnFlushError=none\r\n"
			       "HoldDownSec=5\n"
			       "HoldDownMaxSec=2\n"
			       "Fallback=none\n"
			       "HoldOnFlushErrorMSec=0\n"
			       "AdoptHoldOnFlushErrorMSec=60000\n"
			       "[Mapping]\n"
			       "Name=data.1\n"
			       "Device=/dev/disk/by-id/ata-QEMU_HARDDISK_DMB-IDE\n"
			       "Offset=2048\n"
			       "Length=1000000\n"
			       "Mode=drain\n"
			       "Pin=yes\n"
			       "Fallback=none\n"
			       "HoldOnFlushErrorMSec=5000\n"
			       "[Mapping]\n"
			       "Name=b\n"
			       "Device=8:16\n"
			       "[Daemon]\n"
			       "PollIntervalSec=2\n",
			       err, sizeof(err)),
			 0);
	assert_int_equal(c.poll_interval_usec, 2 * USEC_PER_SEC);
	assert_int_equal(c.policy.on_flush_error, ON_FLUSH_ERROR_NONE);
	assert_int_equal(c.policy.holddown_usec, 5 * USEC_PER_SEC);
	/* A maximum below the hold-down is raised to it. */
	assert_int_equal(c.policy.holddown_max_usec, 5 * USEC_PER_SEC);
	assert_int_equal(c.fallback, DMB_FALLBACK_NONE);
	assert_int_equal(c.hold_ms, 0);
	assert_int_equal(c.adopt_hold_ms, 60000);
	assert_int_equal(c.n_mappings, 2);
	m = &c.mappings[0];
	assert_string_equal(m->name, "data.1");
	assert_string_equal(m->device, "/dev/disk/by-id/ata-QEMU_HARDDISK_DMB-IDE");
	assert_int_equal(m->offset, 2048);
	assert_int_equal(m->length, 1000000);
	assert_true(m->have_mode);
	assert_int_equal(m->mode, DMB_MODE_DRAIN);
	assert_true(m->pin);
	assert_true(m->have_fallback);
	assert_int_equal(m->fallback, DMB_FALLBACK_NONE);
	assert_true(m->have_hold);
	assert_int_equal(m->hold_ms, 5000);
	assert_string_equal(m->file, "test.conf");
	assert_int_equal(m->line, 10);
	m = &c.mappings[1];
	assert_string_equal(m->name, "b");
	assert_string_equal(m->device, "8:16");
	assert_false(m->have_mode);
	assert_false(m->pin);
	assert_false(m->have_fallback);
	assert_false(m->have_hold);
	assert_int_equal(m->line, 19);
	config_done(&c);
}

static void test_value_parsers(void **unused)
{
	uint64_t v = 7;
	usec_t u = 7;
	bool b = false;

	assert_int_equal(config_parse_u64("0", 10, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(config_parse_u64("18446744073709551615", UINT64_MAX, &v), 0);
	assert_true(v == UINT64_MAX);
	v = 7;
	assert_int_equal(config_parse_u64("18446744073709551616", UINT64_MAX, &v), -ERANGE);
	assert_int_equal(config_parse_u64("11", 10, &v), -ERANGE);
	assert_int_equal(config_parse_u64("", 10, &v), -EINVAL);
	assert_int_equal(config_parse_u64(" 1", 10, &v), -EINVAL);
	assert_int_equal(config_parse_u64("1 ", 10, &v), -EINVAL);
	assert_int_equal(config_parse_u64("+1", 10, &v), -EINVAL);
	assert_int_equal(v, 7);

	assert_int_equal(config_parse_sec("1.5", 0, 10 * USEC_PER_SEC, &u), 0);
	assert_int_equal(u, 1500000);
	assert_int_equal(config_parse_sec("0.000001", 0, 10 * USEC_PER_SEC, &u), 0);
	assert_int_equal(u, 1);
	u = 7;
	assert_int_equal(config_parse_sec("11", 0, 10 * USEC_PER_SEC, &u), -ERANGE);
	assert_int_equal(config_parse_sec("1,5", 0, 10 * USEC_PER_SEC, &u), -EINVAL);
	assert_int_equal(config_parse_sec("1.5.0", 0, 10 * USEC_PER_SEC, &u), -EINVAL);
	assert_int_equal(config_parse_sec("99999999999999999999", 0, UINT64_MAX, &u), -ERANGE);
	assert_int_equal(u, 7);

	assert_int_equal(config_parse_bool("yes", &b), 0);
	assert_true(b);
	assert_int_equal(config_parse_bool("off", &b), 0);
	assert_false(b);
	assert_int_equal(config_parse_bool("Yes", &b), -EINVAL);
	assert_int_equal(config_parse_bool("", &b), -EINVAL);
	assert_false(b);
}

/* ------------------------------------------------------------ loader */

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "we");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_load(void **unused)
{
	char dir[] = "/tmp/test-daemon-config.XXXXXX", main_file[256], dropins[256], err[512];
	struct config c;

	assert_non_null(mkdtemp(dir));
	snprintf(main_file, sizeof(main_file), "%s/barrierd.conf", dir);
	snprintf(dropins, sizeof(dropins), "%s/conf.d", dir);
	assert_int_equal(mkdir(dropins, 0755), 0);
	write_file(dir, "barrierd.conf", "[Daemon]\nPollIntervalSec=2\n[Mapping]\nName=a\nDevice=/dev/sda\n");
	write_file(dropins, "20-b.conf", "[Mapping]\nName=b\nDevice=/dev/sdb\n[Daemon]\nHoldDownSec=9\n");
	write_file(dropins, "10-daemon.conf", "[Daemon]\nPollIntervalSec=0.5\nHoldDownSec=7\n");
	write_file(dropins, "ignored.txt", "garbage\n");
	write_file(dropins, ".hidden.conf", "garbage\n");

	/* Missing files are fine; a missing named file too (the default path). */
	base(&c);
	assert_int_equal(config_load(&c, "/nonexistent/barrierd.conf", "/nonexistent.d", err, sizeof(err)), 0);
	assert_int_equal(c.n_mappings, 0);
	config_done(&c);

	base(&c);
	assert_int_equal(config_load(&c, main_file, dropins, err, sizeof(err)), 0);
	/* Drop-ins in name order after the main file: later values win. */
	assert_int_equal(c.poll_interval_usec, 500 * USEC_PER_MSEC);
	assert_int_equal(c.policy.holddown_usec, 9 * USEC_PER_SEC);
	assert_int_equal(c.n_mappings, 2);
	assert_string_equal(c.mappings[0].name, "a");
	assert_string_equal(c.mappings[1].name, "b");
	assert_non_null(strstr(c.mappings[1].file, "/conf.d/20-b.conf"));
	assert_int_equal(c.mappings[1].line, 1);
	config_done(&c);

	/* An error in the last drop-in: nothing of any file is applied. */
	write_file(dropins, "30-bad.conf", "[Daemon]\nHoldDownSec=1\n[Mapping]\nName=a\nDevice=/dev/sdc\n");
	base(&c);
	assert_int_equal(config_load(&c, main_file, dropins, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "/conf.d/30-bad.conf:4: Name=a: already configured at "));
	assert_non_null(strstr(err, "/barrierd.conf:3"));
	same_as_base(&c);
	config_done(&c);

	/* A drop-in that is not a regular file, an unreadable main file. */
	assert_int_equal(unlink(strcat(strcpy(err, dropins), "/30-bad.conf")), 0);
	assert_int_equal(mkdir(strcat(strcpy(err, dropins), "/40-dir.conf"), 0755), 0);
	base(&c);
	assert_int_equal(config_load(&c, main_file, dropins, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "40-dir.conf: not a regular file"));
	same_as_base(&c);
	config_done(&c);
	base(&c);
	assert_int_equal(config_load(&c, dir, NULL, err, sizeof(err)), -EINVAL);
	same_as_base(&c);
	config_done(&c);

	/* /dev/null stands for an empty file. */
	base(&c);
	assert_int_equal(config_load(&c, "/dev/null", NULL, err, sizeof(err)), 0);
	assert_int_equal(c.n_mappings, 0);
	config_done(&c);

	(void)!system(strcat(strcpy(err, "rm -rf "), dir));
}

/*
 * The shipped example (installed as /etc/barrierd.conf) says what the
 * defaults are: read as it is, and with every commented key uncommented,
 * it must still be the defaults, AdoptHoldOnFlushErrorMSec= off included.
 */
static void test_example(void **unused)
{
	const char *example = DATA_DIR "/../../../daemon/barrierd.conf.example";
	char err[CONFIG_ERROR_MAX], text[8192];
	struct config c, def;
	size_t n = 0;
	FILE *f;

	config_init(&def);
	config_init(&c);
	assert_int_equal(config_load(&c, example, NULL, err, sizeof(err)), 0);
	assert_int_equal(c.adopt_hold_ms, 0);
	assert_int_equal(c.n_mappings, 0);
	config_done(&c);

	/* Uncomment "#Key=value" lines of [Daemon] (the [Mapping] ones are an example). */
	f = fopen(example, "re");
	assert_non_null(f);
	while (fgets(text + n, (int)(sizeof(text) - n), f)) {
		char *line = text + n;

		if (!strncmp(line, "#[Mapping]", 10))
			break;
		if (line[0] == '#' && line[1] >= 'A' && line[1] <= 'Z' && strchr(line, '='))
			memmove(line, line + 1, strlen(line));
		n += strlen(line);
		assert_true(n < sizeof(text) - 1);
	}
	fclose(f);
	config_init(&c);
	assert_int_equal(config_parse(&c, "example", text, n, err, sizeof(err)), 0);
	assert_int_equal(c.adopt_hold_ms, def.adopt_hold_ms);
	assert_int_equal(c.adopt_hold_ms, 0);
	assert_int_equal(c.hold_ms, def.hold_ms);
	assert_int_equal(c.poll_interval_usec, def.poll_interval_usec);
	assert_int_equal(c.fallback, def.fallback);
	assert_int_equal(c.policy.holddown_usec, def.policy.holddown_usec);
	assert_int_equal(c.policy.holddown_max_usec, def.policy.holddown_max_usec);
	assert_int_equal(c.policy.on_flush_error, def.policy.on_flush_error);
	config_done(&c);
	config_done(&def);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_nul_and_long_lines),
		cmocka_unit_test(test_too_many_mappings),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_value_parsers),
		cmocka_unit_test(test_load),
		cmocka_unit_test(test_example),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
