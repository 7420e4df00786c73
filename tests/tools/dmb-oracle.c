// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dmb-oracle: the fault campaign's oracle (oracle.c has the rules).  Reads
 * the workload's ops log (dmb-faultload --log), the dmb_fault target's bio
 * log and the campaign runner's events, prints one line per rule and one
 * per violation.  Exit status: 0 no violation, 1 violations, 2 a log is
 * unreadable or malformed, 64 bad usage.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "macro.h"
#include "oracle.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: dmb-oracle --ops FILE --bios FILE --events FILE [options]\n"
		"Checks what a dmb-faultload run's ops returned against the dmb_fault\n"
		"target's bio log and the campaign's events (mode timeline).\n"
		"  -o, --ops FILE          dmb-faultload --log output\n"
		"  -b, --bios FILE         the fault target's bio log\n"
		"  -e, --events FILE       the campaign runner's event log\n"
		"  -H, --hold-ms N         hold_on_flush_error (default: the start event's)\n"
		"  -s, --slack-ms N        allowed on top of the hold per op (default 1000)\n"
		"  -r, --max-report N      violations printed per rule (default 20)\n"
		"  -p, --promised FILE     write the writes a judged barrier promised\n"
		"                          (\"<sector> <sectors> <op id> <kind>\"), for a\n"
		"                          readback after a power cut\n"
		"  -h, --help              this text\n"
		"Exit status: 0 clean, 1 violations, 2 unusable logs, 64 usage.\n");
}


typedef int (*reader_fn)(struct orc_input *, FILE *, uint32_t *);

static int read_log(struct orc_input *in, const char *what, const char *path, reader_fn fn)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	uint32_t bad = 0;
	int r;

	if (!f) {
		fprintf(stderr, "dmb-oracle: cannot read %s log %s: %m\n", what, path);
		return -errno;
	}
	r = fn(in, f, &bad);
	if (r == -EINVAL)
		fprintf(stderr, "dmb-oracle: %s:%" PRIu32 ": malformed %s line\n", path, bad, what);
	else if (r < 0)
		fprintf(stderr, "dmb-oracle: reading %s: %s\n", path, strerror(-r));
	else if (ferror(f))
		fprintf(stderr, "dmb-oracle: reading %s failed\n", path), r = -EIO;
	return r;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "ops", required_argument, NULL, 'o' },
		{ "bios", required_argument, NULL, 'b' },
		{ "events", required_argument, NULL, 'e' },
		{ "hold-ms", required_argument, NULL, 'H' },
		{ "slack-ms", required_argument, NULL, 's' },
		{ "max-report", required_argument, NULL, 'r' },
		{ "promised", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct orc_opts o = { .hold_ms = -1, .slack_ms = 1000, .max_report = 20 };
	const char *ops = NULL, *bios = NULL, *events = NULL, *promised = NULL;
	_cleanup_fclose_ FILE *pf = NULL;
	struct orc_input in = { 0 };
	struct orc_report rep;
	struct timespec t0, t1;
	uint64_t v;
	int c, r;

	while ((c = getopt_long(argc, argv, "o:b:e:H:s:r:p:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p': promised = optarg; continue;
		case 'o': ops = optarg; continue;
		case 'b': bios = optarg; continue;
		case 'e': events = optarg; continue;
		case 'h': usage(stdout); return 0;
		case '?': return 64;
		default: break;
		}
		if (parse_u64(optarg, &v) < 0 || (c == 'H' && v > 600000) ||
		    (c == 's' && v > 86400000)) {
			fprintf(stderr, "dmb-oracle: -%c '%s' is not a number in range\n", c, optarg);
			return 64;
		}
		switch (c) {
		case 'H': o.hold_ms = (int64_t)v; break;
		case 's': o.slack_ms = v; break;
		case 'r': o.max_report = v; break;
		}
	}
	if (!ops || !bios || !events || optind != argc) {
		usage(stderr);
		return 64;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (read_log(&in, "ops", ops, orc_read_ops) < 0 ||
	    read_log(&in, "bios", bios, orc_read_bios) < 0 ||
	    read_log(&in, "events", events, orc_read_events) < 0) {
		orc_input_free(&in);
		return 2;
	}
	if (promised) {
		pf = fopen(promised, "we");
		if (!pf) {
			fprintf(stderr, "dmb-oracle: cannot write %s: %m\n", promised);
			orc_input_free(&in);
			return 2;
		}
		o.promised = pf;
	}
	r = orc_check(&in, &o, &rep, stdout);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	orc_input_free(&in);
	if (r < 0) {
		fprintf(stderr, "dmb-oracle: %s\n", strerror(-r));
		return 2;
	}
	fprintf(stderr, "dmb-oracle: checked in %.3f s\n",
		(double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	if (fflush(stdout) != 0 || (pf && fflush(pf) != 0)) {
		fprintf(stderr, "dmb-oracle: writing the report failed: %m\n");
		return 2;
	}
	return orc_total_violations(&rep) ? 1 : 0;
}
