/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * oracle.h: the fault campaign's oracle (oracle.c has the rules and what
 * they cannot see).  Reads three logs - the workload's ops
 * (dmb-faultload --log), the dmb_fault target's bios and the campaign
 * runner's events - and checks what the ops returned against what the bios
 * and the mode timeline allow.  Pure logic; no I/O but reading the given
 * streams and writing the report.
 */
#ifndef DMB_TOOLS_ORACLE_H
#define DMB_TOOLS_ORACLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define ORC_NEVER UINT64_MAX

enum orc_rule {
	ORC_TIMELINE,		/* 1 */
	ORC_DURABLE,		/* 2 */
	ORC_WRITE_ERROR,	/* 3 */
	ORC_STATUS_KEPT,	/* 4 */
	ORC_SPURIOUS,		/* 5 */
	ORC_HANG,		/* 6 */
	ORC_SANITY,		/* 7 */
	ORC_ORDER_DRAIN,	/* 8 */
	ORC_ORDER_EXCL,	/* 9 */
	ORC_NRULES
};

extern const char *const orc_rule_names[ORC_NRULES];

enum orc_kind { ORC_OP_W, ORC_OP_S, ORC_OP_F, ORC_OP_NR };

/*
 * ORC_UNKNOWN is the timeline's own: a flush failed while a mode message
 * or reload was taking effect, so either may have come last.
 */
enum orc_mode { ORC_FLUSH, ORC_FUA, ORC_DRAIN, ORC_PASSTHROUGH, ORC_NONE, ORC_UNKNOWN, ORC_MODE_NR };

extern const char *const orc_mode_names[ORC_MODE_NR];

/* Bio flags as the fault target logs them. */
enum {
	ORC_PREFLUSH = 1u << 0,
	ORC_FUAF = 1u << 1,
	ORC_SYNC = 1u << 2,
	ORC_NOWAIT = 1u << 3,
	ORC_POLLED = 1u << 4,
};

/*
 * One line of the workload's log.  A commit (kind C in the log: a write
 * with REQ_PREFLUSH|REQ_FUA) is an S op to every rule, with @acc, when it
 * had entered the mapping at the latest.
 */
struct orc_op {
	uint64_t id;
	uint64_t sector;
	uint64_t sub, comp;
	uint64_t acc;		/* commit: accepted by then; else 0 */
	bool commit;
	uint32_t thread;
	uint32_t sectors;
	uint32_t line;
	int32_t result;
	enum orc_kind kind;
};

/* One line of the fault target's log. */
struct orc_bio {
	uint64_t seq;
	uint64_t sub, comp;
	uint64_t sector;
	uint32_t sectors;
	uint32_t flags;
	uint32_t line;
	int32_t status;
	char op;		/* W F R D Z O */
	bool injected;
	uint64_t loss_ns;	/* a flush that lost the cache: when, */
	uint32_t nr_lost;	/* and how many writes */
};

enum orc_event_type {
	ORC_EV_START, ORC_EV_MODE, ORC_EV_FAULT, ORC_EV_SUSPEND, ORC_EV_RESUME,
	ORC_EV_RELOAD, ORC_EV_NR
};

struct orc_event {
	uint64_t t;
	uint64_t t_end;		/* the action ended (dmb-stamp); t when not given */
	uint64_t hold_ms;	/* start */
	uint32_t line;
	enum orc_event_type type;
	enum orc_mode mode;	/* start, mode, reload */
	enum orc_mode fallback;	/* start */
};

/* An op the workload reported as slow ("# slow ...") and maybe never logged. */
struct orc_slow {
	uint64_t id;
	uint64_t sub;
	uint32_t line;
};

struct orc_input {
	struct orc_op *ops;
	size_t nops, ops_cap;
	struct orc_bio *bios;
	size_t nbios, bios_cap;
	struct orc_event *events;
	size_t nevents, events_cap;
	struct orc_slow *slow;
	size_t nslow, slow_cap;
	bool ops_truncated;	/* last line of the ops log cut short */
	uint32_t ops_truncated_line;
	bool ops_header;	/* the workload's "# dmb-faultload" header */
	bool ops_end;		/* ... and its "# end" trailer */
	uint64_t ops_end_count;
	bool bios_overflow;	/* "# overflow": the target lost entries */
	uint32_t bios_overflow_line;
};

struct orc_opts {
	int64_t hold_ms;	/* < 0: the start event's */
	uint64_t slack_ms;
	uint64_t max_report;	/* violations printed per rule */
	FILE *promised;		/* if set: the writes a judged op promised */
};

struct orc_report {
	uint64_t violations[ORC_NRULES];
	uint64_t checked[ORC_NRULES];	/* ops (or bios, events) a rule looked at */
	uint64_t exempt_durable;	/* S/F ops rule 2 skipped: mode event or switch in window */
	uint64_t exempt_order;		/* acked S/F ops rules 8, 9 skipped: not ordered throughout */
	uint64_t fallback_judged;	/* S/F ops rule 2 judged with a fallback in window */
	uint64_t losses;		/* flushes that lost the cache */
	uint64_t lost_acked;		/* acked writes a loss took */
	uint64_t promised;		/* writes written to opts.promised */
	uint64_t flush_debt;		/* failures rule 5 allowed as a flush debt */
	uint64_t injected;		/* bios with injected 1 */
	uint64_t reruns;		/* failed direct barriers rerun: failed flushes */
	uint64_t ops_kind[ORC_OP_NR], ops_failed[ORC_OP_NR];
	uint64_t mode_segments;
};

/*
 * Readers: append a stream's lines to @in.  0, or -EINVAL for a malformed
 * line (its number in *bad_line); a last ops line cut short is not an error
 * but in->ops_truncated.
 */
int orc_read_ops(struct orc_input *in, FILE *f, uint32_t *bad_line);
int orc_read_bios(struct orc_input *in, FILE *f, uint32_t *bad_line);
int orc_read_events(struct orc_input *in, FILE *f, uint32_t *bad_line);

/* One line each (no newline needed); the readers use these. */
int orc_parse_op(const char *line, struct orc_op *op);
int orc_parse_bio(const char *line, struct orc_bio *b);
int orc_parse_event(const char *line, struct orc_event *ev);

int orc_mode_parse(const char *s, enum orc_mode *m);

/*
 * Check every rule.  Violations (at most o->max_report per rule) and the
 * rule lines go to @out when it is not NULL.  0, or -ENOMEM.
 */
int orc_check(const struct orc_input *in, const struct orc_opts *o, struct orc_report *rep,
	      FILE *out);

uint64_t orc_total_violations(const struct orc_report *rep);

void orc_input_free(struct orc_input *in);

#endif
