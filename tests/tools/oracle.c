// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * oracle.c: the fault campaign's oracle.  Three logs, all with
 * CLOCK_MONOTONIC nanosecond times (ktime_get_ns() in the kernel is the
 * same clock):
 *
 *   ops     dmb-faultload --log: one line per op when it completed,
 *           "<id> <thread> <kind> <sector> <sectors> <submit_ns> <complete_ns> <result>",
 *           kind W (O_DIRECT 4 KiB write), S (the same with RWF_DSYNC: a
 *           REQ_FUA write, then an empty flush), F (fdatasync(): an
 *           empty REQ_PREFLUSH) or C (a journal commit through dmb_bio: a
 *           write with REQ_PREFLUSH|REQ_FUA; its line adds <accepted_ns>,
 *           when it had entered the mapping at the latest; an S op to
 *           every rule below); every write to a sector of its own.
 *           Comments: "# dmb-faultload ..." header, "# slow <id> <thread>
 *           <kind> <sector> <submit_ns>" for an op past --timeout-ms,
 *           "# end <n> ops" when the tool finished.
 *   bios    the dmb_fault target below the barrier mapping, one line per
 *           bio: "<dm-name> <seq> <submit_ns> <complete_ns> <op> <flags>
 *           <sector> <sectors> <status> <injected>"; "# overflow" = lost
 *           entries.
 *   events  the campaign runner: "<ns> start <mode> <fallback> <hold_ms>",
 *           "<ns> mode <m>", "<ns> reload <m>", "<ns> fault <text>",
 *           "<ns> suspend", "<ns> resume"; "<ns>" may be "<start_ns>
 *           <end_ns>" (dmb-stamp: the action took effect somewhere in
 *           between).  An event is in a window when its interval meets it;
 *           a mode or reload event moves the timeline at its start when
 *           the new mode is none, else at its end (no op is checked, nor
 *           refused, for a mode it may not have had yet).
 *
 * The rules ("durable" = mode flush or fua):
 *
 * 1 MODE_TIMELINE  The mapping's mode over time: the start event's mode,
 *   then each mode or reload event sets it, and a bio with injected 1 and
 *   a status != 0 that is an empty flush (op F) switches it, at that bio's
 *   complete_ns, to the start event's fallback when it is flush or fua
 *   (docs/dm-barrier.rst, "Flush failure"; a failed FUA write is a write
 *   error unless the flush the target sends after it fails too), and so
 *   does, at the complete_ns of its rerun, a failed injected W bio with FUA
 *   in mode flush (the direct way's write and post-flush in one request),
 *   or in mode fua right after a successful flush (its request's
 *   pre-flush, over a request-based disk: after_preflush()),
 *   whose sector's next W bio worked, unless it failed with -ENOSPC (the
 *   one error a flush does not give; find_reruns()).  Violations: no
 *   start event or more than one, an event before the start, events out of
 *   time order, and an S op that returned 0 although the timeline says
 *   mode none for the whole of its [submit_ns, complete_ns] (a barrier
 *   write fails with -EOPNOTSUPP in none: the timeline or the target is
 *   wrong).
 * 2 NO_FALSE_SUCCESS_DURABLE  An S or F op that returned 0, submitted in a
 *   durable mode, with no mode/reload/suspend/resume event in [submit_ns,
 *   complete_ns], must not own an injected flush failure (a failed flush
 *   submitted while it, and no other S or F op, was in flight:
 *   find_own_flush_failures()); and unless a change of the timeline (a
 *   fallback) in its window leaves open that it was accepted after the
 *   fallback (not so for an S op whose write went down with FUA or
 *   PREFLUSH: drain sends neither, none fails it; nor for a commit
 *   accepted before the first change: accepted_before_change()), it needs every W
 *   or S op that returned 0 with complete_ns < its submit_ns, and for S its
 *   own write, durable by its complete_ns.  A write's bio is its sector's
 *   last successful W bio completed by the op's complete_ns; it is durable
 *   at its complete_ns if it carried FUA, else at the complete_ns of the
 *   first-completing successful flush (an F bio, or a W bio with PREFLUSH)
 *   submitted at or after the write bio's complete_ns.  An acked write
 *   with no W bio for its sector at all ("never reached the device"), or
 *   whose successful W bio completed only after the op did, is a violation
 *   of its own.  O(n log n): writes sorted by complete_ns with a running
 *   maximum of their durable times, flushes sorted by submit_ns with a
 *   suffix minimum of their complete_ns.
 * 3 NO_FALSE_SUCCESS_WRITE_ERROR  A W or S op that returned 0 whose
 *   sector's last W bio completed by its complete_ns failed.
 * 4 STATUS_KEPT  A W or S op that failed, whose sector's last W bio
 *   (completed by its complete_ns) failed with an injected status other
 *   than -EIO, must have returned that status, unless an injected flush
 *   failure completed between that bio and the op (mode fua's probe
 *   flush: then the cache failed and the flush's error is reported).
 * 5 NO_SPURIOUS_FAILURE  An op that failed with -EOPNOTSUPP needs mode none
 *   at some instant of [submit_ns, complete_ns].  One that failed with
 *   anything else needs a fault that it met, not any fault of the run
 *   (issue 27, item 3): for W and S, a failed W bio of its own sector (a
 *   plain write behind a failed barrier runs, it does not fail); for S and
 *   F, an injected flush failure (its own, or one of a barrier it queued
 *   behind: rule 1's flush failures and reruns) completing in [submit_ns,
 *   complete_ns], or an open flush debt: an injected flush or FUA
 *   write failure completed before its complete_ns, and between that
 *   failure and its submit_ns neither a successful F bio completed nor an
 *   S op submitted after the failure returned 0 (the target fails the next
 *   data barrier after a failed flush unless a flush succeeded in between;
 *   a held barrier fails when its hold expires, after the fault).
 * 6 NO_HANG  Every op's complete_ns - submit_ns <= (hold_ms + slack_ms) ms
 *   (hold_ms: --hold-ms, else the start event's).  The ops log must be
 *   whole: no last line cut short, ids 0..n-1 each once, a "# end" trailer
 *   that counts them when the header is there, and every "# slow" op
 *   logged as completed.
 * 7 LOG_SANITY  Bios and ops complete at or after they are submitted, no F
 *   bio or F op carries data, op ids are unique, and the bio log lost
 *   nothing ("log overflow").
 *
 * The order rules (issue 27, item 4) judge an S or F op that returned 0
 * while the mode was flush, fua or drain for the whole of [submit_ns,
 * complete_ns] (mode messages between those three allowed; a suspend,
 * resume, reload or mode message to passthrough or none meeting the
 * window, or a moment of passthrough, none or unknown, exempts it,
 * counted).  A bio the fault target saw submitted
 * before the op's submit_ns was on its way down before the barrier
 * entered the mapping, so it was issued before the barrier:
 * 8 DRAIN  Every bio submitted below before the op's submit_ns completed
 *   by the op's complete_ns, and for S by the submit_ns of its own write
 *   (the first W bio of its sector submitted at or after its submit_ns).
 * 9 EXCLUSIVE  While an S op's own write is below ([submit_ns,
 *   complete_ns] of that W bio), no other bio is submitted below: the
 *   barrier is one transaction; bios issued before it have drained (8),
 *   bios issued after it wait for it (the gate).
 *
 * What it cannot see: the order of bios relative to each other beyond
 * their times and the two rules above (when a bio entered the mapping:
 * overtaking by a bio the barrier's own bios went down after, held bios
 * replayed out of order, pre-flush before data: the ordering verifier's
 * job, tests/tools/order.c, with order-hold across a hold and its
 * replay), what the disk holds afterwards
 * (the crash replay's job), bios that never reached the fault target (a
 * write the barrier dropped shows only as "never reached"), whether a
 * flush the target logged as successful really emptied a cache, and writes
 * bigger than the sector they start at (bios are matched to ops by start
 * sector), nor when an op entered the target: an op in flight across a
 * fallback that neither owns the failed flush nor shows a durable-mode
 * write may have been accepted after it, when the target no longer
 * promised durability, and is exempt from rule 2 (counted).  With "# overflow" every
 * rule is unreliable; the oracle fails the run.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "oracle.h"

const char *const orc_rule_names[ORC_NRULES] = {
	[ORC_TIMELINE] = "MODE_TIMELINE",
	[ORC_DURABLE] = "NO_FALSE_SUCCESS_DURABLE",
	[ORC_WRITE_ERROR] = "NO_FALSE_SUCCESS_WRITE_ERROR",
	[ORC_STATUS_KEPT] = "STATUS_KEPT",
	[ORC_SPURIOUS] = "NO_SPURIOUS_FAILURE",
	[ORC_HANG] = "NO_HANG",
	[ORC_SANITY] = "LOG_SANITY",
	[ORC_ORDER_DRAIN] = "DRAIN",
	[ORC_ORDER_EXCL] = "EXCLUSIVE",
};

const char *const orc_mode_names[ORC_MODE_NR] = {
	[ORC_FLUSH] = "flush", [ORC_FUA] = "fua", [ORC_DRAIN] = "drain",
	[ORC_PASSTHROUGH] = "passthrough", [ORC_NONE] = "none", [ORC_UNKNOWN] = "unknown",
};

static const char orc_kind_chars[ORC_OP_NR] = { 'W', 'S', 'F' };

/* ------------------------------------------------------------ parsing */

int orc_mode_parse(const char *s, enum orc_mode *m)
{
	for (int i = 0; i < ORC_UNKNOWN; i++) {
		if (!strcmp(s, orc_mode_names[i])) {
			*m = (enum orc_mode)i;
			return 0;
		}
	}
	return -EINVAL;
}

/* Nothing but blanks from @p on. */
static bool rest_blank(const char *p)
{
	p += strspn(p, " \t\r\n");
	return !*p;
}

int orc_parse_op(const char *line, struct orc_op *op)
{
	unsigned long long id, sector, sub, comp, acc = 0;
	unsigned int thread, sectors;
	int result, n = -1, m = -1;
	char kind;

	if (sscanf(line, "%llu %u %c %llu %u %llu %llu %d%n", &id, &thread, &kind, &sector,
		   &sectors, &sub, &comp, &result, &n) != 8 || n < 0)
		return -EINVAL;
	op->commit = kind == 'C';
	if (op->commit && (sscanf(line + n, " %llu%n", &acc, &m) != 1 || m < 0 ||
			   acc < sub || acc > comp))
		return -EINVAL;
	if (!rest_blank(line + n + (m > 0 ? m : 0)))
		return -EINVAL;
	switch (kind) {
	case 'W': op->kind = ORC_OP_W; break;
	case 'S': case 'C': op->kind = ORC_OP_S; break;
	case 'F': op->kind = ORC_OP_F; break;
	default: return -EINVAL;
	}
	if (result > 0)
		return -EINVAL;
	op->acc = acc;
	op->id = id;
	op->thread = thread;
	op->sector = sector;
	op->sectors = sectors;
	op->sub = sub;
	op->comp = comp;
	op->result = result;
	return 0;
}

static int parse_flags(const char *s, uint32_t *flags)
{
	static const struct { const char *name; uint32_t bit; } names[] = {
		{ "PREFLUSH", ORC_PREFLUSH }, { "FUA", ORC_FUAF }, { "SYNC", ORC_SYNC },
		{ "NOWAIT", ORC_NOWAIT }, { "POLLED", ORC_POLLED },
	};

	*flags = 0;
	if (!strcmp(s, "-"))
		return 0;
	while (*s) {
		size_t len = strcspn(s, ",");
		size_t i;

		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			if (strlen(names[i].name) == len && !strncmp(s, names[i].name, len))
				break;
		}
		if (i == sizeof(names) / sizeof(names[0]))
			return -EINVAL;
		*flags |= names[i].bit;
		s += len;
		if (*s == ',' && *++s == '\0')
			return -EINVAL;
	}
	return 0;
}

int orc_parse_bio(const char *line, struct orc_bio *b)
{
	unsigned long long seq, sub, comp, sector;
	unsigned int sectors, injected;
	char op[2], flags[64];
	int status, n = -1;

	unsigned long long loss_ns = 0;
	unsigned int nr_lost = 0;
	int m = -1;

	if (sscanf(line, "%*s %llu %llu %llu %1s %63s %llu %u %d %u%n", &seq, &sub, &comp, op,
		   flags, &sector, &sectors, &status, &injected, &n) != 9 || n < 0)
		return -EINVAL;
	/* A flush that lost the cache: " lost <loss_ns> <n>". */
	if (!rest_blank(line + n) &&
	    (sscanf(line + n, " lost %llu %u%n", &loss_ns, &nr_lost, &m) != 2 || m < 0 ||
	     !rest_blank(line + n + m) || !loss_ns || op[0] != 'F' || !injected))
		return -EINVAL;
	if (!strchr("WFRDZO", op[0]) || injected > 1 || status > 0 ||
	    parse_flags(flags, &b->flags) < 0)
		return -EINVAL;
	b->loss_ns = loss_ns;
	b->nr_lost = nr_lost;
	b->seq = seq;
	b->sub = sub;
	b->comp = comp;
	b->op = op[0];
	b->sector = sector;
	b->sectors = sectors;
	b->status = status;
	b->injected = injected;
	return 0;
}

int orc_parse_event(const char *line, struct orc_event *ev)
{
	static const char *const names[ORC_EV_NR] = {
		[ORC_EV_START] = "start", [ORC_EV_MODE] = "mode", [ORC_EV_FAULT] = "fault",
		[ORC_EV_SUSPEND] = "suspend", [ORC_EV_RESUME] = "resume", [ORC_EV_RELOAD] = "reload",
	};
	unsigned long long t, t_end, hold;
	char name[16], a[16], b[16];
	int n = -1, i;

	if (sscanf(line, "%llu %llu %15s%n", &t, &t_end, name, &n) == 3 && n >= 0) {
		if (t_end < t)
			return -EINVAL;
	} else {
		n = -1;
		if (sscanf(line, "%llu %15s%n", &t, name, &n) != 2 || n < 0)
			return -EINVAL;
		t_end = t;
	}
	for (i = 0; i < ORC_EV_NR; i++)
		if (!strcmp(name, names[i]))
			break;
	if (i == ORC_EV_NR)
		return -EINVAL;
	*ev = (struct orc_event){ .t = t, .t_end = t_end, .type = (enum orc_event_type)i };
	line += n;
	switch (ev->type) {
	case ORC_EV_START:
		n = -1;
		if (sscanf(line, "%15s %15s %llu%n", a, b, &hold, &n) != 3 || n < 0 ||
		    !rest_blank(line + n) || orc_mode_parse(a, &ev->mode) < 0 ||
		    orc_mode_parse(b, &ev->fallback) < 0 ||
		    (ev->fallback != ORC_NONE && ev->fallback != ORC_DRAIN))
			return -EINVAL;
		ev->hold_ms = hold;
		return 0;
	case ORC_EV_MODE:
	case ORC_EV_RELOAD:
		n = -1;
		if (sscanf(line, "%15s%n", a, &n) != 1 || n < 0 || !rest_blank(line + n) ||
		    orc_mode_parse(a, &ev->mode) < 0)
			return -EINVAL;
		return 0;
	case ORC_EV_FAULT:
		return 0;	/* free text */
	default:
		return rest_blank(line) ? 0 : -EINVAL;
	}
}

/* Room for one more element in a growing array. */
static void *grow(void *arr, size_t *cap, size_t n, size_t size)
{
	void *p;
	size_t ncap;

	if (n < *cap)
		return arr;
	ncap = *cap ? *cap * 2 : 256;
	p = realloc(arr, ncap * size);
	if (!p)
		return NULL;
	*cap = ncap;
	return p;
}

#define PUSH(arr, n, cap) ({							\
	void *p_ = grow((arr), &(cap), (n), sizeof(*(arr)));			\
	p_ ? ((arr) = p_, &(arr)[(n)++]) : NULL;				\
})

int orc_read_ops(struct orc_input *in, FILE *f, uint32_t *bad_line)
{
	_cleanup_free_ char *line = NULL;
	size_t len = 0;
	uint32_t ln = 0;
	ssize_t n;

	while ((n = getline(&line, &len, f)) >= 0) {
		bool whole = n > 0 && line[n - 1] == '\n';
		struct orc_op op;

		ln++;
		if (!whole) {
			/* The tool writes each line whole: this one was cut. */
			in->ops_truncated = true;
			in->ops_truncated_line = ln;
			break;
		}
		if (rest_blank(line))
			continue;
		if (line[0] == '#') {
			unsigned long long id, sector, sub, count;
			unsigned int thread;
			char kind;

			if (!strncmp(line, "# dmb-faultload", 15)) {
				in->ops_header = true;
			} else if (sscanf(line, "# end %llu", &count) == 1) {
				in->ops_end = true;
				in->ops_end_count = count;
			} else if (sscanf(line, "# slow %llu %u %c %llu %llu", &id, &thread, &kind,
					  &sector, &sub) == 5) {
				struct orc_slow *s = PUSH(in->slow, in->nslow, in->slow_cap);

				if (!s)
					return -ENOMEM;
				*s = (struct orc_slow){ .id = id, .sub = sub, .line = ln };
			}
			continue;
		}
		if (orc_parse_op(line, &op) < 0) {
			*bad_line = ln;
			return -EINVAL;
		}
		op.line = ln;
		{
			struct orc_op *p = PUSH(in->ops, in->nops, in->ops_cap);

			if (!p)
				return -ENOMEM;
			*p = op;
		}
	}
	return 0;
}

int orc_read_bios(struct orc_input *in, FILE *f, uint32_t *bad_line)
{
	_cleanup_free_ char *line = NULL;
	size_t len = 0;
	uint32_t ln = 0;

	while (getline(&line, &len, f) >= 0) {
		struct orc_bio b, *p;

		ln++;
		if (rest_blank(line))
			continue;
		if (line[0] == '#') {
			if (!strncmp(line, "# overflow", 10) && !in->bios_overflow) {
				in->bios_overflow = true;
				in->bios_overflow_line = ln;
			}
			continue;
		}
		if (orc_parse_bio(line, &b) < 0) {
			*bad_line = ln;
			return -EINVAL;
		}
		b.line = ln;
		p = PUSH(in->bios, in->nbios, in->bios_cap);
		if (!p)
			return -ENOMEM;
		*p = b;
	}
	return 0;
}

int orc_read_events(struct orc_input *in, FILE *f, uint32_t *bad_line)
{
	_cleanup_free_ char *line = NULL;
	size_t len = 0;
	uint32_t ln = 0;

	while (getline(&line, &len, f) >= 0) {
		struct orc_event ev, *p;

		ln++;
		if (rest_blank(line) || line[0] == '#')
			continue;
		if (orc_parse_event(line, &ev) < 0) {
			*bad_line = ln;
			return -EINVAL;
		}
		ev.line = ln;
		p = PUSH(in->events, in->nevents, in->events_cap);
		if (!p)
			return -ENOMEM;
		*p = ev;
	}
	return 0;
}

void orc_input_free(struct orc_input *in)
{
	free(in->ops);
	free(in->bios);
	free(in->events);
	free(in->slow);
	*in = (struct orc_input){ 0 };
}

/* ------------------------------------------------------------ helpers */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* First index with a[i] >= x. */
static size_t lower_bound(const uint64_t *a, size_t n, uint64_t x)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (a[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* First index with a[i] > x. */
static size_t upper_bound(const uint64_t *a, size_t n, uint64_t x)
{
	return x == UINT64_MAX ? n : lower_bound(a, n, x + 1);
}

static bool durable_mode(enum orc_mode m)
{
	return m == ORC_FLUSH || m == ORC_FUA;
}

/* A W bio, in the index sorted by sector then complete time. */
struct wref {
	uint64_t sector, comp;
	size_t bio;
};

static int cmp_wref(const void *a, const void *b)
{
	const struct wref *x = a, *y = b;

	if (x->sector != y->sector)
		return x->sector < y->sector ? -1 : 1;
	if (x->comp != y->comp)
		return x->comp < y->comp ? -1 : 1;
	return x->bio < y->bio ? -1 : x->bio > y->bio;
}

/* A flush point: submit and complete time of a successful flush. */
struct fref {
	uint64_t sub, comp;
};

static int cmp_fref(const void *a, const void *b)
{
	const struct fref *x = a, *y = b;

	return x->sub < y->sub ? -1 : x->sub > y->sub;
}

/* An acked write: its complete time and when its data was durable. */
struct aref {
	uint64_t comp, durable;
	size_t op;
};

static int cmp_aref(const void *a, const void *b)
{
	const struct aref *x = a, *y = b;

	if (x->comp != y->comp)
		return x->comp < y->comp ? -1 : 1;
	return x->op < y->op ? -1 : x->op > y->op;
}

/* Something that sets or switches the mode: an event or an injected failure. */
struct tref {
	uint64_t t;
	size_t order;	/* ties: file order, events before bios */
	const struct orc_event *ev;	/* NULL: a failure */
};

static int cmp_tref(const void *a, const void *b)
{
	const struct tref *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

struct ctx {
	const struct orc_input *in;
	const struct orc_opts *o;
	struct orc_report *rep;
	FILE *out;

	struct wref *w;		/* W bios by sector, complete time */
	size_t nw;
	struct fref *fl;	/* successful flushes by submit time */
	uint64_t *fl_sub, *fl_sufmin;
	size_t nfl;
	uint64_t *inj;		/* complete times of bios with injected 1 */
	size_t ninj;
	uint64_t *ffail;	/* complete times of injected flush/FUA failures */
	size_t nffail;
	uint64_t *rerun;	/* failed direct barriers whose rerun worked */
	size_t nrerun;
	uint64_t *fok;		/* complete times of successful F bios */
	size_t nfok;
	struct fref *sok;	/* S ops that returned 0, by submit time */
	uint64_t *sok_sub, *sok_sufmin;
	size_t nsok;
	uint64_t *seg_t;	/* the timeline: mode seg_m[i] from seg_t[i] on */
	enum orc_mode *seg_m;
	size_t nseg;
	uint64_t *ev_s, *ev_t;	/* mode, reload, suspend, resume events: start, end */
	size_t nev;
	uint64_t *mr_end;	/* mode and reload events' ends */
	size_t nmr;
	uint64_t *durable;	/* per op: when its acked write was durable */
	const struct orc_bio **own_ff;	/* per op: an injected flush failure it sent */
	bool *lost;		/* per op: its acked write was lost by a flush failure */
	const struct orc_bio **loss;	/* the flushes that lost the cache, in log order */
	size_t nloss;
	struct aref *acked;
	uint64_t *acked_comp, *acked_max;
	size_t *acked_arg;
	size_t nacked;
	enum orc_mode fallback;
	uint64_t hold_ms;
};

_printf_(3, 4)
static void vio(struct ctx *c, enum orc_rule r, const char *fmt, ...)
{
	va_list ap;

	if (c->rep->violations[r]++ >= c->o->max_report || !c->out)
		return;
	fprintf(c->out, "violation %s: ", orc_rule_names[r]);
	va_start(ap, fmt);
	vfprintf(c->out, fmt, ap);
	va_end(ap);
	fputc('\n', c->out);
}

/* "op <id> (<kind> thread <t> sector <s> submit <ns> complete <ns> result <r>)" */
static const char *op_str(const struct orc_op *op, char *buf, size_t size)
{
	snprintf(buf, size,
		 "op %" PRIu64 " (%c thread %" PRIu32 " sector %" PRIu64 " submit %" PRIu64
		 " complete %" PRIu64 " result %" PRId32 ", line %" PRIu32 ")",
		 op->id, op->commit ? 'C' : orc_kind_chars[op->kind], op->thread, op->sector,
		 op->sub, op->comp,
		 op->result, op->line);
	return buf;
}

#define OPSTR(op) op_str((op), (char[192]){ 0 }, 192)

static enum orc_mode mode_at(const struct ctx *c, uint64_t t)
{
	size_t i = upper_bound(c->seg_t, c->nseg, t);

	return c->seg_m[i ? i - 1 : 0];
}

/* Mode none (or maybe none: unknown) at some instant of [t0, t1]. */
static bool none_in(const struct ctx *c, uint64_t t0, uint64_t t1)
{
	size_t i = upper_bound(c->seg_t, c->nseg, t0);
	enum orc_mode m = c->seg_m[i ? i - 1 : 0];

	if (m == ORC_NONE || m == ORC_UNKNOWN)
		return true;
	for (; i < c->nseg && c->seg_t[i] <= t1; i++)
		if (c->seg_m[i] == ORC_NONE || c->seg_m[i] == ORC_UNKNOWN)
			return true;
	return false;
}

/* Mode none for the whole of [t0, t1]. */
static bool none_throughout(const struct ctx *c, uint64_t t0, uint64_t t1)
{
	size_t i = upper_bound(c->seg_t, c->nseg, t0);

	if (c->seg_m[i ? i - 1 : 0] != ORC_NONE)
		return false;
	for (; i < c->nseg && c->seg_t[i] <= t1; i++)
		if (c->seg_m[i] != ORC_NONE)
			return false;
	return true;
}

/*
 * The timeline changed, or a mode-affecting event's interval met [t0, t1].
 * The runner acts one thing at a time, so the intervals are disjoint and
 * their ends sorted as their starts.
 */
static bool events_in(const struct ctx *c, uint64_t t0, uint64_t t1)
{
	size_t e = lower_bound(c->ev_t, c->nev, t0);

	return e < c->nev && c->ev_s[e] <= t1;
}

static bool unsettled(const struct ctx *c, uint64_t t0, uint64_t t1)
{
	if (events_in(c, t0, t1))
		return true;
	return upper_bound(c->seg_t, c->nseg, t1) > upper_bound(c->seg_t, c->nseg, t0);
}

/* Index range [*lo, *hi) of the W bios at @sector. */
static void wrange(const struct ctx *c, uint64_t sector, size_t *lo, size_t *hi)
{
	size_t a = 0, b = c->nw;

	while (a < b) {
		size_t mid = a + (b - a) / 2;

		if (c->w[mid].sector < sector)
			a = mid + 1;
		else
			b = mid;
	}
	*lo = a;
	for (b = a; b < c->nw && c->w[b].sector == sector; b++)
		;
	*hi = b;
}

/* The last W bio at @sector completed by @t (successful ones only if @ok). */
static const struct orc_bio *last_wbio(const struct ctx *c, uint64_t sector, uint64_t t, bool ok)
{
	const struct orc_bio *last = NULL;
	size_t lo, hi;

	wrange(c, sector, &lo, &hi);
	for (size_t i = lo; i < hi && c->w[i].comp <= t; i++) {
		const struct orc_bio *b = &c->in->bios[c->w[i].bio];

		if (!ok || !b->status)
			last = b;
	}
	return last;
}

/* When the data of successful W bio @b was durable; ORC_NEVER if never. */
static uint64_t durable_time(const struct ctx *c, const struct orc_bio *b)
{
	uint64_t d = ORC_NEVER;
	size_t k;

	if (b->flags & ORC_FUAF)
		d = b->comp;
	k = lower_bound(c->fl_sub, c->nfl, b->comp);
	if (k < c->nfl && c->fl_sufmin[k] < d)
		d = c->fl_sufmin[k];
	return d;
}

/*
 * A failed FUA write is not one: the target tells a failed cache from a
 * failed medium by the flush it sends next (docs/dm-barrier.rst, "Flush
 * failure" 6), and only that flush failing falls back.
 */
static bool is_flush_failure(const struct orc_bio *b)
{
	return b->injected && b->status &&
	       (b->op == 'F' || (b->op == 'W' && (b->flags & ORC_PREFLUSH)));
}

/* ------------------------------------------------------------ indexes */

static int build_indexes(struct ctx *c)
{
	const struct orc_input *in = c->in;
	size_t i;

	c->w = calloc(in->nbios + 1, sizeof(*c->w));
	c->fl = calloc(in->nbios + 1, sizeof(*c->fl));
	c->fl_sub = calloc(in->nbios + 1, sizeof(*c->fl_sub));
	c->fl_sufmin = calloc(in->nbios + 1, sizeof(*c->fl_sufmin));
	c->inj = calloc(in->nbios + 1, sizeof(*c->inj));
	c->ffail = calloc(in->nbios + 1, sizeof(*c->ffail));
	c->fok = calloc(in->nbios + 1, sizeof(*c->fok));
	if (!c->w || !c->fl || !c->fl_sub || !c->fl_sufmin || !c->inj || !c->ffail || !c->fok)
		return -ENOMEM;
	for (i = 0; i < in->nbios; i++) {
		const struct orc_bio *b = &in->bios[i];

		if (b->op == 'W')
			c->w[c->nw++] = (struct wref){ .sector = b->sector, .comp = b->comp, .bio = i };
		if (!b->status && (b->op == 'F' || (b->op == 'W' && (b->flags & ORC_PREFLUSH))))
			c->fl[c->nfl++] = (struct fref){ .sub = b->sub, .comp = b->comp };
		if (!b->status && b->op == 'F')
			c->fok[c->nfok++] = b->comp;
		if (b->injected)
			c->inj[c->ninj++] = b->comp;
		if (is_flush_failure(b))
			c->ffail[c->nffail++] = b->comp;
	}
	qsort(c->w, c->nw, sizeof(*c->w), cmp_wref);
	qsort(c->fl, c->nfl, sizeof(*c->fl), cmp_fref);
	qsort(c->inj, c->ninj, sizeof(*c->inj), cmp_u64);
	qsort(c->ffail, c->nffail, sizeof(*c->ffail), cmp_u64);
	qsort(c->fok, c->nfok, sizeof(*c->fok), cmp_u64);
	for (i = 0; i < c->nfl; i++)
		c->fl_sub[i] = c->fl[i].sub;
	for (i = c->nfl; i-- > 0;) {
		c->fl_sufmin[i] = c->fl[i].comp;
		if (i + 1 < c->nfl && c->fl_sufmin[i + 1] < c->fl_sufmin[i])
			c->fl_sufmin[i] = c->fl_sufmin[i + 1];
	}
	c->rep->injected = c->ninj;

	c->sok = calloc(in->nops + 1, sizeof(*c->sok));
	c->sok_sub = calloc(in->nops + 1, sizeof(*c->sok_sub));
	c->sok_sufmin = calloc(in->nops + 1, sizeof(*c->sok_sufmin));
	if (!c->sok || !c->sok_sub || !c->sok_sufmin)
		return -ENOMEM;
	for (i = 0; i < in->nops; i++)
		if (in->ops[i].kind == ORC_OP_S && !in->ops[i].result)
			c->sok[c->nsok++] = (struct fref){ .sub = in->ops[i].sub, .comp = in->ops[i].comp };
	qsort(c->sok, c->nsok, sizeof(*c->sok), cmp_fref);
	for (i = 0; i < c->nsok; i++)
		c->sok_sub[i] = c->sok[i].sub;
	for (i = c->nsok; i-- > 0;) {
		c->sok_sufmin[i] = c->sok[i].comp;
		if (i + 1 < c->nsok && c->sok_sufmin[i + 1] < c->sok_sufmin[i])
			c->sok_sufmin[i] = c->sok_sufmin[i + 1];
	}
	return 0;
}

/*
 * The mode the events alone give at @t (the start event's, then each mode
 * or reload event's from its end): what the target was told, before any
 * fallback of its own.
 */
static enum orc_mode told_mode_at(const struct ctx *c, uint64_t t)
{
	const struct orc_input *in = c->in;
	enum orc_mode m = ORC_UNKNOWN;

	for (size_t i = 0; i < in->nevents && in->events[i].t <= t; i++) {
		const struct orc_event *ev = &in->events[i];

		if (ev->type == ORC_EV_START)
			m = ev->mode;
		else if ((ev->type == ORC_EV_MODE || ev->type == ORC_EV_RELOAD) && ev->t_end <= t)
			m = ev->mode;
	}
	return m;
}

/*
 * The direct way's rerun (docs/dm-barrier.rst, "The direct way"): in mode
 * flush a barrier with data that finds the target idle goes down with
 * REQ_FUA (a W bio with FUA and no PREFLUSH: mode flush sends no other),
 * which the disk runs as write and post-flush in one request.  When that
 * bio fails, the target runs the barrier again through the worker: the
 * sector's next W bio.  If that one works, the first failure may have been
 * the flush, and the target takes it as a failed flush at the rerun's end,
 * unless its error is one only a write gives (-ENOSPC; a flush fails with
 * -ENODATA when the drive cannot write its cache out): a write error then.
 * Mode fua's FUA writes are real ones, judged by the flush after them,
 * except after their own request's pre-flush (after_preflush()).  Each
 * such rerun's complete time goes into ffail and the timeline.
 *
 * after_preflush(): bio @i (a W FUA bio) went down right after a
 * successful flush: the last bio to complete before it was submitted is
 * an F that worked.  For a direct barrier over a request-based disk that flush is the pre-flush
 * of its own request (the block layer's flush sequence issues the data
 * when it completes, and the target issues nothing else meanwhile).  The
 * log is in completion order: look back from @i.
 */
static bool after_preflush(const struct ctx *c, size_t i)
{
	const struct orc_bio *b = &c->in->bios[i];

	for (size_t j = i, n = 0; j-- > 0 && n < 64; n++) {
		const struct orc_bio *p = &c->in->bios[j];

		if (p->comp <= b->sub)
			return p->op == 'F' && !p->status;
	}
	return false;
}

static int find_reruns(struct ctx *c)
{
	const struct orc_input *in = c->in;
	size_t i, lo, hi;

	c->rerun = calloc(in->nbios + 1, sizeof(*c->rerun));
	if (!c->rerun)
		return -ENOMEM;
	for (i = 0; i < in->nbios; i++) {
		const struct orc_bio *b = &in->bios[i], *r = NULL;

		if (b->op != 'W' || !b->injected || !b->status || !(b->flags & ORC_FUAF) ||
		    (b->flags & ORC_PREFLUSH) || b->status == -ENOSPC)
			continue;
		if (told_mode_at(c, b->sub) != ORC_FLUSH &&
		    !(told_mode_at(c, b->sub) == ORC_FUA && after_preflush(c, i)))
			continue;
		wrange(c, b->sector, &lo, &hi);
		for (; lo < hi; lo++) {
			const struct orc_bio *n = &in->bios[c->w[lo].bio];

			if (n != b && n->sub >= b->comp && (!r || n->sub < r->sub))
				r = n;
		}
		if (r && !r->status) {
			c->rerun[c->nrerun++] = r->comp;
			c->ffail[c->nffail++] = r->comp;
		}
	}
	qsort(c->rerun, c->nrerun, sizeof(*c->rerun), cmp_u64);
	qsort(c->ffail, c->nffail, sizeof(*c->ffail), cmp_u64);
	c->rep->reruns = c->nrerun;
	return 0;
}

/* --------------------------------------------------- rule 1: timeline */

/*
 * A flush failed while the mode or reload event @ev took effect: the
 * target may have fallen back before or after the new mode, so the mode
 * is unknown from the event's start until the next one.
 */
static bool raced(const struct ctx *c, const struct orc_event *ev)
{
	size_t f = lower_bound(c->ffail, c->nffail, ev->t);

	return (ev->type == ORC_EV_MODE || ev->type == ORC_EV_RELOAD) &&
	       f < c->nffail && c->ffail[f] <= ev->t_end;
}

static int build_timeline(struct ctx *c)
{
	const struct orc_input *in = c->in;
	const struct orc_event *start = NULL;
	_cleanup_free_ struct tref *t = NULL;
	size_t nt = 0, i, nstart = 0;
	enum orc_mode cur;

	t = calloc(in->nevents + in->nbios + c->nrerun + 1, sizeof(*t));
	c->seg_t = calloc(in->nevents + in->nbios + c->nrerun + 1, sizeof(*c->seg_t));
	c->seg_m = calloc(in->nevents + in->nbios + c->nrerun + 1, sizeof(*c->seg_m));
	c->ev_s = calloc(in->nevents + 1, sizeof(*c->ev_s));
	c->ev_t = calloc(in->nevents + 1, sizeof(*c->ev_t));
	c->mr_end = calloc(in->nevents + 1, sizeof(*c->mr_end));
	if (!t || !c->seg_t || !c->seg_m || !c->ev_s || !c->ev_t || !c->mr_end)
		return -ENOMEM;

	for (i = 0; i < in->nevents; i++) {
		const struct orc_event *ev = &in->events[i];

		c->rep->checked[ORC_TIMELINE]++;
		if (ev->type == ORC_EV_START) {
			if (nstart++)
				vio(c, ORC_TIMELINE, "events line %" PRIu32 ": a second start event",
				    ev->line);
			else
				start = ev;
		}
		if (i && ev->t < in->events[i - 1].t)
			vio(c, ORC_TIMELINE,
			    "events line %" PRIu32 ": time %" PRIu64 " is before the previous event's %" PRIu64,
			    ev->line, ev->t, in->events[i - 1].t);
		else if (i && ev->t < in->events[i - 1].t_end)
			vio(c, ORC_TIMELINE,
			    "events line %" PRIu32 ": starts before the previous event ended",
			    ev->line);
		if (ev->type == ORC_EV_MODE || ev->type == ORC_EV_RELOAD ||
		    ev->type == ORC_EV_SUSPEND || ev->type == ORC_EV_RESUME) {
			c->ev_s[c->nev] = ev->t;
			c->ev_t[c->nev++] = ev->t_end;
		}
		if (ev->type == ORC_EV_MODE || ev->type == ORC_EV_RELOAD)
			c->mr_end[c->nmr++] = ev->t_end;
		t[nt++] = (struct tref){
			.t = (ev->type == ORC_EV_MODE || ev->type == ORC_EV_RELOAD) &&
			     ev->mode != ORC_NONE && !raced(c, ev) ? ev->t_end : ev->t,
			.order = i, .ev = ev };
	}
	if (!start) {
		vio(c, ORC_TIMELINE, "no start event: mode assumed flush, fallback none");
		cur = ORC_FLUSH;
		c->fallback = ORC_NONE;
		c->hold_ms = 0;
	} else {
		cur = start->mode;
		c->fallback = start->fallback;
		c->hold_ms = start->hold_ms;
		for (i = 0; i < in->nevents; i++)
			if (in->events[i].t < start->t)
				vio(c, ORC_TIMELINE,
				    "events line %" PRIu32 ": at %" PRIu64 ", before the start event (%" PRIu64 ")",
				    in->events[i].line, in->events[i].t, start->t);
	}
	for (i = 0; i < in->nbios; i++)
		if (is_flush_failure(&in->bios[i]))
			t[nt++] = (struct tref){ .t = in->bios[i].comp, .order = in->nevents + i };
	for (i = 0; i < c->nrerun; i++)
		t[nt++] = (struct tref){ .t = c->rerun[i], .order = in->nevents + in->nbios + i };
	qsort(t, nt, sizeof(*t), cmp_tref);

	c->seg_t[0] = start ? start->t : 0;
	c->seg_m[0] = cur;
	c->nseg = 1;
	for (i = 0; i < nt; i++) {
		const struct orc_event *ev = t[i].ev;
		enum orc_mode m = cur;

		if (!ev) {
			if (durable_mode(cur))
				m = c->fallback;
		} else if (ev->type == ORC_EV_MODE || ev->type == ORC_EV_RELOAD) {
			/* A failure while it took effect: either came last. */
			m = raced(c, ev) ? ORC_UNKNOWN : ev->mode;
		}
		if (m == cur)
			continue;
		cur = m;
		if (c->seg_t[c->nseg - 1] == t[i].t) {
			c->seg_m[c->nseg - 1] = m;
		} else {
			c->seg_t[c->nseg] = t[i].t;
			c->seg_m[c->nseg++] = m;
		}
	}
	c->rep->mode_segments = c->nseg;
	if (c->out) {
		for (i = 0; i < c->nseg && i < 64; i++)
			fprintf(c->out, "timeline %" PRIu64 " %s\n", c->seg_t[i],
				orc_mode_names[c->seg_m[i]]);
		if (c->nseg > 64)
			fprintf(c->out, "timeline ... %zu more\n", c->nseg - 64);
	}

	/* A barrier write cannot succeed in mode none. */
	for (i = 0; i < in->nops; i++) {
		const struct orc_op *op = &in->ops[i];

		/* (Not while a mode message may have taken effect.) */
		if (op->kind == ORC_OP_S && !op->result && op->comp >= op->sub &&
		    none_throughout(c, op->sub, op->comp) && !unsettled(c, op->sub, op->comp))
			vio(c, ORC_TIMELINE,
			    "%s returned 0 but the timeline says mode none for all of it", OPSTR(op));
	}
	return 0;
}

/* ------------------------------------------ rule 2: durable when acked */

/*
 * Each op's own injected flush failure, where the logs prove it: a failed
 * flush (an F bio, or a W bio with PREFLUSH) submitted while that op, and
 * no other S or F op, was in flight.  Below the target only a barrier
 * sends a flush (an S op's pre-flush or mode fua's probe after its FUA
 * write, an F op's flush; the `barrier` message and dm core's flush at a
 * suspend are not ops, and the campaign sends no message; a suspend is an
 * event, which exempts every op it meets), and a barrier cannot complete
 * before its flush does: the window of the op that sent a flush holds the
 * flush's submit time.  When only one op's window does, the flush was its.
 * O(failed flushes x ops): the failures are few.
 */
static int find_own_flush_failures(struct ctx *c)
{
	const struct orc_input *in = c->in;

	c->own_ff = calloc(in->nops + 1, sizeof(*c->own_ff));
	if (!c->own_ff)
		return -ENOMEM;
	for (size_t j = 0; j < in->nbios; j++) {
		const struct orc_bio *b = &in->bios[j];
		size_t owner = 0, n = 0;

		if (!is_flush_failure(b))
			continue;
		for (size_t i = 0; i < in->nops && n < 2; i++) {
			const struct orc_op *op = &in->ops[i];

			if (op->kind != ORC_OP_W && op->sub <= b->sub && b->sub <= op->comp) {
				owner = i;
				n++;
			}
		}
		if (n == 1 && !c->own_ff[owner])
			c->own_ff[owner] = b;
	}
	return 0;
}

/*
 * A write the volatile cache lost (dmb_fault's model, issue 27, H2): a
 * flush failure that lost the cache at loss_ns takes every write that
 * completed before then and that no successful flush had covered by then
 * (the fault target times both under one lock, so the comparison is
 * exact).  Such a write is never on the medium: no barrier may promise it,
 * until a mode message or reload answers the failure ("Flush failure",
 * 5) and the barriers after it promise only what came after.  So its
 * durable time becomes the end of the first mode or reload event after
 * the loss, or never.  Losses are few: a linear pass.
 */
static uint64_t after_losses(const struct ctx *c, const struct orc_bio *b, uint64_t d,
			     bool *lost)
{
	*lost = false;
	for (size_t j = 0; j < c->nloss; j++) {
		const struct orc_bio *l = c->loss[j];
		size_t m;

		if (!l->loss_ns || b->comp >= l->loss_ns || d <= l->loss_ns)
			continue;
		*lost = true;
		m = upper_bound(c->mr_end, c->nmr, l->loss_ns);
		return m < c->nmr ? c->mr_end[m] : ORC_NEVER;
	}
	return d;
}

/*
 * The writes a judged op promised (rule 2 judged it, it returned 0): every
 * acked write completed before its submission, and an S op's own.  A
 * write a loss took is not listed (see after_losses()).  One line each,
 * "<sector> <sectors> <op id> <kind>", for a readback after a power cut.
 */
static void write_promised(struct ctx *c, const bool *judged)
{
	const struct orc_input *in = c->in;
	uint64_t tmax = 0;
	bool any = false;
	size_t i;

	for (i = 0; i < in->nops; i++) {
		if (judged[i] && (!any || in->ops[i].sub > tmax)) {
			tmax = in->ops[i].sub;
			any = true;
		}
	}
	for (i = 0; i < in->nops && any; i++) {
		const struct orc_op *op = &in->ops[i];

		if (op->kind == ORC_OP_F || op->result || c->lost[i] ||
		    !(op->comp < tmax || judged[i]))
			continue;
		fprintf(c->o->promised, "%" PRIu64 " %" PRIu32 " %" PRIu64 " %c\n", op->sector,
			op->sectors, op->id, op->commit ? 'C' : orc_kind_chars[op->kind]);
		c->rep->promised++;
	}
}

/*
 * An S op whose write went down with FUA or PREFLUSH ran as a barrier of
 * a durable mode: drain sends its write plain, none fails it.
 */
static bool ran_durable(const struct ctx *c, const struct orc_op *op)
{
	const struct orc_bio *b;

	if (op->kind != ORC_OP_S)
		return false;
	b = last_wbio(c, op->sector, op->comp, true);
	return b && (b->flags & (ORC_PREFLUSH | ORC_FUAF));
}

/*
 * A commit accepted (its submit returned) before the first change of the
 * timeline in its window: it entered the mapping in a durable mode, and a
 * barrier accepted before a failure must not succeed without a flush
 * (docs/dm-barrier.rst, "Flush failure", 5): judged like any other.
 */
static bool accepted_before_change(const struct ctx *c, const struct orc_op *op)
{
	size_t j = upper_bound(c->seg_t, c->nseg, op->sub);

	return op->commit && j < c->nseg && op->acc < c->seg_t[j];
}

static int check_durable(struct ctx *c)
{
	const struct orc_input *in = c->in;
	bool *judged;
	size_t i;

	c->durable = calloc(in->nops + 1, sizeof(*c->durable));
	c->acked = calloc(in->nops + 1, sizeof(*c->acked));
	c->acked_comp = calloc(in->nops + 1, sizeof(*c->acked_comp));
	c->acked_max = calloc(in->nops + 1, sizeof(*c->acked_max));
	c->acked_arg = calloc(in->nops + 1, sizeof(*c->acked_arg));
	c->lost = calloc(in->nops + 1, sizeof(*c->lost));
	c->loss = calloc(in->nbios + 1, sizeof(*c->loss));
	if (!c->durable || !c->acked || !c->acked_comp || !c->acked_max || !c->acked_arg ||
	    !c->lost || !c->loss)
		return -ENOMEM;
	for (i = 0; i < in->nbios; i++)
		if (in->bios[i].loss_ns)
			c->loss[c->nloss++] = &in->bios[i];

	/* Each acked write's durable time. */
	for (i = 0; i < in->nops; i++) {
		const struct orc_op *op = &in->ops[i];
		const struct orc_bio *b;
		size_t lo, hi;

		c->durable[i] = 0;
		if (op->kind == ORC_OP_F || op->result)
			continue;
		b = last_wbio(c, op->sector, op->comp, true);
		if (!b) {
			wrange(c, op->sector, &lo, &hi);
			if (lo == hi) {
				vio(c, ORC_DURABLE, "%s acked but never reached the device (no W bio)",
				    OPSTR(op));
				continue;
			}
			/* A successful one completing after the ack? */
			for (; lo < hi; lo++) {
				if (!in->bios[c->w[lo].bio].status) {
					b = &in->bios[c->w[lo].bio];
					break;
				}
			}
			if (!b)
				continue;	/* only failed bios: rule 3's */
			vio(c, ORC_DURABLE,
			    "%s acked before its W bio completed (bios line %" PRIu32 ", complete %" PRIu64 ")",
			    OPSTR(op), b->line, b->comp);
		}
		c->durable[i] = durable_time(c, b);
		c->durable[i] = after_losses(c, b, c->durable[i], &c->lost[i]);
		c->rep->lost_acked += c->lost[i];
		c->acked[c->nacked++] = (struct aref){ .comp = op->comp, .durable = c->durable[i], .op = i };
	}
	qsort(c->acked, c->nacked, sizeof(*c->acked), cmp_aref);
	for (i = 0; i < c->nacked; i++) {
		c->acked_comp[i] = c->acked[i].comp;
		if (!i || c->acked[i].durable > c->acked_max[i - 1]) {
			c->acked_max[i] = c->acked[i].durable;
			c->acked_arg[i] = c->acked[i].op;
		} else {
			c->acked_max[i] = c->acked_max[i - 1];
			c->acked_arg[i] = c->acked_arg[i - 1];
		}
	}

	if (find_own_flush_failures(c))
		return -ENOMEM;
	judged = calloc(in->nops + 1, sizeof(*judged));
	if (!judged)
		return -ENOMEM;
	for (i = 0; i < in->nops; i++) {
		const struct orc_op *op = &in->ops[i];
		size_t k;

		if (op->kind == ORC_OP_W || op->result || !durable_mode(mode_at(c, op->sub)))
			continue;
		if (unsettled(c, op->sub, op->comp)) {
			/*
			 * A fallback in its window, and no message, reload or
			 * suspend that could have answered it: an op whose own
			 * flush failed must not succeed (docs/dm-barrier.rst,
			 * "Flush failure", 3), and one that ran in a durable
			 * mode (its write went down with FUA or PREFLUSH:
			 * drain sends neither, none fails it) keeps the
			 * promise.  Only one that may have been accepted after
			 * the fallback is exempt.
			 */
			bool ev = events_in(c, op->sub, op->comp);
			const struct orc_bio *ff = c->own_ff[i];

			if (!ev && ff) {
				c->rep->checked[ORC_DURABLE]++;
				c->rep->fallback_judged++;
				vio(c, ORC_DURABLE,
				    "%s returned 0 although its own flush failed (bios line %" PRIu32
				    ", status %" PRId32 ", complete %" PRIu64 ") and no mode message answered it",
				    OPSTR(op), ff->line, ff->status, ff->comp);
				continue;
			}
			if (ev || !(ran_durable(c, op) || accepted_before_change(c, op))) {
				c->rep->exempt_durable++;
				continue;
			}
			c->rep->fallback_judged++;
		}
		c->rep->checked[ORC_DURABLE]++;
		judged[i] = true;
		if (op->kind == ORC_OP_S && c->durable[i] > op->comp) {
			char d[32];

			snprintf(d, sizeof(d), "%" PRIu64, c->durable[i]);
			vio(c, ORC_DURABLE, "%s: its own write is not durable by its completion (durable: %s)",
			    OPSTR(op), c->durable[i] == ORC_NEVER ? "never" : d);
			continue;
		}
		k = lower_bound(c->acked_comp, c->nacked, op->sub);
		if (k && c->acked_max[k - 1] > op->comp) {
			const struct orc_op *w = &in->ops[c->acked_arg[k - 1]];
			char d[32];

			snprintf(d, sizeof(d), "%" PRIu64, c->acked_max[k - 1]);
			vio(c, ORC_DURABLE,
			    "%s: write op %" PRIu64 " (sector %" PRIu64 ", acked at %" PRIu64
			    ") is not durable by its completion (durable: %s%s)",
			    OPSTR(op), w->id, w->sector, w->comp,
			    c->acked_max[k - 1] == ORC_NEVER ? "never" : d,
			    c->lost[c->acked_arg[k - 1]] ? "; a flush failure lost it" : "");
		}
	}
	if (c->o->promised)
		write_promised(c, judged);
	free(judged);
	return 0;
}

/* ------------------------------------------- rules 3, 4, 5: write errors */

static void check_errors(struct ctx *c)
{
	const struct orc_input *in = c->in;

	for (size_t i = 0; i < in->nops; i++) {
		const struct orc_op *op = &in->ops[i];
		const struct orc_bio *b = NULL;
		bool own_failed = false;

		if (op->kind != ORC_OP_F) {
			size_t lo, hi;

			b = last_wbio(c, op->sector, op->comp, false);
			wrange(c, op->sector, &lo, &hi);
			for (; lo < hi && c->w[lo].comp <= op->comp; lo++)
				if (in->bios[c->w[lo].bio].status)
					own_failed = true;
		}

		/* 3: acked over a failed write bio. */
		if (op->kind != ORC_OP_F && !op->result) {
			c->rep->checked[ORC_WRITE_ERROR]++;
			if (b && b->status)
				vio(c, ORC_WRITE_ERROR,
				    "%s returned 0 but its W bio failed with %" PRId32 " (bios line %" PRIu32 ")",
				    OPSTR(op), b->status, b->line);
		}

		/* 4: an injected status other than EIO kept. */
		if (op->kind != ORC_OP_F && op->result) {
			c->rep->checked[ORC_STATUS_KEPT]++;
			size_t pf = b ? lower_bound(c->ffail, c->nffail, b->comp) : 0;
			/* A flush failing after the write (mode fua's probe):
			 * the cache failed, and its error is the one reported. */
			bool probed = b && pf < c->nffail && c->ffail[pf] <= op->comp;

			if (b && b->status && b->injected && b->status != -EIO && !probed &&
			    op->result != b->status)
				vio(c, ORC_STATUS_KEPT,
				    "%s: its W bio failed with injected %" PRId32 " (bios line %" PRIu32
				    ") but the op returned %" PRId32,
				    OPSTR(op), b->status, b->line, op->result);
		}

		/* 5: failures need a cause. */
		if (!op->result)
			continue;
		c->rep->checked[ORC_SPURIOUS]++;
		if (op->result == -EOPNOTSUPP) {
			if (!none_in(c, op->sub, op->comp))
				vio(c, ORC_SPURIOUS,
				    "%s failed with -EOPNOTSUPP but the mode was %s, never none, in its window",
				    OPSTR(op), orc_mode_names[mode_at(c, op->sub)]);
			continue;
		}
		{
			bool debt = false;

			if (own_failed)
				continue;
			if (op->kind != ORC_OP_W) {
				size_t f = lower_bound(c->ffail, c->nffail, op->sub);

				/* Its own flush failed, or one it queued behind. */
				if (f < c->nffail && c->ffail[f] <= op->comp)
					continue;
				f = upper_bound(c->ffail, c->nffail, op->comp);

				if (f) {
					uint64_t tf = c->ffail[f - 1];
					size_t s = upper_bound(c->fok, c->nfok, tf);
					size_t p = upper_bound(c->sok_sub, c->nsok, tf);

					size_t m = upper_bound(c->mr_end, c->nmr, tf);

					/*
					 * Paid by a flush, taken by a barrier that
					 * succeeded, or answered by a mode message:
					 * after one, no debt is left (the target
					 * forgets what it forgave).
					 */
					debt = (s == c->nfok || c->fok[s] >= op->sub) &&
					       (p == c->nsok || c->sok_sufmin[p] >= op->sub) &&
					       (m == c->nmr || c->mr_end[m] >= op->sub);
				}
			}
			if (debt) {
				c->rep->flush_debt++;
				continue;
			}
			vio(c, ORC_SPURIOUS,
			    "%s failed with no fault of its own: %s", OPSTR(op),
			    op->kind == ORC_OP_W ? "no failed W bio of its sector" :
			    "no failed W bio of its sector, no injected flush failure in its window, no flush debt");
		}
	}
}

/* ------------------------------------------------------ rule 6: hangs */

static int cmp_op_id(const void *a, const void *b)
{
	const struct orc_op *const *x = a, *const *y = b;

	return (*x)->id < (*y)->id ? -1 : (*x)->id > (*y)->id;
}

static int check_hang_and_ids(struct ctx *c, uint64_t hold_ms)
{
	const struct orc_input *in = c->in;
	_cleanup_free_ const struct orc_op **by_id = NULL;
	uint64_t limit = (hold_ms + c->o->slack_ms) * 1000000ULL, next = 0;
	size_t i;

	by_id = calloc(in->nops + 1, sizeof(*by_id));
	if (!by_id)
		return -ENOMEM;
	for (i = 0; i < in->nops; i++) {
		const struct orc_op *op = &in->ops[i];

		by_id[i] = op;
		c->rep->checked[ORC_HANG]++;
		if (op->comp >= op->sub && op->comp - op->sub > limit)
			vio(c, ORC_HANG, "%s took %.3f ms, more than hold %" PRIu64 " + slack %" PRIu64 " ms",
			    OPSTR(op), (double)(op->comp - op->sub) / 1e6, hold_ms, c->o->slack_ms);
	}
	if (in->ops_truncated)
		vio(c, ORC_HANG, "ops line %" PRIu32 " is cut short: the workload did not finish",
		    in->ops_truncated_line);
	if (in->ops_header && !in->ops_end)
		vio(c, ORC_HANG, "the ops log has no \"# end\" line: the workload did not finish");
	if (in->ops_end && in->ops_end_count != in->nops)
		vio(c, ORC_HANG, "the ops log says %" PRIu64 " ops ended, it holds %zu",
		    in->ops_end_count, in->nops);

	qsort(by_id, in->nops, sizeof(*by_id), cmp_op_id);
	for (i = 0; i < in->nops; i++) {
		const struct orc_op *op = by_id[i];

		if (i && op->id == by_id[i - 1]->id) {
			vio(c, ORC_SANITY, "%s: op id %" PRIu64 " logged twice", OPSTR(op), op->id);
			continue;
		}
		if (op->id > next) {
			vio(c, ORC_HANG, "op ids %" PRIu64 "..%" PRIu64 " never completed (not logged)",
			    next, op->id - 1);
		}
		next = op->id + 1;
	}
	for (i = 0; i < in->nslow; i++) {
		const struct orc_slow *s = &in->slow[i];
		struct orc_op key = { .id = s->id };
		const struct orc_op *kp = &key;

		if (!bsearch(&kp, by_id, in->nops, sizeof(*by_id), cmp_op_id))
			vio(c, ORC_HANG,
			    "op %" PRIu64 " (submitted %" PRIu64 ", \"# slow\" at ops line %" PRIu32
			    ") never completed",
			    s->id, s->sub, s->line);
	}
	return 0;
}

/* ------------------------------------------------------ rule 7: sanity */

/* ------------------------------------------------------------ order */

static bool ordered_mode(enum orc_mode m)
{
	return m == ORC_FLUSH || m == ORC_FUA || m == ORC_DRAIN;
}

/* Mode flush, fua or drain at every instant of [t0, t1]. */
static bool ordered_throughout(const struct ctx *c, uint64_t t0, uint64_t t1)
{
	size_t i = upper_bound(c->seg_t, c->nseg, t0);

	if (!ordered_mode(c->seg_m[i ? i - 1 : 0]))
		return false;
	for (; i < c->nseg && c->seg_t[i] <= t1; i++)
		if (!ordered_mode(c->seg_m[i]))
			return false;
	return true;
}

/* A bio below, in the index sorted by submit time. */
struct sref {
	uint64_t sub;
	size_t bio;
};

static int cmp_sref(const void *a, const void *b)
{
	const struct sref *x = a, *y = b;

	if (x->sub != y->sub)
		return x->sub < y->sub ? -1 : 1;
	return x->bio < y->bio ? -1 : x->bio > y->bio;
}

/* The first W bio at @sector submitted at or after @t, or NULL. */
static const struct orc_bio *first_wbio_after(const struct ctx *c, uint64_t sector, uint64_t t)
{
	const struct orc_bio *first = NULL;
	size_t lo, hi;

	wrange(c, sector, &lo, &hi);
	for (size_t i = lo; i < hi; i++) {
		const struct orc_bio *b = &c->in->bios[c->w[i].bio];

		if (b->sub >= t && (!first || b->sub < first->sub))
			first = b;
	}
	return first;
}

static const char *bio_str(const struct orc_bio *b, char *buf, size_t size)
{
	snprintf(buf, size,
		 "bio %" PRIu64 " (%c sector %" PRIu64 " submit %" PRIu64 " complete %" PRIu64
		 " status %" PRId32 ", line %" PRIu32 ")",
		 b->seq, b->op ? b->op : '?', b->sector, b->sub, b->comp, b->status, b->line);
	return buf;
}

#define BIOSTR(b) bio_str((b), (char[160]){ 0 }, 160)

/* Rules 8 and 9. */
static int check_order(struct ctx *c)
{
	const struct orc_input *in = c->in;
	size_t n = in->nbios, nx = 0, i;
	struct sref *s = calloc(n + 1, sizeof(*s));
	uint64_t *sub = calloc(n + 1, sizeof(*sub));
	size_t *argmax = calloc(n + 1, sizeof(*argmax));
	uint64_t *x_s = calloc(in->nevents + 1, sizeof(*x_s));
	uint64_t *x_t = calloc(in->nevents + 1, sizeof(*x_t));
	int r = -ENOMEM;

	if (!s || !sub || !argmax || !x_s || !x_t)
		goto out;
	/*
	 * Suspends, resumes, reloads, and mode messages to a mode that does
	 * not order (the timeline moves at such a message's end, but the
	 * target may have switched anywhere in it): disjoint intervals, in
	 * time order.
	 */
	for (i = 0; i < in->nevents; i++) {
		const struct orc_event *ev = &in->events[i];

		if (ev->type == ORC_EV_SUSPEND || ev->type == ORC_EV_RESUME ||
		    ev->type == ORC_EV_RELOAD ||
		    (ev->type == ORC_EV_MODE && !ordered_mode(ev->mode))) {
			x_s[nx] = ev->t;
			x_t[nx++] = ev->t_end;
		}
	}
	for (i = 0; i < n; i++)
		s[i] = (struct sref){ .sub = in->bios[i].sub, .bio = i };
	qsort(s, n, sizeof(*s), cmp_sref);
	/* argmax[k]: of the bios s[0..k], the one completing last. */
	for (i = 0; i < n; i++) {
		sub[i] = s[i].sub;
		argmax[i] = s[i].bio;
		if (i && in->bios[argmax[i - 1]].comp > in->bios[s[i].bio].comp)
			argmax[i] = argmax[i - 1];
	}
	for (i = 0; i < in->nops; i++) {
		const struct orc_op *op = &in->ops[i];
		const struct orc_bio *late = NULL, *d = NULL;
		size_t k, e;

		if (op->kind == ORC_OP_W || op->result)
			continue;
		e = lower_bound(x_t, nx, op->sub);
		if (!ordered_throughout(c, op->sub, op->comp) || (e < nx && x_s[e] <= op->comp)) {
			c->rep->exempt_order++;
			continue;
		}
		k = lower_bound(sub, n, op->sub);	/* s[0..k) were below before it */
		if (k)
			late = &in->bios[argmax[k - 1]];
		if (op->kind == ORC_OP_S)
			d = first_wbio_after(c, op->sector, op->sub);
		c->rep->checked[ORC_ORDER_DRAIN]++;
		if (late && late->comp > op->comp)
			vio(c, ORC_ORDER_DRAIN, "%s returned before %s, submitted below before it, completed",
			    OPSTR(op), BIOSTR(late));
		else if (late && d && late->comp > d->sub)
			vio(c, ORC_ORDER_DRAIN, "%s: its write %s went down before %s, submitted below before the op, completed",
			    OPSTR(op), BIOSTR(d), BIOSTR(late));
		if (!d)
			continue;
		c->rep->checked[ORC_ORDER_EXCL]++;
		k = upper_bound(sub, n, d->sub);
		if (k < n && s[k].sub < d->comp)
			vio(c, ORC_ORDER_EXCL, "%s: %s went down while its write %s was below",
			    OPSTR(op), BIOSTR(&in->bios[s[k].bio]), BIOSTR(d));
	}
	r = 0;
out:
	free(s);
	free(sub);
	free(argmax);
	free(x_s);
	free(x_t);
	return r;
}

static void check_sanity(struct ctx *c)
{
	const struct orc_input *in = c->in;
	size_t i;

	if (in->bios_overflow)
		vio(c, ORC_SANITY, "log overflow (bios line %" PRIu32 "): the fault target lost entries",
		    in->bios_overflow_line);
	for (i = 0; i < in->nbios; i++) {
		const struct orc_bio *b = &in->bios[i];

		c->rep->checked[ORC_SANITY]++;
		if (b->comp < b->sub)
			vio(c, ORC_SANITY, "bios line %" PRIu32 " (seq %" PRIu64 "): completes at %" PRIu64
			    " before its submit %" PRIu64, b->line, b->seq, b->comp, b->sub);
		if (b->op == 'F' && b->sectors)
			vio(c, ORC_SANITY, "bios line %" PRIu32 " (seq %" PRIu64 "): an F bio with %" PRIu32
			    " sectors of data", b->line, b->seq, b->sectors);
	}
	for (i = 0; i < in->nops; i++) {
		const struct orc_op *op = &in->ops[i];

		c->rep->checked[ORC_SANITY]++;
		if (op->comp < op->sub)
			vio(c, ORC_SANITY, "%s completes before it was submitted", OPSTR(op));
		if (op->kind == ORC_OP_F && (op->sector || op->sectors))
			vio(c, ORC_SANITY, "%s: an F op with a sector", OPSTR(op));
	}
}

/* ------------------------------------------------------------ counts */

#define TALLY_MAX 16

struct tally {
	int32_t key[TALLY_MAX];
	uint64_t n[TALLY_MAX];
	size_t used;
	uint64_t other;
};

static void tally_add(struct tally *t, int32_t key)
{
	for (size_t i = 0; i < t->used; i++) {
		if (t->key[i] == key) {
			t->n[i]++;
			return;
		}
	}
	if (t->used == TALLY_MAX) {
		t->other++;
		return;
	}
	t->key[t->used] = key;
	t->n[t->used++] = 1;
}

static void tally_print(FILE *out, const char *what, char name, const struct tally *t)
{
	uint64_t total = t->other;

	for (size_t i = 0; i < t->used; i++)
		total += t->n[i];
	if (!total)
		return;
	fprintf(out, "%s %c %" PRIu64 ":", what, name, total);
	for (size_t i = 0; i < t->used; i++)
		fprintf(out, " %" PRId32 "x%" PRIu64, t->key[i], t->n[i]);
	if (t->other)
		fprintf(out, " otherx%" PRIu64, t->other);
	fputc('\n', out);
}

static void counts(struct ctx *c)
{
	static const char bio_ops[] = "WFRDZO";
	const struct orc_input *in = c->in;
	struct tally ops[ORC_OP_NR] = { 0 }, bios[6] = { 0 };
	uint64_t injected = 0;
	size_t i;

	for (i = 0; i < in->nops; i++) {
		c->rep->ops_kind[in->ops[i].kind]++;
		if (in->ops[i].result)
			c->rep->ops_failed[in->ops[i].kind]++;
		tally_add(&ops[in->ops[i].kind], in->ops[i].result);
	}
	for (i = 0; i < in->nbios; i++) {
		const char *p = in->bios[i].op ? strchr(bio_ops, in->bios[i].op) : NULL;

		if (p)
			tally_add(&bios[p - bio_ops], in->bios[i].status);
		injected += in->bios[i].injected;
		c->rep->losses += in->bios[i].loss_ns != 0;
	}
	if (!c->out)
		return;
	for (i = 0; i < ORC_OP_NR; i++)
		tally_print(c->out, "ops", orc_kind_chars[i], &ops[i]);
	for (i = 0; i < 6; i++)
		tally_print(c->out, "bios", bio_ops[i], &bios[i]);
	fprintf(c->out, "injected faults %" PRIu64 ", rule-2 exempt ops %" PRIu64
		", rule-2 ops judged across a fallback %" PRIu64
		", order-exempt ops %" PRIu64
		", failures allowed as flush debt %" PRIu64
		", direct barriers failed and rerun %" PRIu64
		", flushes that lost the cache %" PRIu64 " (acked writes lost %" PRIu64
		"), writes promised %" PRIu64 "\n",
		injected, c->rep->exempt_durable, c->rep->fallback_judged, c->rep->exempt_order,
		c->rep->flush_debt,
		c->rep->reruns, c->rep->losses, c->rep->lost_acked, c->rep->promised);
}

/* ------------------------------------------------------------ driver */

uint64_t orc_total_violations(const struct orc_report *rep)
{
	uint64_t n = 0;

	for (int r = 0; r < ORC_NRULES; r++)
		n += rep->violations[r];
	return n;
}

static void ctx_free(struct ctx *c)
{
	free(c->w);
	free(c->fl);
	free(c->fl_sub);
	free(c->fl_sufmin);
	free(c->inj);
	free(c->ffail);
	free(c->rerun);
	free(c->fok);
	free(c->sok);
	free(c->sok_sub);
	free(c->sok_sufmin);
	free(c->seg_t);
	free(c->seg_m);
	free(c->ev_s);
	free(c->ev_t);
	free(c->mr_end);
	free(c->durable);
	free(c->own_ff);
	free(c->lost);
	free(c->loss);
	free(c->acked);
	free(c->acked_comp);
	free(c->acked_max);
	free(c->acked_arg);
}

int orc_check(const struct orc_input *in, const struct orc_opts *o, struct orc_report *rep,
	      FILE *out)
{
	struct ctx c = { .in = in, .o = o, .rep = rep, .out = out };
	int r;

	*rep = (struct orc_report){ 0 };
	r = build_indexes(&c);
	if (!r)
		r = find_reruns(&c);
	if (!r)
		r = build_timeline(&c);
	if (!r)
		r = check_durable(&c);
	if (!r) {
		check_errors(&c);
		r = check_hang_and_ids(&c, o->hold_ms >= 0 ? (uint64_t)o->hold_ms : c.hold_ms);
	}
	if (!r)
		r = check_order(&c);
	if (!r) {
		check_sanity(&c);
		counts(&c);
	}
	ctx_free(&c);
	if (r)
		return r;
	if (out) {
		for (int i = 0; i < ORC_NRULES; i++)
			fprintf(out, "%s %s %" PRIu64 " judged %" PRIu64 "\n", orc_rule_names[i],
				rep->violations[i] ? "FAIL" : "pass", rep->violations[i],
				rep->checked[i]);
		fprintf(out, "oracle: %zu ops, %zu bios, %" PRIu64 " injected faults, %" PRIu64
			" violations\n", in->nops, in->nbios, rep->injected, orc_total_violations(rep));
	}
	return 0;
}
