// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * order.c: checks the barrier contract over a blktrace of a dm device and
 * its backing disk taken in one run (one time base).
 *
 * Each bio Q'd on the dm device is followed to the disk: its remap (A,
 * matched by source sector; an empty flush by submitting pid), the disk
 * request that carries its sectors (D, C), the flush requests (D/C "FN")
 * after it.  Then, for every barrier B (a write with PREFLUSH or FUA):
 *   (a) drain:     bios accepted before B are done on the disk before
 *                  B's first disk command (none of its own: before B
 *                  completes);
 *   (b) overtake:  bios accepted after B do not reach the disk before
 *                  the target finished with B, T(B) (below);
 *   (c) durable:   writes accepted before B, and B's data, are on stable
 *                  media when B completes;
 *   (d) preflush:  writes accepted before B are on stable media before
 *                  B's data is dispatched.
 * "Accepted before" must be certain: Q is traced before the target's
 * map() runs, so two bios submitted by different threads at nearly the
 * same time can reach map() in either order.  A bio's acceptance is
 * bounded by the next event its submitting thread traces (its own remap,
 * or its next Q), by its first disk command and by its completion; pairs
 * whose windows overlap are not ordered and are only counted.
 * Each rule is a dominance count (points with key < k and value > v),
 * answered for all barriers at once with a sweep and a Fenwick tree.
 *
 * T(B) = min(c(B), E(B)).  dm core traces B's C after the target's
 * end_io returned, and a target can run nothing after that: the target
 * may let later bios go in between (its worker releasing bios queued
 * behind a barrier the disk completed, a gate reopened by a clean flush
 * answered in map()).  No observer can tell this from C first: B's disk
 * work is over and all before it done, so a power cut leaves only states
 * a correct run can leave.  E(B) is the latest of:
 *   - B's own disk commands (its data request or its flush): their end
 *     (done), and with --durability its data's post-flush (durable);
 *   - the bios accepted before B (e(X) < q(B), as for drain): done, and
 *     with --durability the writes' durable;
 *   - q(B).
 * The second part adds nothing when drain and preflush hold; it keeps
 * the relaxation to where the argument holds.  When something in it is
 * unknown (ORD_NEVER), B failed, or a command of its own failed (the
 * target runs it again), T(B) is c(B): the strict rule.
 *
 * A completion (C) on the dm device names no bio, only its sector, size
 * and direction (the key), which every empty flush shares.  It is paired
 * with its Q in two passes.  First (pair_own()), a C traced in process
 * context (tracefs only) by a pid whose latest Q on the dm device has the
 * same key and no C yet is that bio's: completed within its submitter's
 * submit_bio(), as a target answers a clean flush in map().  Then the
 * other Cs (irq context, another pid: a kworker, or blkparse, which shows
 * no context) go FIFO to the oldest open Q of their key that the first
 * pass did not pair.  FIFO alone gave one thread's flush, answered in
 * map(), the C of another's flush that the disk completed meanwhile.
 * When several such Qs of a key are open at a C, FIFO's choice is a
 * guess: each of them gets the range of completions it could have had
 * (c_lo, c_hi), counted as ambiguous, and each rule reads the end of the
 * range that breaks it least, so that a guess invents no violation.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "order.h"

const char *const ord_rule_names[ORD_NRULES] = {
	[ORD_DRAIN] = "drain",
	[ORD_OVERTAKE] = "overtake",
	[ORD_DURABLE] = "durable",
	[ORD_PREFLUSH] = "preflush",
};

#define NONE SIZE_MAX
#define EAGAIN_ERR (-EAGAIN)

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* ------------------------------------------------------------ hash map */

/* uint64 -> size_t, open addressing; sized once for the whole trace. */
struct hmap {
	uint64_t *keys;
	size_t *vals;
	size_t mask;
};

static uint64_t hash64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return k;
}

static int hmap_init(struct hmap *m, size_t n)
{
	size_t cap = 16;

	while (cap < 2 * n + 16)
		cap <<= 1;
	m->keys = malloc(cap * sizeof(*m->keys));
	m->vals = malloc(cap * sizeof(*m->vals));
	if (!m->keys || !m->vals)
		return -ENOMEM;
	m->mask = cap - 1;
	for (size_t i = 0; i < cap; i++)
		m->vals[i] = NONE;
	return 0;
}

static void hmap_free(struct hmap *m)
{
	free(m->keys);
	free(m->vals);
}

/* The slot for @k: its value, or NONE in an empty slot that will hold it. */
static size_t *hmap_slot(struct hmap *m, uint64_t k)
{
	size_t i = hash64(k) & m->mask;

	while (m->vals[i] != NONE && m->keys[i] != k)
		i = (i + 1) & m->mask;
	m->keys[i] = k;
	return &m->vals[i];
}

/* ------------------------------------------------------------ disk side */

struct disk_rq {
	uint64_t t, sector;
	uint32_t nsect;
	int32_t err;
	bool fua;
};

struct disk_flush {
	uint64_t d_first, d, c;	/* first and last dispatch, completion */
	int32_t err;
};

struct rq_list {
	struct disk_rq *v;
	size_t n, cap;
	uint32_t max_nsect;
};

static int rq_add(struct rq_list *l, const struct tev *ev)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 1024;
		struct disk_rq *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = (struct disk_rq){ .t = ev->t, .sector = ev->sector, .nsect = ev->nsect,
					 .err = ev->err, .fua = ev->flags & TF_FUA };
	if (ev->nsect > l->max_nsect)
		l->max_nsect = ev->nsect;
	return 0;
}

static int cmp_rq(const void *a, const void *b)
{
	const struct disk_rq *x = a, *y = b;

	if (x->sector != y->sector)
		return x->sector < y->sector ? -1 : 1;
	return x->t < y->t ? -1 : x->t > y->t;
}

/*
 * The earliest request in @l covering @sector with lo <= t <= hi, or
 * NULL.  Sorted by start sector, so the candidates sit just below the
 * last start <= sector, no further than the largest request.
 */
static const struct disk_rq *rq_find(const struct rq_list *l, uint64_t sector, uint64_t lo,
				     uint64_t hi, bool exact_start)
{
	const struct disk_rq *best = NULL;
	size_t a = 0, b = l->n;

	while (a < b) { /* first index with start > sector */
		size_t mid = a + (b - a) / 2;

		if (l->v[mid].sector <= sector)
			a = mid + 1;
		else
			b = mid;
	}
	while (a-- > 0) {
		const struct disk_rq *r = &l->v[a];

		if (r->sector + l->max_nsect < sector || (exact_start && r->sector != sector))
			break;
		if ((exact_start || sector < r->sector + r->nsect) && r->t >= lo && r->t <= hi &&
		    (!best || r->t < best->t))
			best = r;
	}
	return best;
}

/* ------------------------------------------------------------ dominance */

struct dom_pt {
	int64_t key, val;
	size_t idx;
};

struct dom_q {
	int64_t key, thr;
	size_t idx;
	uint64_t count;	/* points with key < q.key and val > q.thr */
	uint64_t added;	/* points with key < q.key */
	size_t worst;	/* of those with key < q.key, the largest val */
	int64_t worst_val;
};

static int cmp_pt(const void *a, const void *b)
{
	const struct dom_pt *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

static int cmp_q(const void *a, const void *b)
{
	const struct dom_q *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

static int cmp_i64(const void *a, const void *b)
{
	const int64_t *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

/* Number of values <= v in a sorted array. */
static size_t upper_bound(const int64_t *s, size_t n, int64_t v)
{
	size_t a = 0, b = n;

	while (a < b) {
		size_t mid = a + (b - a) / 2;

		if (s[mid] <= v)
			a = mid + 1;
		else
			b = mid;
	}
	return a;
}

static int dominance(struct dom_pt *pts, size_t np, struct dom_q *qs, size_t nq)
{
	_cleanup_free_ int64_t *vals = NULL;
	_cleanup_free_ uint64_t *bit = NULL;
	size_t i, j = 0, added = 0, worst = NONE;
	int64_t worst_val = INT64_MIN;

	vals = malloc((np + 1) * sizeof(*vals));
	bit = calloc(np + 2, sizeof(*bit));
	if (!vals || !bit)
		return -ENOMEM;
	for (i = 0; i < np; i++)
		vals[i] = pts[i].val;
	qsort(vals, np, sizeof(*vals), cmp_i64);
	qsort(pts, np, sizeof(*pts), cmp_pt);
	qsort(qs, nq, sizeof(*qs), cmp_q);

	for (i = 0; i < nq; i++) {
		size_t le = 0, k;

		for (; j < np && pts[j].key < qs[i].key; j++) {
			for (k = upper_bound(vals, np, pts[j].val); k <= np; k += k & -k)
				bit[k]++;
			added++;
			if (worst == NONE || pts[j].val > worst_val) {
				worst = pts[j].idx;
				worst_val = pts[j].val;
			}
		}
		for (k = upper_bound(vals, np, qs[i].thr); k > 0; k -= k & -k)
			le += bit[k];
		qs[i].count = added - le;
		qs[i].added = added;
		qs[i].worst = worst;
		qs[i].worst_val = worst_val;
	}
	return 0;
}

static int64_t ti(uint64_t t)
{
	return t == ORD_NEVER ? INT64_MAX : (int64_t)t;
}

/* ------------------------------------------------------------ the check */

static void problem(struct ord_report *rep, uint32_t line, const char *what)
{
	if (!rep->problems++)
		snprintf(rep->problem, sizeof(rep->problem), "%s (line %" PRIu32 ")", what, line);
}

static int add_violation(struct ord_report *rep, const struct ord_violation *v)
{
	if (rep->nv == rep->cap_v) {
		size_t cap = rep->cap_v ? 2 * rep->cap_v : 64;
		struct ord_violation *nv = realloc(rep->v, cap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		rep->v = nv;
		rep->cap_v = cap;
	}
	rep->v[rep->nv++] = *v;
	return 0;
}

/* Key of a bio for matching its C to its Q: sector, size, direction. */
static uint64_t bio_key(uint64_t sector, uint32_t nsect, uint16_t flags)
{
	uint64_t k = (sector & ((1ULL << 44) - 1)) | ((uint64_t)(nsect & 0x7ffff) << 44);

	return k | ((flags & TF_WRITE) ? 1ULL << 63 : 0);
}

/* A zero-sized Q prints no sector; its C prints one. */
static uint64_t ev_key(const struct tev *ev)
{
	return ev->nsect ? bio_key(ev->sector, ev->nsect, ev->flags) : bio_key(0, 0, ev->flags);
}

static int find_devices(const struct tev *ev, size_t n, const struct ord_opts *o,
			struct ord_report *rep)
{
	for (size_t i = 0; i < n; i++) {
		if (ev[i].act != 'A' || (o->dm_dev && ev[i].from_dev != o->dm_dev))
			continue;
		if (!rep->dm_dev)
			rep->dm_dev = ev[i].from_dev;
		if (!rep->disk_dev)
			rep->disk_dev = ev[i].dev;
		if (ev[i].from_dev != rep->dm_dev || ev[i].dev != rep->disk_dev) {
			problem(rep, ev[i].line, "remaps between more than one pair of devices");
			return -EINVAL;
		}
	}
	if (o->dm_dev)
		rep->dm_dev = o->dm_dev;
	if (!rep->dm_dev || !rep->disk_dev) {
		problem(rep, 0, "no remap (A) from the dm device to a disk in the trace");
		return -EINVAL;
	}
	return 0;
}

/* A FIFO of flush indexes: a flush may be requeued and dispatched again. */
struct fifo {
	size_t *v;
	size_t head, n, cap;
};

static int fifo_push(struct fifo *q, size_t x)
{
	if (q->head + q->n == q->cap) {
		if (q->head) {
			memmove(q->v, q->v + q->head, q->n * sizeof(*q->v));
			q->head = 0;
		} else {
			size_t cap = q->cap ? 2 * q->cap : 256;
			size_t *nv = realloc(q->v, cap * sizeof(*nv));

			if (!nv)
				return -ENOMEM;
			q->v = nv;
			q->cap = cap;
		}
	}
	q->v[q->head + q->n++] = x;
	return 0;
}

static size_t fifo_pop(struct fifo *q)
{
	q->n--;
	return q->v[q->head++];
}

struct scan {
	struct hmap open;	/* bio key -> FIFO (index into fifos) */
	size_t *own_c;		/* per bio: its C's index in the events (pair_own()), or NONE */
	struct hmap by_sector;	/* dm sector -> latest bio with it */
	struct hmap pending;	/* pid -> bio whose acceptance bound is open */
	struct hmap last_q;	/* pid -> its latest bio */
	size_t *fifo_head, *fifo_tail, nfifo;
	size_t *period_head;	/* per FIFO: first bio since it was last empty */
	size_t *await_head;	/* per FIFO: first bio Q'd since its last C */
	size_t *next;		/* per bio: next in its FIFO */
	size_t empty_head;	/* oldest empty flush that may still be remapped */
	struct rq_list d, c, zero_c;
	struct disk_flush *fl;
	size_t nfl, capfl;
	struct fifo fl_open;	/* dispatched, not completed, in order */
	struct fifo fl_requeued;	/* requeued, not yet dispatched again */
};

static void scan_free(struct scan *s)
{
	hmap_free(&s->open);
	hmap_free(&s->by_sector);
	hmap_free(&s->pending);
	hmap_free(&s->last_q);
	free(s->own_c);
	free(s->fifo_head);
	free(s->fifo_tail);
	free(s->period_head);
	free(s->await_head);
	free(s->next);
	free(s->d.v);
	free(s->c.v);
	free(s->zero_c.v);
	free(s->fl);
	free(s->fl_open.v);
	free(s->fl_requeued.v);
}

static void close_pending(struct scan *s, struct ord_report *rep, uint32_t pid, uint64_t t)
{
	size_t *p = hmap_slot(&s->pending, pid);

	if (*p != NONE) {
		rep->bios[*p].e = min64(rep->bios[*p].e, t);
		*p = NONE;
	}
}

/*
 * The first pass of the pairing (see the top): @own_c[b] becomes the
 * index in @ev of the C that bio b's submitter traced for it in process
 * context, NONE for the others.  The pid's latest Q, not its oldest open
 * one of the key: this pass cannot see which of its older Qs irq context
 * completed already (a thread whose flushes sometimes reach the disk).
 */
static int pair_own(const struct tev *ev, size_t n, uint32_t dm, size_t *own_c, size_t nq)
{
	_cleanup_free_ size_t *qev = malloc((nq + 1) * sizeof(*qev));
	struct hmap last;	/* pid -> its latest bio */
	size_t b = 0, *l;

	if (!qev || hmap_init(&last, nq) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (ev[i].dev != dm)
			continue;
		if (ev[i].act == 'Q') {
			own_c[b] = NONE;
			qev[b] = i;
			*hmap_slot(&last, ev[i].pid) = b++;
		} else if (ev[i].act == 'C' && ev[i].proc_ctx) {
			l = hmap_slot(&last, ev[i].pid);
			if (*l != NONE && own_c[*l] == NONE && ev_key(&ev[qev[*l]]) == ev_key(&ev[i]))
				own_c[*l] = i;
		}
	}
	hmap_free(&last);
	return 0;
}

/* @ev, event @i of the trace, on the dm device. */
static int scan_dm(struct scan *s, struct ord_report *rep, const struct tev *ev, size_t i)
{
	uint64_t key = ev_key(ev);
	size_t *f, b, x;

	if (ev->act == 'Q') {
		struct ord_bio *bio;

		b = rep->nbios++;
		bio = &rep->bios[b];
		*bio = (struct ord_bio){ .q = ev->t, .c = ORD_NEVER, .c_lo = ORD_NEVER,
					 .c_hi = ORD_NEVER, .e = ORD_NEVER,
					 .a_t = ORD_NEVER, .d_first = ORD_NEVER,
					 .d_data = ORD_NEVER, .c_data = ORD_NEVER,
					 .done = ORD_NEVER, .durable = ORD_NEVER,
					 .sector = ev->sector, .nsect = ev->nsect, .pid = ev->pid,
					 .line = ev->line, .flags = ev->flags };
		bio->barrier = (ev->flags & TF_WRITE) && (ev->flags & (TF_PREFLUSH | TF_FUA));
		close_pending(s, rep, ev->pid, ev->t);
		*hmap_slot(&s->pending, ev->pid) = b;
		*hmap_slot(&s->last_q, ev->pid) = b;
		if (ev->nsect)
			*hmap_slot(&s->by_sector, ev->sector) = b;
		s->next[b] = NONE;
		if (s->own_c[b] != NONE)
			return 0; /* its C is known: not in the FIFO */
		f = hmap_slot(&s->open, key);
		if (*f == NONE) {
			*f = s->nfifo++;
			s->fifo_head[*f] = s->await_head[*f] = NONE;
		}
		if (s->fifo_head[*f] == NONE) {
			s->fifo_head[*f] = s->fifo_tail[*f] = s->period_head[*f] = b;
		} else {
			s->next[s->fifo_tail[*f]] = b;
			s->fifo_tail[*f] = b;
		}
		if (s->await_head[*f] == NONE)
			s->await_head[*f] = b;
		return 0;
	}
	if (ev->act != 'C')
		return 0;
	if (ev->proc_ctx) {
		b = *hmap_slot(&s->last_q, ev->pid);
		if (b != NONE && s->own_c[b] == i) {
			rep->bios[b].c = rep->bios[b].c_lo = rep->bios[b].c_hi = ev->t;
			rep->bios[b].err = ev->err;
			rep->bios[b].own_c = true;
			rep->own_completions++;
			return 0;
		}
	}
	f = hmap_slot(&s->open, key);
	if (*f == NONE || s->fifo_head[*f] == NONE) {
		if (rep->nbios)
			problem(rep, ev->line, "completion on the dm device without its Q");
		else
			rep->before_trace++;
		return 0;
	}
	/* Any open bio Q'd since the last C of the key could be this C's. */
	for (x = s->await_head[*f]; x != NONE; x = s->next[x])
		rep->bios[x].c_lo = ev->t;
	s->await_head[*f] = NONE;
	b = s->fifo_head[*f];
	s->fifo_head[*f] = s->next[b];
	rep->bios[b].c = rep->bios[b].c_hi = ev->t;
	rep->bios[b].err = ev->err;
	if (s->fifo_head[*f] != NONE)
		return 0;
	/* Empty again: any bio since it was last empty could have had this C. */
	for (x = s->period_head[*f]; x != NONE; x = s->next[x]) {
		rep->bios[x].c_hi = ev->t;
		if (rep->bios[x].c_lo < ev->t)
			rep->ambiguous++;
	}
	s->period_head[*f] = NONE;
	return 0;
}

static void scan_remap(struct scan *s, struct ord_report *rep, const struct tev *ev)
{
	struct ord_bio *bio;
	size_t b;

	close_pending(s, rep, ev->pid, ev->t);
	if (ev->nsect) {
		b = *hmap_slot(&s->by_sector, ev->from_sector);
		if (b == NONE || rep->bios[b].a_t != ORD_NEVER)
			return; /* a split or a remap of something not Q'd here */
		rep->bios[b].a_t = ev->t;
		rep->bios[b].disk_sector = ev->sector;
		return;
	}
	/* An empty flush: the submitter remaps its own bio right after Q. */
	b = *hmap_slot(&s->last_q, ev->pid);
	if (b == NONE || rep->bios[b].nsect || rep->bios[b].a_t != ORD_NEVER ||
	    rep->bios[b].c != ORD_NEVER) {
		for (b = s->empty_head; b < rep->nbios; b++) {
			bio = &rep->bios[b];
			if (!bio->nsect && bio->a_t == ORD_NEVER && bio->c == ORD_NEVER)
				break;
		}
		s->empty_head = b;
		if (b >= rep->nbios)
			return;
	}
	rep->bios[b].a_t = ev->t;
	rep->bios[b].own_flush = true;
}

static int scan_flush(struct scan *s, struct ord_report *rep, const struct tev *ev)
{
	size_t f;

	switch (ev->act) {
	case 'D':
		if (s->fl_requeued.n) { /* a requeued flush going out again */
			f = fifo_pop(&s->fl_requeued);
			s->fl[f].d = ev->t;
		} else {
			if (s->nfl == s->capfl) {
				size_t cap = s->capfl ? 2 * s->capfl : 256;
				struct disk_flush *nf = realloc(s->fl, cap * sizeof(*nf));

				if (!nf)
					return -ENOMEM;
				s->fl = nf;
				s->capfl = cap;
			}
			f = s->nfl++;
			s->fl[f] = (struct disk_flush){ .d_first = ev->t, .d = ev->t, .c = ORD_NEVER };
		}
		return fifo_push(&s->fl_open, f);
	case 'R':
	case 'C':
		if (!s->fl_open.n) {
			if (rep->nbios)
				problem(rep, ev->line, "flush completion or requeue on the disk without a dispatch");
			else
				rep->before_trace++;
			return 0;
		}
		f = fifo_pop(&s->fl_open);
		if (ev->act == 'R')
			return fifo_push(&s->fl_requeued, f);
		s->fl[f].c = ev->t;
		s->fl[f].err = ev->err;
		return 0;
	default:
		return 0;
	}
}

static int scan_disk(struct scan *s, struct ord_report *rep, const struct tev *ev)
{
	bool flush_rq = (ev->flags & TF_NONE) && (ev->flags & TF_PREFLUSH);

	if (flush_rq)
		return scan_flush(s, rep, ev);
	if (ev->act == 'D' && ev->nsect)
		return rq_add(&s->d, ev);
	if (ev->act == 'C' && ev->nsect)
		return rq_add(&s->c, ev);
	/* The end of a flush-sequenced request: "C WS <start> [0]". */
	if (ev->act == 'C' && (ev->flags & TF_WRITE) && ev->has_sector)
		return rq_add(&s->zero_c, ev);
	return 0;
}

static int cmp_flush_d(const void *a, const void *b)
{
	const struct disk_flush *x = a, *y = b;

	return x->d < y->d ? -1 : x->d > y->d;
}

/* Index of the first flush (sorted by dispatch) dispatched after @t. */
static size_t flush_after(const struct scan *s, uint64_t t)
{
	size_t a = 0, e = s->nfl;

	while (a < e) {
		size_t mid = a + (e - a) / 2;

		if (s->fl[mid].d <= t)
			a = mid + 1;
		else
			e = mid;
	}
	return a;
}

/* Follow every bio to the disk: its data request, flush, durability. */
static int attribute(struct scan *s, struct ord_report *rep, const struct ord_opts *o)
{
	_cleanup_free_ uint64_t *sufmin = NULL;
	_cleanup_free_ uint64_t *first_d = NULL;
	size_t i, nfl = s->nfl;

	/* qsort() wants a valid pointer even for no elements. */
	if (s->d.n)
		qsort(s->d.v, s->d.n, sizeof(*s->d.v), cmp_rq);
	if (s->c.n)
		qsort(s->c.v, s->c.n, sizeof(*s->c.v), cmp_rq);
	if (s->zero_c.n)
		qsort(s->zero_c.v, s->zero_c.n, sizeof(*s->zero_c.v), cmp_rq);
	if (nfl)
		qsort(s->fl, nfl, sizeof(*s->fl), cmp_flush_d);

	/* sufmin[i]: earliest successful completion among flushes i.. */
	sufmin = malloc((nfl + 1) * sizeof(*sufmin));
	first_d = malloc((nfl + 1) * sizeof(*first_d));
	if (!sufmin || !first_d)
		return -ENOMEM;
	sufmin[nfl] = ORD_NEVER;
	for (i = nfl; i-- > 0;) {
		sufmin[i] = min64(sufmin[i + 1], s->fl[i].err ? ORD_NEVER : s->fl[i].c);
		first_d[i] = s->fl[i].d_first;
	}
	rep->disk_flushes = nfl;
	rep->first_flush_error_t = ORD_NEVER;
	for (i = 0; i < nfl; i++) {
		if (s->fl[i].err) {
			rep->disk_flush_errors++;
			rep->first_flush_error_t = min64(rep->first_flush_error_t, s->fl[i].c);
		}
	}

	for (i = 0; i < rep->nbios; i++) {
		struct ord_bio *b = &rep->bios[i];

		if (b->c == ORD_NEVER) {
			problem(rep, b->line, "a bio on the dm device never completed");
			continue;
		}
		if (b->nsect && b->a_t != ORD_NEVER) {
			const struct disk_rq *d = rq_find(&s->d, b->disk_sector, b->a_t, b->c_hi, false);
			const struct disk_rq *c = NULL, *z;

			if (d)
				c = rq_find(&s->c, b->disk_sector, d->t, b->c_hi, false);
			if (d && c) {
				b->d_data = b->d_first = d->t;
				b->c_data = b->done = c->t;
				z = rq_find(&s->zero_c, d->sector, c->t, b->c_hi, true);
				if (z)
					b->done = z->t;
				b->cmd_err = c->err || (z && z->err);
				if (c->err) {
					b->durable = ORD_NEVER;
				} else if (o->write_through || d->fua) {
					b->durable = c->t;
				} else {
					/* The first flush dispatched after the data completed. */
					b->durable = sufmin[flush_after(s, c->t)];
				}
			}
		} else if (b->own_flush) {
			/* Its flush request: the first flush dispatched after the remap. */
			size_t a = flush_after(s, b->a_t);

			if (a < nfl && first_d[a] <= b->c_hi) {
				b->d_first = first_d[a];
				b->done = s->fl[a].c;
				b->cmd_err = s->fl[a].err != 0;
			}
		}
		if (b->err == EAGAIN_ERR && b->d_first == ORD_NEVER) {
			b->skipped = true;
			rep->skipped++;
			continue;
		}
		if (b->err)
			rep->failed++;
		if (b->nsect && !b->err && b->d_data == ORD_NEVER)
			problem(rep, b->line, "a bio with data completed without a disk request for it");
		/* An ambiguous C: the end of its range that breaks the rules least. */
		if (b->done == ORD_NEVER)
			b->done = b->c_lo;
		b->e = min64(min64(b->e, b->c_hi), b->d_first);
		b->a_end = b->e;
		if (b->barrier) {
			rep->barriers++;
			if (b->nsect)
				rep->data_barriers++;
			else
				rep->empty_barriers++;
			if (b->q > rep->first_flush_error_t)
				rep->barriers_after_flush_error++;
		}
	}
	return 0;
}

static uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* What a bio needs done before the target may be done with a barrier after it. */
static uint64_t finished(const struct ord_bio *x, bool durability)
{
	/* No disk work: its completion, at the end that breaks (b) least. */
	uint64_t t = x->d_first != ORD_NEVER ? x->done : x->c_hi;

	if (durability && x->nsect && (x->flags & TF_WRITE) && !x->err)
		t = max64(t, x->durable);
	return t;
}

struct ord_fin {
	uint64_t e, fin;
};

static int cmp_fin(const void *a, const void *b)
{
	const struct ord_fin *x = a, *y = b;

	return x->e < y->e ? -1 : x->e > y->e;
}

/*
 * t_end of every barrier: T(B) (see the top).  The bios accepted before
 * B are a prefix of the bios sorted by acceptance bound: a prefix max of
 * finished() read at q(B).
 */
static int target_ends(struct ord_report *rep, const struct ord_opts *o)
{
	_cleanup_free_ struct ord_fin *v = NULL;
	size_t n = 0, i;

	v = malloc((rep->nbios + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < rep->nbios; i++) {
		const struct ord_bio *x = &rep->bios[i];

		if (!x->skipped && x->c != ORD_NEVER)
			v[n++] = (struct ord_fin){ x->e, finished(x, o->durability) };
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_fin);
	for (i = 1; i < n; i++) /* fin: the latest of the first i + 1 */
		v[i].fin = max64(v[i].fin, v[i - 1].fin);

	for (i = 0; i < rep->nbios; i++) {
		struct ord_bio *b = &rep->bios[i];
		uint64_t e;
		size_t lo = 0, hi = n;

		if (!b->barrier || b->skipped || b->c == ORD_NEVER)
			continue;
		b->t_end = b->c_lo;
		if (b->err || b->cmd_err)
			continue;
		while (lo < hi) { /* lo: how many have e < q(B) */
			size_t mid = lo + (hi - lo) / 2;

			if (v[mid].e < b->q)
				lo = mid + 1;
			else
				hi = mid;
		}
		e = lo ? max64(v[lo - 1].fin, b->q) : b->q;
		if (b->d_first != ORD_NEVER) /* its own commands */
			e = max64(e, finished(b, o->durability));
		b->t_end = min64(b->c_lo, e);
	}
	return 0;
}

static int check_rule(struct ord_report *rep, enum ord_rule rule)
{
	_cleanup_free_ struct dom_pt *pts = NULL;
	_cleanup_free_ struct dom_q *qs = NULL;
	size_t np = 0, nq = 0, i;
	int r;

	pts = malloc((rep->nbios + 1) * sizeof(*pts));
	qs = malloc((rep->nbios + 1) * sizeof(*qs));
	if (!pts || !qs)
		return -ENOMEM;

	for (i = 0; i < rep->nbios; i++) {
		const struct ord_bio *x = &rep->bios[i];

		if (x->skipped || x->c == ORD_NEVER)
			continue;
		switch (rule) {
		case ORD_DRAIN:
			pts[np++] = (struct dom_pt){ ti(x->e), ti(x->done), i };
			break;
		case ORD_OVERTAKE:
			/* Mirrored: q(X) > a_end(B) and start(X) < T(B). */
			pts[np++] = (struct dom_pt){ -ti(x->q), -ti(x->d_first), i };
			break;
		case ORD_DURABLE:
		case ORD_PREFLUSH:
			if (x->nsect && (x->flags & TF_WRITE) && !x->err)
				pts[np++] = (struct dom_pt){ ti(x->e), ti(x->durable), i };
			break;
		default:
			break;
		}
	}
	for (i = 0; i < rep->nbios; i++) {
		const struct ord_bio *b = &rep->bios[i];

		if (!b->barrier || b->skipped || b->c == ORD_NEVER)
			continue;
		switch (rule) {
		case ORD_DRAIN:
			qs[nq++] = (struct dom_q){ .key = ti(b->q),
						   .thr = ti(b->d_first != ORD_NEVER ? b->d_first : b->c_hi), .idx = i };
			break;
		case ORD_OVERTAKE:
			qs[nq++] = (struct dom_q){ .key = -ti(b->a_end), .thr = -ti(b->t_end), .idx = i };
			break;
		case ORD_DURABLE:
			if (!b->err)
				qs[nq++] = (struct dom_q){ .key = ti(b->q), .thr = ti(b->c_hi), .idx = i };
			break;
		case ORD_PREFLUSH:
			if (!b->err && b->d_data != ORD_NEVER)
				qs[nq++] = (struct dom_q){ .key = ti(b->q), .thr = ti(b->d_data), .idx = i };
			break;
		default:
			break;
		}
	}
	r = dominance(pts, np, qs, nq);
	if (r < 0)
		return r;

	for (i = 0; i < nq; i++) {
		const struct ord_bio *b = &rep->bios[qs[i].idx];

		rep->checked[rule] += qs[i].added + (rule == ORD_DURABLE && b->nsect);
	}
	for (i = 0; i < nq; i++) {
		const struct ord_bio *b = &rep->bios[qs[i].idx];
		struct ord_violation v = { .rule = rule, .barrier = qs[i].idx,
					   .offenders = qs[i].count, .worst = qs[i].worst };
		bool own = false;

		/* A barrier's own data must be durable when it completes. */
		if (rule == ORD_DURABLE && b->nsect && b->durable > b->c_hi) {
			own = true;
			v.offenders++;
		}
		if (!v.offenders)
			continue;
		if (rule == ORD_OVERTAKE) {
			v.ref_t = b->t_end;
			v.worst_t = rep->bios[v.worst].d_first;
		} else {
			v.ref_t = (uint64_t)qs[i].thr;
			v.worst_t = qs[i].worst_val == INT64_MAX ? ORD_NEVER : (uint64_t)qs[i].worst_val;
			if (own && (!qs[i].count || b->durable > v.worst_t)) {
				v.worst = qs[i].idx;
				v.worst_t = b->durable;
			}
		}
		rep->violations[rule]++;
		rep->pairs[rule] += v.offenders;
		r = add_violation(rep, &v);
		if (r < 0)
			return r;
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

/* Number of values < v in a sorted array. */
static size_t count_below(const uint64_t *s, size_t n, uint64_t v)
{
	size_t a = 0, b = n;

	while (a < b) {
		size_t mid = a + (b - a) / 2;

		if (s[mid] < v)
			a = mid + 1;
		else
			b = mid;
	}
	return a;
}

/* Pairs submitted before a barrier but too close to it to be ordered. */
static int count_unordered(struct ord_report *rep)
{
	_cleanup_free_ uint64_t *qv = NULL, *ev = NULL;
	size_t n = 0, i;

	qv = malloc((rep->nbios + 1) * sizeof(*qv));
	ev = malloc((rep->nbios + 1) * sizeof(*ev));
	if (!qv || !ev)
		return -ENOMEM;
	for (i = 0; i < rep->nbios; i++) {
		if (rep->bios[i].skipped || rep->bios[i].c == ORD_NEVER)
			continue;
		qv[n] = rep->bios[i].q;
		ev[n++] = rep->bios[i].e;
	}
	qsort(qv, n, sizeof(*qv), cmp_u64);
	qsort(ev, n, sizeof(*ev), cmp_u64);
	for (i = 0; i < rep->nbios; i++) {
		const struct ord_bio *b = &rep->bios[i];
		size_t lo_q, lo_e;

		if (!b->barrier || b->skipped || b->c == ORD_NEVER)
			continue;
		/* bios submitted before q(B), and those surely accepted before it */
		lo_q = count_below(qv, n, b->q);
		lo_e = count_below(ev, n, b->q);
		if (lo_q > lo_e)
			rep->unordered_pairs += lo_q - lo_e;
	}
	return 0;
}

static int cmp_violation(const void *a, const void *b)
{
	const struct ord_violation *x = a, *y = b;

	if (x->rule != y->rule)
		return x->rule < y->rule ? -1 : 1;
	return x->barrier < y->barrier ? -1 : x->barrier > y->barrier;
}

int ord_check(const struct tev *ev, size_t n, const struct ord_opts *o, struct ord_report *rep)
{
	struct scan s = { .empty_head = 0 };
	size_t i, nq = 0;
	int r;

	*rep = (struct ord_report){ .first_flush_error_t = ORD_NEVER };
	r = find_devices(ev, n, o, rep);
	if (r < 0)
		return 0; /* reported as a problem */

	for (i = 0; i < n; i++)
		nq += ev[i].dev == rep->dm_dev && ev[i].act == 'Q';
	rep->bios = calloc(nq + 1, sizeof(*rep->bios));
	s.own_c = malloc((nq + 1) * sizeof(size_t));
	s.fifo_head = malloc((nq + 1) * sizeof(size_t));
	s.fifo_tail = malloc((nq + 1) * sizeof(size_t));
	s.period_head = malloc((nq + 1) * sizeof(size_t));
	s.await_head = malloc((nq + 1) * sizeof(size_t));
	s.next = malloc((nq + 1) * sizeof(size_t));
	if (!rep->bios || !s.own_c || !s.fifo_head || !s.fifo_tail || !s.period_head ||
	    !s.await_head || !s.next ||
	    hmap_init(&s.open, nq) < 0 || hmap_init(&s.by_sector, nq) < 0 ||
	    hmap_init(&s.pending, 1024) < 0 || hmap_init(&s.last_q, 1024) < 0) {
		r = -ENOMEM;
		goto out;
	}
	r = pair_own(ev, n, rep->dm_dev, s.own_c, nq);
	if (r < 0)
		goto out;

	for (i = 0; i < n && r >= 0; i++) {
		const struct tev *e = &ev[i];

		if (e->dev == rep->dm_dev)
			r = scan_dm(&s, rep, e, i);
		else if (e->act == 'A' && e->from_dev == rep->dm_dev)
			scan_remap(&s, rep, e);
		else if (e->dev == rep->disk_dev)
			r = scan_disk(&s, rep, e);
	}
	if (r < 0)
		goto out;
	/* A thread's last bio: bounded by its completion (attribute()). */
	r = attribute(&s, rep, o);
	if (r < 0)
		goto out;
	if (rep->problems)
		goto out;
	r = target_ends(rep, o);
	for (i = 0; i < ORD_NRULES && r >= 0; i++) {
		if ((i == ORD_DURABLE || i == ORD_PREFLUSH) && !o->durability)
			continue;
		r = check_rule(rep, i);
	}
	if (r >= 0)
		r = count_unordered(rep);
	if (r >= 0 && rep->nv)
		qsort(rep->v, rep->nv, sizeof(*rep->v), cmp_violation);
out:
	scan_free(&s);
	return r;
}

void ord_report_free(struct ord_report *rep)
{
	free(rep->bios);
	free(rep->v);
	*rep = (struct ord_report){ 0 };
}

/* ------------------------------------------------------------ names */

int ord_names_read(FILE *f, struct ord_names *nm)
{
	_cleanup_free_ char *line = NULL;
	size_t len = 0, cap = 0;

	*nm = (struct ord_names){ 0 };
	while (getline(&line, &len, f) >= 0) {
		unsigned long long seq, sector;
		char kind[8];

		if (sscanf(line, "%llu %7s %llu", &seq, kind, &sector) != 3)
			continue; /* fsyncs carry no sector */
		if (nm->n == cap) {
			size_t c = cap ? 2 * cap : 1024;
			uint64_t *s = realloc(nm->sector, c * sizeof(*s));
			uint64_t *q = s ? realloc(nm->seq, c * sizeof(*q)) : NULL;
			char (*k)[8] = q ? realloc(nm->kind, c * sizeof(*k)) : NULL;

			if (s)
				nm->sector = s;
			if (q)
				nm->seq = q;
			if (!k)
				return -ENOMEM;
			nm->kind = k;
			cap = c;
		}
		nm->sector[nm->n] = sector;
		nm->seq[nm->n] = seq;
		memcpy(nm->kind[nm->n], kind, sizeof(kind));
		nm->n++;
	}
	return ferror(f) ? -EIO : 0;
}

void ord_names_free(struct ord_names *nm)
{
	free(nm->sector);
	free(nm->seq);
	free(nm->kind);
	*nm = (struct ord_names){ 0 };
}

static void bio_name(const struct ord_bio *b, const struct ord_names *nm, char *buf, size_t len)
{
	char rwbs[8];
	size_t i;

	trace_fmt_rwbs(b->flags, rwbs);
	if (b->nsect)
		snprintf(buf, len, "%s %" PRIu64 "+%" PRIu32 " (line %" PRIu32, rwbs, b->sector,
			 b->nsect, b->line);
	else
		snprintf(buf, len, "%s (line %" PRIu32, rwbs, b->line);
	/* Names are few per report: a linear search is enough. */
	for (i = 0; nm && b->nsect && i < nm->n; i++) {
		if (nm->sector[i] == b->sector) {
			size_t l = strlen(buf);

			snprintf(buf + l, len - l, ", seq %" PRIu64 " %s", nm->seq[i], nm->kind[i]);
			break;
		}
	}
	strncat(buf, ")", len - strlen(buf) - 1);
}

static double us(uint64_t a, uint64_t b)
{
	return ((double)a - (double)b) / 1000.0;
}

void ord_print(FILE *out, const struct ord_report *rep, const struct ord_names *nm,
	       unsigned int max_lines)
{
	unsigned int shown[ORD_NRULES] = { 0 };
	char bn[160], xn[160];

	for (size_t i = 0; i < rep->nv; i++) {
		const struct ord_violation *v = &rep->v[i];
		const struct ord_bio *b = &rep->bios[v->barrier], *x = &rep->bios[v->worst];

		if (shown[v->rule]++ >= max_lines)
			continue;
		bio_name(b, nm, bn, sizeof(bn));
		bio_name(x, nm, xn, sizeof(xn));
		switch (v->rule) {
		case ORD_DRAIN:
			fprintf(out, "VIOLATION drain: barrier %s %s at %.3f ms while %" PRIu64
				" bio(s) accepted before it were not done; latest %s done %.1f us later\n",
				bn, b->d_first != ORD_NEVER ? "started on the disk" : "completed",
				v->ref_t / 1e6, v->offenders, xn, us(v->worst_t, v->ref_t));
			break;
		case ORD_OVERTAKE:
			fprintf(out, "VIOLATION overtake: %" PRIu64 " bio(s) accepted after barrier %s"
				" reached the disk before %s at %.3f ms; earliest %s, %.1f us before\n",
				v->offenders, bn,
				v->ref_t < b->c_lo ? "the target finished with it" : "it completed",
				v->ref_t / 1e6, xn, us(v->ref_t, v->worst_t));
			break;
		case ORD_DURABLE:
		case ORD_PREFLUSH:
			fprintf(out, "VIOLATION %s: barrier %s %s at %.3f ms with %" PRIu64
				" write(s) not on stable media; worst %s %s\n",
				ord_rule_names[v->rule], bn,
				v->rule == ORD_DURABLE ? "completed" : "wrote its data", v->ref_t / 1e6,
				v->offenders, xn, v->worst_t == ORD_NEVER ? "never flushed" : "flushed later");
			break;
		default:
			break;
		}
	}
	for (int r = 0; r < ORD_NRULES; r++)
		if (shown[r] > max_lines)
			fprintf(out, "... %u more %s violations\n", shown[r] - max_lines, ord_rule_names[r]);
}

void ord_print_summary(FILE *out, const struct ord_report *rep)
{
	uint64_t total = 0;

	for (int r = 0; r < ORD_NRULES; r++)
		total += rep->violations[r];
	fprintf(out, "ordercheck: dm %u,%u disk %u,%u: bios %zu (retried %" PRIu64 ", failed %" PRIu64
		") barriers %" PRIu64 " (data %" PRIu64 ", empty %" PRIu64 ") disk flushes %" PRIu64
		" (failed %" PRIu64 ", barriers after the first failure %" PRIu64 ") unordered pairs %" PRIu64 "\n",
		TDEV_MAJOR(rep->dm_dev), TDEV_MINOR(rep->dm_dev), TDEV_MAJOR(rep->disk_dev),
		TDEV_MINOR(rep->disk_dev), rep->nbios, rep->skipped, rep->failed, rep->barriers,
		rep->data_barriers, rep->empty_barriers, rep->disk_flushes, rep->disk_flush_errors,
		rep->barriers_after_flush_error, rep->unordered_pairs);
	if (rep->before_trace)
		fprintf(out, "ignored %" PRIu64 " completions of I/O started before the trace\n",
			rep->before_trace);
	if (rep->own_completions || rep->ambiguous)
		fprintf(out, "completions: %" PRIu64 " by their submitter in process context, %" PRIu64
			" ambiguous (any of several open bios of their key: checked at the least"
			" breaking one)\n", rep->own_completions, rep->ambiguous);
	fprintf(out, "checked pairs: drain %" PRIu64 " overtake %" PRIu64 " durable %" PRIu64
		" preflush %" PRIu64 "\n", rep->checked[ORD_DRAIN], rep->checked[ORD_OVERTAKE],
		rep->checked[ORD_DURABLE], rep->checked[ORD_PREFLUSH]);
	fprintf(out, "violations: drain %" PRIu64 " overtake %" PRIu64 " durable %" PRIu64
		" preflush %" PRIu64 " total %" PRIu64 " (pairs: %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 ")\n",
		rep->violations[ORD_DRAIN], rep->violations[ORD_OVERTAKE], rep->violations[ORD_DURABLE],
		rep->violations[ORD_PREFLUSH], total, rep->pairs[ORD_DRAIN], rep->pairs[ORD_OVERTAKE],
		rep->pairs[ORD_DURABLE], rep->pairs[ORD_PREFLUSH]);
}
