// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * trace.c: reads blkparse's default output (see trace.h) into events.
 *
 * Line shapes (blkparse_fmt.c, process_default()):
 *   "%3d,%-3d %2d %8d %5d.%09lu %5u %2s %3s " then by action:
 *   Q D I B G M F S:  "SECTOR + N [comm]"  or "[comm]" when N is 0
 *   C R:              "SECTOR + N [err]"   or "SECTOR [err]"
 *   SCSI passthrough: "BYTES [comm]", C R "[err]" (ignored: not data I/O)
 *   A:                "SECTOR + N <- (MAJ,MIN) FROM"
 *   P U T X m:        not needed here; kept with what can be read.
 *
 * Or the same events as the kernel's block tracepoints print them in
 * tracefs's "trace" file (include/trace/events/block.h), which is what
 * the verifier reads on kernels whose blktrace format bookworm's blktrace
 * cannot read (7.x):
 *   "TASK-PID [CPU] FLAGS SECS.USECS: EVENT: PAYLOAD" (FLAGS: whether the
 *   event was traced in process context, see ftrace_proc_ctx()), EVENT one of
 *   block_bio_queue    Q  "MAJ,MIN RWBS SECTOR + N [comm]"
 *   block_bio_remap    A  "MAJ,MIN RWBS SECTOR + N <- (MAJ,MIN) FROM"
 *   block_rq_issue     D  "MAJ,MIN RWBS BYTES (CMD) SECTOR + N [PRIO] [comm]"
 *   block_rq_requeue   R  "MAJ,MIN RWBS (CMD) SECTOR + N [PRIO] [err]"
 *   block_rq_complete  C  "MAJ,MIN RWBS (CMD) SECTOR + N [PRIO] [err]"
 *   block_bio_complete C  "MAJ,MIN RWBS SECTOR + N [err]"
 * (PRIO: "class,hint,level" since 6.10.)  Other events are not ours.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "trace.h"

int trace_parse_rwbs(const char *s, uint16_t *flags)
{
	uint16_t f = 0;
	size_t i = 0;

	/* A leading F is a flush only when a direction letter follows it. */
	if (s[0] == 'F' && s[1] && strchr("DWRN", s[1])) {
		f |= TF_PREFLUSH;
		i = 1;
	}
	switch (s[i]) {
	case 'D': f |= TF_DISCARD | TF_WRITE; break;
	case 'W': f |= TF_WRITE; break;
	case 'R': f |= TF_READ; break;
	case 'N': f |= TF_NONE; break;
	default: return -EINVAL;
	}
	i++;
	if (s[i] == 'E') /* secure erase: "DE" */
		i++;
	if (s[i] == 'F') {
		f |= TF_FUA;
		i++;
	}
	if (s[i] == 'A') {
		f |= TF_AHEAD;
		i++;
	}
	if (s[i] == 'S') {
		f |= TF_SYNC;
		i++;
	}
	if (s[i] == 'M') {
		f |= TF_META;
		i++;
	}
	if (s[i])
		return -EINVAL;
	*flags = f;
	return 0;
}

void trace_fmt_rwbs(uint16_t f, char buf[8])
{
	size_t i = 0;

	if (f & TF_PREFLUSH)
		buf[i++] = 'F';
	if (f & TF_DISCARD)
		buf[i++] = 'D';
	else if (f & TF_WRITE)
		buf[i++] = 'W';
	else if (f & TF_READ)
		buf[i++] = 'R';
	else
		buf[i++] = 'N';
	if (f & TF_FUA)
		buf[i++] = 'F';
	if (f & TF_AHEAD)
		buf[i++] = 'A';
	if (f & TF_SYNC)
		buf[i++] = 'S';
	if (f & TF_META)
		buf[i++] = 'M';
	buf[i] = '\0';
}

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* An unsigned decimal; returns the end or NULL. */
static const char *read_u64(const char *p, uint64_t *v)
{
	char *end;

	if (!isdigit((unsigned char)*p))
		return NULL;
	errno = 0;
	*v = strtoull(p, &end, 10);
	if (errno)
		return NULL;
	return end;
}

/* "[N]": blkparse prints the u16 error field, so -5 shows as 65531. */
static int read_err(const char *p, int32_t *err)
{
	uint64_t v;

	if (*p != '[')
		return -EINVAL;
	p = read_u64(p + 1, &v);
	if (!p || *p != ']' || v > 65535)
		return -EINVAL;
	*err = v > 32767 ? (int32_t)v - 65536 : (int32_t)v;
	return 0;
}

/* A remap's source, "<- (MAJ,MIN) FROM", in both forms: 1 or -EINVAL. */
static int read_remap_source(const char *p, struct tev *ev)
{
	unsigned int fmaj, fmin;
	unsigned long long from;

	if (sscanf(p, "<- (%u,%u) %llu", &fmaj, &fmin, &from) != 3)
		return -EINVAL;
	ev->from_dev = TDEV(fmaj, fmin);
	ev->from_sector = from;
	return 1;
}

int trace_parse_line(const char *line, struct tev *ev)
{
	unsigned int maj, min, cpu, pid;
	unsigned long long seq, sec, nsec;
	char act[4], rwbs[8];
	const char *p;
	uint64_t v;
	int n = 0;

	*ev = (struct tev){ 0 };
	if (sscanf(line, " %u,%u %u %llu %llu.%llu %u %3s %7s %n", &maj, &min, &cpu, &seq, &sec,
		   &nsec, &pid, act, rwbs, &n) != 9 || !n)
		return 0; /* a summary line: "CPU0 (sda):", "Total ...", blank */
	if (strlen(act) > 2 || nsec > 999999999ULL || maj > 4095 || min > 0xfffff)
		return -EINVAL;
	ev->dev = TDEV(maj, min);
	ev->cpu = cpu;
	ev->pid = pid;
	ev->t = sec * 1000000000ULL + nsec;
	ev->act = act[0];
	/* Notify records ("m N message") and the like carry no RWBS of ours. */
	if (trace_parse_rwbs(rwbs, &ev->flags) < 0) {
		if (ev->act == 'm')
			return 0;
		return -EINVAL;
	}
	p = skip_ws(line + n);

	switch (ev->act) {
	case 'P': case 'U': case 'T': case 'm':
		return 1;
	default:
		break;
	}
	if (*p == '[' && ev->act != 'C' && ev->act != 'R')
		return 1; /* no sector: a zero-sized bio or request */
	/*
	 * SCSI passthrough requests (libata's error handler, BLK_TC_PC) show
	 * no sector: "[err]" or "(cdb) [err]" for C and R, "BYTES [comm]"
	 * for the others.  They carry no data of ours: not events here.
	 */
	if ((ev->act == 'C' || ev->act == 'R') && (*p == '[' || *p == '('))
		return 0;
	p = read_u64(p, &v);
	if (!p)
		return -EINVAL;
	ev->sector = v;
	ev->has_sector = true;
	p = skip_ws(p);
	if (*p == '+') {
		p = read_u64(skip_ws(p + 1), &v);
		if (!p || v > UINT32_MAX)
			return -EINVAL;
		ev->nsect = (uint32_t)v;
		p = skip_ws(p);
	} else if (*p == '/') {
		return ev->act == 'X' ? 1 : -EINVAL;
	} else if (ev->act != 'C' && ev->act != 'R' && ev->act != 'A' && (*p == '[' || *p == '(')) {
		return 0; /* passthrough: BYTES, not SECTOR + N */
	}
	if (ev->act == 'A')
		return read_remap_source(p, ev);
	if (ev->act == 'C' || ev->act == 'R') {
		/* "(8 usecs)" with blkparse -t; not used but tolerated. */
		if (*p == '(') {
			p = strchr(p, ')');
			if (!p)
				return -EINVAL;
			p = skip_ws(p + 1);
		}
		return read_err(p, &ev->err) < 0 ? -EINVAL : 1;
	}
	return *p == '[' || *p == '(' ? 1 : -EINVAL;
}

/* The event name and its action letter (tracefs). */
static const struct {
	const char *name;
	char act;
	bool rq;	/* a request event: "(CMD)" before the sector */
} ftrace_events[] = {
	{ "block_bio_queue", 'Q', false },	{ "block_bio_remap", 'A', false },
	{ "block_rq_issue", 'D', true },	{ "block_rq_requeue", 'R', true },
	{ "block_rq_complete", 'C', true },	{ "block_bio_complete", 'C', false },
};
#define N_FTRACE_EVENTS (sizeof(ftrace_events) / sizeof(ftrace_events[0]))

/*
 * The FLAGS column between @p and @end: "d.s2." (irqs-off, need-resched,
 * hardirq/softirq, preempt depth, migrate-disable; 4 characters before
 * 5.13).  Its third character is '.' in process context, 'h' 'H' 's' 'z'
 * 'Z' in hardirq, softirq or NMI context: there the task shown is only
 * the one interrupted.  No column (irq-info off) or another shape: not
 * known, so not process context.
 */
static bool ftrace_proc_ctx(const char *p, const char *end)
{
	const char *q;

	p = skip_ws(p);
	for (q = p; q < end && *q != ' ' && *q != '\t'; q++)
		;
	if (q >= end || (q - p != 4 && q - p != 5))
		return false;
	return p[2] == '.';
}

/* "TASK-PID [CPU] FLAGS SECS.USECS" ending at @end: pid, cpu, time, context. */
static int ftrace_read_prefix(const char *line, const char *end, struct tev *ev)
{
	unsigned long long sec, usec;
	const char *ts = end, *cb, *ob, *dash;
	unsigned int cpu;
	uint64_t pid;
	int n = 0;

	while (ts > line && ts[-1] != ' ')
		ts--;
	/*
	 * "SECS.USECS" for the clocks in nanoseconds, a plain count for the
	 * others: "counter", which the verifier uses (see trace.h).
	 */
	if (sscanf(ts, "%llu.%llu%n", &sec, &usec, &n) == 2 && ts + n == end && usec <= 999999) {
		ev->t = sec * 1000000000ULL + usec * 1000ULL;
	} else if (sscanf(ts, "%llu%n", &sec, &n) == 1 && ts + n == end) {
		ev->t = sec;
		ev->raw_time = true;
	} else {
		return -EINVAL;
	}
	/* The CPU is the last "[NNN]" before the time; TASK may hold anything. */
	for (cb = ts; cb > line && cb[-1] != ']'; cb--)
		;
	for (ob = cb; ob > line && ob[-1] != '['; ob--)
		;
	if (cb == line || ob == line || sscanf(ob, "%u]", &cpu) != 1)
		return -EINVAL;
	ev->proc_ctx = ftrace_proc_ctx(cb, ts);
	ob--; /* the '[' */
	while (ob > line && ob[-1] == ' ')
		ob--;
	/* An optional "(TGID)" column sits between TASK-PID and [CPU]. */
	if (ob > line && ob[-1] == ')') {
		while (ob > line && ob[-1] != '(')
			ob--;
		if (ob == line)
			return -EINVAL;
		ob--;
		while (ob > line && ob[-1] == ' ')
			ob--;
	}
	for (dash = ob; dash > line && dash[-1] != '-'; dash--)
		;
	if (dash == line || !read_u64(dash, &pid) || pid > UINT32_MAX)
		return -EINVAL;
	ev->pid = (uint32_t)pid;
	ev->cpu = cpu;
	return 0;
}

int trace_parse_ftrace_line(const char *line, struct tev *ev)
{
	unsigned int maj, min;
	const char *p, *ev_name, *ev_end;
	char rwbs[9];
	uint64_t v;
	size_t i, len;
	int n = 0;

	*ev = (struct tev){ 0 };
	ev_name = strstr(line, ": block_");
	if (!ev_name || line[0] == '#')
		return 0;
	if (ftrace_read_prefix(line, ev_name, ev) < 0)
		return -EINVAL;
	ev_name += 2;
	ev_end = strchr(ev_name, ':');
	if (!ev_end)
		return -EINVAL;
	len = (size_t)(ev_end - ev_name);
	for (i = 0; i < N_FTRACE_EVENTS; i++)
		if (strlen(ftrace_events[i].name) == len && !strncmp(ev_name, ftrace_events[i].name, len))
			break;
	if (i == N_FTRACE_EVENTS)
		return 0; /* block_plug, block_getrq, ...: not used */
	ev->act = ftrace_events[i].act;
	if (sscanf(ev_end + 1, " %u,%u %8s %n", &maj, &min, rwbs, &n) != 3 || !n ||
	    maj > 4095 || min > 0xfffff)
		return -EINVAL;
	ev->dev = TDEV(maj, min);
	/*
	 * The tracepoints print REQ_OP_FLUSH as an 'F' where blkparse prints
	 * the flush request "FN": a flush request (with REQ_PREFLUSH) is "FF".
	 */
	if (rwbs[0] == 'F' && (rwbs[1] == 'F' || !rwbs[1])) {
		rwbs[1] = 'N';
		rwbs[2] = '\0';
	}
	if (trace_parse_rwbs(rwbs, &ev->flags) < 0)
		return -EINVAL;
	p = ev_end + 1 + n;
	if (ev->act == 'D') { /* BYTES */
		p = read_u64(p, &v);
		if (!p)
			return -EINVAL;
		p = skip_ws(p);
	}
	if (ftrace_events[i].rq) { /* (CMD) */
		if (*p != '(')
			return -EINVAL;
		p = strchr(p, ')');
		if (!p)
			return -EINVAL;
		p = skip_ws(p + 1);
	}
	p = read_u64(p, &v);
	if (!p)
		return -EINVAL;
	ev->sector = v;
	p = skip_ws(p);
	if (*p != '+')
		return -EINVAL;
	p = read_u64(skip_ws(p + 1), &v);
	if (!p || v > UINT32_MAX)
		return -EINVAL;
	ev->nsect = (uint32_t)v;
	p = skip_ws(p);
	/*
	 * As blkparse prints them: a zero-sized bio or request has no sector
	 * but in its completion ("SECTOR [err]").
	 */
	ev->has_sector = ev->nsect || ev->act == 'C' || ev->act == 'R' || ev->act == 'A';
	if (!ev->has_sector)
		ev->sector = 0;
	if (ev->act == 'A')
		return read_remap_source(p, ev);
	/* The last "[...]": the error for C and R, the task's name otherwise. */
	p = strrchr(p, '[');
	if (!p)
		return -EINVAL;
	if (ev->act == 'C' || ev->act == 'R') {
		long e;
		char *end;

		errno = 0;
		e = strtol(p + 1, &end, 10);
		if (errno || end == p + 1 || *end != ']' || e < -4095 || e > 0)
			return -EINVAL;
		ev->err = (int32_t)e;
	}
	return 1;
}

int trace_add(struct trace *t, const struct tev *ev)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 4096;
		struct tev *nev = realloc(t->ev, cap * sizeof(*nev));

		if (!nev)
			return -ENOMEM;
		t->ev = nev;
		t->cap = cap;
	}
	t->ev[t->n++] = *ev;
	return 0;
}

static int cmp_tev(const void *a, const void *b)
{
	const struct tev *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

void trace_sort(struct trace *t)
{
	if (t->n)
		qsort(t->ev, t->n, sizeof(*t->ev), cmp_tev);
}

int trace_read(FILE *f, struct trace *t, uint32_t *bad_line)
{
	_cleanup_free_ char *line = NULL;
	size_t len = 0;
	uint32_t lineno = 0;
	uint64_t last_ft = 0;
	struct tev ev;
	bool ft;
	int r;

	while (getline(&line, &len, f) >= 0) {
		unsigned long long skips;
		const char *lost;

		lineno++;
		/* tracefs: "CPU:1 [LOST 12 EVENTS]" */
		lost = strstr(line, "[LOST ");
		if (lost && sscanf(lost, "[LOST %llu EVENTS]", &skips) == 1) {
			t->skips += skips;
			t->lines_ignored++;
			continue;
		}
		ft = strstr(line, ": block_") != NULL;
		r = ft ? trace_parse_ftrace_line(line, &ev) : trace_parse_line(line, &ev);
		if (r < 0) {
			*bad_line = lineno;
			return r;
		}
		if (r == 0) {
			if (sscanf(line, "Skips: %llu forward", &skips) == 1)
				t->skips += skips;
			t->lines_ignored++;
			continue;
		}
		/*
		 * tracefs prints microseconds, in time order: keep that order
		 * among events of the same microsecond (the checker compares
		 * times), one nanosecond apart.
		 */
		if (ft) {
			if (ev.t <= last_ft)
				ev.t = last_ft + 1;
			last_ft = ev.t;
			if (ev.raw_time)
				t->raw_time = true;
		}
		ev.line = lineno;
		r = trace_add(t, &ev);
		if (r < 0)
			return r;
	}
	if (ferror(f))
		return -EIO;
	trace_sort(t);
	return 0;
}

void trace_free(struct trace *t)
{
	free(t->ev);
	*t = (struct trace){ 0 };
}
