// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dmb-ordercheck: reads blkparse's default output of one blktrace run over
 * a dm device and its backing disk, and reports every violation of the
 * barrier contract (order.c).  Exit status: 0 no violation, 1 violations,
 * 2 the trace is unusable (lost events, events that do not add up), 64
 * bad usage.  With --min-violations N (a negative control) the status is
 * 0 only when at least N barriers break a rule.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "order.h"
#include "trace.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: dmb-ordercheck [options] BLKPARSE-OUTPUT|-\n"
		"Checks the barrier contract in blkparse's default output of one blktrace\n"
		"run over a dm device and its disk (blktrace -d /dev/dm-N -d /dev/sdX).\n"
		"  -d, --dm MAJ,MIN          the dm device (default: the source of the remaps)\n"
		"  -D, --durability          also check durability (modes flush and fua)\n"
		"  -W, --write-through       the disk has no volatile write cache\n"
		"  -m, --map FILE            name bios by dmb-orderload --map FILE\n"
		"  -r, --max-report N        violations printed per rule (default 20)\n"
		"  -n, --min-bios N          the trace must hold at least N bios (default 1)\n"
		"  -v, --min-violations N    negative control: succeed only with >= N violations\n"
		"  -h, --help                this text\n"
		"Exit status: 0 clean, 1 violations, 2 trace unusable, 64 usage.\n");
}


int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "dm", required_argument, NULL, 'd' },
		{ "durability", no_argument, NULL, 'D' },
		{ "write-through", no_argument, NULL, 'W' },
		{ "map", required_argument, NULL, 'm' },
		{ "max-report", required_argument, NULL, 'r' },
		{ "min-bios", required_argument, NULL, 'n' },
		{ "min-violations", required_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct ord_opts o = { 0 };
	struct ord_names names = { 0 };
	struct ord_report rep;
	struct trace t = { 0 };
	const char *map = NULL;
	uint64_t max_report = 20, min_bios = 1, min_viol = 0, total = 0;
	bool negative = false;
	_cleanup_fclose_ FILE *in = NULL;
	uint32_t bad_line = 0;
	unsigned int maj, min;
	char dummy;
	int c, r, rc;

	while ((c = getopt_long(argc, argv, "d:DWm:r:n:v:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (sscanf(optarg, "%u,%u%c", &maj, &min, &dummy) != 2 || maj > 4095 ||
			    min > 0xfffff || (!maj && !min)) {
				fprintf(stderr, "dmb-ordercheck: --dm '%s' is not MAJOR,MINOR\n", optarg);
				return 64;
			}
			o.dm_dev = TDEV(maj, min);
			break;
		case 'D':
			o.durability = true;
			break;
		case 'W':
			o.write_through = true;
			break;
		case 'm':
			map = optarg;
			break;
		case 'r':
		case 'n':
		case 'v':
			if (parse_u64(optarg, c == 'r' ? &max_report : c == 'n' ? &min_bios : &min_viol) < 0) {
				fprintf(stderr, "dmb-ordercheck: -%c: '%s' is not a number\n", c, optarg);
				return 64;
			}
			if (c == 'v')
				negative = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 64;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return 64;
	}
	if (max_report > 1000000)
		max_report = 1000000;

	if (strcmp(argv[optind], "-") == 0) {
		r = trace_read(stdin, &t, &bad_line);
	} else {
		in = fopen(argv[optind], "re");
		if (!in) {
			fprintf(stderr, "dmb-ordercheck: cannot open %s: %m\n", argv[optind]);
			return 2;
		}
		r = trace_read(in, &t, &bad_line);
	}
	if (r == -EINVAL) {
		fprintf(stderr, "dmb-ordercheck: line %" PRIu32 " is not blkparse's default output nor a tracefs block event\n", bad_line);
		trace_free(&t);
		return 2;
	}
	if (r < 0) {
		fprintf(stderr, "dmb-ordercheck: reading the trace failed: %s\n", strerror(-r));
		trace_free(&t);
		return 2;
	}
	if (map) {
		_cleanup_fclose_ FILE *mf = fopen(map, "re");

		if (!mf || ord_names_read(mf, &names) < 0) {
			fprintf(stderr, "dmb-ordercheck: cannot read %s: %m\n", map);
			trace_free(&t);
			return 2;
		}
	}

	r = ord_check(t.ev, t.n, &o, &rep);
	if (r < 0) {
		fprintf(stderr, "dmb-ordercheck: %s\n", strerror(-r));
		rc = 2;
		goto out;
	}
	if (t.raw_time)
		printf("times: tracefs counter clock, 1 ns here = 1 traced event\n");
	ord_print(stdout, &rep, &names, (unsigned int)max_report);
	ord_print_summary(stdout, &rep);
	for (int i = 0; i < ORD_NRULES; i++)
		total += rep.violations[i];

	rc = 0;
	if (t.skips) {
		printf("UNUSABLE: the trace reports %" PRIu64 " lost events\n", t.skips);
		rc = 2;
	} else if (rep.problems) {
		printf("UNUSABLE: %" PRIu64 " inconsistencies in the trace; first: %s\n", rep.problems,
		       rep.problem);
		rc = 2;
	} else if (rep.nbios < min_bios) {
		printf("UNUSABLE: %zu bios in the trace, fewer than %" PRIu64 "\n", rep.nbios, min_bios);
		rc = 2;
	} else if (negative) {
		if (total >= min_viol) {
			printf("negative control: %" PRIu64 " violations found, at least %" PRIu64 " wanted: ok\n",
			       total, min_viol);
		} else {
			printf("negative control FAILED: %" PRIu64 " violations, at least %" PRIu64 " wanted\n",
			       total, min_viol);
			rc = 1;
		}
	} else if (total) {
		rc = 1;
	}
out:
	ord_report_free(&rep);
	ord_names_free(&names);
	trace_free(&t);
	return rc;
}
