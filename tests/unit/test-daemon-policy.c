// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-daemon-policy.c: barrierd's mode decision (daemon/policy.c), without
 * a kernel.  Three layers:
 *  - the table: one row per case of the documented policy (cache on/off,
 *    flushes healthy/failed, FUA, pinned, probe states, kernel and drive
 *    disagreeing, hold-down), each with the exact decision expected;
 *  - sequences: the state carried from decision to decision through the
 *    stories barrierd lives (hdparm -W0/-W1, a failed flush survived, a
 *    cache that cannot be turned off, flapping);
 *  - invariants over every combination of inputs (276480): pinned
 *    means hands off, never flush after a failure, never a probe behind
 *    held barriers, never passthrough, a held barrier always gets a mode
 *    message (the replay), and a decision is stable when nothing changes.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>

#include <cmocka.h>

#include "policy.h"

#define S USEC_PER_SEC
#define NOW (1000 * S)
#define KEEP -1		/* expected: no mode message */

static struct policy_config cfg(void)
{
	struct policy_config c;

	policy_config_init(&c);
	c.holddown_usec = 30 * S;
	c.holddown_max_usec = 600 * S;
	return c;
}

/* A healthy IDE disk: cache on in both views, no FUA, flush mode. */
static struct policy_input healthy_in(void)
{
	return (struct policy_input){
		.now = NOW,
		.mode = DMB_MODE_FLUSH,
		.kernel_cache = true,
		.drive_cache = 1,
		.fua = false,
		.probe = PROBE_IDLE,
		.cache_off_result = 1,
	};
}

static struct policy_state state(enum policy_phase phase)
{
	struct policy_state st;

	policy_state_init(&st);
	st.phase = phase;
	return st;
}

struct row {
	const char *name;
	enum on_flush_error on_error;
	struct policy_state st;
	struct policy_input in;
	int mode;			/* expected mode message, or KEEP */
	enum policy_action action;
	enum policy_phase phase;
	bool flush_failed;
	bool wake;			/* a timed re-decision is asked for */
};

static void check_row(const struct row *r)
{
	struct policy_config c = cfg();
	struct policy_decision d;

	c.on_flush_error = r->on_error;
	policy_decide(&c, &r->st, &r->in, &d);
	if (r->mode == KEEP && d.set_mode)
		fail_msg("%s: set mode %s, want no mode message", r->name,
			 dmb_mode_to_string(d.mode));
	if (r->mode != KEEP && (!d.set_mode || (int)d.mode != r->mode))
		fail_msg("%s: mode message %s (%s), want %s", r->name, d.set_mode ? "yes" : "no",
			 dmb_mode_to_string(d.mode), dmb_mode_to_string((enum dmb_mode)r->mode));
	if (d.action != r->action)
		fail_msg("%s: action %d, want %d", r->name, d.action, r->action);
	if (d.next.phase != r->phase)
		fail_msg("%s: phase %s, want %s", r->name, policy_phase_to_string(d.next.phase),
			 policy_phase_to_string(r->phase));
	if (d.flush_failed != r->flush_failed)
		fail_msg("%s: flush_failed %d, want %d", r->name, d.flush_failed, r->flush_failed);
	if ((d.wake_at != 0) != r->wake)
		fail_msg("%s: wake_at %llu, want %s", r->name, (unsigned long long)d.wake_at,
			 r->wake ? "set" : "none");
	/* A decision that changes something says why. */
	if ((d.set_mode || d.action != ACTION_NONE || d.next.phase != r->st.phase) && !d.reason)
		fail_msg("%s: a change without a reason", r->name);
}

/* Build rows from a base and a few changes, C99-style. */
#define IN(...) ({ struct policy_input _i = healthy_in(); \
	struct policy_input *in __attribute__((unused)) = &_i; __VA_ARGS__; _i; })
#define ST(p, ...) ({ struct policy_state _s = state(p); \
	struct policy_state *st __attribute__((unused)) = &_s; __VA_ARGS__; _s; })

/* Rows leave the trailing flags out when they are false. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
static void test_table(void **unused)
{
	const struct row rows[] = {
		/* ---- cache on, flushes healthy */
		{ "adopted in flush, cache on", 0, ST(PHASE_UNKNOWN), IN(), KEEP, ACTION_NONE,
		  PHASE_HEALTHY },
		{ "adopted in fua, cache on, FUA", 0, ST(PHASE_UNKNOWN), IN(in->fua = true; in->mode = DMB_MODE_FUA),
		  KEEP, ACTION_NONE, PHASE_HEALTHY },
		{ "adopted in flush on a FUA disk: fua", 0, ST(PHASE_UNKNOWN), IN(in->fua = true),
		  DMB_MODE_FUA, ACTION_NONE, PHASE_HEALTHY },
		{ "healthy, FUA gone: flush", 0, ST(PHASE_HEALTHY), IN(in->mode = DMB_MODE_FUA),
		  DMB_MODE_FLUSH, ACTION_NONE, PHASE_HEALTHY },
		{ "healthy stays", 0, ST(PHASE_HEALTHY), IN(), KEEP, ACTION_NONE, PHASE_HEALTHY },
		{ "healthy, mode changed behind us: back", 0, ST(PHASE_HEALTHY),
		  IN(in->mode = DMB_MODE_PASSTHROUGH), DMB_MODE_FLUSH, ACTION_NONE, PHASE_HEALTHY },
		{ "drive unknown (not ATA), kernel write back", 0, ST(PHASE_UNKNOWN),
		  IN(in->drive_cache = -ENOTTY), KEEP, ACTION_NONE, PHASE_HEALTHY },
		/* ---- cache on, not trusted: probe */
		{ "adopted in drain, cache on: probe", 0, ST(PHASE_UNKNOWN), IN(in->mode = DMB_MODE_DRAIN),
		  DMB_MODE_FLUSH, ACTION_PROBE, PHASE_PROBING },
		{ "adopted in none, cache on: probe", 0, ST(PHASE_UNKNOWN), IN(in->mode = DMB_MODE_NONE),
		  DMB_MODE_FLUSH, ACTION_PROBE, PHASE_PROBING },
		{ "adopted in passthrough: probe", 0, ST(PHASE_UNKNOWN),
		  IN(in->mode = DMB_MODE_PASSTHROUGH), DMB_MODE_FLUSH, ACTION_PROBE, PHASE_PROBING },
		{ "write-through, cache back on: probe", 0, ST(PHASE_WRITE_THROUGH),
		  IN(in->mode = DMB_MODE_DRAIN), DMB_MODE_FLUSH, ACTION_PROBE, PHASE_PROBING },
		{ "probe with FUA: fua", 0, ST(PHASE_WRITE_THROUGH),
		  IN(in->mode = DMB_MODE_DRAIN; in->fua = true), DMB_MODE_FUA, ACTION_PROBE, PHASE_PROBING },
		{ "probe running: wait", 0, ST(PHASE_PROBING), IN(in->probe = PROBE_RUNNING), KEEP,
		  ACTION_NONE, PHASE_PROBING },
		{ "probe ok: healthy", 0, ST(PHASE_PROBING), IN(in->probe = PROBE_OK), KEEP, ACTION_NONE,
		  PHASE_HEALTHY },
		{ "probe result lost: probe again", 0, ST(PHASE_PROBING), IN(), KEEP, ACTION_PROBE,
		  PHASE_PROBING },
		{ "probe failed: failure, cache off", 0, ST(PHASE_PROBING), IN(in->probe = PROBE_FAILED),
		  KEEP, ACTION_CACHE_OFF, PHASE_FAILING },
		{ "a Barrier() child running: no probe on top", 0, ST(PHASE_WRITE_THROUGH),
		  IN(in->mode = DMB_MODE_DRAIN; in->probe = PROBE_RUNNING), KEEP, ACTION_NONE,
		  PHASE_WRITE_THROUGH },
		{ "probe ok but no longer probing: ignored", 0, ST(PHASE_WRITE_THROUGH),
		  IN(in->mode = DMB_MODE_DRAIN; in->probe = PROBE_OK), DMB_MODE_FLUSH, ACTION_PROBE,
		  PHASE_PROBING },
		/* ---- cache off */
		{ "cache off in both views: drain", 0, ST(PHASE_HEALTHY),
		  IN(in->kernel_cache = false; in->drive_cache = 0), DMB_MODE_DRAIN, ACTION_NONE,
		  PHASE_WRITE_THROUGH },
		{ "cache off, not ATA: drain", 0, ST(PHASE_UNKNOWN),
		  IN(in->kernel_cache = false; in->drive_cache = -ENOTTY), DMB_MODE_DRAIN, ACTION_NONE,
		  PHASE_WRITE_THROUGH },
		{ "write-through stays", 0, ST(PHASE_WRITE_THROUGH),
		  IN(in->kernel_cache = false; in->drive_cache = 0; in->mode = DMB_MODE_DRAIN), KEEP,
		  ACTION_NONE, PHASE_WRITE_THROUGH },
		{ "drive off, kernel write back: correct the kernel", 0, ST(PHASE_HEALTHY),
		  IN(in->drive_cache = 0), KEEP, ACTION_CACHE_OFF, PHASE_HEALTHY },
		{ "drive off, kernel stuck after a failed fix: drain", 0, ST(PHASE_HEALTHY),
		  IN(in->drive_cache = 0; in->cache_off_result = -EIO), DMB_MODE_DRAIN, ACTION_NONE,
		  PHASE_WRITE_THROUGH },
		{ "drive on, kernel write through: drain, warned", 0, ST(PHASE_HEALTHY),
		  IN(in->kernel_cache = false), DMB_MODE_DRAIN, ACTION_NONE, PHASE_WRITE_THROUGH },
		/* ---- a flush failed */
		{ "flush failed, cache on: turn it off", 0, ST(PHASE_HEALTHY), IN(in->flush_errors = 1),
		  KEEP, ACTION_CACHE_OFF, PHASE_FAILING, true },
		{ "fallback seen (kernel went to none): turn it off", 0, ST(PHASE_HEALTHY),
		  IN(in->fallbacks = 1; in->mode = DMB_MODE_NONE), KEEP, ACTION_CACHE_OFF, PHASE_FAILING },
		{ "barriers held at adoption: failure", 0, ST(PHASE_UNKNOWN), IN(in->held = 2), KEEP,
		  ACTION_CACHE_OFF, PHASE_FAILING },
		{ "cache turned off: drain, replay", 0, ST(PHASE_FAILING),
		  IN(in->kernel_cache = false; in->drive_cache = 0; in->held = 1; in->cache_off_result = 0;
		     in->mode = DMB_MODE_DRAIN),
		  DMB_MODE_DRAIN, ACTION_NONE, PHASE_FAILED, false, false },
		{ "cache would not go off: none", 0, ST(PHASE_FAILING), IN(in->cache_off_result = -EIO),
		  DMB_MODE_NONE, ACTION_NONE, PHASE_BROKEN },
		{ "not ATA, cannot switch: none", 0, ST(PHASE_FAILING),
		  IN(in->drive_cache = -ENOTTY; in->cache_off_result = -ENOTTY), DMB_MODE_NONE,
		  ACTION_NONE, PHASE_BROKEN },
		{ "drive said done but is still on: none", 0, ST(PHASE_FAILING),
		  IN(in->cache_off_result = 0), DMB_MODE_NONE, ACTION_NONE, PHASE_BROKEN },
		{ "failing without a result: ask again", 0, ST(PHASE_FAILING), IN(), KEEP,
		  ACTION_CACHE_OFF, PHASE_FAILING },
		{ "failed with the cache already off: drain", 0, ST(PHASE_WRITE_THROUGH),
		  IN(in->kernel_cache = false; in->drive_cache = 0; in->flush_errors = 3),
		  DMB_MODE_DRAIN, ACTION_NONE, PHASE_FAILED, true },
		{ "OnFlushError=drain: drain, cache left on", ON_FLUSH_ERROR_DRAIN, ST(PHASE_HEALTHY),
		  IN(in->flush_errors = 1), DMB_MODE_DRAIN, ACTION_NONE, PHASE_FAILED, true },
		{ "OnFlushError=none: none", ON_FLUSH_ERROR_NONE, ST(PHASE_HEALTHY),
		  IN(in->flush_errors = 1), DMB_MODE_NONE, ACTION_NONE, PHASE_BROKEN, true },
		{ "held while failed, mode already drain: mode message (replay)", 0, ST(PHASE_FAILED,
		  st->holddown_until = NOW + S),
		  IN(in->kernel_cache = false; in->drive_cache = 0; in->held = 1; in->mode = DMB_MODE_DRAIN),
		  DMB_MODE_DRAIN, ACTION_NONE, PHASE_FAILED },
		/* ---- hysteresis */
		{ "failed, cache back on within the hold-down: stay", 0,
		  ST(PHASE_FAILED, st->holddown_until = NOW + 10 * S), IN(in->mode = DMB_MODE_DRAIN), KEEP,
		  ACTION_NONE, PHASE_FAILED, false, true },
		{ "failed, hold-down over: probe", 0, ST(PHASE_FAILED, st->holddown_until = NOW),
		  IN(in->mode = DMB_MODE_DRAIN), DMB_MODE_FLUSH, ACTION_PROBE, PHASE_PROBING },
		{ "broken, within the hold-down: stay none", 0,
		  ST(PHASE_BROKEN, st->holddown_until = NOW + S), IN(in->mode = DMB_MODE_NONE), KEEP,
		  ACTION_NONE, PHASE_BROKEN, false, true },
		{ "broken, cache turned off by hand: drain", 0,
		  ST(PHASE_BROKEN, st->holddown_until = NOW + S),
		  IN(in->mode = DMB_MODE_NONE; in->kernel_cache = false; in->drive_cache = 0),
		  DMB_MODE_DRAIN, ACTION_NONE, PHASE_FAILED },
		{ "broken, hold-down over: probe", 0, ST(PHASE_BROKEN, st->holddown_until = NOW - 1),
		  IN(in->mode = DMB_MODE_NONE), DMB_MODE_FLUSH, ACTION_PROBE, PHASE_PROBING },
		{ "failed, held barriers, cache on: no probe behind them", 0,
		  ST(PHASE_FAILED, st->holddown_until = NOW - 1), IN(in->mode = DMB_MODE_DRAIN; in->held = 1),
		  KEEP, ACTION_NONE, PHASE_FAILED },
		/* ---- counters */
		{ "counters reset (reset_stats): no failure", 0,
		  ST(PHASE_HEALTHY, st->flush_errors_seen = 5; st->fallbacks_seen = 2), IN(), KEEP,
		  ACTION_NONE, PHASE_HEALTHY },
		{ "old failures already seen: no failure", 0,
		  ST(PHASE_HEALTHY, st->flush_errors_seen = 5), IN(in->flush_errors = 5), KEEP,
		  ACTION_NONE, PHASE_HEALTHY },
		/* ---- pinned */
		{ "pinned drain, cache on: untouched", 0, ST(PHASE_UNKNOWN),
		  IN(in->pinned = true; in->mode = DMB_MODE_DRAIN), KEEP, ACTION_NONE, PHASE_PINNED },
		{ "pinned, flush failed: reported, untouched", 0, ST(PHASE_PINNED),
		  IN(in->pinned = true; in->flush_errors = 1; in->held = 1), KEEP, ACTION_NONE,
		  PHASE_PINNED, true },
		{ "pinned, cache off: untouched", 0, ST(PHASE_PINNED),
		  IN(in->pinned = true; in->kernel_cache = false; in->drive_cache = 0), KEEP, ACTION_NONE,
		  PHASE_PINNED },
		{ "pinned, kernel stale: untouched", 0, ST(PHASE_PINNED),
		  IN(in->pinned = true; in->drive_cache = 0), KEEP, ACTION_NONE, PHASE_PINNED },
		{ "unpinned in passthrough: probe", 0, ST(PHASE_PINNED),
		  IN(in->mode = DMB_MODE_PASSTHROUGH), DMB_MODE_FLUSH, ACTION_PROBE, PHASE_PROBING },
		{ "unpinned in flush: healthy", 0, ST(PHASE_PINNED), IN(), KEEP, ACTION_NONE,
		  PHASE_HEALTHY },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		check_row(&rows[i]);
}
#pragma GCC diagnostic pop

/* ------------------------------------------------------------ sequences */

struct world {
	struct policy_config cfg;
	struct policy_state st;
	struct policy_input in;
	bool cache_switchable;
	unsigned int mode_messages;
	unsigned int cache_offs;
	unsigned int probes;
};

/* The kernel's side of a mode message: the target replays held barriers. */
static void world_set_mode(struct world *w, enum dmb_mode mode)
{
	w->in.mode = mode;
	w->in.held = 0;
	w->mode_messages++;
}

/* One evaluation as device.c runs it: decide, act, decide on the result. */
static struct policy_decision step(struct world *w)
{
	struct policy_decision d;

	w->in.cache_off_result = 1;
	for (int round = 0; round < 4; round++) {
		policy_decide(&w->cfg, &w->st, &w->in, &d);
		w->st = d.next;
		if (w->in.probe == PROBE_OK || w->in.probe == PROBE_FAILED)
			w->in.probe = PROBE_IDLE;
		if (d.set_mode)
			world_set_mode(w, d.mode);
		if (d.action == ACTION_CACHE_OFF) {
			w->cache_offs++;
			if (w->cache_switchable) {
				w->in.drive_cache = 0;
				w->in.kernel_cache = false;
				w->in.cache_off_result = 0;
			} else {
				w->in.cache_off_result = -EIO;
			}
			continue;
		}
		if (d.action == ACTION_PROBE) {
			w->probes++;
			w->in.probe = PROBE_RUNNING;
		}
		break;
	}
	return d;
}

static struct world world(void)
{
	struct world w = { .cfg = cfg(), .in = healthy_in(), .cache_switchable = true };

	policy_state_init(&w.st);
	return w;
}

/* hdparm -W0, then -W1: drain, then back to flush only after the probe. */
static void test_seq_hdparm(void **unused)
{
	struct world w = world();

	step(&w);
	assert_int_equal(w.st.phase, PHASE_HEALTHY);
	assert_int_equal(w.mode_messages, 0);

	w.in.kernel_cache = false;
	w.in.drive_cache = 0;
	step(&w);
	assert_int_equal(w.in.mode, DMB_MODE_DRAIN);
	assert_int_equal(w.st.phase, PHASE_WRITE_THROUGH);

	w.in.kernel_cache = true;
	w.in.drive_cache = 1;
	step(&w);
	assert_int_equal(w.st.phase, PHASE_PROBING);
	assert_int_equal(w.probes, 1);
	assert_int_equal(w.in.mode, DMB_MODE_FLUSH);	/* the probe needs flush to flush */
	step(&w);					/* still running */
	assert_int_equal(w.probes, 1);
	w.in.probe = PROBE_OK;
	step(&w);
	assert_int_equal(w.st.phase, PHASE_HEALTHY);
	assert_int_equal(w.in.mode, DMB_MODE_FLUSH);
	assert_int_equal(w.cache_offs, 0);
	/* Nothing changes: nothing happens. */
	w.mode_messages = 0;
	for (int i = 0; i < 10; i++)
		step(&w);
	assert_int_equal(w.mode_messages, 0);
}

/* A failed flush while barriers are held: cache off, drain, replay, hold-down. */
static void test_seq_flush_failure(void **unused)
{
	struct world w = world();
	struct policy_decision d;

	step(&w);
	w.in.flush_errors = 1;
	w.in.fallbacks = 1;
	w.in.mode = DMB_MODE_DRAIN;	/* the target's own fallback:drain */
	w.in.held = 2;
	d = step(&w);
	assert_int_equal(w.cache_offs, 1);
	assert_int_equal(w.st.phase, PHASE_FAILED);
	assert_int_equal(w.in.mode, DMB_MODE_DRAIN);
	assert_int_equal(w.mode_messages, 1);	/* sent although already drain: the replay */
	assert_int_equal(w.in.held, 0);
	assert_int_equal(w.st.holddown_until, NOW + 30 * S);
	(void)d;

	/* The admin turns the cache back on at once: no flush before the hold-down ends. */
	w.in.kernel_cache = true;
	w.in.drive_cache = 1;
	w.in.now = NOW + 29 * S;
	d = step(&w);
	assert_int_equal(w.st.phase, PHASE_FAILED);
	assert_int_equal(w.probes, 0);
	assert_int_equal(d.wake_at, NOW + 30 * S);

	w.in.now = NOW + 30 * S;
	step(&w);
	assert_int_equal(w.probes, 1);
	assert_int_equal(w.in.mode, DMB_MODE_FLUSH);

	/* The probe's flush fails too: the second hold-down is twice as long. */
	w.in.flush_errors = 2;
	w.in.probe = PROBE_FAILED;
	w.in.mode = DMB_MODE_DRAIN;
	step(&w);
	assert_int_equal(w.cache_offs, 2);
	assert_int_equal(w.st.phase, PHASE_FAILED);
	assert_int_equal(w.st.failures, 2);
	assert_int_equal(w.st.holddown_until, NOW + 30 * S + 60 * S);
}

/* Flapping: every failure doubles the hold-down up to the maximum; a long
 * healthy stretch forgets them. */
static void test_seq_flapping(void **unused)
{
	struct world w = world();
	usec_t last = 0;

	step(&w);
	for (unsigned int k = 1; k <= 8; k++) {
		w.in.flush_errors++;
		step(&w);
		assert_int_equal(w.st.phase, PHASE_FAILED);
		last = w.st.holddown_until - w.in.now;
		assert_int_equal(last, MIN((30 * S) << (k - 1), 600 * S));
		/* cache back on; the hold-down passes; the probe succeeds */
		w.in.kernel_cache = true;
		w.in.drive_cache = 1;
		w.in.now = w.st.holddown_until;
		step(&w);
		assert_int_equal(w.st.phase, PHASE_PROBING);
		w.in.probe = PROBE_OK;
		step(&w);
		assert_int_equal(w.st.phase, PHASE_HEALTHY);
	}
	assert_int_equal(last, 600 * S);
	w.in.now += 600 * S;
	step(&w);
	assert_int_equal(w.st.failures, 0);
	w.in.flush_errors++;
	step(&w);
	assert_int_equal(w.st.holddown_until - w.in.now, 30 * S);
}

/* A cache that cannot be turned off: none, loudly, then recovery by hand. */
static void test_seq_broken(void **unused)
{
	struct world w = world();
	struct policy_decision d;

	w.cache_switchable = false;
	step(&w);
	w.in.flush_errors = 1;
	w.in.held = 1;
	d = step(&w);
	assert_int_equal(w.st.phase, PHASE_BROKEN);
	assert_int_equal(w.in.mode, DMB_MODE_NONE);
	assert_int_equal(d.priority, LOG_CRIT);
	assert_non_null(d.reason);
	/* The admin turns it off with another tool: drain, and it stays "failed". */
	w.in.kernel_cache = false;
	w.in.drive_cache = 0;
	step(&w);
	assert_int_equal(w.in.mode, DMB_MODE_DRAIN);
	assert_int_equal(w.st.phase, PHASE_FAILED);
}

/* A pin stops everything; the unpin starts from scratch. */
static void test_seq_pin(void **unused)
{
	struct world w = world();

	step(&w);
	w.in.pinned = true;
	w.in.mode = DMB_MODE_PASSTHROUGH;
	w.in.flush_errors = 1;
	w.in.kernel_cache = false;
	w.in.drive_cache = 0;
	w.mode_messages = 0;
	step(&w);
	step(&w);
	assert_int_equal(w.mode_messages, 0);
	assert_int_equal(w.cache_offs, 0);
	assert_int_equal(w.st.phase, PHASE_PINNED);
	w.in.pinned = false;
	step(&w);
	assert_int_equal(w.in.mode, DMB_MODE_DRAIN);
	assert_int_equal(w.st.phase, PHASE_WRITE_THROUGH);
}

/* ------------------------------------------------------------ invariants */

static void test_invariants(void **unused)
{
	static const int drives[] = { -ENOTTY, 0, 1 };
	static const int offs[] = { 1, 0, -EIO };
	unsigned long n = 0;

	for (int oe = 0; oe < _ON_FLUSH_ERROR_MAX; oe++)
	for (int ph = 0; ph < _PHASE_MAX; ph++)
	for (int mode = 0; mode < _DMB_MODE_MAX; mode++)
	for (int kc = 0; kc < 2; kc++)
	for (size_t dc = 0; dc < 3; dc++)
	for (int fua = 0; fua < 2; fua++)
	for (int pin = 0; pin < 2; pin++)
	for (int probe = 0; probe < 4; probe++)
	for (int err = 0; err < 2; err++)
	for (int held = 0; held < 2; held++)
	for (int hd = 0; hd < 2; hd++)
	for (size_t co = 0; co < 3; co++) {
		struct policy_config c = cfg();
		struct policy_state st = state((enum policy_phase)ph);
		struct policy_input in = {
			.now = NOW, .pinned = pin, .mode = (enum dmb_mode)mode, .kernel_cache = kc,
			.drive_cache = drives[dc], .fua = fua, .flush_errors = 10 + err,
			.fallbacks = 0, .held = held, .probe = (enum probe_result)probe,
			.cache_off_result = offs[co],
		};
		struct policy_decision d, again;
		bool failure;

		c.on_flush_error = (enum on_flush_error)oe;
		st.flush_errors_seen = 10;
		st.holddown_until = hd ? NOW + S : 0;
		policy_decide(&c, &st, &in, &d);
		n++;
		failure = err || (held && ph != PHASE_FAILED && ph != PHASE_BROKEN) ||
			  (ph == PHASE_PROBING && probe == PROBE_FAILED);

		if (pin) {
			assert_false(d.set_mode);
			assert_int_equal(d.action, ACTION_NONE);
			assert_int_equal(d.next.phase, PHASE_PINNED);
			assert_int_equal(d.flush_failed, err);
			continue;
		}
		assert_int_not_equal(d.next.phase, PHASE_PINNED);
		/* Never passthrough; flush/fua only with a cache and no failure. */
		if (d.set_mode) {
			assert_int_not_equal(d.mode, DMB_MODE_PASSTHROUGH);
			if (d.mode == DMB_MODE_FLUSH || d.mode == DMB_MODE_FUA) {
				assert_false(failure);
				assert_true(kc && drives[dc] != 0);
				assert_true(ph != PHASE_FAILING);
			}
		}
		/* A fresh failure never leaves the mapping heading for flush. */
		if (failure && ph != PHASE_FAILING)
			assert_true(d.action == ACTION_CACHE_OFF ||
				    d.mode == DMB_MODE_DRAIN || d.mode == DMB_MODE_NONE);
		/* Held barriers: any mode decision is sent, so they replay. */
		if (held && d.mode != in.mode)
			assert_true(d.set_mode || d.action != ACTION_NONE);
		if (held && !d.set_mode && d.action == ACTION_NONE)
			assert_true(ph == PHASE_FAILED || ph == PHASE_BROKEN || ph == PHASE_PROBING);
		/* No probe behind held barriers or on top of another one. */
		if (d.action == ACTION_PROBE) {
			assert_int_equal(held, 0);
			assert_int_not_equal(probe, PROBE_RUNNING);
			assert_int_equal(d.next.phase, PHASE_PROBING);
		}
		/* The cache is only switched under disable-cache or to fix the kernel. */
		if (d.action == ACTION_CACHE_OFF)
			assert_true(oe == ON_FLUSH_ERROR_DISABLE_CACHE || (kc && drives[dc] == 0) ||
				    ph == PHASE_FAILING);
		if (d.flush_failed)
			assert_true(err);
		/* Stable: once carried out, the same world gives no new action. */
		if (!d.set_mode && d.action == ACTION_NONE && !held) {
			struct policy_input in2 = in;

			in2.probe = probe == PROBE_RUNNING ? PROBE_RUNNING : PROBE_IDLE;
			policy_decide(&c, &d.next, &in2, &again);
			assert_false(again.flush_failed);
			if (again.set_mode)
				fail_msg("unstable: oe %d phase %s -> %s mode %s kc %d dc %d fua %d probe %d err %d hd %d co %d -> again %s",
					 oe, policy_phase_to_string(ph), policy_phase_to_string(d.next.phase),
					 dmb_mode_to_string(mode), kc, drives[dc], fua, probe, err, hd, offs[co],
					 dmb_mode_to_string(again.mode));
			assert_int_equal(again.next.phase, d.next.phase);
		}
	}
	assert_int_equal(n, 276480);
}

static void test_holddown(void **unused)
{
	struct policy_config c = cfg();

	assert_int_equal(policy_holddown(&c, 1), 30 * S);
	assert_int_equal(policy_holddown(&c, 2), 60 * S);
	assert_int_equal(policy_holddown(&c, 5), 480 * S);
	assert_int_equal(policy_holddown(&c, 6), 600 * S);
	assert_int_equal(policy_holddown(&c, 32), 600 * S);
	c.holddown_usec = 0;
	assert_int_equal(policy_holddown(&c, 3), 0);
	c.holddown_usec = 700 * S;
	assert_int_equal(policy_holddown(&c, 1), 600 * S);
}

static void test_names(void **unused)
{
	enum on_flush_error e;

	for (int i = 0; i < _PHASE_MAX; i++)
		assert_non_null(policy_phase_to_string((enum policy_phase)i));
	assert_null(policy_phase_to_string(_PHASE_MAX));
	assert_string_equal(policy_phase_to_string(PHASE_FAILING), "failed");
	for (int i = 0; i < _ON_FLUSH_ERROR_MAX; i++) {
		assert_int_equal(on_flush_error_from_string(on_flush_error_to_string(i), &e), 0);
		assert_int_equal(e, i);
	}
	e = ON_FLUSH_ERROR_NONE;
	assert_int_equal(on_flush_error_from_string("Disable-Cache", &e), -EINVAL);
	assert_int_equal(on_flush_error_from_string("", &e), -EINVAL);
	assert_int_equal(on_flush_error_from_string(NULL, &e), -EINVAL);
	assert_int_equal(e, ON_FLUSH_ERROR_NONE);
	assert_int_equal(policy_healthy_mode(true), DMB_MODE_FUA);
	assert_int_equal(policy_healthy_mode(false), DMB_MODE_FLUSH);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_seq_hdparm),
		cmocka_unit_test(test_seq_flush_failure),
		cmocka_unit_test(test_seq_flapping),
		cmocka_unit_test(test_seq_broken),
		cmocka_unit_test(test_seq_pin),
		cmocka_unit_test(test_invariants),
		cmocka_unit_test(test_holddown),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
