/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * trace.h: blkparse's default text output, or the block tracepoints as
 * tracefs prints them, as an array of events.
 *
 * The default format is used rather than a custom -f one because it is
 * the only one that prints a remap's source ("A WS 8 + 8 <- (254,0) 8"):
 * blkparse passes no payload to -f formats for remap events.
 */
#ifndef DMB_TOOLS_TRACE_H
#define DMB_TOOLS_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Device numbers as "major,minor" pack into one word. */
#define TDEV(maj, min) (((uint32_t)(maj) << 20) | (uint32_t)(min))
#define TDEV_MAJOR(d) ((d) >> 20)
#define TDEV_MINOR(d) ((d) & 0xfffff)

/* RWBS, as blkparse prints it: [F]{D|W|R|N}[F][A][S][M]. */
enum {
	TF_PREFLUSH = 1 << 0,	/* leading F: REQ_PREFLUSH, or a flush request */
	TF_WRITE = 1 << 1,
	TF_READ = 1 << 2,
	TF_DISCARD = 1 << 3,
	TF_NONE = 1 << 4,	/* N: no data direction (a flush request "FN") */
	TF_FUA = 1 << 5,
	TF_SYNC = 1 << 6,
	TF_META = 1 << 7,
	TF_AHEAD = 1 << 8,
};

struct tev {
	uint64_t t;		/* ns since the trace started */
	uint64_t sector;	/* valid when has_sector */
	uint64_t from_sector;	/* A: the source sector */
	uint32_t dev;
	uint32_t from_dev;	/* A: the source device */
	uint32_t nsect;		/* size in 512-byte sectors */
	uint32_t pid;
	uint32_t cpu;
	uint32_t line;		/* line number in the input, for messages */
	int32_t err;		/* C: the error, as a negative errno */
	uint16_t flags;		/* TF_* */
	char act;		/* Q A G I D C M F R P U ... */
	bool has_sector;
	bool raw_time;		/* t is a tracefs clock's count, not ns */
	/*
	 * tracefs only: traced in process context, its flags column showing
	 * neither hardirq nor softirq (nor NMI).  False when unknown: blkparse
	 * prints no context, nor does tracefs with its irq-info option off.
	 */
	bool proc_ctx;
};

struct trace {
	struct tev *ev;
	size_t n, cap;
	uint64_t skips;		/* lost events: blkparse's skips, tracefs's LOST */
	uint64_t lines_ignored;	/* lines that are not events (summaries) */
	bool raw_time;		/* tracefs "counter" clock: times are event counts */
};

/*
 * Parse one line of blkparse's default output.  Returns 1 for an event,
 * 0 for a line that is not an event (blkparse's summary), -EINVAL for a
 * line that looks like an event but cannot be read.
 */
int trace_parse_line(const char *line, struct tev *ev);

/*
 * The same for one line of tracefs's "trace" file with the block
 * tracepoints (see trace.c): 1 for one of the events the checker uses,
 * 0 for any other line, -EINVAL for a block event that cannot be read.
 * The verifier traces with the "counter" clock: a global atomic count
 * taken as each event is recorded, so events on different CPUs are in
 * the order they happened (tracefs prints the ns clocks in microseconds,
 * and two CPUs' events often share one); t is then that count.
 */
int trace_parse_ftrace_line(const char *line, struct tev *ev);

/* Parse an RWBS string ("FWS", "WFS", "FN") into TF_* flags; -EINVAL if bad. */
int trace_parse_rwbs(const char *s, uint16_t *flags);

/*
 * Read a whole blkparse output or tracefs trace (lines of either kind);
 * events are sorted by time (stable, so equal times keep the input's
 * order).  Lost events (blkparse's skips, tracefs's "[LOST N EVENTS]")
 * are summed in skips.  On a malformed line returns
 * -EINVAL with *bad_line set.
 */
int trace_read(FILE *f, struct trace *t, uint32_t *bad_line);
int trace_add(struct trace *t, const struct tev *ev);
void trace_sort(struct trace *t);
void trace_free(struct trace *t);

/* "8,16" / "rwbs" for messages. */
void trace_fmt_rwbs(uint16_t flags, char buf[8]);

#endif
