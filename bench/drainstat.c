// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dmb-drainstat: per-barrier times from a block trace of a dm device and its
 * disk (tracefs text or blkparse's default output, as dmb-ordercheck reads
 * it, through the same parser and bio matching in tests/tools/order.c).  For every barrier
 * bio that sent a command to the disk:
 *
 *   drain    its arrival on the dm device (Q) to the first disk command
 *            issued for it (D): the time it waited for earlier I/O to
 *            drain, plus the target's own latency;
 *   total    its arrival to its completion on the dm device (C).
 *
 * Prints one line: "barriers N timed M drain_us p50 p90 p99 max total_us
 * p50 p90 p99 max".
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "order.h"
#include "trace.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of a sorted array, in microseconds. */
static double pct_us(const uint64_t *v, size_t n, double p)
{
	size_t i;

	if (!n)
		return 0;
	i = (size_t)(p / 100.0 * (double)n + 0.999999);
	i = i ? i - 1 : 0;
	return (double)v[i < n ? i : n - 1] / 1000.0;
}

int main(int argc, char **argv)
{
	struct ord_opts o = { 0 };
	struct ord_report rep;
	struct trace t = { 0 };
	uint64_t *drain, *total;
	size_t m = 0, nb = 0, i;
	uint32_t bad_line = 0;
	FILE *in;
	int r;

	if (argc != 2) {
		fprintf(stderr, "usage: dmb-drainstat BLKPARSE-OUTPUT\n");
		return 64;
	}
	in = fopen(argv[1], "re");
	if (!in) {
		fprintf(stderr, "dmb-drainstat: cannot open %s: %m\n", argv[1]);
		return 2;
	}
	r = trace_read(in, &t, &bad_line);
	fclose(in);
	if (r < 0) {
		fprintf(stderr, "dmb-drainstat: reading the trace failed at line %" PRIu32 ": %s\n",
			bad_line, strerror(-r));
		trace_free(&t);
		return 2;
	}
	if (t.raw_time) {
		/* The verifier's "counter" clock counts events, not time. */
		fprintf(stderr,
			"dmb-drainstat: %s has no times (a tracefs clock that counts events); trace with a ns clock\n",
			argv[1]);
		trace_free(&t);
		return 2;
	}
	r = ord_check(t.ev, t.n, &o, &rep);
	if (r < 0) {
		fprintf(stderr, "dmb-drainstat: %s\n", strerror(-r));
		trace_free(&t);
		return 2;
	}
	drain = calloc(rep.nbios + 1, sizeof(*drain));
	total = calloc(rep.nbios + 1, sizeof(*total));
	if (!drain || !total) {
		fprintf(stderr, "dmb-drainstat: out of memory\n");
		return 2;
	}
	for (i = 0; i < rep.nbios; i++) {
		const struct ord_bio *b = &rep.bios[i];

		if (!b->barrier)
			continue;
		nb++;
		if (b->d_first == ORD_NEVER || b->c == ORD_NEVER || b->d_first < b->q)
			continue;
		drain[m] = b->d_first - b->q;
		total[m] = b->c - b->q;
		m++;
	}
	qsort(drain, m, sizeof(*drain), cmp_u64);
	qsort(total, m, sizeof(*total), cmp_u64);
	printf("barriers %zu timed %zu drain_us %.0f %.0f %.0f %.0f total_us %.0f %.0f %.0f %.0f\n", nb, m,
	       pct_us(drain, m, 50), pct_us(drain, m, 90), pct_us(drain, m, 99), pct_us(drain, m, 100),
	       pct_us(total, m, 50), pct_us(total, m, 90), pct_us(total, m, 99), pct_us(total, m, 100));
	free(drain);
	free(total);
	ord_report_free(&rep);
	trace_free(&t);
	return m ? 0 : 1;
}
