// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-tools-order.c: the ordering verifier's parser and checker
 * (tests/tools/trace.c, order.c) on blkparse lines and on two real traces
 * recorded in the test guest (tests/unit/data/README): the barrier flush
 * trace must be clean, the dm-linear one must break every rule, and the
 * clean trace with one fault put in by hand must show that fault: a write
 * completing after a barrier started (drain), a write started before a
 * barrier completed (overtake), the disk's flushes removed (durable).
 * And flushes that libata requeues are followed to their completion.
 * Small synthetic tracefs traces pin how completions are paired with
 * their Qs: empty flushes all share one key (order.c, pair_own()); and
 * the bound of the overtake rule, T(B): a later bio may reach the disk
 * once the target is done with the barrier, before dm core completes it.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../tools/order.h"
#include "../tools/trace.h"

#ifndef DATA_DIR
#define DATA_DIR "tests/unit/data"
#endif

/* ------------------------------------------------------------ parser */

static void test_rwbs(void **state)
{
	static const struct {
		const char *s;
		uint16_t f;
	} good[] = {
		{ "W", TF_WRITE },
		{ "WS", TF_WRITE | TF_SYNC },
		{ "FWS", TF_PREFLUSH | TF_WRITE | TF_SYNC },
		{ "WFS", TF_WRITE | TF_FUA | TF_SYNC },
		{ "FWFS", TF_PREFLUSH | TF_WRITE | TF_FUA | TF_SYNC },
		{ "FN", TF_PREFLUSH | TF_NONE },
		{ "N", TF_NONE },
		{ "R", TF_READ },
		{ "RA", TF_READ | TF_AHEAD },
		{ "WSM", TF_WRITE | TF_SYNC | TF_META },
		{ "D", TF_DISCARD | TF_WRITE },
	};
	static const char *const bad[] = { "", "F", "X", "WX", "WSS", "FF", "SW" };
	uint16_t f;
	char buf[8];

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		f = 0;
		if (trace_parse_rwbs(good[i].s, &f) < 0 || f != good[i].f)
			fail_msg("rwbs '%s': flags %#x, want %#x", good[i].s, f, good[i].f);
		trace_fmt_rwbs(f, buf);
		assert_string_equal(buf, good[i].s);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (trace_parse_rwbs(bad[i], &f) != -EINVAL)
			fail_msg("rwbs '%s' accepted", bad[i]);
}

static void test_lines(void **state)
{
	struct tev ev;

	(void)state;
	assert_int_equal(trace_parse_line(
		"254,0    0        1     0.000000000   235  Q  WS 1076920 + 8 [iou-wrk-234]\n", &ev), 1);
	assert_int_equal(ev.act, 'Q');
	assert_int_equal(ev.dev, TDEV(254, 0));
	assert_int_equal(ev.sector, 1076920);
	assert_int_equal(ev.nsect, 8);
	assert_int_equal(ev.pid, 235);
	assert_int_equal(ev.flags, TF_WRITE | TF_SYNC);

	assert_int_equal(trace_parse_line(
		"  8,0    0        1     0.000898700   235  A  WS 1076920 + 8 <- (254,0) 1076912\n", &ev), 1);
	assert_int_equal(ev.act, 'A');
	assert_int_equal(ev.from_dev, TDEV(254, 0));
	assert_int_equal(ev.from_sector, 1076912);
	assert_int_equal(ev.t, 898700);

	/* Completions carry the error as blkparse prints the u16. */
	assert_int_equal(trace_parse_line(
		"  8,0    1       12     1.5   0  C  FN 0 [65531]\n", &ev), 1);
	assert_int_equal(ev.err, -EIO);
	assert_int_equal(ev.t, 1000000005ULL);
	assert_int_equal(ev.flags, TF_PREFLUSH | TF_NONE);
	assert_int_equal(trace_parse_line(
		"  8,0    1       13     1.000000010     0  C WFS 64 + 8 [0]\n", &ev), 1);
	assert_int_equal(ev.err, 0);
	assert_true(ev.flags & TF_FUA);

	/* A zero-sized flush bio on the dm device. */
	assert_int_equal(trace_parse_line(
		"254,0    0       40     0.1   235  Q FWS [iou-wrk-234]\n", &ev), 1);
	assert_false(ev.has_sector);
	/* blkparse shows no context: completions are paired FIFO. */
	assert_int_equal(trace_parse_line(
		"254,0    0       41     0.2   235  C FWS 0 [0]\n", &ev), 1);
	assert_false(ev.proc_ctx);

	/* libata's error handler: SCSI passthrough, no data of ours. */
	assert_int_equal(trace_parse_line("  8,0    0     1777     0.402278340    17  R   R [0]\n", &ev), 0);
	assert_int_equal(trace_parse_line("  8,0    0     1779     0.404448440   156  D   R 4 [scsi_eh_2]\n", &ev), 0);
	assert_int_equal(trace_parse_line("  8,0    0     1780     0.404448440   156  C   R (12 00) [0]\n", &ev), 0);

	/* blkparse's summary is not an event. */
	assert_int_equal(trace_parse_line("CPU0 (sda):\n", &ev), 0);
	assert_int_equal(trace_parse_line(" Reads Queued:           0,        0KiB\n", &ev), 0);
	assert_int_equal(trace_parse_line("\n", &ev), 0);

	/* Malformed events. */
	assert_int_equal(trace_parse_line("  8,0    0 1 0.1 1  Q  WS 12 + x [a]\n", &ev), -EINVAL);
	assert_int_equal(trace_parse_line("  8,0    0 1 0.1 1  Q  WQ 12 + 8 [a]\n", &ev), -EINVAL);
	assert_int_equal(trace_parse_line("  8,0    0 1 0.1 1  A  WS 12 + 8 <- 254 0\n", &ev), -EINVAL);
	assert_int_equal(trace_parse_line("  8,0    0 1 0.1 1  C  WS 12 + 8 [70000]\n", &ev), -EINVAL);
	assert_int_equal(trace_parse_line("  8,0    0 1 0.1000000000 1  Q  WS 12 + 8 [a]\n", &ev), -EINVAL);
}

/* The same events as tracefs prints the block tracepoints (6.1, 7.x). */
static void test_ftrace_lines(void **state)
{
	struct tev ev;

	(void)state;
	assert_int_equal(trace_parse_ftrace_line(
		"   dmb-orderload-233     [001] .....    12.047070: block_bio_queue: 254,0 WS 1238536 + 8 [dmb-orderload]\n",
		&ev), 1);
	assert_int_equal(ev.act, 'Q');
	assert_int_equal(ev.dev, TDEV(254, 0));
	assert_int_equal(ev.sector, 1238536);
	assert_int_equal(ev.nsect, 8);
	assert_int_equal(ev.pid, 233);
	assert_int_equal(ev.cpu, 1);
	assert_int_equal(ev.t, 12047070000ULL);
	assert_int_equal(ev.flags, TF_WRITE | TF_SYNC);

	assert_true(ev.proc_ctx);

	assert_int_equal(trace_parse_ftrace_line(
		"   dmb-orderload-233     [001] .....    12.048243: block_bio_remap: 8,0 WS 1238536 + 8 <- (254,0) 1238530\n",
		&ev), 1);
	assert_int_equal(ev.act, 'A');
	assert_int_equal(ev.from_dev, TDEV(254, 0));
	assert_int_equal(ev.from_sector, 1238530);

	/* A task name with dashes and spaces, a tgid column. */
	assert_int_equal(trace_parse_ftrace_line(
		"  my-odd task-17 (   17) [000] d.h1.     1.000001: block_bio_complete: 254,0 WFS 64 + 8 [-5]\n",
		&ev), 1);
	assert_int_equal(ev.pid, 17);
	assert_int_equal(ev.act, 'C');
	assert_int_equal(ev.err, -EIO);
	assert_true(ev.flags & TF_FUA);
	assert_false(ev.proc_ctx); /* 'h': hardirq */

	/* The flush request: "FF" in the tracepoints, "FN" in blkparse. */
	assert_int_equal(trace_parse_ftrace_line(
		"    kworker/0:1H-175     [000] .....    12.058195: block_rq_issue: 8,0 FF 0 () 0 + 0 [kworker/0:1H]\n",
		&ev), 1);
	assert_int_equal(ev.act, 'D');
	assert_int_equal(ev.flags, TF_PREFLUSH | TF_NONE);
	assert_false(ev.has_sector);
	assert_int_equal(trace_parse_ftrace_line(
		"    kworker/u4:4-154     [000] ..s1.    12.060013: block_rq_complete: 8,0 FF () 18446744073709551615 + 0 [0]\n",
		&ev), 1);
	assert_int_equal(ev.act, 'C');
	assert_int_equal(ev.flags, TF_PREFLUSH | TF_NONE);
	/* A completion keeps its sector, as blkparse's "SECTOR [err]". */
	assert_int_equal(trace_parse_ftrace_line(
		"          <idle>-0       [000] d.s2.    12.060337: block_rq_complete: 8,0 WS () 4096 + 0 [0]\n",
		&ev), 1);
	assert_true(ev.has_sector);
	assert_int_equal(ev.sector, 4096);
	assert_int_equal(ev.pid, 0);
	assert_false(ev.proc_ctx); /* 's': softirq */

	/* 6.10+ print the I/O priority before the last field. */
	assert_int_equal(trace_parse_ftrace_line(
		"  kworker/1:1H-60 [001] ..... 5.000002: block_rq_issue: 8,0 WFS 4096 () 64 + 8 none,0,0 [kworker/1:1H]\n",
		&ev), 1);
	assert_int_equal(ev.sector, 64);
	assert_int_equal(ev.nsect, 8);
	assert_int_equal(trace_parse_ftrace_line(
		"  <idle>-0 [001] d.h1. 5.000009: block_rq_requeue: 8,0 WFS () 64 + 8 be,0,4 [0]\n", &ev), 1);
	assert_int_equal(ev.act, 'R');

	/* The counter clock prints a plain count. */
	assert_int_equal(trace_parse_ftrace_line(
		"   dmb-orderload-719     [000] .....        123456: block_bio_queue: 254,0 WS 8 + 8 [dmb-orderload]\n",
		&ev), 1);
	assert_int_equal(ev.t, 123456);
	assert_true(ev.raw_time);

	/*
	 * The context is the FLAGS column's third character: '.' process
	 * context; h H s z Z irq context, whatever task it shows (the one
	 * interrupted, the submitter itself included).  Before 5.13 the
	 * column has 4 characters; with irq-info off there is none, and the
	 * context is not known.
	 */
	{
		static const struct {
			const char *flags;
			bool proc;
		} ctx[] = {
			{ ".....", true }, { ".N...", true }, { "d..1.", true }, { "b....", true },
			{ "....", true }, { "..s..", false }, { "d.s2.", false }, { "d.h1.", false },
			{ "dNH2.", false }, { "d.Z1.", false }, { "..s1", false }, { "", false },
		};
		char line[160];

		for (size_t i = 0; i < sizeof(ctx) / sizeof(ctx[0]); i++) {
			snprintf(line, sizeof(line),
				 "    dmb-syncload-203     [001] %s        15779: block_bio_complete: 254,0 FWS 0 + 0 [0]\n",
				 ctx[i].flags);
			assert_int_equal(trace_parse_ftrace_line(line, &ev), 1);
			assert_int_equal(ev.pid, 203);
			assert_int_equal(ev.t, 15779);
			if (ev.proc_ctx != ctx[i].proc)
				fail_msg("flags '%s': process context %d", ctx[i].flags, ev.proc_ctx);
		}
	}

	/* Not ours: headers, other block events; malformed block events. */
	assert_int_equal(trace_parse_ftrace_line("#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n", &ev), 0);
	assert_int_equal(trace_parse_ftrace_line(
		"  a-1 [000] ..... 1.000000: block_plug: [a]\n", &ev), 0);
	assert_int_equal(trace_parse_ftrace_line(
		"  a-1 [000] ..... 1.000000: block_bio_queue: 8,0 WQ 12 + 8 [a]\n", &ev), -EINVAL);
	assert_int_equal(trace_parse_ftrace_line(
		"  a-1 [000] ..... 1.000000: block_rq_issue: 8,0 WS 4096 12 + 8 [a]\n", &ev), -EINVAL);
	assert_int_equal(trace_parse_ftrace_line(
		"  a-1 [000] ..... 1.000000: block_bio_complete: 8,0 WS 12 + 8 [x]\n", &ev), -EINVAL);
	assert_int_equal(trace_parse_ftrace_line(
		"  a [000] ..... 1.000000: block_bio_queue: 8,0 WS 12 + 8 [a]\n", &ev), -EINVAL);
}

/* tracefs: same-microsecond events keep their order; LOST lines count. */
static void test_ftrace_read(void **state)
{
	static const char text[] =
		"# tracer: nop\n"
		"  a-1 [000] ..... 1.000005: block_bio_queue: 254,0 WS 8 + 8 [a]\n"
		"  a-1 [000] ..... 1.000005: block_bio_remap: 8,0 WS 8 + 8 <- (254,0) 8\n"
		"CPU:1 [LOST 3 EVENTS]\n"
		"  a-1 [000] ..... 1.000005: block_bio_queue: 8,0 WS 8 + 8 [a]\n";
	struct trace t = { 0 };
	uint32_t bad = 0;
	FILE *f = fmemopen((void *)text, sizeof(text) - 1, "r");

	(void)state;
	assert_non_null(f);
	assert_int_equal(trace_read(f, &t, &bad), 0);
	fclose(f);
	assert_int_equal(t.n, 3);
	assert_int_equal(t.skips, 3);
	assert_int_equal(t.ev[0].act, 'Q');
	assert_int_equal(t.ev[1].act, 'A');
	assert_int_equal(t.ev[2].dev, TDEV(8, 0));
	assert_true(t.ev[0].t < t.ev[1].t && t.ev[1].t < t.ev[2].t);
	trace_free(&t);
}

/* ------------------------------------------------ pairing C with Q */

/*
 * A synthetic tracefs trace (counter clock) checked with @o;
 * @drop_ctx: as if no event's context were known (blkparse's case).
 */
static void check_text_opts(const char *text, bool drop_ctx, const struct ord_opts *o,
			    struct trace *t, struct ord_report *rep)
{
	uint32_t bad = 0;
	FILE *f = fmemopen((void *)text, strlen(text), "r");

	assert_non_null(f);
	*t = (struct trace){ 0 };
	if (trace_read(f, t, &bad) < 0)
		fail_msg("line %u unreadable", bad);
	fclose(f);
	for (size_t i = 0; drop_ctx && i < t->n; i++)
		t->ev[i].proc_ctx = false;
	assert_int_equal(ord_check(t->ev, t->n, o, rep), 0);
	if (rep->problems)
		fail_msg("the trace does not add up: %s", rep->problem);
}

/* The same, checked as --durability does. */
static void check_text(const char *text, bool drop_ctx, struct trace *t, struct ord_report *rep)
{
	const struct ord_opts o = { .durability = true };

	check_text_opts(text, drop_ctx, &o, t, rep);
}

static uint64_t total_violations(const struct ord_report *rep)
{
	uint64_t n = 0;

	for (int i = 0; i < ORD_NRULES; i++)
		n += rep->violations[i];
	return n;
}

/*
 * Events 15662-15682 and 15779 of a target-durable trace (dmb-syncload:
 * thread A, pid 202, writes a fresh block O_DIRECT then fdatasync()s;
 * thread B, pid 203, fdatasync()s in a loop), the disk's Qs left out.
 * B's empty flush (Q 15662) is answered in map() without a disk command,
 * its C traced by B in process context at 15779; A's (Q 15670) goes to
 * the disk and completes in softirq at 15676, before A's next write (Q
 * 15677) reaches the disk (D 15680).  FIFO by key gave 15676 to B's Q
 * and 15779 to A's: a false overtake for A's barrier.
 */
static const char evidence_trace[] =
	"    dmb-syncload-203     [001] .....        15662: block_bio_queue: 254,0 FWS 0 + 0 [dmb-syncload]\n"
	"    dmb-syncload-202     [000] .....        15663: block_bio_queue: 254,0 WS 1064 + 8 [dmb-syncload]\n"
	"    dmb-syncload-202     [000] .....        15664: block_bio_remap: 8,0 WS 1064 + 8 <- (254,0) 1064\n"
	"    kworker/0:1H-158     [000] .....        15666: block_rq_issue: 8,0 WS 4096 () 1064 + 8 [kworker/0:1H]\n"
	"          <idle>-0       [000] ..s1.        15667: block_rq_complete: 8,0 WS () 1064 + 8 [0]\n"
	"          <idle>-0       [000] ..s1.        15669: block_bio_complete: 254,0 WS 1064 + 8 [0]\n"
	"    dmb-syncload-202     [000] .....        15670: block_bio_queue: 254,0 FWS 0 + 0 [dmb-syncload]\n"
	"    dmb-syncload-202     [000] .....        15671: block_bio_remap: 8,0 FWS 0 + 0 <- (254,0) 0\n"
	"    kworker/0:1H-158     [000] .....        15673: block_rq_issue: 8,0 FF 0 () 0 + 0 [kworker/0:1H]\n"
	"          <idle>-0       [000] ..s1.        15674: block_rq_complete: 8,0 FF () 18446744073709551615 + 0 [0]\n"
	"          <idle>-0       [000] d.s2.        15675: block_rq_complete: 8,0 WS () 0 + 0 [0]\n"
	"          <idle>-0       [000] d.s2.        15676: block_bio_complete: 254,0 FWS 0 + 0 [0]\n"
	"    dmb-syncload-202     [000] .....        15677: block_bio_queue: 254,0 WS 1072 + 8 [dmb-syncload]\n"
	"    dmb-syncload-202     [000] .....        15678: block_bio_remap: 8,0 WS 1072 + 8 <- (254,0) 1072\n"
	"    kworker/0:1H-158     [000] .....        15680: block_rq_issue: 8,0 WS 4096 () 1072 + 8 [kworker/0:1H]\n"
	"          <idle>-0       [000] ..s1.        15681: block_rq_complete: 8,0 WS () 1072 + 8 [0]\n"
	"          <idle>-0       [000] ..s1.        15682: block_bio_complete: 254,0 WS 1072 + 8 [0]\n"
	"    dmb-syncload-203     [001] .....        15779: block_bio_complete: 254,0 FWS 0 + 0 [0]\n";

/* Bios of evidence_trace, in Q order. */
enum { EV_B_FLUSH, EV_A_W1064, EV_A_FLUSH, EV_A_W1072 };

static void test_pair_own_completion(void **state)
{
	struct trace t;
	struct ord_report rep;
	const struct ord_bio *bf, *af, *w;

	(void)state;
	check_text(evidence_trace, false, &t, &rep);
	assert_int_equal(rep.nbios, 4);
	bf = &rep.bios[EV_B_FLUSH];
	af = &rep.bios[EV_A_FLUSH];
	w = &rep.bios[EV_A_W1072];
	assert_int_equal(rep.barriers, 2);
	assert_int_equal(bf->c, 15779);
	assert_true(bf->own_c);
	assert_int_equal(af->c, 15676);
	assert_false(af->own_c);
	assert_int_equal(af->c_lo, af->c);
	assert_int_equal(af->c_hi, af->c);
	assert_int_equal(rep.own_completions, 1);
	assert_int_equal(rep.ambiguous, 0);
	assert_true(rep.checked[ORD_OVERTAKE] > 0);
	if (total_violations(&rep))
		fail_msg("own completion paired first: %" PRIu64 " overtake violations",
			 rep.violations[ORD_OVERTAKE]);
	ord_report_free(&rep);

	/* A softirq interrupting B shows B's pid: still not B's own C. */
	for (size_t i = 0; i < t.n; i++) {
		if (t.ev[i].t == 15676) {
			assert_false(t.ev[i].proc_ctx);
			t.ev[i].pid = 203;
		}
	}
	assert_int_equal(ord_check(t.ev, t.n, &(struct ord_opts){ .durability = true }, &rep), 0);
	assert_int_equal(rep.bios[EV_B_FLUSH].c, 15779);
	assert_int_equal(rep.bios[EV_A_FLUSH].c, 15676);
	assert_int_equal(total_violations(&rep), 0);
	ord_report_free(&rep);
	trace_free(&t);

	/*
	 * Without the context (blkparse): FIFO by key gives A's barrier
	 * 15779, after A's next write, accepted after it, reached the disk:
	 * the false overtake.  Two Qs of the key were open at each C, so
	 * the pairing is a guess (ambiguous): the rule reads A's earliest
	 * possible completion, 15676, and reports nothing.
	 */
	check_text(evidence_trace, true, &t, &rep);
	af = &rep.bios[EV_A_FLUSH];
	w = &rep.bios[EV_A_W1072];
	assert_int_equal(rep.own_completions, 0);
	assert_int_equal(rep.bios[EV_B_FLUSH].c, 15676);
	assert_int_equal(af->c, 15779);
	assert_true(w->q > af->a_end && w->d_first < af->c);
	assert_int_equal(af->c_lo, 15676);
	assert_int_equal(af->c_hi, 15779);
	assert_int_equal(rep.ambiguous, 2);
	assert_int_equal(total_violations(&rep), 0);
	ord_report_free(&rep);
	trace_free(&t);
}

/*
 * The same shape, but A's next write is dispatched to the disk (D 15676)
 * while A's barrier is still in flight (its flush completes at 15677, the
 * barrier at 15679): a real overtake, still reported, against the end of
 * A's flush (the target finished with the barrier there).
 */
static void test_pair_own_overtake_kept(void **state)
{
	static const char text[] =
		"    dmb-syncload-203     [001] .....        15662: block_bio_queue: 254,0 FWS 0 + 0 [dmb-syncload]\n"
		"    dmb-syncload-202     [000] .....        15663: block_bio_queue: 254,0 WS 1064 + 8 [dmb-syncload]\n"
		"    dmb-syncload-202     [000] .....        15664: block_bio_remap: 8,0 WS 1064 + 8 <- (254,0) 1064\n"
		"    kworker/0:1H-158     [000] .....        15666: block_rq_issue: 8,0 WS 4096 () 1064 + 8 [kworker/0:1H]\n"
		"          <idle>-0       [000] ..s1.        15667: block_rq_complete: 8,0 WS () 1064 + 8 [0]\n"
		"          <idle>-0       [000] ..s1.        15669: block_bio_complete: 254,0 WS 1064 + 8 [0]\n"
		"    dmb-syncload-202     [000] .....        15670: block_bio_queue: 254,0 FWS 0 + 0 [dmb-syncload]\n"
		"    dmb-syncload-202     [000] .....        15671: block_bio_remap: 8,0 FWS 0 + 0 <- (254,0) 0\n"
		"    kworker/0:1H-158     [000] .....        15673: block_rq_issue: 8,0 FF 0 () 0 + 0 [kworker/0:1H]\n"
		"    dmb-syncload-202     [000] .....        15674: block_bio_queue: 254,0 WS 1072 + 8 [dmb-syncload]\n"
		"    dmb-syncload-202     [000] .....        15675: block_bio_remap: 8,0 WS 1072 + 8 <- (254,0) 1072\n"
		"    kworker/0:1H-158     [000] .....        15676: block_rq_issue: 8,0 WS 4096 () 1072 + 8 [kworker/0:1H]\n"
		"          <idle>-0       [000] ..s1.        15677: block_rq_complete: 8,0 FF () 18446744073709551615 + 0 [0]\n"
		"          <idle>-0       [000] d.s2.        15678: block_rq_complete: 8,0 WS () 0 + 0 [0]\n"
		"          <idle>-0       [000] d.s2.        15679: block_bio_complete: 254,0 FWS 0 + 0 [0]\n"
		"          <idle>-0       [000] ..s1.        15680: block_rq_complete: 8,0 WS () 1072 + 8 [0]\n"
		"          <idle>-0       [000] ..s1.        15681: block_bio_complete: 254,0 WS 1072 + 8 [0]\n"
		"    dmb-syncload-203     [001] .....        15779: block_bio_complete: 254,0 FWS 0 + 0 [0]\n";
	struct trace t;
	struct ord_report rep;

	(void)state;
	check_text(text, false, &t, &rep);
	assert_int_equal(rep.nbios, 4);
	assert_int_equal(rep.bios[EV_A_FLUSH].c, 15679);
	assert_int_equal(rep.bios[EV_B_FLUSH].c, 15779);
	assert_int_equal(rep.ambiguous, 0);
	assert_int_equal(rep.violations[ORD_OVERTAKE], 1);
	assert_int_equal(total_violations(&rep), 1);
	assert_int_equal(rep.nv, 1);
	assert_int_equal(rep.v[0].barrier, EV_A_FLUSH);
	assert_int_equal(rep.v[0].worst, EV_A_W1072);
	assert_int_equal(rep.bios[EV_A_FLUSH].t_end, 15677);
	assert_int_equal(rep.v[0].ref_t, 15677);
	assert_int_equal(rep.v[0].worst_t, 15676);
	ord_report_free(&rep);
	trace_free(&t);
}

/*
 * A thread's flushes sometimes reach the disk: B's first one is remapped
 * and completes in softirq (showing the kworker), its second is answered
 * in map().  Its process-context C is its latest Q's, not its oldest
 * without a C so far: the first pass cannot see the softirq C pair up.
 */
static void test_pair_own_latest(void **state)
{
	static const char text[] =
		"    dmb-syncload-203     [000] .....            3: block_bio_queue: 254,0 FWS 0 + 0 [dmb-syncload]\n"
		"    dmb-syncload-203     [000] .....            4: block_bio_remap: 8,0 FWS 0 + 0 <- (254,0) 0\n"
		"    kworker/0:1H-158     [000] .....            6: block_rq_issue: 8,0 FF 0 () 0 + 0 [kworker/0:1H]\n"
		"    kworker/0:1H-158     [000] ..s1.            7: block_rq_complete: 8,0 FF () 18446744073709551615 + 0 [0]\n"
		"    kworker/0:1H-158     [000] d.s2.            8: block_rq_complete: 8,0 WS () 0 + 0 [0]\n"
		"    kworker/0:1H-158     [000] d.s2.            9: block_bio_complete: 254,0 FWS 0 + 0 [0]\n"
		"    dmb-syncload-203     [000] .....           10: block_bio_queue: 254,0 FWS 0 + 0 [dmb-syncload]\n"
		"    dmb-syncload-203     [001] .....           11: block_bio_complete: 254,0 FWS 0 + 0 [0]\n";
	struct trace t;
	struct ord_report rep;

	(void)state;
	check_text(text, false, &t, &rep);
	assert_int_equal(rep.nbios, 2);
	assert_int_equal(rep.bios[0].c, 9);
	assert_false(rep.bios[0].own_c);
	assert_true(rep.bios[0].own_flush);
	assert_int_equal(rep.bios[1].c, 11);
	assert_true(rep.bios[1].own_c);
	assert_int_equal(rep.own_completions, 1);
	assert_int_equal(rep.ambiguous, 0);
	assert_int_equal(total_violations(&rep), 0);
	ord_report_free(&rep);
	trace_free(&t);
}

/*
 * Two empty flushes of two threads, both completed in irq context, the
 * later Q's first: A's (Q 101) is held by the target, which flushes the
 * disk for it from its worker (the disk Q 113 is no remap) and completes
 * it at 117; B's (Q 102) is remapped and completes at 107, and B's next
 * write (Q 108) reaches the disk at 110.  Nothing in the trace tells the
 * two Cs apart.  FIFO gives B's barrier 117, and B's write would break
 * overtake.  The checker keeps FIFO's pairing but counts both as
 * ambiguous, and checks each rule at the end of a bio's range of possible
 * completions (107..117 for both) that breaks it least: overtake at the
 * earliest, drain and durable at the latest.  Nothing is invented, nor
 * reported (nor would be, were the target at fault in this window).
 */
static void test_pair_ambiguous(void **state)
{
	static const char text[] =
		"    dmb-syncload-202     [000] .....          101: block_bio_queue: 254,0 FWS 0 + 0 [dmb-syncload]\n"
		"    dmb-syncload-203     [001] .....          102: block_bio_queue: 254,0 FWS 0 + 0 [dmb-syncload]\n"
		"    dmb-syncload-203     [001] .....          103: block_bio_remap: 8,0 FWS 0 + 0 <- (254,0) 0\n"
		"    kworker/1:1H-44      [001] .....          104: block_rq_issue: 8,0 FF 0 () 0 + 0 [kworker/1:1H]\n"
		"          <idle>-0       [001] ..s1.          105: block_rq_complete: 8,0 FF () 18446744073709551615 + 0 [0]\n"
		"          <idle>-0       [001] d.s2.          106: block_rq_complete: 8,0 WS () 0 + 0 [0]\n"
		"          <idle>-0       [001] d.s2.          107: block_bio_complete: 254,0 FWS 0 + 0 [0]\n"
		"    dmb-syncload-203     [001] .....          108: block_bio_queue: 254,0 WS 2048 + 8 [dmb-syncload]\n"
		"    dmb-syncload-203     [001] .....          109: block_bio_remap: 8,0 WS 2048 + 8 <- (254,0) 2048\n"
		"    kworker/1:1H-44      [001] .....          110: block_rq_issue: 8,0 WS 4096 () 2048 + 8 [kworker/1:1H]\n"
		"          <idle>-0       [001] ..s1.          111: block_rq_complete: 8,0 WS () 2048 + 8 [0]\n"
		"          <idle>-0       [001] ..s1.          112: block_bio_complete: 254,0 WS 2048 + 8 [0]\n"
		"    kworker/u4:5-148     [000] .....          113: block_bio_queue: 8,0 FWS 0 + 0 [kworker/u4:5]\n"
		"    kworker/0:1H-158     [000] .....          114: block_rq_issue: 8,0 FF 0 () 0 + 0 [kworker/0:1H]\n"
		"          <idle>-0       [000] ..s1.          115: block_rq_complete: 8,0 FF () 18446744073709551615 + 0 [0]\n"
		"          <idle>-0       [000] d.s2.          116: block_rq_complete: 8,0 WS () 0 + 0 [0]\n"
		"          <idle>-0       [000] d.s2.          117: block_bio_complete: 254,0 FWS 0 + 0 [0]\n";
	struct trace t;
	struct ord_report rep;
	const struct ord_bio *a, *b, *w;

	(void)state;
	check_text(text, false, &t, &rep);
	assert_int_equal(rep.nbios, 3);
	a = &rep.bios[0];
	b = &rep.bios[1];
	w = &rep.bios[2];
	assert_int_equal(rep.own_completions, 0);
	/* FIFO's pairing, and what it would have meant for B's barrier. */
	assert_int_equal(a->c, 107);
	assert_int_equal(b->c, 117);
	assert_true(w->q > b->a_end && w->d_first < b->c);
	/* The ranges, and no violation. */
	assert_int_equal(a->c_lo, 107);
	assert_int_equal(a->c_hi, 117);
	assert_int_equal(b->c_lo, 107);
	assert_int_equal(b->c_hi, 117);
	assert_int_equal(rep.ambiguous, 2);
	assert_int_equal(rep.barriers, 2);
	if (total_violations(&rep))
		fail_msg("ambiguous pairing: %" PRIu64 " overtake, %" PRIu64 " durable, %" PRIu64
			 " drain violations", rep.violations[ORD_OVERTAKE],
			 rep.violations[ORD_DURABLE], rep.violations[ORD_DRAIN]);
	ord_report_free(&rep);
	trace_free(&t);
}

/* ------------------------------------------------ overtake's bound */

/*
 * The old rule (b), for comparison: barriers some bio accepted after
 * them reached the disk before they completed on the dm device.
 */
static uint64_t strict_overtakes(const struct ord_report *rep)
{
	uint64_t n = 0;

	for (size_t i = 0; i < rep->nbios; i++) {
		const struct ord_bio *b = &rep->bios[i];

		if (!b->barrier || b->skipped)
			continue;
		for (size_t j = 0; j < rep->nbios; j++) {
			const struct ord_bio *x = &rep->bios[j];

			if (!x->skipped && x->q > b->a_end && x->d_first < b->c_lo) {
				n++;
				break;
			}
		}
	}
	return n;
}

/*
 * The shape of the 7.3 trace of issue 29.  An earlier write W (824720)
 * is done.  The empty flush B goes the direct way: its thread remaps it,
 * the disk runs its flush (D 32157, C 32168).  Four writes arrive behind
 * it and are held.  The target's end_io wakes its worker, which remaps
 * them (32170-32173), and the disk issues the first (WS 824736, 32178)
 * before dm core completes B to its submitter (C 254,0 FWS, 32179).  The
 * old rule called this an overtake.  The target was done with B at 32168:
 * its flush had completed, W was done and on stable media.
 */
static const char direct_flush_trace[] =
	"   dmb-orderload-400     [000] .....        32150: block_bio_queue: 254,0 WS 824720 + 8 [dmb-orderload]\n"
	"   dmb-orderload-400     [000] .....        32151: block_bio_remap: 8,0 WS 824720 + 8 <- (254,0) 824720\n"
	"    kworker/0:1H-80      [000] .....        32152: block_rq_issue: 8,0 WS 4096 () 824720 + 8 [kworker/0:1H]\n"
	"          <idle>-0       [000] ..s1.        32153: block_rq_complete: 8,0 WS () 824720 + 8 [0]\n"
	"          <idle>-0       [000] ..s1.        32154: block_bio_complete: 254,0 WS 824720 + 8 [0]\n"
	"     iou-wrk-401         [001] .....        32155: block_bio_queue: 254,0 FWS 0 + 0 [iou-wrk-401]\n"
	"     iou-wrk-401         [001] .....        32156: block_bio_remap: 8,0 FWS 0 + 0 <- (254,0) 0\n"
	"    kworker/1:1H-81      [001] .....        32157: block_rq_issue: 8,0 FF 0 () 0 + 0 [kworker/1:1H]\n"
	"   dmb-orderload-400     [000] .....        32158: block_bio_queue: 254,0 WS 824736 + 8 [dmb-orderload]\n"
	"   dmb-orderload-400     [000] .....        32159: block_bio_queue: 254,0 WS 824744 + 8 [dmb-orderload]\n"
	"   dmb-orderload-400     [000] .....        32160: block_bio_queue: 254,0 WS 824752 + 8 [dmb-orderload]\n"
	"   dmb-orderload-400     [000] .....        32161: block_bio_queue: 254,0 WS 824760 + 8 [dmb-orderload]\n"
	"          <idle>-0       [001] ..s1.        32168: block_rq_complete: 8,0 FF () 18446744073709551615 + 0 [0]\n"
	"    kworker/u9:1-120     [000] .....        32170: block_bio_remap: 8,0 WS 824736 + 8 <- (254,0) 824736\n"
	"    kworker/u9:1-120     [000] .....        32171: block_bio_remap: 8,0 WS 824744 + 8 <- (254,0) 824744\n"
	"    kworker/u9:1-120     [000] .....        32172: block_bio_remap: 8,0 WS 824752 + 8 <- (254,0) 824752\n"
	"    kworker/u9:1-120     [000] .....        32173: block_bio_remap: 8,0 WS 824760 + 8 <- (254,0) 824760\n"
	"    kworker/0:1H-80      [000] .....        32178: block_rq_issue: 8,0 WS 4096 () 824736 + 8 [kworker/0:1H]\n"
	"          <idle>-0       [001] d.s2.        32179: block_bio_complete: 254,0 FWS 0 + 0 [0]\n"
	"    kworker/0:1H-80      [000] .....        32180: block_rq_issue: 8,0 WS 4096 () 824744 + 8 [kworker/0:1H]\n"
	"    kworker/0:1H-80      [000] .....        32181: block_rq_issue: 8,0 WS 4096 () 824752 + 8 [kworker/0:1H]\n"
	"    kworker/0:1H-80      [000] .....        32182: block_rq_issue: 8,0 WS 4096 () 824760 + 8 [kworker/0:1H]\n"
	"          <idle>-0       [000] ..s1.        32183: block_rq_complete: 8,0 WS () 824736 + 8 [0]\n"
	"          <idle>-0       [000] ..s1.        32184: block_bio_complete: 254,0 WS 824736 + 8 [0]\n"
	"          <idle>-0       [000] ..s1.        32185: block_rq_complete: 8,0 WS () 824744 + 8 [0]\n"
	"          <idle>-0       [000] ..s1.        32186: block_bio_complete: 254,0 WS 824744 + 8 [0]\n"
	"          <idle>-0       [000] ..s1.        32187: block_rq_complete: 8,0 WS () 824752 + 8 [0]\n"
	"          <idle>-0       [000] ..s1.        32188: block_bio_complete: 254,0 WS 824752 + 8 [0]\n"
	"          <idle>-0       [000] ..s1.        32189: block_rq_complete: 8,0 WS () 824760 + 8 [0]\n"
	"          <idle>-0       [000] ..s1.        32190: block_bio_complete: 254,0 WS 824760 + 8 [0]\n";

/* Bios of direct_flush_trace, in Q order. */
enum { DF_W, DF_B, DF_W1, DF_W2, DF_W3, DF_W4 };

/* The counter value of a tracefs line. */
static unsigned long line_time(const char *line)
{
	const char *p = strstr(line, ": block_");

	assert_non_null(p);
	while (p > line && p[-1] >= '0' && p[-1] <= '9')
		p--;
	return strtoul(p, NULL, 10);
}

static int cmp_line(const void *a, const void *b)
{
	unsigned long x = line_time(*(char *const *)a), y = line_time(*(char *const *)b);

	return x < y ? -1 : x > y;
}

/*
 * @text with the first occurrence of @from (which must be there) made @to,
 * its lines put back in time order as tracefs prints them.
 */
static char *edit(const char *text, const char *from, const char *to)
{
	const char *p = strstr(text, from);
	size_t n = strlen(text) - strlen(from) + strlen(to) + 1, nl = 0;
	char *s = malloc(n), *out = malloc(n), *line[64], *save = NULL, *l;

	assert_non_null(p);
	assert_non_null(s);
	assert_non_null(out);
	snprintf(s, n, "%.*s%s%s", (int)(p - text), text, to, p + strlen(from));
	for (l = strtok_r(s, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		assert_true(nl < sizeof(line) / sizeof(line[0]));
		line[nl++] = l;
	}
	/* Only the edited line moves: the others are in order already. */
	qsort(line, nl, sizeof(line[0]), cmp_line);
	out[0] = 0;
	for (size_t i = 0; i < nl; i++) {
		strcat(out, line[i]);
		strcat(out, "\n");
	}
	free(s);
	return out;
}

/* Two edits: a bio's two events moved together. */
static char *edit2(const char *text, const char *from1, const char *to1,
		   const char *from2, const char *to2)
{
	char *once = edit(text, from1, to1), *twice = edit(once, from2, to2);

	free(once);
	return twice;
}

static void test_overtake_direct_flush(void **state)
{
	const struct ord_opts drain = { 0 };
	struct trace t;
	struct ord_report rep;
	const struct ord_bio *b, *w;
	char *text;

	(void)state;
	check_text(direct_flush_trace, false, &t, &rep);
	assert_int_equal(rep.nbios, 6);
	b = &rep.bios[DF_B];
	w = &rep.bios[DF_W1];
	assert_true(b->barrier && b->own_flush);
	assert_int_equal(b->d_first, 32157);
	assert_int_equal(b->done, 32168);
	assert_int_equal(b->c, 32179);
	assert_int_equal(rep.bios[DF_W].durable, 32168);
	/* The old rule: W1, accepted after B, on the disk before B's C. */
	assert_true(w->q > b->a_end && w->d_first == 32178 && w->d_first < b->c);
	assert_int_equal(strict_overtakes(&rep), 1);
	/* The new one: the target finished with B when its flush completed. */
	assert_int_equal(b->t_end, 32168);
	assert_true(rep.checked[ORD_OVERTAKE] > 0);
	if (total_violations(&rep))
		fail_msg("direct flush: %" PRIu64 " overtake violations", rep.violations[ORD_OVERTAKE]);
	ord_report_free(&rep);
	trace_free(&t);

	/* Ordering only (mode drain): the same. */
	check_text_opts(direct_flush_trace, false, &drain, &t, &rep);
	assert_int_equal(rep.bios[DF_B].t_end, 32168);
	assert_int_equal(total_violations(&rep), 0);
	ord_report_free(&rep);
	trace_free(&t);

	/* Still caught: W1 remapped and on the disk while B's flush runs. */
	text = edit2(direct_flush_trace, "32170: block_bio_remap: 8,0 WS 824736",
		     "32163: block_bio_remap: 8,0 WS 824736",
		     "32178: block_rq_issue: 8,0 WS 4096 () 824736",
		     "32165: block_rq_issue: 8,0 WS 4096 () 824736");
	check_text(text, false, &t, &rep);
	free(text);
	assert_int_equal(rep.bios[DF_W1].d_first, 32165);
	assert_int_equal(rep.violations[ORD_OVERTAKE], 1);
	assert_int_equal(total_violations(&rep), 1);
	assert_int_equal(rep.v[0].barrier, DF_B);
	assert_int_equal(rep.v[0].worst, DF_W1);
	assert_int_equal(rep.v[0].offenders, 1);
	assert_int_equal(rep.v[0].ref_t, 32168);
	ord_report_free(&rep);
	trace_free(&t);

	/*
	 * Nor is the target done with B while W, accepted before it, is on
	 * the disk (D 32152, C 32191): B breaks drain, and W1's dispatch
	 * (32178) is an overtake too, measured against B's C (32179).
	 */
	text = edit2(direct_flush_trace, "32153: block_rq_complete: 8,0 WS () 824720",
		     "32191: block_rq_complete: 8,0 WS () 824720",
		     "32154: block_bio_complete: 254,0 WS 824720",
		     "32192: block_bio_complete: 254,0 WS 824720");
	check_text_opts(text, false, &drain, &t, &rep);
	free(text);
	assert_int_equal(rep.bios[DF_W].done, 32191);
	assert_int_equal(rep.bios[DF_B].t_end, 32179);
	assert_int_equal(rep.violations[ORD_DRAIN], 1);
	assert_int_equal(rep.violations[ORD_OVERTAKE], 1);
	assert_int_equal(total_violations(&rep), 2);
	ord_report_free(&rep);
	trace_free(&t);
}

/*
 * A clean empty flush B with no disk command of its own.  W was written
 * and made durable by F's flush (C 18).  B's thread goes on (Y, 21:
 * B's acceptance is bounded there), the gate is open again, and X,
 * accepted after B, reaches the disk at 26, before dm core's completion
 * of B (30, on the other CPU).  Everything accepted before B was done
 * and durable at 18, and B was accepted by 21: the target was done with
 * B then.  (A flush answered in map() on a thread that waits for it
 * bounds its own acceptance by its C: no bio is certainly after it.)
 */
static const char clean_flush_trace[] =
	"   dmb-orderload-301     [000] .....           10: block_bio_queue: 254,0 WS 1000 + 8 [dmb-orderload]\n"
	"   dmb-orderload-301     [000] .....           11: block_bio_remap: 8,0 WS 1000 + 8 <- (254,0) 1000\n"
	"    kworker/0:1H-80      [000] .....           12: block_rq_issue: 8,0 WS 4096 () 1000 + 8 [kworker/0:1H]\n"
	"          <idle>-0       [000] ..s1.           13: block_rq_complete: 8,0 WS () 1000 + 8 [0]\n"
	"          <idle>-0       [000] ..s1.           14: block_bio_complete: 254,0 WS 1000 + 8 [0]\n"
	"   dmb-orderload-301     [000] .....           15: block_bio_queue: 254,0 FWS 0 + 0 [dmb-orderload]\n"
	"   dmb-orderload-301     [000] .....           16: block_bio_remap: 8,0 FWS 0 + 0 <- (254,0) 0\n"
	"    kworker/0:1H-80      [000] .....           17: block_rq_issue: 8,0 FF 0 () 0 + 0 [kworker/0:1H]\n"
	"          <idle>-0       [000] ..s1.           18: block_rq_complete: 8,0 FF () 18446744073709551615 + 0 [0]\n"
	"          <idle>-0       [000] d.s2.           19: block_bio_complete: 254,0 FWS 0 + 0 [0]\n"
	"   dmb-orderload-300     [001] .....           20: block_bio_queue: 254,0 FWS 0 + 0 [dmb-orderload]\n"
	"   dmb-orderload-300     [001] .....           21: block_bio_queue: 254,0 WS 2000 + 8 [dmb-orderload]\n"
	"   dmb-orderload-300     [001] .....           22: block_bio_remap: 8,0 WS 2000 + 8 <- (254,0) 2000\n"
	"   dmb-orderload-302     [000] .....           23: block_bio_queue: 254,0 WS 3000 + 8 [dmb-orderload]\n"
	"   dmb-orderload-302     [000] .....           24: block_bio_remap: 8,0 WS 3000 + 8 <- (254,0) 3000\n"
	"    kworker/1:1H-81      [001] .....           25: block_rq_issue: 8,0 WS 4096 () 2000 + 8 [kworker/1:1H]\n"
	"    kworker/0:1H-80      [000] .....           26: block_rq_issue: 8,0 WS 4096 () 3000 + 8 [kworker/0:1H]\n"
	"          <idle>-0       [001] ..s1.           27: block_rq_complete: 8,0 WS () 2000 + 8 [0]\n"
	"          <idle>-0       [001] ..s1.           28: block_bio_complete: 254,0 WS 2000 + 8 [0]\n"
	"          <idle>-0       [000] ..s1.           29: block_rq_complete: 8,0 WS () 3000 + 8 [0]\n"
	"          <idle>-0       [001] d.s2.           30: block_bio_complete: 254,0 FWS 0 + 0 [0]\n"
	"          <idle>-0       [000] ..s1.           31: block_bio_complete: 254,0 WS 3000 + 8 [0]\n";

enum { CF_W, CF_F, CF_B, CF_Y, CF_X };

static void test_overtake_clean_flush(void **state)
{
	struct trace t;
	struct ord_report rep;
	const struct ord_bio *b, *x;

	(void)state;
	check_text(clean_flush_trace, false, &t, &rep);
	assert_int_equal(rep.nbios, 5);
	b = &rep.bios[CF_B];
	x = &rep.bios[CF_X];
	assert_true(b->barrier && !b->own_flush);
	assert_int_equal(b->d_first, ORD_NEVER);
	assert_int_equal(b->a_end, 21);
	assert_int_equal(b->c, 30);
	/* The old rule: X after B, on the disk before B's C. */
	assert_true(x->q > b->a_end && x->d_first == 26 && x->d_first < b->c);
	assert_int_equal(strict_overtakes(&rep), 1);
	/* The new one: W done (13) and durable (18), B accepted (q 20). */
	assert_int_equal(b->t_end, 20);
	if (total_violations(&rep))
		fail_msg("clean flush: %" PRIu64 " overtake violations", rep.violations[ORD_OVERTAKE]);
	ord_report_free(&rep);
	trace_free(&t);
}

/*
 * A barrier write B through the worker in mode flush: pre-flush (21-22),
 * its data (D 24, C 28), post-flush (29-32), completed at 33.  X,
 * accepted after B (Q 25), is remapped and dispatched at 31, while the
 * post-flush runs: with --durability B's data is not yet stable, an
 * overtake; ordering only, B's data was done at 28, and it is not.
 */
static const char data_barrier_trace[] =
	"   dmb-orderload-301     [000] .....           10: block_bio_queue: 254,0 WS 1000 + 8 [dmb-orderload]\n"
	"   dmb-orderload-301     [000] .....           11: block_bio_remap: 8,0 WS 1000 + 8 <- (254,0) 1000\n"
	"    kworker/0:1H-80      [000] .....           12: block_rq_issue: 8,0 WS 4096 () 1000 + 8 [kworker/0:1H]\n"
	"          <idle>-0       [000] ..s1.           13: block_rq_complete: 8,0 WS () 1000 + 8 [0]\n"
	"          <idle>-0       [000] ..s1.           14: block_bio_complete: 254,0 WS 1000 + 8 [0]\n"
	"   dmb-orderload-300     [001] .....           20: block_bio_queue: 254,0 WFS 2048 + 8 [dmb-orderload]\n"
	"    kworker/1:1H-81      [001] .....           21: block_rq_issue: 8,0 FF 0 () 0 + 0 [kworker/1:1H]\n"
	"          <idle>-0       [001] ..s1.           22: block_rq_complete: 8,0 FF () 18446744073709551615 + 0 [0]\n"
	"    kworker/u9:1-120     [001] .....           23: block_bio_remap: 8,0 WS 2048 + 8 <- (254,0) 2048\n"
	"    kworker/1:1H-81      [001] .....           24: block_rq_issue: 8,0 WS 4096 () 2048 + 8 [kworker/1:1H]\n"
	"   dmb-orderload-301     [000] .....           25: block_bio_queue: 254,0 WS 3000 + 8 [dmb-orderload]\n"
	"          <idle>-0       [001] ..s1.           28: block_rq_complete: 8,0 WS () 2048 + 8 [0]\n"
	"    kworker/1:1H-81      [001] .....           29: block_rq_issue: 8,0 FF 0 () 0 + 0 [kworker/1:1H]\n"
	"    kworker/u9:1-120     [001] .....           30: block_bio_remap: 8,0 WS 3000 + 8 <- (254,0) 3000\n"
	"    kworker/0:1H-80      [000] .....           31: block_rq_issue: 8,0 WS 4096 () 3000 + 8 [kworker/0:1H]\n"
	"          <idle>-0       [001] ..s1.           32: block_rq_complete: 8,0 FF () 18446744073709551615 + 0 [0]\n"
	"          <idle>-0       [001] ..s1.           33: block_bio_complete: 254,0 WFS 2048 + 8 [0]\n"
	"          <idle>-0       [000] ..s1.           34: block_rq_complete: 8,0 WS () 3000 + 8 [0]\n"
	"          <idle>-0       [000] ..s1.           35: block_bio_complete: 254,0 WS 3000 + 8 [0]\n";

enum { DB_W, DB_B, DB_X };

static void test_overtake_in_flight(void **state)
{
	const struct ord_opts drain = { 0 };
	struct trace t;
	struct ord_report rep;
	const struct ord_bio *b;
	char *text, *s;

	(void)state;
	/* With --durability: X went out before B's post-flush completed. */
	check_text(data_barrier_trace, false, &t, &rep);
	assert_int_equal(rep.nbios, 3);
	b = &rep.bios[DB_B];
	assert_int_equal(b->d_data, 24);
	assert_int_equal(b->done, 28);
	assert_int_equal(b->durable, 32);
	assert_int_equal(b->t_end, 32);
	assert_int_equal(strict_overtakes(&rep), 1);
	assert_int_equal(rep.violations[ORD_OVERTAKE], 1);
	assert_int_equal(total_violations(&rep), 1);
	assert_int_equal(rep.v[0].barrier, DB_B);
	assert_int_equal(rep.v[0].worst, DB_X);
	assert_int_equal(rep.v[0].ref_t, 32);
	assert_int_equal(rep.v[0].worst_t, 31);
	ord_report_free(&rep);
	trace_free(&t);

	/* Ordering only: B's data was done at 28, before X's dispatch (31). */
	check_text_opts(data_barrier_trace, false, &drain, &t, &rep);
	assert_int_equal(rep.bios[DB_B].t_end, 28);
	assert_int_equal(strict_overtakes(&rep), 1);
	assert_int_equal(total_violations(&rep), 0);
	ord_report_free(&rep);
	trace_free(&t);

	/* X dispatched while B's data write runs: caught in both. */
	text = edit(data_barrier_trace, "30: block_bio_remap: 8,0 WS 3000", "26: block_bio_remap: 8,0 WS 3000");
	s = edit(text, "31: block_rq_issue: 8,0 WS 4096 () 3000", "27: block_rq_issue: 8,0 WS 4096 () 3000");
	free(text);
	for (int durability = 0; durability < 2; durability++) {
		const struct ord_opts o = { .durability = durability };

		check_text_opts(s, false, &o, &t, &rep);
		assert_int_equal(rep.bios[DB_X].d_first, 27);
		assert_int_equal(rep.violations[ORD_OVERTAKE], 1);
		assert_int_equal(total_violations(&rep), 1);
		assert_int_equal(rep.v[0].ref_t, durability ? 32 : 28);
		ord_report_free(&rep);
		trace_free(&t);
	}
	free(s);
}

/*
 * An empty flush B with no disk command of its own, while W, accepted
 * before it, is still on the disk (D 12, C 30).  B's thread goes on (Y,
 * 21), and X, accepted after B, reaches the disk at 26: before W is
 * done, so before the target could be done with B.  Ordering only, B
 * completes at 35: an overtake against W's end (30).  With --durability
 * W is never flushed: T(B) is not known, and the overtake is measured
 * against B's C (and B breaks durable).  When the target completes B
 * first (29), before W is done, B breaks drain too.
 */
static const char early_write_trace[] =
	"   dmb-orderload-301     [000] .....           10: block_bio_queue: 254,0 WS 1000 + 8 [dmb-orderload]\n"
	"   dmb-orderload-301     [000] .....           11: block_bio_remap: 8,0 WS 1000 + 8 <- (254,0) 1000\n"
	"    kworker/0:1H-80      [000] .....           12: block_rq_issue: 8,0 WS 4096 () 1000 + 8 [kworker/0:1H]\n"
	"   dmb-orderload-300     [001] .....           20: block_bio_queue: 254,0 FWS 0 + 0 [dmb-orderload]\n"
	"   dmb-orderload-300     [001] .....           21: block_bio_queue: 254,0 WS 2000 + 8 [dmb-orderload]\n"
	"   dmb-orderload-300     [001] .....           22: block_bio_remap: 8,0 WS 2000 + 8 <- (254,0) 2000\n"
	"   dmb-orderload-302     [000] .....           23: block_bio_queue: 254,0 WS 3000 + 8 [dmb-orderload]\n"
	"   dmb-orderload-302     [000] .....           24: block_bio_remap: 8,0 WS 3000 + 8 <- (254,0) 3000\n"
	"    kworker/1:1H-81      [001] .....           25: block_rq_issue: 8,0 WS 4096 () 2000 + 8 [kworker/1:1H]\n"
	"    kworker/0:1H-80      [000] .....           26: block_rq_issue: 8,0 WS 4096 () 3000 + 8 [kworker/0:1H]\n"
	"          <idle>-0       [001] ..s1.           27: block_rq_complete: 8,0 WS () 2000 + 8 [0]\n"
	"          <idle>-0       [001] ..s1.           28: block_bio_complete: 254,0 WS 2000 + 8 [0]\n"
	"          <idle>-0       [000] ..s1.           30: block_rq_complete: 8,0 WS () 1000 + 8 [0]\n"
	"          <idle>-0       [000] ..s1.           31: block_bio_complete: 254,0 WS 1000 + 8 [0]\n"
	"          <idle>-0       [001] d.s2.           35: block_bio_complete: 254,0 FWS 0 + 0 [0]\n"
	"          <idle>-0       [000] ..s1.           36: block_rq_complete: 8,0 WS () 3000 + 8 [0]\n"
	"          <idle>-0       [000] ..s1.           37: block_bio_complete: 254,0 WS 3000 + 8 [0]\n";

enum { EW_W, EW_B, EW_Y, EW_X };

/* The first line ord_print() gives for @rep. */
static void first_line(const struct ord_report *rep, char *buf, size_t len)
{
	FILE *f = fmemopen(buf, len, "w");

	assert_non_null(f);
	ord_print(f, rep, NULL, 1);
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
}

static void test_overtake_early_write(void **state)
{
	const struct ord_opts drain = { 0 };
	struct trace t;
	struct ord_report rep;
	char line[512];
	char *text;

	(void)state;
	check_text_opts(early_write_trace, false, &drain, &t, &rep);
	assert_int_equal(rep.nbios, 4);
	assert_int_equal(rep.bios[EW_B].d_first, ORD_NEVER);
	assert_int_equal(rep.bios[EW_B].a_end, 21);
	assert_int_equal(rep.bios[EW_B].t_end, 30);
	assert_int_equal(rep.violations[ORD_OVERTAKE], 1);
	assert_int_equal(total_violations(&rep), 1);
	assert_int_equal(rep.v[0].barrier, EW_B);
	assert_int_equal(rep.v[0].worst, EW_X);
	assert_int_equal(rep.v[0].offenders, 1);
	assert_int_equal(rep.v[0].ref_t, 30);
	first_line(&rep, line, sizeof(line));
	if (!strstr(line, "before the target finished with it at"))
		fail_msg("%s", line);
	ord_report_free(&rep);
	trace_free(&t);

	check_text(early_write_trace, false, &t, &rep);
	assert_int_equal(rep.bios[EW_W].durable, ORD_NEVER);
	assert_int_equal(rep.bios[EW_B].t_end, 35);
	assert_int_equal(rep.violations[ORD_OVERTAKE], 1);
	assert_int_equal(rep.violations[ORD_DURABLE], 1);
	assert_int_equal(rep.v[0].rule, ORD_OVERTAKE);
	assert_int_equal(rep.v[0].ref_t, 35);
	first_line(&rep, line, sizeof(line));
	if (!strstr(line, "before it completed at"))
		fail_msg("%s", line);
	ord_report_free(&rep);
	trace_free(&t);

	/* The target completes B at 29, before W is done (30). */
	text = edit(early_write_trace, "35: block_bio_complete: 254,0 FWS", "29: block_bio_complete: 254,0 FWS");
	check_text_opts(text, false, &drain, &t, &rep);
	free(text);
	assert_int_equal(rep.bios[EW_B].c, 29);
	assert_int_equal(rep.bios[EW_B].t_end, 29);
	assert_int_equal(rep.violations[ORD_OVERTAKE], 1);
	assert_int_equal(rep.violations[ORD_DRAIN], 1);
	ord_report_free(&rep);
	trace_free(&t);
}

/* ------------------------------------------------------------ traces */

static void load(const char *name, struct trace *t)
{
	char cmd[512];
	uint32_t bad = 0;
	FILE *f;
	int r;

	snprintf(cmd, sizeof(cmd), "gzip -dc '%s/%s'", DATA_DIR, name);
	f = popen(cmd, "r");
	assert_non_null(f);
	*t = (struct trace){ 0 };
	r = trace_read(f, t, &bad);
	assert_int_equal(pclose(f), 0);
	if (r < 0)
		fail_msg("%s: line %u unreadable (%d)", name, bad, r);
	assert_true(t->n > 1000);
	assert_int_equal(t->skips, 0);
}

static void check(const struct trace *t, struct ord_report *rep)
{
	const struct ord_opts o = { .durability = true };

	assert_int_equal(ord_check(t->ev, t->n, &o, rep), 0);
	if (rep->problems)
		fail_msg("the trace does not add up: %s", rep->problem);
	assert_int_equal(rep->nbios, 300);
}

static void test_flush_clean(void **state)
{
	struct trace t;
	struct ord_report rep;

	(void)state;
	load("order-flush.trace.gz", &t);
	check(&t, &rep);
	assert_true(rep.barriers >= 20);
	assert_true(rep.disk_flushes >= rep.data_barriers);
	for (int i = 0; i < ORD_NRULES; i++) {
		if (rep.violations[i])
			fail_msg("flush trace: %" PRIu64 " %s violations", rep.violations[i],
				 ord_rule_names[i]);
		assert_true(rep.checked[i] > 1000);
	}
	ord_report_free(&rep);
	trace_free(&t);
}

static void test_linear_violates(void **state)
{
	struct trace t;
	struct ord_report rep;

	(void)state;
	load("order-linear.trace.gz", &t);
	check(&t, &rep);
	for (int i = 0; i < ORD_NRULES; i++)
		if (rep.violations[i] == 0)
			fail_msg("dm-linear trace: no %s violation", ord_rule_names[i]);
	ord_report_free(&rep);
	trace_free(&t);
}

/* The index of the disk event @act for @sector, or -1. */
static long find_disk(const struct trace *t, uint32_t disk, char act, uint64_t sector)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->ev[i].dev == disk && t->ev[i].act == act && t->ev[i].has_sector &&
		    t->ev[i].sector == sector && t->ev[i].nsect)
			return (long)i;
	return -1;
}

/* The dm device's C event for a bio Q'd at @q on @sector. */
static long find_dm_c(const struct trace *t, uint32_t dm, uint64_t sector, uint64_t q)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->ev[i].dev == dm && t->ev[i].act == 'C' && t->ev[i].sector == sector &&
		    t->ev[i].t >= q)
			return (long)i;
	return -1;
}

/* Check the mutated trace @t: @rule must be broken; frees both. */
static void expect_broken(struct trace *t, struct ord_report *rep, enum ord_rule rule,
			  const char *what, size_t b)
{
	ord_report_free(rep);
	trace_sort(t);
	check(t, rep);
	if (rep->violations[rule] == 0)
		fail_msg("%s barrier %zu was not reported (%s)", what, b, ord_rule_names[rule]);
	ord_report_free(rep);
	trace_free(t);
}

/*
 * Drain fault: a plain write the target accepted well before a data
 * barrier completes (on the disk and on the dm device) only after the
 * barrier's first disk command.
 */
static void test_mutant_drain(void **state)
{
	struct trace t;
	struct ord_report rep;
	long dc = -1, mc = -1;
	size_t b, x;

	(void)state;
	load("order-flush.trace.gz", &t);
	check(&t, &rep);
	for (b = rep.nbios / 2; b < rep.nbios; b++)
		if (rep.bios[b].barrier && rep.bios[b].nsect && rep.bios[b].d_first != ORD_NEVER)
			break;
	assert_true(b < rep.nbios);
	for (x = b; x-- > 0;) {
		const struct ord_bio *w = &rep.bios[x];

		if (!w->barrier && w->nsect && w->e < rep.bios[b].q && w->a_t != ORD_NEVER) {
			dc = find_disk(&t, rep.disk_dev, 'C', w->disk_sector);
			mc = find_dm_c(&t, rep.dm_dev, w->sector, w->q);
			if (dc >= 0 && mc >= 0)
				break;
		}
	}
	assert_true(dc >= 0 && mc >= 0);
	t.ev[dc].t = rep.bios[b].d_first + 1;
	t.ev[mc].t = rep.bios[b].d_first + 2;
	expect_broken(&t, &rep, ORD_DRAIN, "a write completing after the start of", b);
}

/*
 * Overtake fault: a write the target accepted while a barrier ran (and
 * held back until the barrier completed) reaches the disk before the
 * barrier completes: its life from its remap on (A, G, D, C on the disk,
 * C on the dm device) moves back to just after the barrier's first disk
 * command, keeping its own order.
 */
static void test_mutant_overtake(void **state)
{
	struct trace t;
	struct ord_report rep;
	uint64_t shift = 0, t0;
	size_t b, x = 0;
	bool found = false;

	(void)state;
	load("order-flush.trace.gz", &t);
	check(&t, &rep);
	for (b = rep.nbios / 3; b < rep.nbios && !found; b++) {
		const struct ord_bio *B = &rep.bios[b];

		if (!B->barrier || !B->nsect || B->d_first == ORD_NEVER)
			continue;
		for (x = b + 1; x < rep.nbios && rep.bios[x].q < B->c; x++) {
			const struct ord_bio *w = &rep.bios[x];

			if (!w->barrier && w->nsect && w->q > B->a_end && w->a_t != ORD_NEVER &&
			    w->q + 1000 < B->c && w->a_t > B->c) {
				found = true;
				break;
			}
		}
	}
	assert_true(found);
	b--;
	t0 = (rep.bios[x].q > rep.bios[b].d_first ? rep.bios[x].q : rep.bios[b].d_first) + 1;
	shift = rep.bios[x].a_t - t0;
	for (size_t i = 0; i < t.n; i++) {
		struct tev *e = &t.ev[i];
		bool mine = (e->dev == rep.dm_dev && e->has_sector && e->sector == rep.bios[x].sector) ||
			    (e->dev == rep.disk_dev && e->has_sector &&
			     e->sector == rep.bios[x].disk_sector);

		if (mine && e->t >= rep.bios[x].a_t)
			e->t -= shift;
	}
	expect_broken(&t, &rep, ORD_OVERTAKE, "a write issued during", b);
}

/* Durability fault: the same trace with every disk flush taken out. */
static void test_mutant_no_flushes(void **state)
{
	struct trace t;
	struct ord_report rep;
	size_t n = 0;

	(void)state;
	load("order-flush.trace.gz", &t);
	for (size_t i = 0; i < t.n; i++) {
		const struct tev *e = &t.ev[i];

		if (e->dev != TDEV(254, 0) && (e->flags & TF_NONE) && (e->flags & TF_PREFLUSH))
			continue;
		t.ev[n++] = *e;
	}
	assert_true(n < t.n);
	t.n = n;
	check(&t, &rep);
	assert_int_equal(rep.disk_flushes, 0);
	if (rep.violations[ORD_DURABLE] == 0 || rep.violations[ORD_PREFLUSH] == 0)
		fail_msg("a flush trace without flushes: durable %" PRIu64 " preflush %" PRIu64,
			 rep.violations[ORD_DURABLE], rep.violations[ORD_PREFLUSH]);
	ord_report_free(&rep);
	trace_free(&t);
}

/*
 * Flushes requeued and dispatched again (libata does so around an error):
 * 600 D R D C cycles after the recorded load are 600 flushes, each open
 * until its final completion (a requeue used to overrun the open queue).
 */
static void test_flush_requeues(void **state)
{
	struct trace t;
	struct ord_report rep;
	uint64_t t0, flushes;
	uint32_t disk;
	static const char act[] = "DRDC";

	(void)state;
	load("order-flush.trace.gz", &t);
	check(&t, &rep);
	flushes = rep.disk_flushes;
	disk = rep.disk_dev;
	ord_report_free(&rep);
	t0 = t.ev[t.n - 1].t + 1000;
	for (int i = 0; i < 600; i++) {
		for (int k = 0; k < 4; k++) {
			struct tev e = { .t = t0 + (uint64_t)(4 * i + k) * 1000, .dev = disk,
					 .flags = TF_PREFLUSH | TF_NONE, .act = act[k],
					 .has_sector = act[k] != 'D', .line = 0 };

			assert_int_equal(trace_add(&t, &e), 0);
		}
	}
	check(&t, &rep);
	assert_int_equal(rep.disk_flushes, flushes + 600);
	assert_int_equal(rep.violations[ORD_DURABLE], 0);
	ord_report_free(&rep);
	trace_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rwbs),
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_ftrace_lines),
		cmocka_unit_test(test_ftrace_read),
		cmocka_unit_test(test_pair_own_completion),
		cmocka_unit_test(test_pair_own_overtake_kept),
		cmocka_unit_test(test_pair_own_latest),
		cmocka_unit_test(test_pair_ambiguous),
		cmocka_unit_test(test_overtake_direct_flush),
		cmocka_unit_test(test_overtake_clean_flush),
		cmocka_unit_test(test_overtake_in_flight),
		cmocka_unit_test(test_overtake_early_write),
		cmocka_unit_test(test_flush_clean),
		cmocka_unit_test(test_linear_violates),
		cmocka_unit_test(test_mutant_drain),
		cmocka_unit_test(test_mutant_overtake),
		cmocka_unit_test(test_mutant_no_flushes),
		cmocka_unit_test(test_flush_requeues),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
