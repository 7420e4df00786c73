/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * order.h: the barrier contract checked over one blktrace of a dm device
 * and its backing disk (docs/verification.md has the rules and what they
 * prove).  Pure functions over parsed events; no I/O but the report.
 */
#ifndef DMB_TOOLS_ORDER_H
#define DMB_TOOLS_ORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace.h"

#define ORD_NEVER UINT64_MAX

enum ord_rule {
	ORD_DRAIN,	/* (a) earlier bios complete before the barrier starts */
	ORD_OVERTAKE,	/* (b) later bios do not start before the target finished with it */
	ORD_DURABLE,	/* (c) earlier writes and its data durable at completion */
	ORD_PREFLUSH,	/* (d) earlier writes durable before its data is written */
	ORD_NRULES
};

extern const char *const ord_rule_names[ORD_NRULES];

/* One bio as the dm device saw it, with what the disk did for it. */
struct ord_bio {
	uint64_t q, c;		/* Q and C on the dm device; c ORD_NEVER if none */
	/*
	 * When c is FIFO's guess among several completions that could be this
	 * bio's (ambiguous, see the top of order.c): the earliest and latest
	 * of them; else c.
	 */
	uint64_t c_lo, c_hi;
	uint64_t e;		/* acceptance bound: mapped no later than this */
	uint64_t a_end;		/* for a barrier: accepted no later than this */
	uint64_t sector;	/* dm sector */
	uint64_t a_t;		/* its remap to the disk, ORD_NEVER if none */
	uint64_t disk_sector;
	uint64_t d_first;	/* first disk command dispatched for it */
	uint64_t d_data;	/* dispatch of the disk request carrying its data */
	uint64_t c_data;	/* completion of that request's data */
	uint64_t done;		/* completion on the disk (flush-sequenced: the last) */
	uint64_t durable;	/* its data on stable media, ORD_NEVER if never */
	/*
	 * For a barrier: T(B), when the target was done with it, the bound
	 * of rule (b) (see the top of order.c); c_lo when not known.
	 */
	uint64_t t_end;
	uint32_t nsect;
	uint32_t pid;
	uint32_t line;		/* input line of its Q */
	int32_t err;
	uint16_t flags;
	bool barrier;
	bool skipped;		/* failed with EAGAIN before reaching the disk: retried */
	bool own_flush;		/* its empty flush was remapped to the disk */
	bool cmd_err;		/* a disk command of its own failed */
	bool own_c;		/* completed in its submitter's process context */
};

struct ord_violation {
	enum ord_rule rule;
	size_t barrier;		/* index into bios */
	size_t worst;		/* the offending bio furthest off */
	uint64_t offenders;	/* how many bios break the rule against it */
	uint64_t ref_t;		/* the time the rule is measured against */
	uint64_t worst_t;	/* the offender's time */
};

struct ord_opts {
	uint32_t dm_dev;	/* 0: the source device of the remaps */
	bool durability;	/* check (c) and (d): modes flush, fua */
	bool write_through;	/* the disk has no volatile cache */
};

struct ord_report {
	struct ord_bio *bios;	/* in Q order on the dm device */
	size_t nbios;
	struct ord_violation *v;
	size_t nv, cap_v;
	uint32_t dm_dev, disk_dev;
	uint64_t barriers, data_barriers, empty_barriers, skipped;
	uint64_t failed;	/* bios completed with an error (not EAGAIN) */
	uint64_t disk_flushes, disk_flush_errors;
	uint64_t first_flush_error_t;	/* ORD_NEVER if none */
	uint64_t barriers_after_flush_error;
	uint64_t violations[ORD_NRULES];	/* barriers that break each rule */
	uint64_t pairs[ORD_NRULES];		/* (barrier, bio) pairs */
	uint64_t checked[ORD_NRULES];		/* (barrier, bio) pairs checked */
	uint64_t before_trace;	/* completions, before the first Q, of I/O started earlier */
	uint64_t unordered_pairs;	/* submitted too close to tell the order */
	uint64_t own_completions;	/* bios with own_c */
	uint64_t ambiguous;	/* bios whose completion could be another's (c_lo < c_hi) */
	uint64_t problems;	/* the trace does not add up; see problem */
	char problem[256];	/* the first such problem */
};

int ord_check(const struct tev *ev, size_t n, const struct ord_opts *o, struct ord_report *rep);
void ord_report_free(struct ord_report *rep);

/* Names for bios from dmb-orderload --map: sector -> "seq N kind". */
struct ord_names {
	uint64_t *sector;
	uint64_t *seq;
	char (*kind)[8];
	size_t n;
};
int ord_names_read(FILE *f, struct ord_names *names);
void ord_names_free(struct ord_names *names);

void ord_print(FILE *out, const struct ord_report *rep, const struct ord_names *names,
	       unsigned int max_lines);
void ord_print_summary(FILE *out, const struct ord_report *rep);

#endif
