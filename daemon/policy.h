/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * policy.h: which mode a barrier mapping should be in, decided from what
 * the kernel says about it and its disk.  Pure: no I/O, no clock, no
 * globals; device.c feeds it a snapshot and carries out the decision.
 * The rules it implements are documented in barrierd(8), POLICY.
 */
#ifndef BARRIERD_POLICY_H
#define BARRIERD_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include "libdmbarrier.h"
#include "macro.h"

enum policy_phase {
	PHASE_UNKNOWN,		/* not evaluated yet, or just unpinned */
	PHASE_HEALTHY,		/* cache on, flushes work: flush or fua */
	PHASE_WRITE_THROUGH,	/* cache off: drain */
	PHASE_PROBING,		/* cache on again: an explicit barrier tests the flush */
	PHASE_FAILING,		/* a flush failed; the cache is being turned off */
	PHASE_FAILED,		/* ... it is off: drain, hold-down before flush again */
	PHASE_BROKEN,		/* a flush failed and the cache stayed on: none */
	PHASE_PINNED,		/* an admin pinned the mode: hands off */
	_PHASE_MAX,
};

/* What to do when a flush fails (config OnFlushError=). */
enum on_flush_error {
	ON_FLUSH_ERROR_DISABLE_CACHE,	/* turn the write cache off, then drain */
	ON_FLUSH_ERROR_DRAIN,		/* drain, leave the cache alone */
	ON_FLUSH_ERROR_NONE,		/* none (ORDERED_NONE) */
	_ON_FLUSH_ERROR_MAX,
};

/* The explicit barrier device.c runs for a probe. */
enum probe_result {
	PROBE_IDLE,
	PROBE_RUNNING,
	PROBE_OK,
	PROBE_FAILED,
};

enum policy_action {
	ACTION_NONE,
	/*
	 * Turn the write cache off (which also makes the kernel's view
	 * agree), then call policy_decide() again with the result in
	 * cache_off_result.
	 */
	ACTION_CACHE_OFF,
	/* Run an explicit barrier in the background; report it in probe. */
	ACTION_PROBE,
};

struct policy_config {
	enum on_flush_error on_flush_error;
	usec_t holddown_usec;		/* no return to flush this long after a failure */
	usec_t holddown_max_usec;	/* the hold-down doubles per failure up to this */
};

/* What the policy remembers about a mapping between decisions. */
struct policy_state {
	enum policy_phase phase;
	uint64_t flush_errors_seen;	/* the target's counters at the last decision */
	uint64_t fallbacks_seen;
	usec_t holddown_until;
	usec_t healthy_since;
	unsigned int failures;		/* recent failures: the hold-down's exponent */
};

struct policy_input {
	usec_t now;
	bool pinned;
	enum dmb_mode mode;		/* the target's current mode */
	bool kernel_cache;		/* the kernel's view: write back */
	int drive_cache;		/* the drive's (IDENTIFY): 1, 0, or < 0 unknown */
	bool fua;			/* the disk takes FUA writes */
	uint64_t flush_errors;
	uint64_t fallbacks;
	uint32_t held;
	enum probe_result probe;
	int cache_off_result;		/* 1: not tried in this round; 0 done; < 0 errno */
};

struct policy_decision {
	struct policy_state next;
	bool set_mode;
	enum dmb_mode mode;
	enum policy_action action;
	bool flush_failed;	/* flush_errors grew: tell the world */
	int priority;		/* syslog priority of reason */
	const char *reason;	/* why, for the one log line of a change; NULL: nothing to say */
	usec_t wake_at;		/* decide again at this time (0: no need) */
};

void policy_state_init(struct policy_state *st);
void policy_config_init(struct policy_config *cfg);

/*
 * Decide.  Never fails: every input has an answer.  ret->next replaces
 * the caller's state once it has carried out the decision.
 */
void policy_decide(const struct policy_config *cfg, const struct policy_state *st,
		   const struct policy_input *in, struct policy_decision *ret);

/* The mode a healthy mapping runs in. */
enum dmb_mode policy_healthy_mode(bool fua);
/* The hold-down after the n-th failure in a row (n >= 1). */
usec_t policy_holddown(const struct policy_config *cfg, unsigned int failures);

const char *policy_phase_to_string(enum policy_phase phase);
const char *on_flush_error_to_string(enum on_flush_error e);
int on_flush_error_from_string(const char *s, enum on_flush_error *ret);

#endif
