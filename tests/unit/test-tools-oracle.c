// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-tools-oracle.c: the fault campaign's oracle (tests/tools/oracle.c)
 * on synthetic ops, bio and event logs written here as text: for each rule
 * a run that passes and one that breaks it, the parsers on malformed
 * lines, and a 20k-op / 100k-bio run that must check in well under a
 * second.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "../tools/oracle.h"

/* ------------------------------------------------------------ harness */

struct result {
	struct orc_report rep;
	char *text;	/* the report */
	size_t len;
};

static FILE *str_file(const char *s)
{
	FILE *f = fmemopen((void *)s, strlen(s), "r");

	assert_non_null(f);
	return f;
}

static void load(struct orc_input *in, const char *ops, const char *bios, const char *events)
{
	uint32_t bad = 0;
	FILE *f;

	/* fmemopen of an empty buffer fails on old glibc: an empty log is no log. */
	if (ops && *ops) {
		f = str_file(ops);
		assert_int_equal(orc_read_ops(in, f, &bad), 0);
		fclose(f);
	}
	if (bios && *bios) {
		f = str_file(bios);
		assert_int_equal(orc_read_bios(in, f, &bad), 0);
		fclose(f);
	}
	if (events && *events) {
		f = str_file(events);
		assert_int_equal(orc_read_events(in, f, &bad), 0);
		fclose(f);
	}
}

static void check_with(struct result *res, const char *ops, const char *bios, const char *events,
		       int64_t hold_ms)
{
	struct orc_opts o = { .hold_ms = hold_ms, .slack_ms = 1000, .max_report = 100 };
	struct orc_input in = { 0 };
	FILE *out;

	*res = (struct result){ 0 };
	load(&in, ops, bios, events);
	out = open_memstream(&res->text, &res->len);
	assert_non_null(out);
	assert_int_equal(orc_check(&in, &o, &res->rep, out), 0);
	fclose(out);
	orc_input_free(&in);
	if (getenv("ORACLE_TEST_VERBOSE"))
		fputs(res->text, stderr);
}

/* check(), and the writes it promised ("<sector> <sectors> <id> <kind>" lines). */
static void check_promised(struct result *res, const char *ops, const char *bios,
			   const char *events, char **promised)
{
	struct orc_opts o = { .hold_ms = -1, .slack_ms = 1000, .max_report = 100 };
	struct orc_input in = { 0 };
	size_t plen;
	FILE *out;

	*res = (struct result){ 0 };
	load(&in, ops, bios, events);
	out = open_memstream(&res->text, &res->len);
	o.promised = open_memstream(promised, &plen);
	assert_non_null(out);
	assert_non_null(o.promised);
	assert_int_equal(orc_check(&in, &o, &res->rep, out), 0);
	fclose(out);
	fclose(o.promised);
	orc_input_free(&in);
}

static void check(struct result *res, const char *ops, const char *bios, const char *events)
{
	check_with(res, ops, bios, events, -1);
}

static void done(struct result *res)
{
	free(res->text);
}

/* Exactly @n violations of @rule, none of any other rule. */
static void expect_only(const struct result *res, enum orc_rule rule, uint64_t n)
{
	for (int r = 0; r < ORC_NRULES; r++) {
		uint64_t want = r == (int)rule ? n : 0;

		if (res->rep.violations[r] != want)
			fprintf(stderr, "rule %s: %llu violations, want %llu\n%s", orc_rule_names[r],
				(unsigned long long)res->rep.violations[r], (unsigned long long)want,
				res->text);
		assert_int_equal(res->rep.violations[r], want);
	}
}

static void expect_clean(const struct result *res)
{
	expect_only(res, ORC_TIMELINE, 0);
}

static void expect_text(const struct result *res, const char *s)
{
	if (!strstr(res->text, s))
		fprintf(stderr, "no \"%s\" in:\n%s", s, res->text);
	assert_non_null(strstr(res->text, s));
}

#define START_FLUSH_NONE "0 start flush none 0\n"
#define START_FLUSH_DRAIN "0 start flush drain 0\n"

/* ------------------------------------------------------------ parsers */

static void test_parse(void **state)
{
	struct orc_op op;
	struct orc_bio b;
	struct orc_event ev;

	(void)state;
	assert_int_equal(orc_parse_op("3 1 S 24 8 100 200 -5", &op), 0);
	assert_int_equal(op.id, 3);
	assert_int_equal(op.kind, ORC_OP_S);
	assert_int_equal(op.sector, 24);
	assert_int_equal(op.result, -5);
	assert_int_equal(orc_parse_op("3 1 X 24 8 100 200 0", &op), -EINVAL);
	assert_int_equal(orc_parse_op("3 1 W 24 8 100 200 0 junk", &op), -EINVAL);
	assert_int_equal(orc_parse_op("3 1 W 24 8 100 200 5", &op), -EINVAL);
	assert_int_equal(orc_parse_op("3 1 W 24 8 100", &op), -EINVAL);
	/* A commit: an S op with when it was accepted, within its window. */
	assert_int_equal(orc_parse_op("3 1 C 24 8 100 200 0 150", &op), 0);
	assert_int_equal(op.kind, ORC_OP_S);
	assert_true(op.commit);
	assert_int_equal(op.acc, 150);
	assert_int_equal(orc_parse_op("3 1 C 24 8 100 200 0", &op), -EINVAL);
	assert_int_equal(orc_parse_op("3 1 C 24 8 100 200 0 99", &op), -EINVAL);
	assert_int_equal(orc_parse_op("3 1 C 24 8 100 200 0 201", &op), -EINVAL);
	assert_int_equal(orc_parse_op("3 1 C 24 8 100 200 0 150 7", &op), -EINVAL);
	assert_int_equal(orc_parse_op("3 1 S 24 8 100 200 0 150", &op), -EINVAL);
	assert_int_equal(orc_parse_op("3 1 S 24 8 100 200 0", &op), 0);
	assert_false(op.commit);

	assert_int_equal(orc_parse_bio("dmb0 7 10 20 W SYNC,FUA 16 8 -28 1", &b), 0);
	assert_int_equal(b.flags, ORC_SYNC | ORC_FUAF);
	assert_int_equal(b.status, -28);
	assert_true(b.injected);
	assert_int_equal(orc_parse_bio("dmb0 8 10 20 F PREFLUSH 0 0 0 0", &b), 0);
	assert_int_equal(b.flags, ORC_PREFLUSH);
	assert_int_equal(orc_parse_bio("dmb0 8 10 20 F - 0 0 0 0", &b), 0);
	assert_int_equal(b.flags, 0);
	assert_int_equal(orc_parse_bio("dmb0 8 10 20 F PREFLUSH,BOGUS 0 0 0 0", &b), -EINVAL);
	assert_int_equal(orc_parse_bio("dmb0 8 10 20 F PREFLUSH, 0 0 0 0", &b), -EINVAL);
	assert_int_equal(orc_parse_bio("dmb0 8 10 20 Q - 0 0 0 0", &b), -EINVAL);
	assert_int_equal(orc_parse_bio("dmb0 8 10 20 W - 0 8 0 2", &b), -EINVAL);
	/* A flush that lost the cache says when and how much. */
	assert_int_equal(orc_parse_bio("dmb0 8 10 20 F PREFLUSH 0 0 -5 1 lost 15 3", &b), 0);
	assert_int_equal(b.loss_ns, 15);
	assert_int_equal(b.nr_lost, 3);
	assert_int_equal(orc_parse_bio("dmb0 8 10 20 F PREFLUSH 0 0 -5 1", &b), 0);
	assert_int_equal(b.loss_ns, 0);
	assert_int_equal(orc_parse_bio("dmb0 8 10 20 W - 0 8 -5 1 lost 15 3", &b), -EINVAL);
	assert_int_equal(orc_parse_bio("dmb0 8 10 20 F - 0 0 -5 0 lost 15 3", &b), -EINVAL);
	assert_int_equal(orc_parse_bio("dmb0 8 10 20 F - 0 0 -5 1 lost 0 3", &b), -EINVAL);
	assert_int_equal(orc_parse_bio("dmb0 8 10 20 F - 0 0 -5 1 lost 15", &b), -EINVAL);
	assert_int_equal(orc_parse_bio("dmb0 8 10 20 F - 0 0 -5 1 lost 15 3 x", &b), -EINVAL);

	assert_int_equal(orc_parse_event("5 start fua drain 3000", &ev), 0);
	assert_int_equal(ev.mode, ORC_FUA);
	assert_int_equal(ev.fallback, ORC_DRAIN);
	assert_int_equal(ev.hold_ms, 3000);
	assert_int_equal(orc_parse_event("5 start fua flush 0", &ev), -EINVAL);
	assert_int_equal(orc_parse_event("6 mode passthrough", &ev), 0);
	assert_int_equal(ev.mode, ORC_PASSTHROUGH);
	assert_int_equal(orc_parse_event("6 mode sideways", &ev), -EINVAL);
	assert_int_equal(orc_parse_event("7 fault fail flush 3 times -EIO", &ev), 0);
	assert_int_equal(orc_parse_event("8 suspend", &ev), 0);
	assert_int_equal(orc_parse_event("8 suspend now", &ev), -EINVAL);
	assert_int_equal(orc_parse_event("9 explode", &ev), -EINVAL);
}

static void test_read_malformed(void **state)
{
	struct orc_input in = { 0 };
	uint32_t bad = 0;
	FILE *f;

	(void)state;
	f = str_file("# dmb-faultload seed 1\n0 0 W 0 8 1 2 0\n1 0 W 8 8 1\n2 0 W 16 8 1 2 0\n");
	assert_int_equal(orc_read_ops(&in, f, &bad), -EINVAL);
	assert_int_equal(bad, 3);
	fclose(f);
	orc_input_free(&in);

	/* The last line cut short: not malformed, truncated. */
	f = str_file("0 0 W 0 8 1 2 0\n1 0 W 8 8 1");
	assert_int_equal(orc_read_ops(&in, f, &bad), 0);
	assert_int_equal(in.nops, 1);
	assert_true(in.ops_truncated);
	fclose(f);
	orc_input_free(&in);

	f = str_file("# a comment\ndmb0 1 1 2 W - 0 8 0 0\n# overflow 12\ndmb0 x\n");
	assert_int_equal(orc_read_bios(&in, f, &bad), -EINVAL);
	assert_int_equal(bad, 4);
	assert_true(in.bios_overflow);
	fclose(f);
	orc_input_free(&in);

	f = str_file("0 start flush none 0\n10 reload\n");
	assert_int_equal(orc_read_events(&in, f, &bad), -EINVAL);
	assert_int_equal(bad, 2);
	fclose(f);
	orc_input_free(&in);
}

/* ---------------------------------------------------- rule 1: timeline */

static void test_timeline(void **state)
{
	struct result r;

	(void)state;
	/* An S op with its FUA write and post-flush in mode flush. */
	check(&r, "0 0 S 0 8 100 300 0\n",
	      "d 1 110 150 W FUA 0 8 0 0\nd 2 160 200 F PREFLUSH 0 0 0 0\n", START_FLUSH_NONE);
	expect_clean(&r);
	done(&r);

	/* No start event. */
	check(&r, "0 0 W 0 8 100 300 0\n", "d 1 110 150 W - 0 8 0 0\n", "50 mode flush\n");
	expect_only(&r, ORC_TIMELINE, 1);
	expect_text(&r, "no start event");
	done(&r);

	/* Stamped events: a start and an end; one that starts before the last
	 * ended, or ends before it starts, is malformed or out of order. */
	check(&r, "", "", "0 start flush none 0\n100 120 mode drain\n110 130 mode flush\n");
	expect_only(&r, ORC_TIMELINE, 1);
	expect_text(&r, "before the previous event ended");
	done(&r);

	/* A switch to flush takes effect at the stamp's end: an S op submitted
	 * inside the stamp, run unflushed as drain, is not checked; one
	 * submitted after it is. */
	check(&r, "0 0 S 0 8 105 300 0\n", "d 1 110 150 W - 0 8 0 0\n",
	      "0 start drain none 0\n100 120 mode flush\n");
	expect_clean(&r);
	done(&r);
	check(&r, "0 0 S 0 8 125 300 0\n", "d 1 130 150 W - 0 8 0 0\n",
	      "0 start drain none 0\n100 120 mode flush\n");
	expect_only(&r, ORC_DURABLE, 1);
	done(&r);

	/* A flush fails while `mode flush` takes effect (seed 197 of the first
	 * 200-schedule run): the target fell back after the message, the mode
	 * is unknown until the next event, and an unflushed S op after it is
	 * not a violation; the same op after an unraced message is. */
	check(&r, "0 0 S 0 8 200 300 0\n", "d 1 150 152 F PREFLUSH 0 0 -5 1\nd 2 210 250 W - 0 8 0 0\n",
	      "0 start flush drain 0\n100 180 mode flush\n");
	expect_clean(&r);
	expect_text(&r, "timeline 100 unknown");
	done(&r);
	check(&r, "0 0 S 0 8 200 300 0\n", "d 1 50 52 F PREFLUSH 0 0 -5 1\nd 2 210 250 W - 0 8 0 0\n",
	      "0 start flush drain 0\n100 180 mode flush\n");
	expect_only(&r, ORC_DURABLE, 1);
	done(&r);

	/* An S op succeeds while `mode drain` after a fallback to none takes
	 * effect (seeds 136 and 182 of the second 200-schedule run): the
	 * message may have come first, no violation. */
	check(&r, "0 0 S 0 8 200 230 0\n", "d 1 50 52 F PREFLUSH 0 0 -5 1\nd 2 210 220 W FUA 0 8 0 0\n",
	      "0 start fua none 0\n100 300 mode drain\n");
	expect_clean(&r);
	done(&r);

	/* Mode fua: the FUA write fails with ENOSPC, the probe flush after it
	 * fails too (seed 56 of the third 200-schedule run): EIO is right. */
	check(&r, "0 0 S 0 8 100 300 -5\n", "d 1 110 150 W FUA 0 8 -28 1\nd 2 160 170 F PREFLUSH 0 0 -5 1\n",
	      "0 start fua none 0\n");
	expect_clean(&r);
	done(&r);

	/* Events out of order, and one before the start. */
	check(&r, "", "", "100 start flush none 0\n50 mode drain\n");
	expect_only(&r, ORC_TIMELINE, 2);
	done(&r);

	/* An S op succeeded while the whole of it was in mode none. */
	check(&r, "0 0 S 0 8 100 300 0\n", "d 1 110 150 W FUA 0 8 0 0\n", "0 start none none 0\n");
	expect_only(&r, ORC_TIMELINE, 1);
	expect_text(&r, "mode none for all of it");
	done(&r);

	/* ... which an injected flush failure in flush mode explains too. */
	check(&r, "0 0 S 0 8 100 300 0\n1 0 S 8 8 400 500 -95\n",
	      "d 1 110 150 W FUA 0 8 0 0\nd 2 160 200 F PREFLUSH 0 0 0 0\n"
	      "d 3 310 320 F PREFLUSH 0 0 -5 1\n",
	      START_FLUSH_NONE);
	expect_clean(&r);
	assert_int_equal(r.rep.mode_segments, 2);
	expect_text(&r, "timeline 320 none");
	done(&r);

	/* A failed FUA write in mode fua is a write error, not a fallback: an S
	 * op that succeeds after it is fine, one refused is spurious. */
	check(&r, "0 0 S 0 8 100 200 -5\n1 0 S 8 8 300 400 0\n2 0 S 16 8 500 600 -95\n",
	      "d 1 110 150 W FUA 0 8 -5 1\nd 2 160 170 F PREFLUSH 0 0 0 0\n"
	      "d 3 310 350 W FUA 8 8 0 0\nd 4 510 550 W FUA 16 8 0 0\n",
	      "0 start fua none 0\n");
	expect_only(&r, ORC_SPURIOUS, 1);
	expect_text(&r, "op 2 (S");
	done(&r);

	/* A failure in drain mode switches nothing: EOPNOTSUPP after it is spurious. */
	check(&r, "0 0 S 8 8 400 500 -95\n", "d 3 310 320 F PREFLUSH 0 0 -5 1\n",
	      "0 start drain none 0\n");
	expect_only(&r, ORC_SPURIOUS, 1);
	assert_int_equal(r.rep.mode_segments, 1);
	done(&r);
}

/* ------------------------------------------------ rule 2: durability */

static void test_durable_flush(void **state)
{
	static const char ops[] =
		"0 0 W 0 8 100 200 0\n"
		"1 1 S 8 8 300 600 0\n";
	struct result r;

	(void)state;
	/* The W's write is flushed by the S op's post-flush: durable. */
	check(&r, ops,
	      "d 1 110 150 W - 0 8 0 0\n"
	      "d 2 310 350 W FUA 8 8 0 0\n"
	      "d 3 360 400 F PREFLUSH 0 0 0 0\n",
	      START_FLUSH_NONE);
	expect_clean(&r);
	assert_int_equal(r.rep.checked[ORC_DURABLE], 1);
	done(&r);

	/* The only flush after the write failed (the disk, not a fault): false success. */
	check(&r, ops,
	      "d 1 110 150 W - 0 8 0 0\n"
	      "d 2 310 350 W FUA 8 8 0 0\n"
	      "d 3 360 400 F PREFLUSH 0 0 -5 0\n",
	      START_FLUSH_NONE);
	expect_only(&r, ORC_DURABLE, 1);
	expect_text(&r, "write op 0 (sector 0, acked at 200) is not durable");
	done(&r);

	/* Same, with a later flush that succeeded. */
	check(&r, ops,
	      "d 1 110 150 W - 0 8 0 0\n"
	      "d 2 310 350 W FUA 8 8 0 0\n"
	      "d 3 360 400 F PREFLUSH 0 0 -5 0\n"
	      "d 4 410 450 F PREFLUSH 0 0 0 0\n",
	      START_FLUSH_NONE);
	expect_clean(&r);
	done(&r);

	/* A flush submitted before the write completed does not count. */
	check(&r, ops,
	      "d 1 110 250 W - 0 8 0 0\n"
	      "d 3 240 400 F PREFLUSH 0 0 0 0\n"
	      "d 2 410 450 W FUA 8 8 0 0\n",
	      START_FLUSH_NONE);
	expect_only(&r, ORC_DURABLE, 2);	/* the write acked before its bio completed, too */
	done(&r);

	/* A flush completing after the op does not count either. */
	check(&r, ops,
	      "d 1 110 150 W - 0 8 0 0\n"
	      "d 2 310 350 W FUA 8 8 0 0\n"
	      "d 3 360 700 F PREFLUSH 0 0 0 0\n",
	      START_FLUSH_NONE);
	expect_only(&r, ORC_DURABLE, 1);
	done(&r);
}

static void test_durable_fua(void **state)
{
	struct result r;

	(void)state;
	/* A FUA write is durable when it completes, without any flush. */
	check(&r, "0 0 S 0 8 100 300 0\n", "d 1 110 150 W SYNC,FUA 0 8 0 0\n", START_FLUSH_NONE);
	expect_clean(&r);
	done(&r);

	/* Without FUA and without a flush its own write is not durable. */
	check(&r, "0 0 S 0 8 100 300 0\n", "d 1 110 150 W SYNC 0 8 0 0\n", START_FLUSH_NONE);
	expect_only(&r, ORC_DURABLE, 1);
	expect_text(&r, "its own write is not durable");
	done(&r);

	/* A W op's FUA write counts for a later F op as well. */
	check(&r, "0 0 W 0 8 100 200 0\n1 1 F 0 0 300 400 0\n", "d 1 110 150 W FUA 0 8 0 0\n",
	      START_FLUSH_NONE);
	expect_clean(&r);
	done(&r);
}

static void test_durable_exempt(void **state)
{
	static const char ops[] = "0 0 W 0 8 100 200 0\n1 1 F 0 0 300 600 0\n";
	static const char bios[] = "d 1 110 150 W - 0 8 0 0\n";
	struct result r;

	(void)state;
	/* The F op returned 0 with no flush reaching the disk: violation. */
	check(&r, ops, bios, START_FLUSH_NONE);
	expect_only(&r, ORC_DURABLE, 1);
	done(&r);

	/* A mode message inside its window: exempt. */
	check(&r, ops, bios, START_FLUSH_NONE "400 mode flush\n");
	expect_clean(&r);
	assert_int_equal(r.rep.exempt_durable, 1);
	done(&r);

	/* So are suspend and resume, and a reload. */
	check(&r, ops, bios, START_FLUSH_NONE "300 suspend\n");
	expect_clean(&r);
	done(&r);
	check(&r, ops, bios, START_FLUSH_NONE "600 reload flush\n");
	expect_clean(&r);
	done(&r);

	/* A message outside the window does not exempt it. */
	check(&r, ops, bios, START_FLUSH_NONE "250 mode fua\n");
	expect_only(&r, ORC_DURABLE, 1);
	done(&r);

	/* Submitted in a mode that does not promise durability: not checked. */
	check(&r, ops, bios, "0 start drain none 0\n");
	expect_clean(&r);
	assert_int_equal(r.rep.checked[ORC_DURABLE], 0);
	done(&r);
	check(&r, ops, bios, "0 start passthrough none 0\n");
	expect_clean(&r);
	done(&r);

	/*
	 * Its own flush failed (submitted in its window, no other barrier in
	 * flight) and it returned 0: judged, under either fallback (issue 27,
	 * H1: this case was exempt, and expected clean here).
	 */
	check(&r, ops, "d 1 110 150 W - 0 8 0 0\nd 2 310 320 F PREFLUSH 0 0 -5 1\n",
	      START_FLUSH_DRAIN);
	expect_only(&r, ORC_DURABLE, 1);
	expect_text(&r, "returned 0 although its own flush failed (bios line 2, status -5");
	assert_int_equal(r.rep.exempt_durable, 0);
	assert_int_equal(r.rep.fallback_judged, 1);
	done(&r);
	check(&r, ops, "d 1 110 150 W - 0 8 0 0\nd 2 310 320 F PREFLUSH 0 0 -5 1\n",
	      START_FLUSH_NONE);
	expect_only(&r, ORC_DURABLE, 1);
	done(&r);
	/* Even when an earlier flush had made everything durable. */
	check(&r, ops,
	      "d 1 110 150 W - 0 8 0 0\nd 2 160 170 F PREFLUSH 0 0 0 0\n"
	      "d 3 310 320 F PREFLUSH 0 0 -5 1\n",
	      START_FLUSH_DRAIN);
	expect_only(&r, ORC_DURABLE, 1);
	done(&r);

	/* A mode message in its window may have replayed it: exempt. */
	check(&r, ops, "d 1 110 150 W - 0 8 0 0\nd 2 310 320 F PREFLUSH 0 0 -5 1\n",
	      START_FLUSH_DRAIN "400 450 mode drain\n");
	expect_clean(&r);
	assert_int_equal(r.rep.exempt_durable, 1);
	done(&r);

	/*
	 * Two barriers in flight when the flush went down: whose it was is
	 * not known, and either may have been accepted after the fallback.
	 */
	check(&r, "0 0 W 0 8 100 200 0\n1 1 F 0 0 300 600 0\n2 2 F 0 0 305 700 -5\n",
	      "d 1 110 150 W - 0 8 0 0\nd 2 310 320 F PREFLUSH 0 0 -5 1\n", START_FLUSH_DRAIN);
	expect_clean(&r);
	assert_int_equal(r.rep.exempt_durable, 1);
	assert_int_equal(r.rep.fallback_judged, 0);
	done(&r);

	/*
	 * Another op's flush failed (op 2, alone when it went down) while
	 * this F op was submitted: it may have entered after the fallback,
	 * as a drain barrier.
	 */
	check(&r, "0 0 W 0 8 100 200 0\n1 1 F 0 0 300 600 0\n2 2 F 0 0 250 330 -5\n",
	      "d 1 110 150 W - 0 8 0 0\nd 2 260 320 F PREFLUSH 0 0 -5 1\n", START_FLUSH_DRAIN);
	expect_clean(&r);
	assert_int_equal(r.rep.exempt_durable, 1);
	done(&r);

	/*
	 * An S op in the same place whose write went down with FUA ran as a
	 * flush-mode barrier, before the fallback: judged, and op 0's write
	 * was never flushed.  With a flush that covers it: clean.
	 */
	check(&r, "0 0 W 0 8 100 200 0\n1 1 S 8 8 300 600 0\n2 2 F 0 0 250 330 -5\n",
	      "d 1 110 150 W - 0 8 0 0\nd 2 260 320 F PREFLUSH 0 0 -5 1\n"
	      "d 3 400 450 W FUA 8 8 0 0\n",
	      START_FLUSH_DRAIN);
	expect_only(&r, ORC_DURABLE, 1);
	expect_text(&r, "write op 0 (sector 0");
	assert_int_equal(r.rep.fallback_judged, 1);
	done(&r);
	check(&r, "0 0 W 0 8 100 200 0\n1 1 S 8 8 300 600 0\n2 2 F 0 0 250 330 -5\n",
	      "d 1 110 150 W - 0 8 0 0\nd 2 260 320 F PREFLUSH 0 0 -5 1\n"
	      "d 3 340 350 F PREFLUSH 0 0 0 0\nd 4 400 450 W FUA 8 8 0 0\n",
	      START_FLUSH_DRAIN);
	expect_clean(&r);
	assert_int_equal(r.rep.fallback_judged, 1);
	done(&r);
	/* Its write went down plain (drain): it may have entered after. */
	check(&r, "0 0 W 0 8 100 200 0\n1 1 S 8 8 300 600 0\n2 2 F 0 0 250 330 -5\n",
	      "d 1 110 150 W - 0 8 0 0\nd 2 260 320 F PREFLUSH 0 0 -5 1\n"
	      "d 3 400 450 W - 8 8 0 0\n",
	      START_FLUSH_DRAIN);
	expect_clean(&r);
	assert_int_equal(r.rep.exempt_durable, 1);
	done(&r);

	/* Writes from a non-durable time still need the flush of a later durable op. */
	check(&r, ops, bios, "0 start drain none 0\n250 mode flush\n");
	expect_only(&r, ORC_DURABLE, 1);
	done(&r);
}

/*
 * The volatile cache (issue 27, H2): a flush failure that lost the cache
 * took the writes not yet covered; a later flush that works does not bring
 * them back.
 */
static void test_loss(void **state)
{
	/*
	 * Op 0, a write acked at 130; ops 1 and 2 barriers in flight when
	 * the flush at 150 fails and loses the cache (at 160): whose it was
	 * is not known.  Op 1's FUA write then goes down (so it ran in mode
	 * fua, judged), a flush at 230 works, op 1 returns 0 at 260.
	 */
	static const char ops[] = "0 0 W 0 8 100 130 0\n1 1 S 8 8 140 260 0\n2 2 S 16 8 145 300 -5\n";
	static const char lossy[] = "d 1 105 125 W - 0 8 0 0\n"
				    "d 2 150 170 F PREFLUSH 0 0 -5 1 lost 160 1\n"
				    "d 3 200 210 W FUA 8 8 0 0\n"
				    "d 4 230 240 F PREFLUSH 0 0 0 0\n";
	static const char lossless[] = "d 1 105 125 W - 0 8 0 0\n"
				       "d 2 150 170 F PREFLUSH 0 0 -5 1\n"
				       "d 3 200 210 W FUA 8 8 0 0\n"
				       "d 4 230 240 F PREFLUSH 0 0 0 0\n";
	struct result r;
	char *promised = NULL;

	(void)state;
	/* Without the loss the flush at 230 covers op 0: clean (the hole). */
	check(&r, ops, lossless, "0 start fua drain 0\n");
	expect_clean(&r);
	assert_int_equal(r.rep.fallback_judged, 1);
	done(&r);
	/* With it, op 0's write is gone: op 1 promised it. */
	check(&r, ops, lossy, "0 start fua drain 0\n");
	expect_only(&r, ORC_DURABLE, 1);
	expect_text(&r, "write op 0 (sector 0, acked at 130) is not durable by its completion "
			"(durable: never; a flush failure lost it)");
	assert_int_equal(r.rep.lost_acked, 1);
	assert_int_equal(r.rep.losses, 1);
	done(&r);

	/*
	 * A mode message after the loss answers it: a barrier after the
	 * message promises only what came after (op 1, submitted at 400).
	 * Op 0 is lost and not promised; op 1's own write is.
	 */
	check_promised(&r, "0 0 W 0 8 100 130 0\n1 1 S 8 8 400 500 0\n",
		       "d 1 105 125 W - 0 8 0 0\n"
		       "d 2 150 170 F PREFLUSH 0 0 -5 1 lost 160 1\n"
		       "d 3 405 408 F PREFLUSH 0 0 0 0\n"
		       "d 4 410 450 W FUA 8 8 0 0\n",
		       "0 start fua drain 0\n300 310 mode fua\n", &promised);
	expect_clean(&r);
	assert_int_equal(r.rep.lost_acked, 1);
	assert_string_equal(promised, "8 8 1 S\n");
	assert_int_equal(r.rep.promised, 1);
	free(promised);
	done(&r);

	/* A write that completed after the loss is not taken, nor one covered before it. */
	check_promised(&r, "0 0 W 0 8 100 130 0\n1 0 W 8 8 100 180 0\n2 1 F 0 0 400 500 0\n",
		       "d 1 105 125 W - 0 8 0 0\n"
		       "d 2 126 128 F PREFLUSH 0 0 0 0\n"
		       "d 3 150 170 F PREFLUSH 0 0 -5 1 lost 160 0\n"
		       "d 4 150 175 W - 8 8 0 0\n"
		       "d 5 405 408 F PREFLUSH 0 0 0 0\n",
		       "0 start flush drain 0\n300 310 mode flush\n", &promised);
	expect_clean(&r);
	assert_int_equal(r.rep.lost_acked, 0);
	assert_string_equal(promised, "0 8 0 W\n8 8 1 W\n");
	free(promised);
	done(&r);
}

static void test_never_reached(void **state)
{
	struct result r;

	(void)state;
	check(&r, "0 0 W 0 8 100 200 0\n1 0 W 8 8 300 400 0\n", "d 1 110 150 W - 0 8 0 0\n",
	      "0 start drain none 0\n");
	expect_only(&r, ORC_DURABLE, 1);
	expect_text(&r, "op 1 (W thread 0 sector 8");
	expect_text(&r, "never reached the device");
	done(&r);
}

/* --------------------------------------------- rule 3: write errors */

static void test_write_error(void **state)
{
	struct result r;

	(void)state;
	check(&r, "0 0 W 0 8 100 200 0\n", "d 1 110 150 W - 0 8 0 0\n", START_FLUSH_NONE);
	expect_clean(&r);
	assert_int_equal(r.rep.checked[ORC_WRITE_ERROR], 1);
	done(&r);

	check(&r, "0 0 W 0 8 100 200 0\n", "d 1 110 150 W - 0 8 -5 1\n", START_FLUSH_NONE);
	expect_only(&r, ORC_WRITE_ERROR, 1);
	expect_text(&r, "returned 0 but its W bio failed with -5");
	done(&r);

	/* A failed bio then a successful one (a retry): the last one counts. */
	check(&r, "0 0 W 0 8 100 200 0\n", "d 1 110 120 W - 0 8 -5 1\nd 2 130 150 W - 0 8 0 0\n",
	      START_FLUSH_NONE);
	expect_clean(&r);
	done(&r);
}

/* ---------------------------------------------- rule 4: status kept */

static void test_status_kept(void **state)
{
	struct result r;

	(void)state;
	check(&r, "0 0 W 0 8 100 200 -28\n", "d 1 110 150 W - 0 8 -28 1\n", START_FLUSH_NONE);
	expect_clean(&r);
	done(&r);

	/* ENOSPC injected, EIO returned. */
	check(&r, "0 0 W 0 8 100 200 -5\n", "d 1 110 150 W - 0 8 -28 1\n", START_FLUSH_NONE);
	expect_only(&r, ORC_STATUS_KEPT, 1);
	expect_text(&r, "failed with injected -28");
	done(&r);

	/* ENODATA on a FUA write of an S op. */
	check(&r, "0 0 S 0 8 100 200 -61\n", "d 1 110 150 W FUA 0 8 -61 1\n", START_FLUSH_DRAIN);
	expect_clean(&r);
	done(&r);
	check(&r, "0 0 S 0 8 100 200 -5\n", "d 1 110 150 W FUA 0 8 -61 1\n", START_FLUSH_DRAIN);
	expect_only(&r, ORC_STATUS_KEPT, 1);
	done(&r);

	/* An injected EIO may come back as EIO, of course. */
	check(&r, "0 0 W 0 8 100 200 -5\n", "d 1 110 150 W - 0 8 -5 1\n", START_FLUSH_NONE);
	expect_clean(&r);
	done(&r);
}

/* --------------------------------------- rule 5: no spurious failure */

static void test_spurious(void **state)
{
	struct result r;

	(void)state;
	/* EIO on an op with no injected fault in its window. */
	check(&r, "0 0 F 0 0 100 200 -5\n", "d 1 110 150 F PREFLUSH 0 0 0 0\n", START_FLUSH_NONE);
	expect_only(&r, ORC_SPURIOUS, 1);
	expect_text(&r, "no fault of its own");
	done(&r);

	/* An injected flush failure completing inside the window. */
	check(&r, "0 0 F 0 0 100 200 -5\n", "d 1 110 150 F PREFLUSH 0 0 -5 1\n", START_FLUSH_NONE);
	expect_clean(&r);
	done(&r);

	/*
	 * Not any injected fault (issue 27, item 3): another sector's failed
	 * write excuses neither a barrier nor a plain write, and a failed
	 * flush does not excuse a plain write (it runs behind the barrier).
	 */
	check(&r, "0 0 F 0 0 100 200 -5\n", "d 1 110 150 W - 64 8 -5 1\n", START_FLUSH_NONE);
	expect_only(&r, ORC_SPURIOUS, 1);
	expect_text(&r, "no injected flush failure in its window");
	done(&r);
	check(&r, "0 0 S 0 8 100 200 -5\n", "d 1 110 150 W - 64 8 -5 1\n", START_FLUSH_NONE);
	expect_only(&r, ORC_SPURIOUS, 1);
	done(&r);
	check(&r, "0 0 W 0 8 100 200 -5\n",
	      "d 1 110 150 W - 64 8 -5 1\nd 2 120 160 F PREFLUSH 0 0 -5 1\n", START_FLUSH_NONE);
	expect_only(&r, ORC_SPURIOUS, 1);
	expect_text(&r, "no failed W bio of its sector\n");
	done(&r);
	/* A barrier's failed FUA write (its own sector) excuses it. */
	check(&r, "0 0 S 0 8 100 200 -5\n", "d 1 110 150 W FUA 0 8 -5 1\n", "0 start fua none 0\n");
	expect_clean(&r);
	done(&r);

	/* ... but not one completing after the op returned. */
	check(&r, "0 0 F 0 0 100 200 -5\n", "d 1 110 250 F PREFLUSH 0 0 -5 1\n", "0 start drain none 0\n");
	expect_only(&r, ORC_SPURIOUS, 1);
	done(&r);

	/* A write whose own bio failed (not injected: the disk) may fail. */
	check(&r, "0 0 W 0 8 100 200 -5\n", "d 1 110 150 W - 0 8 -5 0\n", START_FLUSH_NONE);
	expect_clean(&r);
	done(&r);

	/* EOPNOTSUPP needs mode none. */
	check(&r, "0 0 S 0 8 100 200 -95\n", "", START_FLUSH_NONE);
	expect_only(&r, ORC_SPURIOUS, 1);
	expect_text(&r, "-EOPNOTSUPP but the mode was flush");
	done(&r);
	check(&r, "0 0 S 0 8 100 200 -95\n", "", START_FLUSH_NONE "150 mode none\n");
	expect_clean(&r);
	done(&r);
	check(&r, "0 0 S 0 8 100 200 -95\n", "", "0 start none none 0\n");
	expect_clean(&r);
	done(&r);
	/* Mode none before the op but not during it. */
	check(&r, "0 0 S 0 8 100 200 -95\n", "", "0 start none none 0\n50 mode drain\n");
	expect_only(&r, ORC_SPURIOUS, 1);
	done(&r);
}

/*
 * The direct way's rerun: a failed W|FUA bio in mode flush (write and
 * post-flush in one request), run again by the worker (pre-flush, write,
 * post-flush), which works: the target takes it as a failed flush and
 * falls back at the rerun's end (dm-barrier.c, barrier_run()).
 */
#define RERUN_BIOS(st, rst) \
	"d 1 110 150 W FUA 0 8 " st " 1\nd 2 160 170 F PREFLUSH 0 0 0 0\n" \
	"d 3 180 200 W - 0 8 " rst "\nd 4 210 220 F PREFLUSH 0 0 0 0\n"

static void test_direct_rerun(void **state)
{
	struct result r;

	(void)state;
	/* Fallback none: the next barrier is refused, the barrier itself failed. */
	check(&r, "0 0 S 0 8 100 400 -5\n1 0 S 8 8 500 600 -95\n", RERUN_BIOS("-5", "0 0"),
	      START_FLUSH_NONE);
	expect_clean(&r);
	expect_text(&r, "timeline 200 none");
	expect_text(&r, "direct barriers failed and rerun 1");
	done(&r);

	/* Fallback drain: the next barrier succeeds unflushed, rightly. */
	check(&r, "0 0 S 0 8 100 400 -5\n1 0 S 8 8 500 600 0\n",
	      RERUN_BIOS("-5", "0 0") "d 5 510 520 W - 8 8 0 0\n", START_FLUSH_DRAIN);
	expect_clean(&r);
	done(&r);

	/*
	 * Mode fua over a request-based disk: the direct request held a
	 * pre-flush (the F that completed just before its FUA write went
	 * down), so its failure may have been the flush's: it falls back.
	 */
	check(&r, "0 0 S 0 8 100 400 -5\n1 0 S 8 8 500 600 -95\n",
	      "d 0 90 105 F PREFLUSH 0 0 0 0\n" RERUN_BIOS("-5", "0 0"), "0 start fua none 0\n");
	expect_clean(&r);
	expect_text(&r, "timeline 200 none");
	done(&r);

	/* A medium error is one a flush gives too: it falls back. */
	check(&r, "0 0 S 0 8 100 400 -61\n1 0 S 8 8 500 600 -95\n", RERUN_BIOS("-61", "0 0"),
	      START_FLUSH_NONE);
	expect_clean(&r);
	expect_text(&r, "timeline 200 none");
	done(&r);

	/*
	 * No failed flush, so a refusal after it has no cause: an error only
	 * a write gives (ENOSPC); mode fua (a real FUA write, judged
	 * by the probe flush); the rerun's write failed too; told `mode
	 * flush` only after the bio (it was mode fua's).
	 */
	static const struct {
		const char *st, *rst, *events;
	} no_switch[] = {
		{ "-28", "0 0", START_FLUSH_NONE },
		{ "-5", "0 0", "0 start fua none 0\n" },	/* and no pre-flush before it */
		{ "-5", "-5 0", START_FLUSH_NONE },
		{ "-5", "0 0", "0 start fua none 0\n120 130 mode flush\n" },
	};
	for (size_t i = 0; i < sizeof(no_switch) / sizeof(no_switch[0]); i++) {
		char ops[128], bios[512];

		snprintf(ops, sizeof(ops), "0 0 S 0 8 100 400 %s\n1 0 S 8 8 500 600 -95\n",
			 no_switch[i].st);
		snprintf(bios, sizeof(bios), RERUN_BIOS("%s", "%s"), no_switch[i].st, no_switch[i].rst);
		check(&r, ops, bios, no_switch[i].events);
		expect_only(&r, ORC_SPURIOUS, 1);
		done(&r);
	}
}

static void test_flush_debt(void **state)
{
	/* Op 0's flush fails (injected), the mode falls back to drain; op 1,
	 * the next barrier, fails too with no fault in its own window. */
	static const char ops[] =
		"0 0 S 0 8 100 200 -5\n"
		"1 1 S 8 8 300 400 -5\n";
	struct result r;

	(void)state;
	check(&r, ops,
	      "d 1 110 120 W - 0 8 0 0\n"
	      "d 2 130 150 F PREFLUSH 0 0 -5 1\n",
	      START_FLUSH_DRAIN);
	expect_clean(&r);
	assert_int_equal(r.rep.flush_debt, 1);
	done(&r);

	/* A mode message in between answered the failure: op 1's EIO, with no
	 * fault of its own, is spurious (review finding 1a: a debt the target
	 * kept across `mode drain`).  The message as dmb-stamp logs it. */
	check(&r, ops,
	      "d 1 110 120 W - 0 8 0 0\n"
	      "d 2 130 150 F PREFLUSH 0 0 -5 1\n",
	      START_FLUSH_DRAIN "220 240 mode drain\n");
	expect_only(&r, ORC_SPURIOUS, 1);
	expect_text(&r, "op 1 (S thread 1");
	done(&r);

	/* A flush succeeded in between: the debt is paid, op 1's EIO is spurious. */
	check(&r, ops,
	      "d 1 110 120 W - 0 8 0 0\n"
	      "d 2 130 150 F PREFLUSH 0 0 -5 1\n"
	      "d 3 250 260 F PREFLUSH 0 0 0 0\n",
	      START_FLUSH_DRAIN);
	expect_only(&r, ORC_SPURIOUS, 1);
	expect_text(&r, "op 1 (S thread 1");
	done(&r);

	/* An S op submitted after the failure succeeded: the debt was taken. */
	check(&r, "0 0 S 0 8 100 200 -5\n1 1 S 8 8 300 400 -5\n2 2 S 16 8 160 250 0\n",
	      "d 1 110 120 W - 0 8 0 0\n"
	      "d 2 130 150 F PREFLUSH 0 0 -5 1\n"
	      "d 3 170 180 W FUA 16 8 0 0\n",
	      START_FLUSH_DRAIN);
	expect_only(&r, ORC_SPURIOUS, 1);
	expect_text(&r, "op 1 (S thread 1");
	done(&r);

	/* ... but not one submitted before it. */
	check(&r, "0 0 S 0 8 100 200 -5\n1 1 S 8 8 300 400 -5\n2 2 S 16 8 90 250 0\n",
	      "d 1 110 120 W - 0 8 0 0\n"
	      "d 2 130 150 F PREFLUSH 0 0 -5 1\n"
	      "d 3 95 100 W FUA 16 8 0 0\n",
	      START_FLUSH_DRAIN);
	expect_clean(&r);
	done(&r);

	/* Plain writes carry no debt. */
	check(&r, "0 0 S 0 8 100 200 -5\n1 1 W 8 8 300 400 -5\n",
	      "d 1 110 120 W - 0 8 0 0\nd 2 130 150 F PREFLUSH 0 0 -5 1\n", START_FLUSH_DRAIN);
	expect_only(&r, ORC_SPURIOUS, 1);
	done(&r);
}

/* ------------------------------------------------------ rule 6: hangs */

static void test_hang(void **state)
{
	static const char bios[] = "d 1 110 150 W - 0 8 0 0\n";
	struct result r;

	(void)state;
	/* 1.5 s for a write: over slack 1000 ms with no hold. */
	check(&r, "0 0 W 0 8 100 1500000100 0\n", bios, "0 start drain none 0\n");
	expect_only(&r, ORC_HANG, 1);
	expect_text(&r, "more than hold 0 + slack 1000 ms");
	done(&r);

	/* With hold_on_flush_error 3000 from the start event: fine. */
	check(&r, "0 0 W 0 8 100 1500000100 0\n", bios, "0 start drain none 3000\n");
	expect_clean(&r);
	done(&r);

	/* --hold-ms overrides the start event. */
	check_with(&r, "0 0 W 0 8 100 1500000100 0\n", bios, "0 start drain none 3000\n", 0);
	expect_only(&r, ORC_HANG, 1);
	done(&r);

	/* A whole log from the tool. */
	check(&r, "# dmb-faultload seed 1\n0 0 W 0 8 100 200 0\n# end 1 ops\n", bios,
	      "0 start drain none 0\n");
	expect_clean(&r);
	done(&r);

	/* No trailer: the tool did not finish. */
	check(&r, "# dmb-faultload seed 1\n0 0 W 0 8 100 200 0\n", bios, "0 start drain none 0\n");
	expect_only(&r, ORC_HANG, 1);
	expect_text(&r, "did not finish");
	done(&r);

	/* The last line cut short. */
	check(&r, "0 0 W 0 8 100 200 0\n1 0 W 8 8 3", bios, "0 start drain none 0\n");
	expect_only(&r, ORC_HANG, 1);
	expect_text(&r, "cut short");
	done(&r);

	/* A missing id, and a slow op that never completed. */
	check(&r, "0 0 W 0 8 100 200 0\n# slow 1 1 F 0 150\n2 0 F 0 0 300 400 0\n", bios,
	      "0 start drain none 0\n");
	expect_only(&r, ORC_HANG, 2);
	expect_text(&r, "op ids 1..1 never completed");
	expect_text(&r, "op 1 (submitted 150, \"# slow\" at ops line 2) never completed");
	done(&r);

	/* A slow op that did complete. */
	check(&r, "0 0 W 0 8 100 200 0\n# slow 1 1 F 0 150\n1 1 F 0 0 150 400 0\n", bios,
	      "0 start drain none 0\n");
	expect_clean(&r);
	done(&r);
}

/* ----------------------------------------------------- rule 7: sanity */

static void test_sanity(void **state)
{
	static const char ops[] = "0 0 W 0 8 100 200 0\n";
	struct result r;

	(void)state;
	check(&r, ops, "d 1 110 150 W - 0 8 0 0\n", "0 start drain none 0\n");
	expect_clean(&r);
	done(&r);

	check(&r, ops, "d 1 110 150 W - 0 8 0 0\n# overflow\n", "0 start drain none 0\n");
	expect_only(&r, ORC_SANITY, 1);
	expect_text(&r, "log overflow");
	done(&r);

	check(&r, ops, "d 1 160 150 W - 0 8 0 0\n", "0 start drain none 0\n");
	expect_only(&r, ORC_SANITY, 1);
	expect_text(&r, "before its submit");
	done(&r);

	check(&r, ops, "d 1 110 150 W - 0 8 0 0\nd 2 160 170 F PREFLUSH 0 8 0 0\n",
	      "0 start drain none 0\n");
	expect_only(&r, ORC_SANITY, 1);
	expect_text(&r, "an F bio with 8 sectors");
	done(&r);

	check(&r, "0 0 W 0 8 100 200 0\n0 1 W 8 8 100 200 0\n",
	      "d 1 110 150 W - 0 8 0 0\nd 2 110 150 W - 8 8 0 0\n", "0 start drain none 0\n");
	expect_only(&r, ORC_SANITY, 1);
	expect_text(&r, "logged twice");
	done(&r);
}

/* Rules 8 and 9 (issue 27, item 4): drain and the barrier's exclusive write. */
static void test_order(void **state)
{
	static const char ops[] =
		"0 0 W 0 8 100 200 0\n"
		"1 1 S 8 8 300 600 0\n";
	static const char ordered[] =
		"d 1 110 150 W - 0 8 0 0\n"
		"d 2 310 350 W FUA 8 8 0 0\n"
		"d 3 360 400 F PREFLUSH 0 0 0 0\n";
	struct result r;

	(void)state;
	check(&r, ops, ordered, START_FLUSH_NONE);
	expect_clean(&r);
	assert_int_equal(r.rep.checked[ORC_ORDER_DRAIN], 1);
	assert_int_equal(r.rep.checked[ORC_ORDER_EXCL], 1);
	done(&r);

	/* The barrier returned while a write issued before it was still below. */
	check(&r, "0 0 W 0 8 100 710 0\n1 1 S 8 8 300 600 0\n",
	      "d 1 110 700 W - 0 8 0 0\n"
	      "d 2 310 350 W FUA 8 8 0 0\n"
	      "d 3 360 400 F PREFLUSH 0 0 0 0\n",
	      START_FLUSH_NONE);
	expect_only(&r, ORC_ORDER_DRAIN, 1);
	expect_text(&r, "returned before bio 1 (W sector 0 submit 110 complete 700");
	done(&r);

	/* Its write went down before that write had completed (no drain). */
	check(&r, "0 0 W 0 8 100 340 0\n1 1 S 8 8 300 600 0\n",
	      "d 1 110 330 W - 0 8 0 0\n"
	      "d 2 310 350 W FUA 8 8 0 0\n"
	      "d 3 360 400 F PREFLUSH 0 0 0 0\n",
	      START_FLUSH_NONE);
	expect_only(&r, ORC_ORDER_DRAIN, 1);
	expect_text(&r, "its write bio 2 (W sector 8 submit 310");
	done(&r);

	/* A write issued after it went down while its write was below (no gate). */
	check(&r, "0 0 W 0 8 305 400 0\n1 1 S 8 8 300 600 0\n",
	      "d 2 310 350 W FUA 8 8 0 0\n"
	      "d 1 320 340 W - 0 8 0 0\n"
	      "d 3 360 400 F PREFLUSH 0 0 0 0\n",
	      START_FLUSH_NONE);
	expect_only(&r, ORC_ORDER_EXCL, 1);
	expect_text(&r, "bio 1 (W sector 0 submit 320 complete 340 status 0, line 2) went down while");
	done(&r);

	/*
	 * Judged or not by what meets the window: not where the mode does
	 * not order (passthrough), nor across a reload or a mode message to
	 * passthrough (the target may have switched anywhere in it; the
	 * timeline moves at its end); a message from flush to drain leaves it
	 * ordered, judged: the write issued before it, still below, breaks
	 * DRAIN.
	 */
	static const struct {
		const char *bios, *events;
		uint64_t drain, exempt;
		bool clean;
	} windows[] = {
		{ "d 1 110 700 W - 0 8 0 0\nd 2 310 350 W FUA 8 8 0 0\n",
		  "0 start passthrough none 0\n", 0, 1, true },
		{ "d 1 110 700 W - 0 8 0 0\nd 2 310 350 W FUA 8 8 0 0\nd 3 360 400 F PREFLUSH 0 0 0 0\n",
		  START_FLUSH_NONE "320 330 reload flush\n", 0, 1, false },
		{ "d 1 110 700 W - 0 8 0 0\nd 2 310 350 W FUA 8 8 0 0\nd 3 360 400 F PREFLUSH 0 0 0 0\n",
		  START_FLUSH_NONE "250 650 mode passthrough\n", 0, 1, false },
		{ "d 1 110 700 W - 0 8 0 0\nd 2 310 350 W - 8 8 0 0\n",
		  START_FLUSH_NONE "320 330 mode drain\n", 1, 0, false },
	};
	for (size_t i = 0; i < sizeof(windows) / sizeof(windows[0]); i++) {
		check(&r, "0 0 W 0 8 100 710 0\n1 1 S 8 8 300 600 0\n", windows[i].bios,
		      windows[i].events);
		assert_int_equal(r.rep.violations[ORC_ORDER_DRAIN], windows[i].drain);
		assert_int_equal(r.rep.exempt_order, windows[i].exempt);
		if (windows[i].exempt)
			assert_int_equal(r.rep.checked[ORC_ORDER_DRAIN], 0);
		if (windows[i].clean)
			expect_clean(&r);
		done(&r);
	}
}

/*
 * A commit (a PREFLUSH|FUA write) accepted before a fallback must not
 * succeed without a flush (review N2: its pre-flush failed as owed, its
 * data part ran as drain).  Op 2, a failing S op in flight, makes the
 * flush failure nobody's own; an S op in the same place stays exempt (it
 * may have been accepted after the fallback), and so does a commit
 * accepted after it.
 */
static void test_commit(void **state)
{
	static const char bios[] =
		"d 1 110 150 W - 0 8 0 0\n"
		"d 2 400 450 F PREFLUSH 0 0 -5 1\n"
		"d 3 500 550 W - 8 8 0 0\n"
		"d 4 360 700 W FUA 16 8 -5 0\n";
	struct result r;

	(void)state;
	check(&r, "0 0 W 0 8 100 200 0\n1 1 C 8 8 300 900 0 310\n2 2 S 16 8 350 800 -5\n", bios,
	      START_FLUSH_DRAIN);
	expect_only(&r, ORC_DURABLE, 1);
	expect_text(&r, "op 1 (C thread 1 sector 8");
	expect_text(&r, "its own write is not durable");
	assert_int_equal(r.rep.fallback_judged, 1);
	done(&r);

	check(&r, "0 0 W 0 8 100 200 0\n1 1 C 8 8 300 900 0 460\n2 2 S 16 8 350 800 -5\n", bios,
	      START_FLUSH_DRAIN);
	expect_clean(&r);
	assert_int_equal(r.rep.exempt_durable, 1);
	done(&r);

	check(&r, "0 0 W 0 8 100 200 0\n1 1 S 8 8 300 900 0\n2 2 S 16 8 350 800 -5\n", bios,
	      START_FLUSH_DRAIN);
	expect_clean(&r);
	assert_int_equal(r.rep.exempt_durable, 1);
	done(&r);
}

static void test_summary(void **state)
{
	struct result r;

	(void)state;
	check(&r, "0 0 W 0 8 100 200 0\n1 1 W 8 8 100 200 -28\n",
	      "d 1 110 150 W - 0 8 0 0\nd 2 110 150 W - 8 8 -28 1\n", "0 start drain none 0\n");
	expect_clean(&r);
	expect_text(&r, "NO_HANG pass 0 judged 2\n");
	expect_text(&r, "ops W 2: 0x1 -28x1\n");
	expect_text(&r, "oracle: 2 ops, 2 bios, 1 injected faults, 0 violations\n");
	assert_int_equal(r.rep.ops_kind[ORC_OP_W], 2);
	assert_int_equal(r.rep.ops_failed[ORC_OP_W], 1);
	done(&r);

	check(&r, "0 0 W 0 8 100 200 0\n", "d 1 110 150 W - 0 8 -5 0\n", "0 start drain none 0\n");
	expect_text(&r, "NO_FALSE_SUCCESS_WRITE_ERROR FAIL 1 judged 1\n");
	expect_text(&r, "1 violations\n");
	done(&r);
}

/* --------------------------------------------------------- big input */

/*
 * 20k ops over 4 threads, 100k bios: each write's bio, each S op's FUA
 * write and post-flush, each F op's flush, and the rest reads and other
 * writes; a flush failure injected now and then with its op failing.
 */
static void test_big(void **state)
{
	enum { NOPS = 20000, NBIOS = 100000 };
	struct orc_opts o = { .hold_ms = 0, .slack_ms = 1000, .max_report = 5 };
	struct orc_input in = { 0 };
	struct orc_report rep;
	struct timespec t0, t1;
	uint64_t t = 1000000;
	double secs;

	(void)state;
	in.ops = calloc(NOPS, sizeof(*in.ops));
	in.bios = calloc(NBIOS, sizeof(*in.bios));
	in.events = calloc(1, sizeof(*in.events));
	assert_non_null(in.ops);
	assert_non_null(in.bios);
	assert_non_null(in.events);
	in.events[in.nevents++] = (struct orc_event){ .t = 0, .type = ORC_EV_START, .mode = ORC_FLUSH,
						       .fallback = ORC_DRAIN };
	for (uint64_t id = 0; id < NOPS; id++) {
		struct orc_op *op = &in.ops[in.nops++];
		enum orc_kind k = id % 10 < 7 ? ORC_OP_W : id % 10 < 9 ? ORC_OP_S : ORC_OP_F;

		*op = (struct orc_op){ .id = id, .thread = id % 4, .kind = k, .sub = t };
		if (k != ORC_OP_F) {
			op->sector = id * 8;
			op->sectors = 8;
			in.bios[in.nbios++] = (struct orc_bio){
				.seq = in.nbios, .sub = t + 10, .comp = t + 100, .op = 'W',
				.sector = op->sector, .sectors = 8,
				.flags = k == ORC_OP_S ? ORC_FUAF : 0 };
		}
		if (k != ORC_OP_W)
			in.bios[in.nbios++] = (struct orc_bio){
				.seq = in.nbios, .sub = t + 200, .comp = t + 300, .op = 'F',
				.flags = ORC_PREFLUSH };
		op->comp = t + 400;
		t += 1000;
	}
	while (in.nbios < NBIOS) {
		in.bios[in.nbios] = (struct orc_bio){ .seq = in.nbios, .sub = in.nbios * 200,
						      .comp = in.nbios * 200 + 50, .op = 'R',
						      .sector = 1u << 30, .sectors = 8 };
		in.nbios++;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(orc_check(&in, &o, &rep, NULL), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	fprintf(stderr, "oracle: %zu ops, %zu bios checked in %.3f s\n", in.nops, in.nbios, secs);
	assert_int_equal(orc_total_violations(&rep), 0);
	assert_int_equal(rep.checked[ORC_DURABLE], NOPS * 3 / 10);
	/* Generous for ASan/UBSan on a busy 2-core host; plain: ~0.02 s. */
	assert_true(secs < 2.0);

	/* Fail every flush (the disk, not injected): each S and F op has plain writes before it. */
	for (size_t i = 0; i < in.nbios; i++)
		if (in.bios[i].op == 'F')
			in.bios[i].status = -5;
	assert_int_equal(orc_check(&in, &o, &rep, NULL), 0);
	assert_int_equal(rep.violations[ORC_DURABLE], NOPS * 3 / 10);
	orc_input_free(&in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_read_malformed),
		cmocka_unit_test(test_timeline),
		cmocka_unit_test(test_durable_flush),
		cmocka_unit_test(test_durable_fua),
		cmocka_unit_test(test_durable_exempt),
		cmocka_unit_test(test_loss),
		cmocka_unit_test(test_never_reached),
		cmocka_unit_test(test_write_error),
		cmocka_unit_test(test_status_kept),
		cmocka_unit_test(test_spurious),
		cmocka_unit_test(test_direct_rerun),
		cmocka_unit_test(test_flush_debt),
		cmocka_unit_test(test_hang),
		cmocka_unit_test(test_sanity),
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_commit),
		cmocka_unit_test(test_summary),
		cmocka_unit_test(test_big),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
