// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-tools-replay.c: the dm-log-writes reader and replayer
 * (tests/tools/replay.c) on synthetic logs written here in the kernel's
 * format (drivers/md/dm-log-writes.c): entries read back as written,
 * malformed logs refused, and the replay onto a file holding, at each
 * flush point, exactly the writes logged before it; the mutations must
 * produce the broken states they are named for.
 */
#include <endian.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../tools/replay.h"

#define SS 512u		/* the logged device's sector size */
#define DEV_SECTORS 8u

/* ------------------------------------------------------ log builder */

struct logbuf {
	unsigned char *b;
	size_t len;
	uint64_t entries;
};

static void put_le64(unsigned char *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, sizeof(v));
}

static void lb_block(struct logbuf *l)
{
	l->b = realloc(l->b, l->len + SS);
	assert_non_null(l->b);
	memset(l->b + l->len, 0, SS);
	l->len += SS;
}

static struct logbuf lb_new(void)
{
	struct logbuf l = {};

	lb_block(&l);
	put_le64(l.b, REPLAY_LOG_MAGIC);
	put_le64(l.b + 8, REPLAY_LOG_VERSION);
	l.b[24] = SS & 0xff;
	l.b[25] = SS >> 8;
	return l;
}

static void lb_entry(struct logbuf *l, uint64_t sector, uint64_t nr, uint64_t flags,
		     const char *mark, char fill)
{
	size_t h = l->len;

	lb_block(l);
	put_le64(l->b + h, sector);
	put_le64(l->b + h + 8, nr);
	put_le64(l->b + h + 16, flags);
	if (mark) {
		put_le64(l->b + h + 24, strlen(mark));
		memcpy(l->b + h + 32, mark, strlen(mark));
	}
	if (!(flags & REPLAY_DISCARD)) {
		for (uint64_t i = 0; i < nr; i++) {
			lb_block(l);
			memset(l->b + l->len - SS, fill, SS);
		}
	}
	put_le64(l->b + 16, ++l->entries);
}

static void lb_write(struct logbuf *l, uint64_t sector, char fill)
{
	lb_entry(l, sector, 1, 0, NULL, fill);
}

static void lb_flush(struct logbuf *l)
{
	lb_entry(l, 0, 0, REPLAY_FLUSH, NULL, 0);
}

static void lb_mark(struct logbuf *l, const char *m)
{
	lb_entry(l, 0, 0, REPLAY_MARK, m, 0);
}

/* An unlinked temporary file holding len bytes of buf (or zeroes). */
static int tmpfd(const void *buf, size_t len)
{
	char name[] = "/tmp/test-replay-XXXXXX";
	int fd = mkstemp(name);

	assert_true(fd >= 0);
	unlink(name);
	if (buf)
		assert_int_equal(pwrite(fd, buf, len, 0), (ssize_t)len);
	else
		assert_int_equal(ftruncate(fd, (off_t)len), 0);
	return fd;
}

/* ------------------------------------------------------ the checker */

#define MAX_POINTS 16

struct seen {
	int devfd;
	size_t n;
	char state[MAX_POINTS][DEV_SECTORS + 1];	/* first byte of each sector */
	char mark[MAX_POINTS][16];
	uint64_t fail_at;	/* make this point's check fail; UINT64_MAX: none */
};

static void dev_state(int fd, char *out)
{
	for (unsigned i = 0; i < DEV_SECTORS; i++) {
		char c;

		assert_int_equal(pread(fd, &c, 1, (off_t)i * SS), 1);
		out[i] = c ? c : '.';
	}
	out[DEV_SECTORS] = '\0';
}

static int record(uint64_t point, const struct replay_entry *e, const char *last_mark, void *ud)
{
	struct seen *s = ud;

	assert_true(e->flags & (REPLAY_FLUSH | REPLAY_FUA));
	assert_int_equal(point, s->n);
	assert_true(s->n < MAX_POINTS);
	dev_state(s->devfd, s->state[s->n]);
	snprintf(s->mark[s->n], sizeof(s->mark[0]), "%s", last_mark);
	s->n++;
	return point == s->fail_at ? 1 : 0;
}

static int run(struct logbuf *l, const struct replay_opts *o, struct seen *s,
	       struct replay_stats *st, char *final)
{
	struct replay_log log;
	int logfd = tmpfd(l->b, l->len), r;

	s->devfd = tmpfd(NULL, DEV_SECTORS * SS);
	s->n = 0;
	assert_int_equal(replay_log_open(&log, logfd), 0);
	r = replay_run(&log, s->devfd, o, record, s, st);
	if (final)
		dev_state(s->devfd, final);
	close(s->devfd);
	close(logfd);
	return r;
}

/* ------------------------------------------------------------ tests */

static void test_read_entries(void **state)
{
	struct logbuf l = lb_new();
	struct replay_entry e;
	struct replay_log log;
	int fd;

	(void)state;
	lb_write(&l, 3, 'a');
	lb_entry(&l, 5, 2, REPLAY_FUA | REPLAY_METADATA, NULL, 'b');
	lb_mark(&l, "round1");
	lb_entry(&l, 1, 4, REPLAY_DISCARD, NULL, 0);
	lb_flush(&l);
	fd = tmpfd(l.b, l.len);
	assert_int_equal(replay_log_open(&log, fd), 0);
	assert_int_equal(log.sectorsize, SS);
	assert_int_equal(log.nr_entries, 5);

	assert_int_equal(replay_log_next(&log, &e), 1);
	assert_int_equal(e.sector, 3);
	assert_int_equal(e.nr_sectors, 1);
	assert_int_equal(e.flags, 0);
	assert_int_equal(e.data_off, 2 * SS);
	assert_int_equal(replay_log_next(&log, &e), 1);
	assert_int_equal(e.index, 1);
	assert_int_equal(e.nr_sectors, 2);
	assert_int_equal(e.flags, REPLAY_FUA | REPLAY_METADATA);
	assert_int_equal(e.data_off, 4 * SS);
	assert_int_equal(replay_log_next(&log, &e), 1);
	assert_int_equal(e.flags, REPLAY_MARK);
	assert_string_equal(e.mark, "round1");
	/* a discard has no data in the log: the flush follows its header */
	assert_int_equal(replay_log_next(&log, &e), 1);
	assert_int_equal(e.flags, REPLAY_DISCARD);
	assert_int_equal(e.nr_sectors, 4);
	assert_int_equal(replay_log_next(&log, &e), 1);
	assert_int_equal(e.flags, REPLAY_FLUSH);
	assert_int_equal(e.data_off, 9 * SS);
	assert_int_equal(replay_log_next(&log, &e), 0);
	close(fd);
	free(l.b);
}

static void test_malformed(void **state)
{
	static const struct {
		size_t off;	/* byte to change */
		unsigned char val;
	} bad[] = {
		{ 0, 0 },		/* magic */
		{ 8, 2 },		/* version */
		{ 25, 3 },		/* sector size 768 */
		{ SS + 16, 0x20 },	/* unknown flag */
		{ SS + 8, 9 },		/* nr_sectors past the end of the log */
		{ SS + 24, 4 },		/* inline data on a write */
	};
	struct replay_entry e;
	struct replay_log log;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct logbuf l = lb_new();
		int fd, r;

		lb_write(&l, 0, 'a');
		l.b[bad[i].off] = bad[i].val;
		fd = tmpfd(l.b, l.len);
		r = replay_log_open(&log, fd);
		if (r == 0)
			r = replay_log_next(&log, &e);
		if (r != -EBADMSG)
			fail_msg("case %zu: %d, want -EBADMSG", i, r);
		close(fd);
		free(l.b);
	}

	/* nr_entries larger than what the log holds: the log is cut short */
	struct logbuf l = lb_new();
	int fd;

	lb_write(&l, 0, 'a');
	put_le64(l.b + 16, 2);
	fd = tmpfd(l.b, l.len);
	assert_int_equal(replay_log_open(&log, fd), 0);
	assert_int_equal(replay_log_next(&log, &e), 1);
	assert_int_equal(replay_log_next(&log, &e), -EBADMSG);
	close(fd);
	free(l.b);
}

/* The log of two transactions: W0 W1 F | W2 W0' F F | mark | D1-2 W3 FUA */
static struct logbuf two_windows(void)
{
	struct logbuf l = lb_new();

	lb_write(&l, 0, 'a');
	lb_write(&l, 1, 'b');
	lb_flush(&l);
	lb_write(&l, 2, 'c');
	lb_write(&l, 0, 'A');
	lb_flush(&l);
	lb_flush(&l);	/* nothing new: not a point */
	lb_mark(&l, "m1");
	lb_entry(&l, 1, 2, REPLAY_DISCARD, NULL, 0);
	lb_entry(&l, 3, 1, REPLAY_FUA, NULL, 'd');
	return l;
}

static void test_replay_exact(void **state)
{
	struct logbuf l = two_windows();
	struct replay_opts o = { .every = 1 };
	struct replay_stats st;
	struct seen s = { .fail_at = UINT64_MAX };
	char final[DEV_SECTORS + 1];

	(void)state;
	assert_int_equal(run(&l, &o, &s, &st, final), 0);
	assert_int_equal(s.n, 3);
	assert_string_equal(s.state[0], "ab......");
	assert_string_equal(s.state[1], "Abc.....");
	assert_string_equal(s.state[2], "A..d....");
	assert_string_equal(s.mark[2], "m1");
	assert_string_equal(final, "A..d....");
	assert_int_equal(st.points, 3);
	assert_int_equal(st.failed, 0);
	assert_int_equal(st.writes, 5);
	assert_int_equal(st.discards, 1);
	assert_int_equal(st.flushes, 3);
	assert_int_equal(st.fua, 1);
	assert_int_equal(st.marks, 1);
	assert_int_equal(st.first_failed_entry, UINT64_MAX);
	free(l.b);
}

static void test_start_mark_and_failures(void **state)
{
	struct logbuf l = two_windows();
	struct replay_opts o = { .every = 1, .start_mark = "m1" };
	struct replay_stats st;
	struct seen s = { .fail_at = UINT64_MAX };

	(void)state;
	/* everything before the mark is replayed, only later points checked */
	assert_int_equal(run(&l, &o, &s, &st, NULL), 0);
	assert_int_equal(s.n, 1);
	assert_string_equal(s.state[0], "A..d....");

	o.start_mark = "nosuch";
	assert_int_equal(run(&l, &o, &s, &st, NULL), -ENOENT);
	assert_int_equal(s.n, 0);

	o.start_mark = NULL;
	s.fail_at = 1;
	assert_int_equal(run(&l, &o, &s, &st, NULL), 0);
	assert_int_equal(st.points, 3);
	assert_int_equal(st.failed, 1);
	assert_int_equal(st.first_failed_entry, 5);	/* the second flush */

	o.max_failures = 1;
	assert_int_equal(run(&l, &o, &s, &st, NULL), 0);
	assert_int_equal(st.points, 2);
	free(l.b);
}

static void test_mutation_lose_flushed(void **state)
{
	struct logbuf l = lb_new();
	struct replay_opts o = { .every = 1, .mutation = REPLAY_LOSE_FLUSHED };
	struct replay_stats st;
	struct seen s = { .fail_at = UINT64_MAX };

	(void)state;
	lb_write(&l, 0, 'a');
	lb_flush(&l);
	lb_write(&l, 1, 'b');	/* between flushes 1 and 2: never reaches the disk */
	lb_flush(&l);
	lb_write(&l, 2, 'c');
	lb_flush(&l);
	assert_int_equal(run(&l, &o, &s, &st, NULL), 0);
	assert_int_equal(st.dropped, 1);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.state[0], "a.......");
	assert_string_equal(s.state[1], "a.c.....");
	free(l.b);
}

/*
 * The log both lose-previous tests replay: windows of one, three, two and
 * zero writes, then one.
 */
static struct logbuf lose_previous_log(void)
{
	struct logbuf l = lb_new();

	lb_write(&l, 0, 'a');
	lb_flush(&l);
	lb_write(&l, 1, 'b');
	lb_write(&l, 2, 'c');
	lb_write(&l, 5, 'f');
	lb_flush(&l);
	lb_write(&l, 2, 'C');	/* overwrites c */
	lb_write(&l, 3, 'd');
	lb_flush(&l);
	lb_flush(&l);
	lb_write(&l, 4, 'e');
	lb_flush(&l);
	return l;
}

/* Replays that log with mutation m: the four checked states, the dropped writes. */
static void lose_previous_case(enum replay_mutation m, const char *const want[4], uint64_t dropped)
{
	struct logbuf l = lose_previous_log();
	struct replay_opts o = { .every = 1, .mutation = m };
	struct replay_stats st;
	struct seen s = { .fail_at = UINT64_MAX };
	char final[DEV_SECTORS + 1];

	assert_int_equal(run(&l, &o, &s, &st, final), 0);
	assert_int_equal(s.n, 4);
	for (int i = 0; i < 4; i++)
		assert_string_equal(s.state[i], want[i]);
	assert_string_equal(final, "abCdef..");	/* the replay goes on exactly */
	assert_int_equal(st.dropped, dropped);
	free(l.b);
}

static void test_mutation_lose_previous(void **state)
{
	static const char *const want[4] = {
		"a.......",	/* nothing before it */
		"abc..f..",	/* a window of one loses nothing */
		"abCd.f..",	/* c (odd) lost, but C is on top */
		"abC.ef..",	/* d lost; the empty window skipped */
	};

	(void)state;
	lose_previous_case(REPLAY_LOSE_PREVIOUS, want, 2);
}

/* The same log with the even positions lost. */
static void test_mutation_lose_previous_even(void **state)
{
	static const char *const want[4] = {
		"a.......",
		"abc..f..",	/* a window of one loses nothing */
		"a.Cd....",	/* b and f lost, c under C */
		"abcdef..",	/* C lost: the old c is there */
	};

	(void)state;
	lose_previous_case(REPLAY_LOSE_PREVIOUS_EVEN, want, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_entries),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_replay_exact),
		cmocka_unit_test(test_start_mark_and_failures),
		cmocka_unit_test(test_mutation_lose_flushed),
		cmocka_unit_test(test_mutation_lose_previous),
		cmocka_unit_test(test_mutation_lose_previous_even),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
