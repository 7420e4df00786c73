// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * policy.c: the mode decision for one barrier mapping (policy.h).  The
 * rules, in the order they are tried:
 *
 *  1. Pinned: hands off; only failures are reported.
 *  2. A flush failed (flush_errors or fallbacks grew, barriers are held,
 *     or the probe failed): by default turn the write cache off, and once
 *     it is off, drain, which replays the held barriers; if it cannot be
 *     turned off, none.  A hold-down, doubling per failure, keeps the
 *     mapping off flush afterwards.
 *  3. The drive's cache is off but the kernel still says write back (the
 *     drive turned off while flushes were failing): correct the kernel.
 *  4. Cache off: drain.
 *  5. Cache on, within a hold-down: stay.  A broken mapping (the cache
 *     would not go off) stays in none until the cache is off or, on and
 *     past the hold-down, probes well.
 *  6. Cache on and trusted (healthy, or found in flush/fua): flush, or fua
 *     where the disk takes FUA.
 *  7. Cache on but not trusted: switch to flush and probe with an explicit
 *     barrier (never while barriers are held: it would queue behind them);
 *     healthy once it flushed.
 */
#include <string.h>
#include <syslog.h>

#include "policy.h"

/* Failures are counted up to here; the hold-down stops doubling earlier. */
#define FAILURES_MAX 32U

static const char *const phase_names[_PHASE_MAX] = {
	[PHASE_UNKNOWN] = "unknown",	 [PHASE_HEALTHY] = "healthy",
	[PHASE_WRITE_THROUGH] = "write-through", [PHASE_PROBING] = "probing",
	[PHASE_FAILING] = "failed",	 [PHASE_FAILED] = "failed",
	[PHASE_BROKEN] = "broken",	 [PHASE_PINNED] = "pinned",
};

static const char *const on_flush_error_names[_ON_FLUSH_ERROR_MAX] = {
	[ON_FLUSH_ERROR_DISABLE_CACHE] = "disable-cache",
	[ON_FLUSH_ERROR_DRAIN] = "drain",
	[ON_FLUSH_ERROR_NONE] = "none",
};

const char *policy_phase_to_string(enum policy_phase phase)
{
	return (unsigned int)phase < _PHASE_MAX ? phase_names[phase] : NULL;
}

const char *on_flush_error_to_string(enum on_flush_error e)
{
	return (unsigned int)e < _ON_FLUSH_ERROR_MAX ? on_flush_error_names[e] : NULL;
}

int on_flush_error_from_string(const char *s, enum on_flush_error *ret)
{
	for (unsigned int i = 0; s && i < _ON_FLUSH_ERROR_MAX; i++)
		if (!strcmp(s, on_flush_error_names[i])) {
			*ret = (enum on_flush_error)i;
			return 0;
		}
	return -EINVAL;
}

void policy_state_init(struct policy_state *st)
{
	*st = (struct policy_state){ .phase = PHASE_UNKNOWN };
}

void policy_config_init(struct policy_config *cfg)
{
	*cfg = (struct policy_config){
		.on_flush_error = ON_FLUSH_ERROR_DISABLE_CACHE,
		.holddown_usec = 30 * USEC_PER_SEC,
		.holddown_max_usec = 600 * USEC_PER_SEC,
	};
}

enum dmb_mode policy_healthy_mode(bool fua)
{
	return fua ? DMB_MODE_FUA : DMB_MODE_FLUSH;
}

usec_t policy_holddown(const struct policy_config *cfg, unsigned int failures)
{
	usec_t h = cfg->holddown_usec;

	for (unsigned int i = 1; i < failures && h < cfg->holddown_max_usec; i++)
		h = h > cfg->holddown_max_usec / 2 ? cfg->holddown_max_usec : h * 2;
	return MIN(h, cfg->holddown_max_usec);
}

/*
 * Ask for mode.  A mode message also replays held barriers, so it is sent
 * while barriers are held even when the mode is already right (the target
 * may have fallen back to that very mode itself).
 */
static void want_mode(struct policy_decision *d, const struct policy_input *in,
		      enum dmb_mode mode)
{
	d->mode = mode;
	d->set_mode = in->mode != mode || in->held > 0;
}

static void say(struct policy_decision *d, int priority, const char *reason)
{
	d->priority = priority;
	d->reason = reason;
}

static void enter_failed(const struct policy_config *cfg, const struct policy_input *in,
			 struct policy_decision *d, enum policy_phase phase, enum dmb_mode mode)
{
	d->next.phase = phase;
	d->next.holddown_until = in->now + policy_holddown(cfg, d->next.failures);
	want_mode(d, in, mode);
}

static void decide_failure(const struct policy_config *cfg, const struct policy_input *in,
			   bool any_on, struct policy_decision *d)
{
	d->next.failures = MIN(d->next.failures + 1, FAILURES_MAX);
	switch (cfg->on_flush_error) {
	case ON_FLUSH_ERROR_DISABLE_CACHE:
		if (any_on) {
			d->next.phase = PHASE_FAILING;
			d->action = ACTION_CACHE_OFF;
			say(d, LOG_ERR, "cache flush failed; turning the write cache off");
			return;
		}
		enter_failed(cfg, in, d, PHASE_FAILED, DMB_MODE_DRAIN);
		say(d, LOG_ERR, "cache flush failed with the write cache off; mode drain");
		return;
	case ON_FLUSH_ERROR_DRAIN:
		enter_failed(cfg, in, d, PHASE_FAILED, DMB_MODE_DRAIN);
		say(d, LOG_ERR,
		    "cache flush failed; mode drain with the write cache left on: writes stay ordered but are not durable");
		return;
	default:
		enter_failed(cfg, in, d, PHASE_BROKEN, DMB_MODE_NONE);
		say(d, LOG_CRIT, "cache flush failed; ordered writes disabled (mode none)");
		return;
	}
}

/* Second round after ACTION_CACHE_OFF: did the cache go off? */
static void decide_failing(const struct policy_config *cfg, const struct policy_input *in,
			   bool any_on, struct policy_decision *d)
{
	if (in->cache_off_result > 0) {
		/* Asked without the result: ask for the action again. */
		d->action = ACTION_CACHE_OFF;
		say(d, LOG_WARNING, "turning the write cache off (again)");
		return;
	}
	if (!any_on) {
		enter_failed(cfg, in, d, PHASE_FAILED, DMB_MODE_DRAIN);
		say(d, LOG_WARNING, "write cache turned off after the failed flush; mode drain");
		return;
	}
	enter_failed(cfg, in, d, PHASE_BROKEN, DMB_MODE_NONE);
	say(d, LOG_CRIT,
	    "cache flush failed and the write cache could not be turned off; ordered writes disabled (mode none)");
}

void policy_decide(const struct policy_config *cfg, const struct policy_state *st,
		   const struct policy_input *in, struct policy_decision *ret)
{
	struct policy_decision d = { .next = *st, .priority = LOG_INFO, .mode = in->mode };
	enum policy_phase phase = st->phase;
	bool reset, new_errors, new_fallback, failure, any_on, cache_on, kernel_stale;
	enum dmb_mode healthy = policy_healthy_mode(in->fua);

	/* A reset_stats moves the counters back: take them as the new base. */
	reset = in->flush_errors < st->flush_errors_seen || in->fallbacks < st->fallbacks_seen;
	new_errors = !reset && in->flush_errors > st->flush_errors_seen;
	new_fallback = !reset && in->fallbacks > st->fallbacks_seen;
	d.next.flush_errors_seen = in->flush_errors;
	d.next.fallbacks_seen = in->fallbacks;
	d.flush_failed = new_errors;

	if (in->pinned) {
		d.next.phase = PHASE_PINNED;
		if (phase != PHASE_PINNED)
			say(&d, LOG_NOTICE, "mode pinned; barrierd will not change it");
		else if (new_errors)
			say(&d, LOG_ERR, "cache flush failed; the mode is pinned, nothing changed");
		goto out;
	}
	if (phase == PHASE_PINNED)
		phase = d.next.phase = PHASE_UNKNOWN;

	/*
	 * The target flushes by the kernel's view; the drive's own answer,
	 * where it can be asked, says whether a volatile cache is there.
	 */
	any_on = in->kernel_cache || in->drive_cache > 0;
	cache_on = in->kernel_cache && in->drive_cache != 0;
	kernel_stale = in->kernel_cache && in->drive_cache == 0;

	if (phase == PHASE_FAILING) {
		decide_failing(cfg, in, any_on, &d);
		goto out;
	}

	failure = new_errors || new_fallback ||
		  (phase == PHASE_PROBING && in->probe == PROBE_FAILED) ||
		  (in->held > 0 && phase != PHASE_FAILED && phase != PHASE_BROKEN);
	if (failure) {
		decide_failure(cfg, in, any_on, &d);
		goto out;
	}

	/* A probe in flight decides; nothing else has changed. */
	if (in->probe == PROBE_RUNNING && phase == PHASE_PROBING)
		goto out;

	/*
	 * Broken (none after a failure).  Under disable-cache it ends as soon
	 * as the cache is off in both views (someone managed to switch it);
	 * otherwise only after the hold-down, and then only towards a state
	 * that is clear: off (drain) or on in both views (probe).  No
	 * retrying the switch at every tick.
	 */
	if (phase == PHASE_BROKEN &&
	    !(!any_on && cfg->on_flush_error == ON_FLUSH_ERROR_DISABLE_CACHE)) {
		if (in->now < st->holddown_until) {
			d.wake_at = st->holddown_until;
			goto out;
		}
		if (any_on && !cache_on)
			goto out;
	}

	if (kernel_stale) {
		if (in->cache_off_result > 0) {
			d.action = ACTION_CACHE_OFF;
			say(&d, LOG_NOTICE,
			    "the drive's write cache is off but the kernel still says write back; correcting the kernel");
			goto out;
		}
		cache_on = false;
	}

	if (!cache_on) {
		want_mode(&d, in, DMB_MODE_DRAIN);
		d.next.phase = (phase == PHASE_FAILED || phase == PHASE_BROKEN) ? PHASE_FAILED
										 : PHASE_WRITE_THROUGH;
		if (in->drive_cache > 0)
			say(&d, LOG_WARNING,
			    "the drive's write cache is on but the kernel treats the disk as write-through; mode drain: writes are ordered, not durable");
		else
			say(&d, LOG_NOTICE, "write cache off; mode drain");
		goto out;
	}

	if ((phase == PHASE_FAILED || phase == PHASE_BROKEN) && in->now < st->holddown_until) {
		d.wake_at = st->holddown_until;
		goto out;
	}

	if (phase == PHASE_PROBING && in->probe == PROBE_OK) {
		d.next.phase = PHASE_HEALTHY;
		d.next.healthy_since = in->now;
		want_mode(&d, in, healthy);
		say(&d, LOG_NOTICE, "the probe barrier flushed; write cache on and flushes work");
		goto out;
	}

	if (phase == PHASE_HEALTHY ||
	    (phase == PHASE_UNKNOWN && (in->mode == DMB_MODE_FLUSH || in->mode == DMB_MODE_FUA))) {
		if (phase != PHASE_HEALTHY)
			d.next.healthy_since = in->now;
		d.next.phase = PHASE_HEALTHY;
		want_mode(&d, in, healthy);
		if (phase != PHASE_HEALTHY || d.set_mode)
			say(&d, LOG_INFO, "write cache on; flushes work");
		/* Long enough without trouble: forget the failures. */
		if (d.next.failures && in->now - d.next.healthy_since >= cfg->holddown_max_usec)
			d.next.failures = 0;
		goto out;
	}

	if (in->held > 0 || in->probe == PROBE_RUNNING)
		goto out;
	d.next.phase = PHASE_PROBING;
	d.action = ACTION_PROBE;
	want_mode(&d, in, healthy);
	say(&d, LOG_NOTICE, "write cache on; probing the flush with an explicit barrier");
out:
	*ret = d;
}
