// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * replay.c: dm-log-writes log reader and replayer (replay.h).
 *
 * The log holds, after a super block, one entry per logged bio in the
 * order the target logged them: a write is logged only once a flush that
 * was issued after it completed, or when it was itself a FUA write.  So
 * replaying every entry up to a FLUSH entry gives what the disk is
 * guaranteed to hold once that flush completed, and nothing more: the
 * state a power cut right after the flush leaves behind when the
 * drive's cache loses everything else.
 */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "replay.h"

#define REPLAY_CHUNK (1u << 20)

static uint64_t le64_at(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

static uint32_t le32_at(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return le32toh(v);
}

static int pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(fd, (char *)buf + done, len - done, (off_t)(off + done));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EBADMSG;	/* the log ends inside an entry */
		done += (size_t)n;
	}
	return 0;
}

static int pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pwrite(fd, (const char *)buf + done, len - done, (off_t)(off + done));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -ENOSPC;
		done += (size_t)n;
	}
	return 0;
}

static int fd_size(int fd, uint64_t *size)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (S_ISBLK(st.st_mode))
		return ioctl(fd, BLKGETSIZE64, size) < 0 ? -errno : 0;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	*size = (uint64_t)st.st_size;
	return 0;
}

int replay_log_open(struct replay_log *log, int fd)
{
	unsigned char sb[REPLAY_SUPER_SIZE];
	struct replay_log l = { .fd = fd };
	int r;

	r = fd_size(fd, &l.size);
	if (r < 0)
		return r;
	r = pread_all(fd, sb, sizeof(sb), 0);
	if (r < 0)
		return r;
	if (le64_at(sb) != REPLAY_LOG_MAGIC || le64_at(sb + 8) != REPLAY_LOG_VERSION)
		return -EBADMSG;
	l.nr_entries = le64_at(sb + 16);
	l.sectorsize = le32_at(sb + 24);
	/* a logical block size: a power of two the entry header fits in */
	if (l.sectorsize < 512 || l.sectorsize > 65536 || (l.sectorsize & (l.sectorsize - 1)))
		return -EBADMSG;
	l.next = l.sectorsize;
	*log = l;
	return 0;
}

int replay_log_next(struct replay_log *log, struct replay_entry *e)
{
	unsigned char hdr[REPLAY_ENTRY_SIZE];
	struct replay_entry n = { .index = log->index };
	uint64_t data_bytes = 0;
	int r;

	if (log->index >= log->nr_entries)
		return 0;
	if (log->next > log->size || log->size - log->next < log->sectorsize)
		return -EBADMSG;
	r = pread_all(log->fd, hdr, sizeof(hdr), log->next);
	if (r < 0)
		return r;
	n.sector = le64_at(hdr);
	n.nr_sectors = le64_at(hdr + 8);
	n.flags = le64_at(hdr + 16);
	n.data_len = le64_at(hdr + 24);
	n.data_off = log->next + log->sectorsize;

	if (n.flags & ~(uint64_t)REPLAY_KNOWN_FLAGS)
		return -EBADMSG;
	if (n.flags & REPLAY_MARK) {
		if (n.flags != REPLAY_MARK || n.nr_sectors ||
		    n.data_len >= log->sectorsize - REPLAY_ENTRY_SIZE || n.data_len >= REPLAY_MARK_MAX)
			return -EBADMSG;
		r = pread_all(log->fd, n.mark, n.data_len, log->next + REPLAY_ENTRY_SIZE);
		if (r < 0)
			return r;
		n.mark[n.data_len] = '\0';
		if (strlen(n.mark) != n.data_len)
			return -EBADMSG;
	} else if (n.data_len) {
		/* inline data: written by no 6.1 kernel (it was for DAX) */
		return -EBADMSG;
	}
	if (n.nr_sectors > UINT64_MAX / log->sectorsize ||
	    n.sector > UINT64_MAX / log->sectorsize - n.nr_sectors)
		return -EBADMSG;
	if ((n.flags & REPLAY_DISCARD) && (n.flags & (REPLAY_FLUSH | REPLAY_FUA)))
		return -EBADMSG;
	if (!(n.flags & REPLAY_DISCARD))
		data_bytes = n.nr_sectors * log->sectorsize;
	if (data_bytes > log->size - n.data_off)
		return -EBADMSG;

	log->next = n.data_off + data_bytes;
	log->index++;
	*e = n;
	return 1;
}

int replay_apply(const struct replay_log *log, const struct replay_entry *e, int devfd,
		 uint64_t *bytes)
{
	uint64_t len = e->nr_sectors * log->sectorsize, off = e->sector * log->sectorsize, done;
	char *buf;
	int r = 0;

	if (!len || (e->flags & REPLAY_MARK))
		return 0;
	buf = (e->flags & REPLAY_DISCARD) ? calloc(1, REPLAY_CHUNK) : malloc(REPLAY_CHUNK);
	if (!buf)
		return -ENOMEM;
	/*
	 * A discard replays as zeroes: what the drive returns after it is
	 * not defined, zeroes make the replay deterministic.
	 */
	for (done = 0; done < len && r == 0; done += REPLAY_CHUNK) {
		size_t n = len - done < REPLAY_CHUNK ? (size_t)(len - done) : REPLAY_CHUNK;

		if (!(e->flags & REPLAY_DISCARD))
			r = pread_all(log->fd, buf, n, e->data_off + done);
		if (r == 0)
			r = pwrite_all(devfd, buf, n, off + done);
	}
	free(buf);
	if (r == 0 && bytes)
		*bytes += len;
	return r;
}

/* A write of the flush window being replayed or the one before it. */
struct held_write {
	struct replay_entry e;
	char *old;		/* the device's content before it, for an undo */
};

struct held_window {
	struct held_write *w;
	size_t n, cap;
	uint64_t bytes;
};

#define REPLAY_HELD_MAX (256ull << 20)	/* bytes of undo kept per window */

static void held_clear(struct held_window *h)
{
	for (size_t i = 0; i < h->n; i++)
		free(h->w[i].old);
	h->n = 0;
	h->bytes = 0;
}

static void held_free(struct held_window *h)
{
	held_clear(h);
	free(h->w);
	h->w = NULL;
	h->cap = 0;
}

struct replay_state {
	struct replay_log *log;
	int devfd;
	const struct replay_opts *o;
	replay_check_fn check;
	void *userdata;
	struct replay_stats *st;
	bool checking, dirty;
	uint64_t distinct;	/* distinct points seen while checking */
	char last_mark[REPLAY_MARK_MAX];
	struct held_window prev, cur;	/* REPLAY_LOSE_PREVIOUS */
};

/* Applies e, keeping what it overwrites in the current window first. */
static int replay_apply_held(struct replay_state *s, const struct replay_entry *e)
{
	struct held_window *h = &s->cur;
	uint64_t len = e->nr_sectors * s->log->sectorsize;
	struct held_write hw = { .e = *e };
	int r;

	if (len > REPLAY_HELD_MAX - h->bytes)
		return -E2BIG;
	if (h->n == h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 64;
		struct held_write *w = realloc(h->w, cap * sizeof(*w));

		if (!w)
			return -ENOMEM;
		h->w = w;
		h->cap = cap;
	}
	hw.old = malloc(len);
	if (!hw.old)
		return -ENOMEM;
	r = pread_all(s->devfd, hw.old, len, e->sector * s->log->sectorsize);
	if (r < 0) {
		free(hw.old);
		return r;
	}
	h->w[h->n++] = hw;
	h->bytes += len;
	return replay_apply(s->log, e, s->devfd, &s->st->bytes);
}

/*
 * Redoes the window's writes in log order from position first: every one
 * (step 1) or every other (step 2).
 */
static int held_reapply(struct replay_state *s, const struct held_window *h,
			size_t first, size_t step)
{
	int r = 0;

	for (size_t i = first; i < h->n && r == 0; i += step)
		r = replay_apply(s->log, &h->w[i].e, s->devfd, NULL);
	return r;
}

/* Undoes the window's writes at positions of this parity, newest first. */
static int held_undo(struct replay_state *s, const struct held_window *h, size_t parity)
{
	int r = 0;

	for (size_t i = h->n; i-- > 0 && r == 0;) {
		if (i % 2 == parity)
			r = pwrite_all(s->devfd, h->w[i].old,
				       h->w[i].e.nr_sectors * s->log->sectorsize,
				       h->w[i].e.sector * s->log->sectorsize);
	}
	return r;
}

/* A flush point: check it if the device changed since the last one. */
static int replay_point(struct replay_state *s, const struct replay_entry *e)
{
	int r;

	if (!s->checking || !s->dirty)
		return 0;
	s->dirty = false;
	s->distinct++;
	if (s->distinct % (s->o->every ? s->o->every : 1))
		return 0;
	if (fsync(s->devfd) < 0 && errno != EINVAL)
		return -errno;
	r = s->check(s->st->points, e, s->last_mark, s->userdata);
	if (r < 0)
		return r;
	s->st->points++;
	if (r > 0) {
		if (!s->st->failed)
			s->st->first_failed_entry = e->index;
		s->st->failed++;
	}
	return 0;
}

static int replay_point(struct replay_state *s, const struct replay_entry *e);

/*
 * A flush point with every other write of the previous window lost (a
 * cache that wrote back part of what a flush should have made durable):
 * undo those, redo the rest of that window and the current window on top
 * (they may overlap), check, then redo both windows in log order.  The
 * current window becomes the previous one.
 */
static int replay_point_lose_previous(struct replay_state *s, const struct replay_entry *e)
{
	size_t lost = s->o->mutation == REPLAY_LOSE_PREVIOUS_EVEN ? 0 : 1;
	struct held_window t;
	int r = 0;

	if (!s->cur.n)	/* no write since the last flush: nothing moves */
		return replay_point(s, e);
	if (s->dirty && s->prev.n > 1) {	/* a window of one loses nothing */
		s->st->dropped += (s->prev.n + 1 - lost) / 2;
		r = held_undo(s, &s->prev, lost);
		if (r == 0)
			r = held_reapply(s, &s->prev, 1 - lost, 2);
		if (r == 0)
			r = held_reapply(s, &s->cur, 0, 1);
	}
	if (r == 0)
		r = replay_point(s, e);
	if (r == 0)
		r = held_reapply(s, &s->prev, 0, 1);
	if (r == 0)
		r = held_reapply(s, &s->cur, 0, 1);
	held_clear(&s->prev);
	t = s->prev;
	s->prev = s->cur;
	s->cur = t;
	return r;
}

static bool replay_done(const struct replay_state *s)
{
	const struct replay_opts *o = s->o;

	return (o->max_points && s->st->points >= o->max_points) ||
	       (o->max_failures && s->st->failed >= o->max_failures);
}

static int replay_loop(struct replay_state *s)
{
	const struct replay_opts *opts = s->o;
	struct replay_stats *st = s->st;
	uint64_t window = 0;	/* flush entries seen while checking */
	struct replay_entry e;
	int r;

	bool lose_previous = opts->mutation == REPLAY_LOSE_PREVIOUS ||
			     opts->mutation == REPLAY_LOSE_PREVIOUS_EVEN;

	while (!replay_done(s) && (r = replay_log_next(s->log, &e)) != 0) {
		bool mutate = s->checking && opts->mutation != REPLAY_EXACT;

		if (r < 0)
			return r;
		st->entries++;
		if (e.flags & REPLAY_MARK) {
			st->marks++;
			snprintf(s->last_mark, sizeof(s->last_mark), "%s", e.mark);
			if (!s->checking && strcmp(e.mark, opts->start_mark) == 0)
				s->checking = true;
			else if (s->checking && opts->end_mark && strcmp(e.mark, opts->end_mark) == 0)
				break;
			continue;
		}
		if (e.flags & REPLAY_FLUSH) {
			st->flushes++;
			/* a flush with data: its data goes after the flush */
			if (mutate && lose_previous)
				r = replay_point_lose_previous(s, &e);
			else
				r = replay_point(s, &e);
			if (r < 0)
				return r;
			if (s->checking)
				window++;
		}
		if (e.nr_sectors) {
			if (e.flags & REPLAY_DISCARD)
				st->discards++;
			else
				st->writes++;
			if (mutate && opts->mutation == REPLAY_LOSE_FLUSHED && window % 2) {
				st->dropped++;
				continue;
			}
			if (mutate && lose_previous)
				r = replay_apply_held(s, &e);
			else
				r = replay_apply(s->log, &e, s->devfd, &st->bytes);
			if (r < 0)
				return r;
			s->dirty = true;
		}
		if (e.flags & REPLAY_FUA) {
			st->fua++;
			r = replay_point(s, &e);
			if (r < 0)
				return r;
		}
	}
	if (!s->checking)
		return -ENOENT;	/* the start mark is not in the log */
	return fsync(s->devfd) < 0 && errno != EINVAL ? -errno : 0;
}

int replay_run(struct replay_log *log, int devfd, const struct replay_opts *opts,
	       replay_check_fn check, void *userdata, struct replay_stats *st)
{
	struct replay_state s = {
		.log = log, .devfd = devfd, .o = opts, .check = check,
		.userdata = userdata, .st = st, .checking = !opts->start_mark,
	};
	int r;

	memset(st, 0, sizeof(*st));
	st->first_failed_entry = UINT64_MAX;
	r = replay_loop(&s);
	held_free(&s.prev);
	held_free(&s.cur);
	return r;
}

static const char *const mutation_names[] = {
	[REPLAY_EXACT] = "none",
	[REPLAY_LOSE_FLUSHED] = "lose-flushed",
	[REPLAY_LOSE_PREVIOUS] = "lose-previous",
	[REPLAY_LOSE_PREVIOUS_EVEN] = "lose-previous-even",
};

const char *replay_mutation_name(enum replay_mutation m)
{
	return (size_t)m < sizeof(mutation_names) / sizeof(mutation_names[0]) ?
	       mutation_names[m] : "?";
}

int replay_mutation_from_name(const char *s, enum replay_mutation *m)
{
	for (size_t i = 0; i < sizeof(mutation_names) / sizeof(mutation_names[0]); i++) {
		if (strcmp(s, mutation_names[i]) == 0) {
			*m = (enum replay_mutation)i;
			return 0;
		}
	}
	return -EINVAL;
}
