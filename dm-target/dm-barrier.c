// SPDX-License-Identifier: GPL-2.0
/*
 * dm-barrier: the 2003 write-barrier contract as a device-mapper target.
 *
 * A barrier is a write bio carrying REQ_PREFLUSH (dm core hands these over
 * as an empty flush, then the data part) or REQ_FUA.  Every bio accepted
 * before a barrier completes before the barrier's first command reaches the
 * device; no bio accepted after it is issued before it completes; it
 * succeeds only when its data and everything before it are on stable media
 * as far as the mode promises.  In "flush" mode a barrier is run as one
 * transaction nothing else enters: drain, pre-flush, write, post-flush.
 *
 * Bios flow straight through map() until a barrier arrives.  From then on
 * every bio is queued in arrival order, and a worker runs the queue:
 * non-barrier bios are issued, a barrier is a transaction run after the
 * device has drained.  When the queue empties the fast path resumes.  The
 * fast path takes no lock and writes only per-CPU counters (see "the gate").
 *
 * Copyright (C) 2026 The dm-barrier authors.
 */

#include <linux/module.h>
#include <linux/init.h>
#include <linux/ctype.h>
#include <linux/blkdev.h>
#include <linux/bio.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <linux/wait.h>
#include <linux/ktime.h>
#include <linux/percpu.h>
#include <linux/device-mapper.h>

#include "dm-barrier-compat.h"

#define DM_MSG_PREFIX "barrier"

/* See barrier_map_direct(); off, every barrier goes through the worker. */
static bool dmb_direct = true;
module_param_named(direct, dmb_direct, bool, 0644);
MODULE_PARM_DESC(direct, "Issue a barrier that finds the target idle straight to the backing queue's flush sequence (default: on; off: always through the worker)");

/*
 * Race windows a review named, by where they are.  In the test-only build
 * (DMB_TEST_WINDOWS=y, tests/guest/target-durable.sh) dmb_window() widens
 * the ones set in the window_points mask by a busy wait of window_us, so
 * that a test under TCG meets them; in every other build it is nothing.
 */
enum dmb_window {
	WIN_GATE,	/* a write counted itself, before it reads the gate */
	WIN_SNAPSHOT,	/* a barrier proved the drain, before it decides */
	WIN_ENDIO,	/* a direct barrier's completion, before it kicks */
	WIN_KICK,	/* ... and kick the worker there (a stray run) */
	WIN_RETURN,	/* ... done with it, before dm core completes it */
	WIN_NR
};

#ifdef DMB_TEST_WINDOWS
#include <linux/delay.h>

static unsigned long dmb_window_points;
module_param_named(window_points, dmb_window_points, ulong, 0644);
MODULE_PARM_DESC(window_points, "Test build: mask of points to widen (1 gate, 2 snapshot, 4 endio, 8 kick at endio, 16 endio's return)");
static unsigned int dmb_window_us[WIN_NR];
module_param_array_named(window_us, dmb_window_us, uint, NULL, 0644);
MODULE_PARM_DESC(window_us, "Test build: microseconds to wait at each point (gate,snapshot,endio,-,return)");

static bool dmb_window(enum dmb_window point)
{
	unsigned int us = READ_ONCE(dmb_window_us[point]);

	if (!(READ_ONCE(dmb_window_points) & BIT(point)))
		return false;
	mdelay(us / 1000);
	udelay(us % 1000);
	return true;
}
#else
static inline bool dmb_window(enum dmb_window point)
{
	return false;
}
#endif

/*
 * A hold keeps a journal's writer in D state: half of the default
 * hung_task_timeout (120 s), so a hold never reads as a hung task.
 */
#define BARRIER_MAX_HOLD_MS 60000U
/*
 * Writes queued behind a hold before it ends early (memory is not free).
 * Reads are not counted: a reader waits for its read, so a busy mapping's
 * readers queue a bounded number, and counting them ended holds in under
 * a second.  Writes are what a writer can pile up without waiting.
 */
#define BARRIER_MAX_HELD_WRITES 4096U
/* Data parts whose pre-flush failed and that dm core has yet to send. */
#define BARRIER_MAX_DEBTS 64U

enum barrier_mode {
	MODE_FLUSH,
	MODE_FUA,
	MODE_DRAIN,
	MODE_PASSTHROUGH,
	MODE_NONE,
	MODE_NR
};

static const char * const mode_names[MODE_NR] = {
	[MODE_FLUSH] = "flush",
	[MODE_FUA] = "fua",
	[MODE_DRAIN] = "drain",
	[MODE_PASSTHROUGH] = "passthrough",
	[MODE_NONE] = "none",
};

/* The counters of `dmsetup status`, in their documented order. */
struct barrier_stats {
	u64 barriers;		/* barrier bios accepted */
	u64 flushes;		/* cache flushes issued to the device */
	u64 fua_writes;		/* FUA writes issued to the device */
	u64 flush_errors;	/* flushes or FUA writes that failed */
	u64 fallbacks;		/* mode switches caused by a failed flush */
	u64 max_drain_ns;	/* longest wait for the device to drain */
	u64 shared;		/* barriers answered by another barrier's flush */
	u64 no_cache;		/* flush/fua barriers run as drain: no write cache */
	u64 refused;		/* barriers failed with EOPNOTSUPP (mode none) */
	u64 replayed;		/* held barriers replayed after a mode change */
	u64 cache_changes;	/* backing write-cache flag seen to change */
};

/*
 * dm core splits a write carrying REQ_PREFLUSH and data into an empty
 * flush and, once that has completed, the data part without REQ_PREFLUSH;
 * it drops the flush's error and sends the data anyway.  The flush it
 * hands the (first) target is a clone of the original bio with its size
 * set to 0: it still points at the original's bio_vec, and so does the
 * data part.  When such a flush fails (or is refused), the bio_vec is the
 * debt, and the data part that points at it fails the same way: the debt
 * belongs to the bio that owes it, and nobody else pays it.
 *
 * The bio_vec alone is the key, not the sector too: a dm device stacked
 * on the mapping splits its own commits the same way, and its clones keep
 * the original's bio_vec all the way down, but not its sector.  An LV on
 * the mapping as PV sends its flush with the LV's sector (6.11's
 * flush_bypasses_map skips linear_map()) or, with two segments, through
 * its first target only (6.1), and the data part with the PV's (review
 * finding N3: the commit succeeded).  Stacks that write the data from
 * buffers of their own (dm-crypt) or send flushes of their own (md) keep
 * no bio_vec to match: docs/dm-barrier.rst says what holds there.  The
 * sector is kept to hand a debt to the right target after a reload.
 */
struct barrier_debt {
	struct bio_vec *vec;
	sector_t sector;
	blk_status_t status;
};

/*
 * A suspend ends the table's I/O, but not its debts: dm core holds the
 * data part of a flush that completed during the suspend until the resume,
 * and then hands it to whatever table is live, a reloaded one included.
 * postsuspend parks the debts under the mapped device; the next table of
 * that device to resume takes them (barrier_park_debts(), _adopt_debts()).
 * Each target brings its own parking space, so a suspend never allocates.
 */
struct barrier_parked {
	struct list_head list;		/* on dmb_parked while parked */
	struct mapped_device *md;
	unsigned int nr;
	struct barrier_debt debts[BARRIER_MAX_DEBTS];
};

static LIST_HEAD(dmb_parked);
static DEFINE_MUTEX(dmb_parked_lock);

/*
 * A hold: barriers whose flush failed wait at the head of the queue for a
 * mode message (barrierd's answer), up to hold_on_flush_error.  The
 * transitions, all under bc->lock, are barrier_set_hold()'s table.
 */
enum barrier_hold {
	HOLD_NONE,	/* no hold */
	HOLD_WAITING,	/* barrier_hold_locked(): held, waiting */
	HOLD_EXPIRED,	/* timer, write bound or presuspend: they fail */
	HOLD_REPLAY,	/* a mode message: they run again in the new mode */
	HOLD_NR
};

/* Where the table is in a suspend (dm core's calls, in their order). */
enum barrier_run {
	RUN_ACTIVE,	/* resumed (or new): I/O flows, holds allowed */
	RUN_SUSPENDING,	/* presuspend .. postsuspend: no new hold */
	RUN_SUSPENDED,	/* postsuspend .. resume: no I/O of ours */
};

struct barrier_c {
	struct dm_target *ti;
	struct dm_dev *dev;
	sector_t start;

	/* Table features; mode is the current mode (messages, fallbacks). */
	enum barrier_mode fallback;
	unsigned int hold_ms;

	spinlock_t lock;		/* protects everything up to drain_wait */
	enum barrier_mode mode;
	struct bio_list queue;		/* bios waiting, in arrival order */
	unsigned int nr_queued;		/* bios in queue */
	unsigned int queued_writes;	/* write bios in queue (the hold bound) */
	unsigned int queued_barriers;	/* barrier bios in queue */
	/*
	 * The gate: set, every bio goes through bc->lock (and is queued behind
	 * a barrier); read without the lock by barrier_pass_gate().  Written
	 * with the lock held, by barrier_close_gate_locked() when it closes.
	 */
	bool busy;
	bool dirty;			/* writes the target itself issued since the last flush */
	/*
	 * The write count of the pass over the per-CPU counts that proved the
	 * drain (barrier_snapshot()), and its value when a flush last covered
	 * every write: what a barrier flushes is decided from these two only.
	 */
	unsigned long writes_drained;
	unsigned long writes_flushed;
	enum barrier_hold hold;
	unsigned int held_failed;	/* queue head: the barriers held */
	enum barrier_run run;
	bool last_wc;
	bool last_fua;
	bool direct;			/* a barrier map() sent down is in flight */
	bool lower_mq;			/* the backing queue is blk-mq (has blk-flush) */
	/*
	 * Flush failures so far, and their count at the last mode message: a
	 * barrier accepted before a failure that no message has answered
	 * since must not succeed without a flush of its own (see
	 * barrier_owes()).
	 */
	u64 fail_gen;
	u64 forgiven_gen;
	struct barrier_debt debts[BARRIER_MAX_DEBTS];
	unsigned int nr_debts;		/* non-zero also closes the gate */
	struct barrier_parked *parked;	/* this table's parking space */
	struct barrier_stats stats;

	wait_queue_head_t drain_wait;	/* a drain waits for the counts below */
	struct barrier_pcpu __percpu *pcpu;

	struct workqueue_struct *wq;
	struct work_struct work;	/* runs the queue */
	struct delayed_work hold_work;	/* ends a hold */
	struct work_struct event_work;	/* dm_table_event() may sleep */
	struct bio_set bs;		/* clones for barrier data writes */
};

/*
 * Bios issued and completed, and writes issued past the gate, counted per
 * CPU so that an ordinary bio writes no cache line another CPU writes.
 * Only their sums over all CPUs mean anything (a bio may complete on
 * another CPU than it was issued on); see barrier_snapshot().
 */
struct barrier_pcpu {
	unsigned long issued;
	unsigned long completed;
	unsigned long writes;
};

/* Per dm clone. */
struct barrier_pb {
	bool counted;			/* in the issued count; completion counts it done */
	bool direct;			/* a barrier map() sent down itself */
	bool data;			/* ... with data */
	u8 mode, eff;			/* ... the mode then, and what it ran as */
	bool preflush;			/* ... which carried REQ_PREFLUSH */
	blk_status_t rerun;		/* ... which failed with this: run again */
	u64 gen;			/* bc->fail_gen when map() took it */
	struct block_device *bdev;	/* a direct barrier's own fields, to */
	blk_opf_t opf;			/* hold it or run it again through the */
	struct bvec_iter iter;		/* worker if it fails */
	unsigned short bi_flags;
	int remaining;
};

enum { DIRECT_NO, DIRECT_ISSUE, DIRECT_DONE };
static int barrier_map_direct(struct barrier_c *bc, struct bio *bio, struct barrier_pb *pb);
static int barrier_direct_endio(struct barrier_c *bc, struct bio *bio, struct barrier_pb *pb,
				blk_status_t *error);

static bool bio_is_barrier(struct bio *bio)
{
	return op_is_write(bio_op(bio)) &&
	       (bio->bi_opf & (REQ_PREFLUSH | REQ_FUA));
}

static bool bio_is_empty_barrier(struct bio *bio)
{
	return bio_is_barrier(bio) && !bio_sectors(bio);
}

static void barrier_msg_endio(struct bio *bio);

/* The `barrier` message's own empty flush: not a dm clone. */
static bool bio_is_internal(struct bio *bio)
{
	return bio->bi_end_io == barrier_msg_endio;
}

/* The kernel name, dm-N, as in /sys/block and `dmsetup info`. */
static const char *barrier_name(struct barrier_c *bc)
{
	return dm_disk(dm_table_get_md(bc->ti->table))->disk_name;
}

static int parse_mode(const char *s, enum barrier_mode *mode)
{
	int i;

	for (i = 0; i < MODE_NR; i++) {
		if (!strcmp(s, mode_names[i])) {
			*mode = i;
			return 0;
		}
	}
	return -EINVAL;
}

static bool mode_is_durable(enum barrier_mode mode)
{
	return mode == MODE_FLUSH || mode == MODE_FUA;
}

static void barrier_raise_event(struct barrier_c *bc)
{
	schedule_work(&bc->event_work);
}

static void barrier_event_work(struct work_struct *work)
{
	struct barrier_c *bc = container_of(work, struct barrier_c, event_work);

	dm_table_event(bc->ti->table);
}

/*
 * `hdparm -W` changes the cache without a uevent, so the barrier path
 * looks at the flag (one test_bit) and raises a dm event when it moved.
 * Called with bc->lock held; returns true when the caller must raise it.
 */
static bool barrier_note_cache(struct barrier_c *bc)
{
	struct block_device *bdev = bc->dev->bdev;
	bool wc = dmb_bdev_write_cache(bdev);
	bool fua = dmb_bdev_fua(bdev);

	if (wc == bc->last_wc && fua == bc->last_fua)
		return false;
	bc->last_wc = wc;
	bc->last_fua = fua;
	bc->stats.cache_changes++;
	DMINFO("%s: backing device %s now has %s%s", barrier_name(bc),
	       bc->dev->name, wc ? "a volatile write cache" : "no volatile write cache",
	       wc ? (fua ? " and FUA" : " without FUA") : "");
	return true;
}

/* ---------------------------------------------------------- flush debts */

/*
 * An empty flush failed or was refused: if it came ahead of a data part
 * (see struct barrier_debt), remember the pair.  With bc->lock held.
 */
static void barrier_owe_locked(struct barrier_c *bc, struct bio *bio, blk_status_t status)
{
	struct barrier_debt *d;

	if (!bio->bi_io_vec || bio_sectors(bio) || bio_is_internal(bio))
		return;
	if (bc->nr_debts == BARRIER_MAX_DEBTS) {
		/* Never seen: dm core sends each data part right after its flush. */
		DMWARN_LIMIT("%s: over %u data parts owe a failed flush; forgetting the oldest",
			     barrier_name(bc), BARRIER_MAX_DEBTS);
		WRITE_ONCE(bc->nr_debts, bc->nr_debts - 1);
		memmove(&bc->debts[0], &bc->debts[1], sizeof(bc->debts[0]) * bc->nr_debts);
	}
	d = &bc->debts[bc->nr_debts];
	WRITE_ONCE(bc->nr_debts, bc->nr_debts + 1);
	d->vec = bio->bi_io_vec;
	d->sector = bio->bi_iter.bi_sector;
	d->status = status;
}

/*
 * Is @bio the data part of a flush that failed?  Then it is taken off the
 * list and the status it must fail with returned.  With bc->lock held;
 * costs one test when no flush has failed.
 */
static blk_status_t barrier_debt_locked(struct barrier_c *bc, struct bio *bio)
{
	blk_status_t status;
	unsigned int i;

	if (likely(!bc->nr_debts) || !bio_sectors(bio) || !op_is_write(bio_op(bio)))
		return BLK_STS_OK;
	for (i = 0; i < bc->nr_debts; i++) {
		if (bc->debts[i].vec == bio->bi_io_vec) {
			status = bc->debts[i].status;
			WRITE_ONCE(bc->nr_debts, bc->nr_debts - 1);
			bc->debts[i] = bc->debts[bc->nr_debts];
			return status;
		}
	}
	return BLK_STS_OK;
}

/*
 * A flush the target issued succeeded: everything written before it
 * started is on stable media, which includes whatever preceded the data
 * parts still owed; they may run.  With bc->lock held.
 */
static void barrier_flushed_locked(struct barrier_c *bc)
{
	WRITE_ONCE(bc->nr_debts, 0);
}

/*
 * Was a flush failure met after @bio was accepted, and not answered by a
 * mode message since?  Then the bios before it are not known to be on
 * stable media, and it must not succeed unless it flushes itself.  With
 * bc->lock held.
 */
static bool barrier_owes(struct barrier_c *bc, struct bio *bio)
{
	struct barrier_pb *pb;

	if (bio_is_internal(bio))
		return false;
	pb = dm_per_bio_data(bio, sizeof(struct barrier_pb));
	return bc->fail_gen > max(pb->gen, bc->forgiven_gen);
}

/* ------------------------------------------------------------- the gate */

/*
 * An ordinary bio (not a barrier) takes no lock while no barrier is
 * pending: barrier_pass_gate() counts it in this CPU's issued count (and
 * writes count), then reads the gate, bc->busy (and bc->nr_debts: a data
 * part that owes a failed flush is looked up under the lock).  Open, the
 * bio goes down.  Closed, it counts itself completed and takes the locked
 * path in barrier_map(), which queues it behind the barrier.  A barrier
 * closes the gate with bc->lock held, and only then takes a snapshot of
 * the sums (barrier_snapshot()).
 *
 * Why no bio slips past a barrier.  Each side stores, then smp_mb(), then
 * loads what the other side stored:
 *
 *	ordinary bio, barrier_pass_gate()	barrier, barrier_close_gate_locked()
 *	issued++ (and writes++)			busy = true
 *	smp_mb()				smp_mb()
 *	r1 = busy				r2 = sums of writes, issued
 *
 * This is the store-buffering pattern: with a full barrier on both sides
 * the outcome "r1 sees the gate open and r2 misses the bio's increment" is
 * forbidden.  So a bio either sees the gate closed and queues behind the
 * barrier, or the barrier's sums include it: the drain waits for its
 * completion, and its write makes the barrier flush.
 *
 * Why a write the barrier counted is on stable media once a later barrier
 * succeeds.  The snapshot reads the write counts, then the completions,
 * then the issues, in one pass (barrier_snapshot()); a write counts its
 * issue before its write (smp_wmb(), the message-passing pattern with the
 * snapshot's smp_rmb()).  So a write in the snapshot's write count is in
 * its issued count too: when the pass shows nothing in flight, that write
 * has completed, or it met the closed gate (and is counted completed
 * then) and will be issued under the lock, which marks the target dirty.
 * Only that pass's write count may become writes_flushed: a count read
 * again after it can hold a write that was not drained, which then passes
 * the gate once it reopens while its count says "flushed" (review finding
 * N1: its own fdatasync() found the mapping clean and did not flush).
 * A bio that sees the gate open because the barrier has reopened it came
 * after the barrier, which had completed by then (the gate reopens only
 * with the queue empty and no direct barrier in flight).  The thread that
 * waits in the drain closes the gate again itself (barrier_drain()), so
 * the store its smp_mb() orders before its reads is its own.  Bios counted
 * under bc->lock (the locked path, the worker) are ordered with a
 * barrier's closing by the lock.
 *
 * dm-target/model/gate.pml is this protocol in Promela; `make check-model`
 * has spin check, over every interleaving, that a write whose submitter
 * saw a later barrier succeed was flushed after it completed, and that
 * the protocol with N1's re-read fails it.  spin assumes sequential
 * consistency: the two pairings above are what carries that over to the
 * kernel's memory model.
 *
 * Counts only go up: a bio that met a closed gate is counted completed,
 * not un-issued, so that a sum is never below the truth (see
 * barrier_snapshot()).  Its write stays counted: a write that meets the
 * gate as it closes may make that barrier flush once more than it had to,
 * never once less (taking it back could make the sum equal to the last
 * flush's again while a later write is not flushed).
 */

/* With bc->lock held.  Closing it again, already closed, is allowed. */
static void barrier_close_gate_locked(struct barrier_c *bc)
{
	WRITE_ONCE(bc->busy, true);
	/* The gate, then the counts: pairs with barrier_pass_gate(). */
	smp_mb();
}

/* With bc->lock held, the queue empty and no direct barrier in flight. */
static void barrier_open_gate_locked(struct barrier_c *bc)
{
	WRITE_ONCE(bc->busy, false);
}

/*
 * An issued bio completed (or one counted issued met a closed gate).  A
 * drain in progress sleeps on drain_wait: wq_has_sleeper()'s smp_mb()
 * pairs with its set_current_state(), so either it sees this count or it
 * is woken.
 */
static void barrier_done_one(struct barrier_c *bc)
{
	this_cpu_inc(bc->pcpu->completed);
	if (wq_has_sleeper(&bc->drain_wait))
		wake_up(&bc->drain_wait);
}

/* True: the bio passed and is counted issued; false: take the lock. */
static bool barrier_pass_gate(struct barrier_c *bc, struct bio *bio, struct barrier_pb *pb)
{
	this_cpu_inc(bc->pcpu->issued);
	if (op_is_write(bio_op(bio))) {
		/* The issue, then the write: pairs with barrier_snapshot(). */
		smp_wmb();
		this_cpu_inc(bc->pcpu->writes);
		dmb_window(WIN_GATE);
	}
	/* The counts, then the gate: pairs with barrier_close_gate_locked(). */
	smp_mb();
	if (likely(!READ_ONCE(bc->busy) && !READ_ONCE(bc->nr_debts))) {
		pb->counted = true;
		return true;
	}
	barrier_done_one(bc);
	return false;
}

/*
 * One pass over the per-CPU counts, by a barrier that has closed the gate:
 * the bios issued and not completed, and in *writes the write count that
 * goes with that answer.  The writes are summed first, then the
 * completions, then the issues.  Every completion counted is of a bio
 * whose issue the last sum counts too (it passed the gate before it
 * closed, or met it closed and counted both itself, or was counted under
 * the lock or by this thread), so while counts move the result can be
 * too high, never too low, and 0 means drained; and every write counted
 * is in the issues (see "the gate"), so at 0 it has completed or will be
 * issued under the lock.
 */
static unsigned long barrier_snapshot(struct barrier_c *bc, unsigned long *writes)
{
	unsigned long issued = 0, completed = 0, w = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		w += READ_ONCE(per_cpu_ptr(bc->pcpu, cpu)->writes);
	/* The writes, then the completions: pairs with barrier_pass_gate(). */
	smp_rmb();
	for_each_possible_cpu(cpu)
		completed += READ_ONCE(per_cpu_ptr(bc->pcpu, cpu)->completed);
	/* The completions, then the issues. */
	smp_rmb();
	for_each_possible_cpu(cpu)
		issued += READ_ONCE(per_cpu_ptr(bc->pcpu, cpu)->issued);
	*writes = w;
	return issued - completed;
}

/*
 * Written since the last flush: by the target itself, or a write the
 * drained snapshot counted.  With bc->lock held, after a snapshot showed
 * nothing in flight and stored its write count in bc->writes_drained.
 */
static bool barrier_dirty_locked(struct barrier_c *bc)
{
	return bc->dirty || bc->writes_drained != bc->writes_flushed;
}

/*
 * A flush is about to cover every write the drained snapshot counted (and
 * every write the target issued itself: nothing of ours is in flight).
 * Never a fresh count: see "the gate".
 */
static void barrier_clean_locked(struct barrier_c *bc)
{
	bc->dirty = false;
	bc->writes_flushed = bc->writes_drained;
}

/* ------------------------------------------------------------- the queue */

static void barrier_remap(struct barrier_c *bc, struct bio *bio)
{
	bio_set_dev(bio, bc->dev->bdev);
	if (bio_sectors(bio))
		bio->bi_iter.bi_sector = bc->start +
			dm_target_offset(bc->ti, bio->bi_iter.bi_sector);
}

/*
 * A bio map() queued, issued later by the worker, which may block: a
 * REQ_NOWAIT caller was not blocked (map() queued it), so the flag has
 * done its job, and must not make the disk's BLK_STS_AGAIN fail a bio
 * whose place in the order is already fixed.  Nor is it polled: the
 * caller's poll loop may have looked for it before it was issued.
 */
static void barrier_submit_queued(struct barrier_c *bc, struct bio *bio)
{
	bio->bi_opf &= ~REQ_NOWAIT;
	bio_clear_polled(bio);
	barrier_remap(bc, bio);
	dm_submit_bio_remap(bio, NULL);
}

static void barrier_count_passthrough(struct barrier_c *bc, struct bio *bio)
{
	if (bio->bi_opf & REQ_PREFLUSH)
		bc->stats.flushes++;
	if (bio->bi_opf & REQ_FUA)
		bc->stats.fua_writes++;
}

/* Called with bc->lock held; the bio is then issued by the caller. */
static void barrier_account_issue(struct barrier_c *bc, struct bio *bio)
{
	struct barrier_pb *pb = dm_per_bio_data(bio, sizeof(struct barrier_pb));

	pb->counted = true;
	this_cpu_inc(bc->pcpu->issued);
	if (op_is_write(bio_op(bio)))
		bc->dirty = true;
}

static void barrier_kick(struct barrier_c *bc)
{
	queue_work(bc->wq, &bc->work);
}

#ifdef DMB_TEST_WINDOWS
/*
 * A worker run nobody asked for, as a second kick can leave one; waited
 * for where the caller may sleep, so that it lands inside the window (a
 * kworker woken from here ran only once the window had passed).
 */
static void dmb_window_kick(struct barrier_c *bc)
{
	if (!(READ_ONCE(dmb_window_points) & BIT(WIN_KICK)))
		return;
	barrier_kick(bc);
	if (in_task())
		flush_work(&bc->work);
}
#else
static inline void dmb_window_kick(struct barrier_c *bc)
{
}
#endif

/* ------------------------------------------------------------- the hold */

/*
 * The hold's one state variable, bc->hold, changes only here: each state
 * names the states it may go to.  An expired hold may still be answered
 * by a mode message before the worker resolves it (the replay wins); a
 * replay is never taken back.  With bc->lock held.
 */
static void barrier_set_hold(struct barrier_c *bc, enum barrier_hold to)
{
	static const u8 next[HOLD_NR] = {
		[HOLD_NONE] = BIT(HOLD_WAITING),
		[HOLD_WAITING] = BIT(HOLD_EXPIRED) | BIT(HOLD_REPLAY),
		[HOLD_EXPIRED] = BIT(HOLD_REPLAY) | BIT(HOLD_NONE),
		[HOLD_REPLAY] = BIT(HOLD_NONE),
	};

	if (WARN_ON_ONCE(!(next[bc->hold] & BIT(to))))
		return;
	bc->hold = to;
}

/* End a waiting hold without a mode change.  True when it was waiting. */
static bool barrier_expire_hold(struct barrier_c *bc)
{
	if (bc->hold != HOLD_WAITING)
		return false;
	barrier_set_hold(bc, HOLD_EXPIRED);
	return true;
}

/* A mode message answers a hold.  True when there was one to answer. */
static bool barrier_replay_hold(struct barrier_c *bc)
{
	if (bc->hold != HOLD_WAITING && bc->hold != HOLD_EXPIRED)
		return false;
	barrier_set_hold(bc, HOLD_REPLAY);
	return true;
}

static void barrier_count_queued(struct barrier_c *bc, struct bio *bio, int n)
{
	bc->nr_queued += n;
	if (op_is_write(bio_op(bio)))
		bc->queued_writes += n;
	if (bio_is_barrier(bio))
		bc->queued_barriers += n;
}

/*
 * Called with bc->lock held.  Returns true when the writes queued have
 * grown past what a hold may keep: the hold ends now, as if it had
 * expired, and the caller kicks the worker.
 */
static bool barrier_enqueue(struct barrier_c *bc, struct bio *bio)
{
	bio_list_add(&bc->queue, bio);
	barrier_count_queued(bc, bio, 1);
	if (bc->hold == HOLD_WAITING && bc->queued_writes > BARRIER_MAX_HELD_WRITES) {
		DMWARN_LIMIT("%s: %u writes queued behind a hold; ending it",
			     barrier_name(bc), bc->queued_writes);
		barrier_expire_hold(bc);
		return true;
	}
	return false;
}

static void barrier_enqueue_head(struct barrier_c *bc, struct bio_list *bios)
{
	struct bio *bio;

	bio_list_for_each(bio, bios)
		barrier_count_queued(bc, bio, 1);
	bio_list_merge_head(&bc->queue, bios);
}

static struct bio *barrier_dequeue(struct barrier_c *bc)
{
	struct bio *bio = bio_list_pop(&bc->queue);

	if (bio)
		barrier_count_queued(bc, bio, -1);
	return bio;
}

static int barrier_map(struct dm_target *ti, struct bio *bio)
{
	struct barrier_c *bc = ti->private;
	struct barrier_pb *pb = dm_per_bio_data(bio, sizeof(struct barrier_pb));
	bool barrier = bio_is_barrier(bio);
	bool event = false, kick = false;
	blk_status_t owed;
	int way = DIRECT_NO;
	unsigned long flags;

	pb->counted = false;
	pb->direct = false;
	pb->rerun = BLK_STS_OK;
	/*
	 * Never polled below us: a barrier's drain waits for every bio of
	 * ours in flight, and a polled one completes only when its submitter
	 * polls, which it may never do while it waits on something else (an
	 * unreaped polled read stalled every barrier until the driver's
	 * timeout).  dm core still polls the original bio, and finds it done
	 * when the interrupt has completed our clone.
	 */
	bio_clear_polled(bio);
	if (!barrier && barrier_pass_gate(bc, bio, pb)) {
		barrier_remap(bc, bio);
		return DM_MAPIO_REMAPPED;
	}

	spin_lock_irqsave(&bc->lock, flags);
	pb->gen = bc->fail_gen;
	owed = barrier_debt_locked(bc, bio);
	if (unlikely(owed)) {
		/* The data part of a flush that failed: fail it likewise. */
		if (owed == BLK_STS_NOTSUPP)
			bc->stats.refused++;
		spin_unlock_irqrestore(&bc->lock, flags);
		bio->bi_status = owed;
		bio_endio(bio);
		return DM_MAPIO_SUBMITTED;
	}
	if (barrier) {
		bc->stats.barriers++;
		event = barrier_note_cache(bc);
	}
	if (bc->busy) {
		/* Behind a barrier: wait for it, whatever this bio is. */
		kick = barrier_enqueue(bc, bio);
		spin_unlock_irqrestore(&bc->lock, flags);
		if (event)
			barrier_raise_event(bc);
		if (kick) {
			cancel_delayed_work(&bc->hold_work);
			barrier_kick(bc);
		}
		return DM_MAPIO_SUBMITTED;
	}
	if (!barrier) {
		barrier_account_issue(bc, bio);
		spin_unlock_irqrestore(&bc->lock, flags);
		barrier_remap(bc, bio);
		return DM_MAPIO_REMAPPED;
	}

	switch (bc->mode) {
	case MODE_PASSTHROUGH:
		barrier_count_passthrough(bc, bio);
		barrier_account_issue(bc, bio);
		spin_unlock_irqrestore(&bc->lock, flags);
		if (event)
			barrier_raise_event(bc);
		barrier_remap(bc, bio);
		return DM_MAPIO_REMAPPED;
	case MODE_NONE:
		bc->stats.refused++;
		/* A refused pre-flush: its data part is refused too. */
		barrier_owe_locked(bc, bio, BLK_STS_NOTSUPP);
		spin_unlock_irqrestore(&bc->lock, flags);
		if (event)
			barrier_raise_event(bc);
		bio->bi_status = BLK_STS_NOTSUPP;
		bio_endio(bio);
		return DM_MAPIO_SUBMITTED;
	default:
		/* Closed before the direct way counts what is in flight. */
		barrier_close_gate_locked(bc);
		way = barrier_map_direct(bc, bio, pb);
		if (way == DIRECT_DONE)
			barrier_open_gate_locked(bc);
		if (way != DIRECT_NO)
			break;
		/* The gate stays closed: the worker owns the queue. */
		barrier_enqueue(bc, bio);
		kick = true;
		break;
	}
	spin_unlock_irqrestore(&bc->lock, flags);
	if (event)
		barrier_raise_event(bc);
	if (way == DIRECT_DONE) {
		bio_endio(bio);
		return DM_MAPIO_SUBMITTED;
	}
	if (kick)
		barrier_kick(bc);
	if (way == DIRECT_ISSUE) {
		barrier_remap(bc, bio);
		return DM_MAPIO_REMAPPED;
	}
	return DM_MAPIO_SUBMITTED;
}

static int barrier_end_io(struct dm_target *ti, struct bio *bio, blk_status_t *error)
{
	struct barrier_c *bc = ti->private;
	struct barrier_pb *pb = dm_per_bio_data(bio, sizeof(struct barrier_pb));
	unsigned long flags;

	if (pb->direct)
		return barrier_direct_endio(bc, bio, pb, error);
	if (!pb->counted)
		return DM_ENDIO_DONE;
	pb->counted = false;

	/* A passed-through flush or FUA write failed (not just "would block"). */
	if (*error && *error != BLK_STS_AGAIN && bio_is_barrier(bio)) {
		spin_lock_irqsave(&bc->lock, flags);
		bc->stats.flush_errors++;
		spin_unlock_irqrestore(&bc->lock, flags);
		barrier_raise_event(bc);
	}
	barrier_done_one(bc);
	return DM_ENDIO_DONE;
}

static void barrier_complete(struct bio *bio, blk_status_t status)
{
	bio->bi_status = status;
	bio_endio(bio);
}

/*
 * Wait until every bio issued so far has completed; the write count of
 * the snapshot that showed it is what this transaction's flushes cover.
 */
static void barrier_drain(struct barrier_c *bc)
{
	u64 start = ktime_get_ns(), took;
	unsigned long writes = 0;

	/* Closed since the barrier came; again here, see "the gate". */
	spin_lock_irq(&bc->lock);
	barrier_close_gate_locked(bc);
	spin_unlock_irq(&bc->lock);
	wait_event(bc->drain_wait, !barrier_snapshot(bc, &writes));
	took = ktime_get_ns() - start;
	dmb_window(WIN_SNAPSHOT);

	spin_lock_irq(&bc->lock);
	bc->writes_drained = writes;
	if (took > bc->stats.max_drain_ns)
		bc->stats.max_drain_ns = took;
	spin_unlock_irq(&bc->lock);
}

static int barrier_flush(struct barrier_c *bc)
{
	int r;

	spin_lock_irq(&bc->lock);
	bc->stats.flushes++;
	/* Drained: nothing is in flight, so this flush covers every write. */
	barrier_clean_locked(bc);
	spin_unlock_irq(&bc->lock);

	r = blkdev_issue_flush(bc->dev->bdev);
	spin_lock_irq(&bc->lock);
	if (r)
		bc->dirty = true;
	else
		barrier_flushed_locked(bc);
	spin_unlock_irq(&bc->lock);
	return r;
}

static void barrier_clone_endio(struct bio *clone)
{
	complete(clone->bi_private);
}

/* The barrier's data, as a clone of its own so the dm clone completes once. */
static blk_status_t barrier_write(struct barrier_c *bc, struct bio *bio, bool fua)
{
	DECLARE_COMPLETION_ONSTACK(done);
	struct bio *clone;
	blk_status_t status;

	clone = bio_alloc_clone(bc->dev->bdev, bio, GFP_NOIO, &bc->bs);
	/* The worker waits for it, so it may block and is never polled. */
	clone->bi_opf &= ~(REQ_PREFLUSH | REQ_FUA | REQ_NOWAIT);
	bio_clear_polled(clone);
	if (fua)
		clone->bi_opf |= REQ_FUA;
	clone->bi_iter.bi_sector = bc->start + dm_target_offset(bc->ti, bio->bi_iter.bi_sector);
	clone->bi_private = &done;
	clone->bi_end_io = barrier_clone_endio;

	spin_lock_irq(&bc->lock);
	if (fua)
		bc->stats.fua_writes++;
	else
		bc->dirty = true;
	spin_unlock_irq(&bc->lock);

	dm_submit_bio_remap(bio, clone);
	wait_for_completion_io(&done);
	status = clone->bi_status;
	bio_put(clone);
	return status;
}

/* ------------------------------------------------------- flush failures */

/*
 * Not inlined: tests/guest/target-hold-bounds.sh stalls it with a kprobe to
 * show that nothing lands between a failure and its hold.
 */
static noinline void barrier_log_fallback(struct barrier_c *bc, int err)
{
	if (bc->fallback == MODE_NONE)
		DMERR("%s: cache flush failed (error %d); %s",
		      barrier_name(bc), err, "ordered writes disabled (mode none)");
	else
		DMERR("%s: cache flush failed (error %d); falling back to mode %s",
		      barrier_name(bc), err, mode_names[bc->fallback]);
}

/* Put bios back at the head of the queue and wait for a mode change. */
static void barrier_hold_locked(struct barrier_c *bc, struct bio_list *bios)
{
	bc->held_failed = bio_list_size(bios);
	barrier_enqueue_head(bc, bios);
	barrier_set_hold(bc, HOLD_WAITING);
	queue_delayed_work(bc->wq, &bc->hold_work, msecs_to_jiffies(bc->hold_ms));
}

/* What barrier_flush_failed_locked() decided, for its caller to act on. */
struct barrier_failure {
	bool transition;	/* fell back: log it */
	bool held;		/* the bios are held at the head of the queue */
	bool replay;		/* ... and a mode message already answered them */
};

/*
 * A flush (or FUA write) the target issued for @bios, run under mode @was,
 * failed.  With bc->lock held, in the same critical section as whatever
 * the caller saw of the failure, so that no presuspend, mode message or
 * worker run lands between the failure and what it decides: count it,
 * fall back once per transition, and either hold @bios at the head of the
 * queue (hold_on_flush_error, not suspending; replayed at once if the mode
 * moved while they ran) or remember the debts of the empty ones.  Only a
 * failure under a mode that promised durability leaves the bios accepted
 * before it owing (barrier_owes()): a failed probe (`barrier` message) in
 * drain or passthrough fails itself, not the barriers queued behind it,
 * which never promised more than order.  barrier_flush_failed_done() does
 * the rest once the lock is dropped.
 */
static void barrier_flush_failed_locked(struct barrier_c *bc, enum barrier_mode was,
					struct bio_list *bios, bool holdable,
					blk_status_t status, struct barrier_failure *f)
{
	struct bio *bio;

	f->transition = false;
	f->replay = false;
	bc->stats.flush_errors++;
	if (mode_is_durable(was))
		bc->fail_gen++;
	if (bc->mode == was && mode_is_durable(was)) {
		bc->mode = bc->fallback;
		bc->stats.fallbacks++;
		f->transition = true;
	}
	f->held = holdable && bc->hold_ms && bc->run == RUN_ACTIVE;
	if (f->held) {
		barrier_hold_locked(bc, bios);
		/* A mode message met while they ran: it answers them. */
		f->replay = !f->transition && bc->mode != was;
		if (f->replay) {
			barrier_replay_hold(bc);
			bc->forgiven_gen = bc->fail_gen;
		}
	} else {
		bio_list_for_each(bio, bios)
			barrier_owe_locked(bc, bio, status);
	}
}

/* Logs the transition, raises a dm event, runs a replay. */
static void barrier_flush_failed_done(struct barrier_c *bc, int err,
				      const struct barrier_failure *f)
{
	if (f->transition)
		barrier_log_fallback(bc, err);
	barrier_raise_event(bc);
	if (f->replay) {
		cancel_delayed_work(&bc->hold_work);
		barrier_kick(bc);
	}
}

/* The worker's failed flush.  Returns true when @bios were held. */
static bool barrier_flush_failed(struct barrier_c *bc, enum barrier_mode was, int err,
				 struct bio_list *bios, bool holdable, blk_status_t status)
{
	struct barrier_failure f;

	spin_lock_irq(&bc->lock);
	barrier_flush_failed_locked(bc, was, bios, holdable, status, &f);
	spin_unlock_irq(&bc->lock);
	barrier_flush_failed_done(bc, err, &f);
	return f.held;
}

/*
 * What a flush or fua barrier runs as on the backing device as it is now:
 * drain on a write-through queue (completion means stable; order, do not
 * flush), flush for fua without FUA.  Called with bc->lock held.
 */
static enum barrier_mode barrier_effective_mode(struct barrier_c *bc, enum barrier_mode mode)
{
	if (mode_is_durable(mode) && !bc->last_wc)
		return MODE_DRAIN;
	if (mode == MODE_FUA && !bc->last_fua)
		return MODE_FLUSH;
	return mode;
}

/* ------------------------------------------------------------ direct way */

/*
 * The direct way, for a barrier that finds the target idle: nothing of ours
 * in flight or queued, so the drain is done.  The bio goes down as it is,
 * with the flags its mode needs, and the backing queue's flush sequence
 * (block/blk-flush.c) runs pre-flush, write and FUA write or post-flush on
 * the disk, each step after the last completed, as the worker would, minus
 * the worker's wake-ups.  The target stays busy until it completes, so
 * nothing after it starts before.  Left to the worker: a busy target, an
 * explicit post-flush (mode flush on a disk with FUA), a REQ_NOWAIT bio
 * (the disk's -EAGAIN would read as a failed flush), a pre-flush with
 * data over a bio-based device (a stacked dm device, whose core drops the
 * error of that pre-flush), and a bio the disk would split.
 * Called with bc->lock held and the gate closed.
 */
static int barrier_map_direct(struct barrier_c *bc, struct bio *bio, struct barrier_pb *pb)
{
	struct request_queue *q = bdev_get_queue(bc->dev->bdev);
	bool data = bio_sectors(bio) > 0;
	enum barrier_mode eff = bc->mode;
	unsigned long writes;
	blk_opf_t opf = 0;
	bool dirty;

	if (!READ_ONCE(dmb_direct) || (bio->bi_opf & REQ_NOWAIT) || barrier_snapshot(bc, &writes))
		return DIRECT_NO;
	dmb_window(WIN_SNAPSHOT);
	bc->writes_drained = writes;
	dirty = barrier_dirty_locked(bc);
	eff = barrier_effective_mode(bc, eff);
	if (eff == MODE_FLUSH && data && bc->last_fua)
		return DIRECT_NO;
	if (eff != MODE_DRAIN && data && dirty && !bc->lower_mq)
		return DIRECT_NO;
	/* One request, or the disk would run a flush sequence per piece. */
	if (data && (bio_sectors(bio) > queue_max_sectors(q) ||
		     bio_segments(bio) > queue_max_segments(q)))
		return DIRECT_NO;

	if (eff == MODE_DRAIN && bc->mode != MODE_DRAIN)
		bc->stats.no_cache++;
	if (eff != MODE_DRAIN) {
		if (dirty) {
			opf |= REQ_PREFLUSH;
			bc->stats.flushes++;
		} else {
			bc->stats.shared++;
		}
		if (data) {
			opf |= REQ_FUA;
			if (eff == MODE_FUA)
				bc->stats.fua_writes++;
			else
				bc->stats.flushes++;	/* blk-flush's post-flush */
		}
		barrier_clean_locked(bc);
	} else if (data) {
		bc->dirty = true;
	}
	if (!opf && !data)
		return DIRECT_DONE;

	pb->direct = true;
	pb->data = data;
	pb->preflush = opf & REQ_PREFLUSH;
	pb->mode = bc->mode;
	pb->eff = eff;
	pb->bdev = bio->bi_bdev;
	pb->opf = bio->bi_opf;
	pb->iter = bio->bi_iter;
	pb->bi_flags = bio->bi_flags;
	pb->remaining = atomic_read(&bio->__bi_remaining);
	bio->bi_opf = (bio->bi_opf & ~(REQ_PREFLUSH | REQ_FUA)) | opf;
	/* Polled or not, the disk's flush sequence completes it. */
	bio_clear_polled(bio);
	bc->direct = true;
	return DIRECT_ISSUE;
}

/* Undo what dm core and the disk did to a direct barrier, to run it again. */
static void barrier_direct_restore(struct bio *bio, struct barrier_pb *pb)
{
	bio->bi_bdev = pb->bdev;
	bio->bi_opf = pb->opf;
	bio->bi_iter = pb->iter;
	bio->bi_flags = pb->bi_flags;
	atomic_set(&bio->__bi_remaining, pb->remaining);
	bio->bi_status = BLK_STS_OK;
}

/*
 * A direct barrier completed, maybe in interrupt context.  An empty one
 * that failed is a failed flush: fall back, and hold it or fail it as the
 * worker would.  One with data ran pre-flush, write and post-flush as one
 * request with one status, which does not say which step failed: it goes
 * to the head of the queue and the worker runs it again step by step, so a
 * media error or a full thin pool stays a write error with its status.  A
 * rerun that succeeds proves nothing about the first run: a drive whose
 * flush failed once may have lost what its cache held and work again, so
 * the barrier still fails: as a failed flush where the first request held
 * one and its error is one a flush gives (any but -ENOSPC: a flush fails
 * with a medium error when the drive cannot write its cache out), else as
 * that write error (barrier_run(), pb->rerun).  Then whatever queued
 * behind it runs.
 */
static int barrier_direct_endio(struct barrier_c *bc, struct bio *bio, struct barrier_pb *pb,
				blk_status_t *error)
{
	bool flushed = pb->eff != MODE_DRAIN;
	bool rerun = *error && flushed && pb->data;
	bool failed = *error && flushed && !pb->data;
	struct barrier_failure f = { };
	struct bio_list bios;
	unsigned long flags;
	bool kick;

	pb->direct = false;
	bio_list_init(&bios);
	if (rerun || failed) {
		barrier_direct_restore(bio, pb);
		bio_list_add(&bios, bio);
	}
	if (rerun)
		pb->rerun = *error;

	/*
	 * One critical section from "no longer direct" to what runs next: a
	 * worker run (or a presuspend, or a mode message) in between would
	 * see the target idle with the failure not yet decided, and issue
	 * what queued behind this barrier before it is held (review N5).
	 */
	spin_lock_irqsave(&bc->lock, flags);
	bc->direct = false;
	if (*error)
		bc->dirty = true;
	else if (pb->preflush)
		barrier_flushed_locked(bc);
	if (rerun)
		barrier_enqueue_head(bc, &bios);
	if (failed)
		barrier_flush_failed_locked(bc, pb->mode, &bios, true, *error, &f);
	kick = rerun || f.held || !bio_list_empty(&bc->queue);
	if (!kick)
		barrier_open_gate_locked(bc);
	spin_unlock_irqrestore(&bc->lock, flags);

	if (failed) {
		barrier_flush_failed_done(bc, blk_status_to_errno(*error), &f);
		if (!f.held)
			bio->bi_status = *error;
	}
	if (dmb_window(WIN_ENDIO))
		dmb_window_kick(bc);
	if (kick && !f.held)
		barrier_kick(bc);
	dmb_window(WIN_RETURN);
	return (rerun || f.held) ? DM_ENDIO_INCOMPLETE : DM_ENDIO_DONE;
}

/* ---------------------------------------------------------- the worker */

/*
 * One barrier transaction: one barrier, or several empty flushes that
 * arrived back to back and share one flush.  barrier_run() walks these
 * steps in order; barrier_step() does one and names the next.  The device
 * has nothing of ours in flight while it runs, and nothing else is issued
 * until it ends.
 */
enum barrier_step {
	STEP_DRAIN,	/* wait for every bio issued before it */
	STEP_DECIDE,	/* what it runs as, on the device as it is now */
	STEP_PREFLUSH,	/* flush what the bios before it wrote */
	STEP_WRITE,	/* its data (FUA in mode fua) */
	STEP_PROBE,	/* a FUA write failed: did the cache or the medium fail? */
	STEP_POSTFLUSH,	/* flush its data (mode flush) */
	STEP_PASS,	/* mode passthrough: issue it as it is */
	STEP_DONE,	/* complete the batch with txn->status */
	STEP_FLUSH_FAILED, /* fall back; hold or fail the batch */
	STEP_HELD,	/* the batch waits at the head of the queue */
};

struct barrier_txn {
	struct bio_list *batch;
	struct bio *first;
	unsigned int n;
	enum barrier_mode mode;	/* the mode it runs under */
	enum barrier_mode eff;	/* what that is on the device now */
	bool data;
	bool internal;		/* the `barrier` message */
	bool flush;		/* the pre-flush is needed (something is dirty) */
	blk_status_t status;	/* what the batch completes with */
	int err;		/* the failed flush's error */
};

static enum barrier_step barrier_decide(struct barrier_c *bc, struct barrier_txn *t)
{
	struct bio_list owed;
	struct bio *bio;
	bool event;

	bio_list_init(&owed);
	spin_lock_irq(&bc->lock);
	event = barrier_note_cache(bc);
	/*
	 * An explicit barrier drains and flushes in every mode but none, also
	 * in drain and on a write-through queue: it is how userspace probes
	 * whether the cache still takes flushes.
	 */
	if (t->internal && t->mode != MODE_NONE) {
		t->eff = MODE_FLUSH;
	} else {
		t->eff = barrier_effective_mode(bc, t->mode);
		if (t->eff == MODE_DRAIN && t->mode != MODE_DRAIN)
			bc->stats.no_cache += t->n;
	}
	/*
	 * Fallen back to drain since they came: those a failed flush left
	 * unflushed fail (barrier_owes()); they are the oldest of the batch.
	 * An empty one among them is a pre-flush whose data part is still to
	 * come: it owes, so that the data part fails too (review N2: it ran
	 * as drain and succeeded).
	 */
	if (t->mode == MODE_DRAIN && !t->internal) {
		while ((bio = bio_list_peek(t->batch)) && barrier_owes(bc, bio)) {
			barrier_owe_locked(bc, bio, BLK_STS_IOERR);
			bio_list_add(&owed, bio_list_pop(t->batch));
		}
		t->first = bio_list_peek(t->batch);
		t->n = bio_list_size(t->batch);
	}
	t->flush = mode_is_durable(t->eff) && (barrier_dirty_locked(bc) || t->internal);
	if (mode_is_durable(t->eff)) {
		bc->stats.shared += t->n - t->flush;
	} else if (t->eff == MODE_NONE) {
		/* Refused pre-flushes: their data parts are refused too. */
		bio_list_for_each(bio, t->batch)
			barrier_owe_locked(bc, bio, BLK_STS_NOTSUPP);
		bc->stats.refused += t->n;
	}
	spin_unlock_irq(&bc->lock);
	if (event)
		barrier_raise_event(bc);
	while ((bio = bio_list_pop(&owed)))
		barrier_complete(bio, BLK_STS_IOERR);
	if (!t->first)
		return STEP_DONE;

	switch (t->eff) {
	case MODE_PASSTHROUGH:
		return STEP_PASS;
	case MODE_NONE:
		t->status = BLK_STS_NOTSUPP;
		return STEP_DONE;
	case MODE_DRAIN:
		return t->data ? STEP_WRITE : STEP_DONE;
	default:
		return t->flush ? STEP_PREFLUSH : t->data ? STEP_WRITE : STEP_DONE;
	}
}

static enum barrier_step barrier_step(struct barrier_c *bc, struct barrier_txn *t,
				      enum barrier_step step)
{
	struct bio *bio;

	switch (step) {
	case STEP_DRAIN:
		barrier_drain(bc);
		return STEP_DECIDE;
	case STEP_DECIDE:
		return barrier_decide(bc, t);
	case STEP_PREFLUSH:
		t->err = barrier_flush(bc);
		if (t->err)
			return STEP_FLUSH_FAILED;
		return t->data ? STEP_WRITE : STEP_DONE;
	case STEP_WRITE:
		t->status = barrier_write(bc, t->first, t->eff == MODE_FUA);
		if (t->status)
			return t->eff == MODE_FUA ? STEP_PROBE : STEP_DONE;
		return t->eff == MODE_FLUSH ? STEP_POSTFLUSH : STEP_DONE;
	case STEP_PROBE:
		/* A flush fails too: the cache failed.  Else the write did. */
		t->err = barrier_flush(bc);
		return t->err ? STEP_FLUSH_FAILED : STEP_DONE;
	case STEP_POSTFLUSH:
		t->err = barrier_flush(bc);
		return t->err ? STEP_FLUSH_FAILED : STEP_DONE;
	case STEP_PASS:
		/* Queued before a switch to passthrough: issue as they are. */
		while ((bio = bio_list_pop(t->batch))) {
			spin_lock_irq(&bc->lock);
			barrier_count_passthrough(bc, bio);
			barrier_account_issue(bc, bio);
			spin_unlock_irq(&bc->lock);
			barrier_submit_queued(bc, bio);
		}
		return STEP_DONE;
	case STEP_FLUSH_FAILED:
		t->status = errno_to_blk_status(t->err);
		if (barrier_flush_failed(bc, t->mode, t->err, t->batch, !t->internal, t->status))
			return STEP_HELD;
		return STEP_DONE;
	case STEP_DONE:
	case STEP_HELD:
		break;
	}
	return step;
}

static void barrier_run(struct barrier_c *bc, struct bio_list *batch, enum barrier_mode mode)
{
	struct barrier_txn t = {
		.batch = batch,
		.first = bio_list_peek(batch),
		.n = bio_list_size(batch),
		.mode = mode,
		.status = BLK_STS_OK,
	};
	enum barrier_step step = STEP_DRAIN, next;
	struct bio *bio, *rerun = NULL;
	blk_status_t first_status = BLK_STS_OK;
	bool first_flushed = false;
	struct barrier_pb *pb;

	t.data = bio_sectors(t.first) > 0;
	t.internal = bio_is_internal(t.first);
	if (!t.internal) {
		pb = dm_per_bio_data(t.first, sizeof(struct barrier_pb));
		if (pb->rerun) {
			rerun = t.first;
			first_status = pb->rerun;
			/* A pre-flush, or blk-flush's post-flush for FUA. */
			first_flushed = pb->preflush || pb->eff == MODE_FLUSH;
			pb->rerun = BLK_STS_OK;
		}
	}
	while ((next = barrier_step(bc, &t, step)) != step)
		step = next;
	/*
	 * A direct barrier failed and its rerun met no error: the first run
	 * still failed (barrier_direct_endio()).  If its request held a flush
	 * and the error is one a flush can give, it may have been the flush:
	 * a failed flush.  A medium error is one: SYNCHRONIZE CACHE fails with
	 * it when the drive cannot write its cache out, and what the cache
	 * held is gone; taken for the write's, the mode stayed and the next
	 * barrier promised those writes (the campaign over dmb_disk, seed
	 * 117; tests/guest/target-flush-medium.sh).  A bad sector fails the
	 * rerun's write too and stays a write error.  Else the write failed,
	 * as the worker would have said (a FUA write whose probe flush
	 * works): that write error.  Not when the rerun was answered
	 * otherwise: failed (an error of its own, or owed), refused, or
	 * passed through.
	 */
	if (rerun && step == STEP_DONE && !t.status && bio_list_peek(batch) == rerun) {
		if (first_flushed && first_status != BLK_STS_NOSPC) {
			t.err = blk_status_to_errno(first_status);
			step = barrier_step(bc, &t, STEP_FLUSH_FAILED);
		} else {
			t.status = first_status;
		}
	}
	if (step == STEP_HELD)
		return;
	while ((bio = bio_list_pop(batch)))
		barrier_complete(bio, t.status);
}

/*
 * Resolve a hold, with bc->lock held.  Returns false when it is still
 * waiting.  Expired: the barriers whose flush failed fail with EIO (their
 * debts remembered) and the rest of the queue runs under the current mode.
 * A mode change replays them under the new mode.
 */
static bool barrier_resolve_hold(struct barrier_c *bc, struct bio_list *failed)
{
	struct bio *bio;

	switch (bc->hold) {
	case HOLD_NONE:
		return true;
	case HOLD_WAITING:
		return false;
	case HOLD_REPLAY:
		bc->stats.replayed += bc->held_failed;
		break;
	case HOLD_EXPIRED:
		while (bc->held_failed) {
			bio = barrier_dequeue(bc);
			barrier_owe_locked(bc, bio, BLK_STS_IOERR);
			bio_list_add(failed, bio);
			bc->held_failed--;
		}
		break;
	case HOLD_NR:
		break;
	}
	bc->held_failed = 0;
	barrier_set_hold(bc, HOLD_NONE);
	return true;
}

static void barrier_work(struct work_struct *work)
{
	struct barrier_c *bc = container_of(work, struct barrier_c, work);
	struct bio_list batch, failed;
	enum barrier_mode mode;
	struct bio *bio;

	for (;;) {
		bio_list_init(&batch);
		bio_list_init(&failed);

		spin_lock_irq(&bc->lock);
		/* A stray run: the direct barrier's completion kicks again. */
		if (bc->direct) {
			spin_unlock_irq(&bc->lock);
			return;
		}
		if (!barrier_resolve_hold(bc, &failed)) {
			spin_unlock_irq(&bc->lock);
			return;
		}
		if (!bio_list_empty(&failed)) {
			spin_unlock_irq(&bc->lock);
			while ((bio = bio_list_pop(&failed)))
				barrier_complete(bio, BLK_STS_IOERR);
			continue;
		}

		bio = bio_list_peek(&bc->queue);
		if (!bio) {
			barrier_open_gate_locked(bc);
			spin_unlock_irq(&bc->lock);
			return;
		}
		mode = bc->mode;

		if (!bio_is_barrier(bio)) {
			/* Release everything up to the next barrier. */
			while ((bio = bio_list_peek(&bc->queue)) && !bio_is_barrier(bio)) {
				barrier_dequeue(bc);
				barrier_account_issue(bc, bio);
				bio_list_add(&batch, bio);
			}
			spin_unlock_irq(&bc->lock);
			while ((bio = bio_list_pop(&batch)))
				barrier_submit_queued(bc, bio);
			continue;
		}

		bio_list_add(&batch, barrier_dequeue(bc));
		/* Empty flushes back to back are answered by one flush. */
		if (bio_is_empty_barrier(bio) && !bio_is_internal(bio)) {
			while ((bio = bio_list_peek(&bc->queue)) &&
			       bio_is_empty_barrier(bio) && !bio_is_internal(bio))
				bio_list_add(&batch, barrier_dequeue(bc));
		}
		spin_unlock_irq(&bc->lock);

		barrier_run(bc, &batch, mode);
	}
}

static void barrier_hold_work(struct work_struct *work)
{
	struct barrier_c *bc = container_of(to_delayed_work(work), struct barrier_c, hold_work);
	bool kick;

	spin_lock_irq(&bc->lock);
	kick = barrier_expire_hold(bc);
	spin_unlock_irq(&bc->lock);
	if (kick)
		barrier_kick(bc);
}

/* ------------------------------------------------------------ messages */

static void barrier_msg_endio(struct bio *bio)
{
	complete(bio->bi_private);
}

/*
 * An explicit barrier: drain and flush, in order with all other I/O.  The
 * caller waits inside dm core's table reference, so it is refused where it
 * could wait long or do I/O on a suspended device: while a hold (up to
 * hold_on_flush_error) keeps the queue, and from presuspend to resume.
 */
static int barrier_explicit(struct barrier_c *bc)
{
	DECLARE_COMPLETION_ONSTACK(done);
	struct bio bio;
	bool kick = false;
	int r = 0;

	bio_init(&bio, NULL, NULL, 0, REQ_OP_WRITE | REQ_PREFLUSH | REQ_SYNC);
	bio.bi_private = &done;
	bio.bi_end_io = barrier_msg_endio;

	spin_lock_irq(&bc->lock);
	if (bc->mode == MODE_NONE) {
		bc->stats.refused++;
		r = -EOPNOTSUPP;
	} else if (bc->run != RUN_ACTIVE) {
		r = -EAGAIN;
	} else if (bc->hold != HOLD_NONE) {
		r = -EBUSY;
	}
	if (r) {
		spin_unlock_irq(&bc->lock);
		bio_uninit(&bio);
		if (r != -EOPNOTSUPP)
			DMWARN("%s: barrier message refused: %s", barrier_name(bc),
			       r == -EBUSY ? "a failed flush is being held" : "suspended");
		return r;
	}
	bc->stats.barriers++;
	barrier_enqueue(bc, &bio);
	if (!bc->busy) {
		barrier_close_gate_locked(bc);
		kick = true;
	}
	spin_unlock_irq(&bc->lock);
	if (kick)
		barrier_kick(bc);

	wait_for_completion_io(&done);
	bio_uninit(&bio);
	return blk_status_to_errno(bio.bi_status);
}

/*
 * The one place a message changes the mode.  It answers the flush failures
 * met so far (barrier_owes()), and replays a hold under the new mode.
 */
static int barrier_set_mode(struct barrier_c *bc, enum barrier_mode mode)
{
	enum barrier_mode old;
	bool replay;

	spin_lock_irq(&bc->lock);
	old = bc->mode;
	bc->mode = mode;
	bc->forgiven_gen = bc->fail_gen;
	replay = barrier_replay_hold(bc);
	spin_unlock_irq(&bc->lock);

	if (old != mode) {
		DMINFO("%s: mode %s -> %s", barrier_name(bc), mode_names[old], mode_names[mode]);
		barrier_raise_event(bc);
	}
	if (replay) {
		cancel_delayed_work(&bc->hold_work);
		barrier_kick(bc);
	}
	return 0;
}

static int barrier_message(struct dm_target *ti, unsigned int argc, char **argv,
			   char *result, unsigned int maxlen)
{
	struct barrier_c *bc = ti->private;
	enum barrier_mode mode;

	if (argc == 2 && !strcasecmp(argv[0], "mode")) {
		if (parse_mode(argv[1], &mode)) {
			DMWARN("%s: unknown mode \"%s\" (flush, fua, drain, passthrough, none)",
			       barrier_name(bc), argv[1]);
			return -EINVAL;
		}
		return barrier_set_mode(bc, mode);
	}
	if (argc == 1 && !strcasecmp(argv[0], "reset_stats")) {
		spin_lock_irq(&bc->lock);
		memset(&bc->stats, 0, sizeof(bc->stats));
		spin_unlock_irq(&bc->lock);
		return 0;
	}
	if (argc == 1 && !strcasecmp(argv[0], "barrier"))
		return barrier_explicit(bc);

	DMWARN("%s: unrecognised message \"%s\"%s (mode <m>, reset_stats, barrier)",
	       barrier_name(bc), argc ? argv[0] : "", argc > 1 ? " ..." : "");
	return -EINVAL;
}

/* ---------------------------------------------------------- constructor */

/*
 * <dev_path> <offset> [<#feature_args> <feature_arg>...]
 * features: mode:<m> fallback:<none|drain> hold_on_flush_error:<ms>
 */
static int barrier_parse_features(struct dm_arg_set *as, struct barrier_c *bc,
				  char **error)
{
	static const struct dm_arg _args[] = {
		{0, 3, "Invalid number of feature arguments"},
	};
	bool seen_mode = false, seen_fallback = false, seen_hold = false;
	unsigned int argc;
	const char *arg, *val;
	int r;

	if (!as->argc)
		return 0;
	/* dm_read_arg_group() reads the count with sscanf(), which wraps on
	 * overflow; refuse anything but a plain decimal that fits.
	 */
	if (!isdigit(*as->argv[0]) || kstrtouint(as->argv[0], 10, &argc)) {
		*error = _args[0].error;
		return -EINVAL;
	}
	r = dm_read_arg_group(_args, as, &argc, error);
	if (r)
		return r;

	while (argc--) {
		arg = dm_shift_arg(as);
		val = strchr(arg, ':');
		if (!val) {
			*error = "Feature argument is not key:value";
			return -EINVAL;
		}
		val++;
		if (!strncmp(arg, "mode:", 5)) {
			if (seen_mode) {
				*error = "Duplicate mode: feature";
				return -EINVAL;
			}
			seen_mode = true;
			if (parse_mode(val, &bc->mode)) {
				*error = "Invalid mode (flush, fua, drain, passthrough, none)";
				return -EINVAL;
			}
		} else if (!strncmp(arg, "fallback:", 9)) {
			if (seen_fallback) {
				*error = "Duplicate fallback: feature";
				return -EINVAL;
			}
			seen_fallback = true;
			if (parse_mode(val, &bc->fallback) ||
			    (bc->fallback != MODE_NONE && bc->fallback != MODE_DRAIN)) {
				*error = "Invalid fallback (none, drain)";
				return -EINVAL;
			}
		} else if (!strncmp(arg, "hold_on_flush_error:", 20)) {
			if (seen_hold) {
				*error = "Duplicate hold_on_flush_error: feature";
				return -EINVAL;
			}
			seen_hold = true;
			if (!isdigit(*val) || kstrtouint(val, 10, &bc->hold_ms) ||
			    bc->hold_ms > BARRIER_MAX_HOLD_MS) {
				*error = "Invalid hold_on_flush_error (milliseconds, 0 to 60000)";
				return -EINVAL;
			}
		} else {
			*error = "Unknown feature (mode:, fallback:, hold_on_flush_error:)";
			return -EINVAL;
		}
	}
	if (as->argc) {
		*error = "Unexpected argument after the feature arguments";
		return -EINVAL;
	}
	return 0;
}

static int barrier_ctr(struct dm_target *ti, unsigned int argc, char **argv)
{
	struct mapped_device *md = dm_table_get_md(ti->table);
	struct dm_arg_set as = { .argc = argc, .argv = argv };
	struct barrier_c *bc;
	unsigned long long start;
	const char *devname, *arg;
	int r;

	if (argc < 2) {
		ti->error = "Invalid argument count: <dev_path> <offset> [features]";
		return -EINVAL;
	}

	bc = kzalloc(sizeof(*bc), GFP_KERNEL);
	if (!bc) {
		ti->error = "Cannot allocate barrier context";
		return -ENOMEM;
	}
	bc->ti = ti;
	bc->mode = MODE_FLUSH;
	bc->fallback = MODE_NONE;
	/* Unknown cache contents (a table reload, writes made without us):
	 * the first barrier flushes.
	 */
	bc->dirty = true;
	spin_lock_init(&bc->lock);
	bio_list_init(&bc->queue);
	init_waitqueue_head(&bc->drain_wait);
	INIT_WORK(&bc->work, barrier_work);
	INIT_DELAYED_WORK(&bc->hold_work, barrier_hold_work);
	INIT_WORK(&bc->event_work, barrier_event_work);

	devname = dm_shift_arg(&as);
	arg = dm_shift_arg(&as);
	r = -EINVAL;
	if (!isdigit(*arg) || kstrtoull(arg, 10, &start) || start != (sector_t)start) {
		ti->error = "Invalid device offset (sectors)";
		goto bad;
	}
	bc->start = start;

	r = barrier_parse_features(&as, bc, &ti->error);
	if (r)
		goto bad;

	r = dm_get_device(ti, devname, dm_table_get_mode(ti->table), &bc->dev);
	if (r) {
		ti->error = "Device lookup failed";
		goto bad;
	}
	if (bc->start > bdev_nr_sectors(bc->dev->bdev) ||
	    ti->len > bdev_nr_sectors(bc->dev->bdev) - bc->start) {
		ti->error = "Offset and length exceed the device";
		r = -EINVAL;
		goto bad_dev;
	}

	bc->parked = kzalloc(sizeof(*bc->parked), GFP_KERNEL);
	if (!bc->parked) {
		ti->error = "Cannot allocate the debts' parking space";
		r = -ENOMEM;
		goto bad_dev;
	}
	INIT_LIST_HEAD(&bc->parked->list);
	bc->parked->md = md;

	bc->pcpu = alloc_percpu(struct barrier_pcpu);
	if (!bc->pcpu) {
		ti->error = "Cannot allocate per-CPU counters";
		r = -ENOMEM;
		goto bad_parked;
	}

	r = bioset_init(&bc->bs, BIO_POOL_SIZE, 0, BIOSET_NEED_BVECS);
	if (r) {
		ti->error = "Cannot allocate bio set";
		goto bad_pcpu;
	}

	bc->wq = alloc_ordered_workqueue("kdmbarrierd/%s", WQ_MEM_RECLAIM, dm_disk(md)->disk_name);
	if (!bc->wq) {
		ti->error = "Cannot allocate workqueue";
		r = -ENOMEM;
		goto bad_bs;
	}

	bc->last_wc = dmb_bdev_write_cache(bc->dev->bdev);
	bc->last_fua = dmb_bdev_fua(bc->dev->bdev);
	bc->lower_mq = queue_is_mq(bdev_get_queue(bc->dev->bdev));

	ti->num_flush_bios = 1;
	ti->num_discard_bios = 1;
	ti->num_secure_erase_bios = 1;
	ti->num_write_zeroes_bios = 1;
	/* Advertise a write cache and FUA even over write-through disks, so
	 * barriers reach map() and keep their order in every mode.
	 */
	ti->flush_supported = true;
	ti->accounts_remapped_io = true;
	ti->per_io_data_size = sizeof(struct barrier_pb);
	ti->private = bc;
	return 0;

bad_bs:
	bioset_exit(&bc->bs);
bad_pcpu:
	free_percpu(bc->pcpu);
bad_parked:
	kfree(bc->parked);
bad_dev:
	dm_put_device(ti, bc->dev);
bad:
	kfree(bc);
	return r;
}

static void barrier_dtr(struct dm_target *ti)
{
	struct barrier_c *bc = ti->private;

	cancel_delayed_work_sync(&bc->hold_work);
	destroy_workqueue(bc->wq);
	cancel_work_sync(&bc->event_work);
	WARN_ON_ONCE(!bio_list_empty(&bc->queue));
	/* Parked debts no table took: nobody is left to send their bios. */
	mutex_lock(&dmb_parked_lock);
	list_del_init(&bc->parked->list);
	mutex_unlock(&dmb_parked_lock);
	kfree(bc->parked);
	bioset_exit(&bc->bs);
	free_percpu(bc->pcpu);
	dm_put_device(ti, bc->dev);
	kfree(bc);
}

/* ------------------------------------------------------------- suspend */

/*
 * A suspend must not wait on a hold: end it now, as if it had expired.
 * Bios already queued keep flowing, in order, so dm core's wait for
 * in-flight I/O ends; no bio is lost or completed twice.  (Requeueing held
 * bios to dm core cannot keep them ordered against bios still entering
 * map() until dm blocks I/O, so they are resolved here instead.)  The
 * held pre-flushes fail and owe; their data parts may reach dm core only
 * after the resume, and on another table: postsuspend parks the debts for
 * it (see struct barrier_parked).
 */
static void barrier_presuspend(struct dm_target *ti)
{
	struct barrier_c *bc = ti->private;
	bool kick;

	spin_lock_irq(&bc->lock);
	bc->run = RUN_SUSPENDING;
	barrier_expire_hold(bc);
	kick = bc->hold != HOLD_NONE;
	spin_unlock_irq(&bc->lock);
	if (kick) {
		cancel_delayed_work(&bc->hold_work);
		barrier_kick(bc);
	}
}

static void barrier_presuspend_undo(struct dm_target *ti)
{
	struct barrier_c *bc = ti->private;

	spin_lock_irq(&bc->lock);
	bc->run = RUN_ACTIVE;
	spin_unlock_irq(&bc->lock);
}

/* This table's debts, for the next table of its device that resumes. */
static void barrier_park_debts(struct barrier_c *bc)
{
	struct barrier_parked *p = bc->parked;

	mutex_lock(&dmb_parked_lock);
	spin_lock_irq(&bc->lock);
	if (bc->nr_debts && list_empty(&p->list)) {
		memcpy(p->debts, bc->debts, sizeof(bc->debts[0]) * bc->nr_debts);
		p->nr = bc->nr_debts;
		WRITE_ONCE(bc->nr_debts, 0);
		list_add_tail(&p->list, &dmb_parked);
	}
	spin_unlock_irq(&bc->lock);
	mutex_unlock(&dmb_parked_lock);
}

/*
 * Take the debts parked under this device whose bio starts in this
 * target's range: the data parts dm core sends after the resume come here.
 * A table that resumes without a barrier target there leaves them parked
 * until the table that parked them is destroyed.
 */
static void barrier_adopt_debts(struct barrier_c *bc)
{
	struct mapped_device *md = dm_table_get_md(bc->ti->table);
	sector_t begin = bc->ti->begin, end = bc->ti->begin + bc->ti->len;
	struct barrier_parked *p, *tmp;
	struct barrier_debt *d;
	unsigned int i, kept;

	mutex_lock(&dmb_parked_lock);
	list_for_each_entry_safe(p, tmp, &dmb_parked, list) {
		if (p->md != md)
			continue;
		kept = 0;
		spin_lock_irq(&bc->lock);
		for (i = 0; i < p->nr; i++) {
			d = &p->debts[i];
			if (d->sector < begin || d->sector >= end ||
			    bc->nr_debts == BARRIER_MAX_DEBTS) {
				p->debts[kept++] = *d;
				continue;
			}
			bc->debts[bc->nr_debts] = *d;
			WRITE_ONCE(bc->nr_debts, bc->nr_debts + 1);
		}
		spin_unlock_irq(&bc->lock);
		p->nr = kept;
		if (!kept)
			list_del_init(&p->list);
	}
	mutex_unlock(&dmb_parked_lock);
}

static void barrier_postsuspend(struct dm_target *ti)
{
	struct barrier_c *bc = ti->private;

	flush_workqueue(bc->wq);
	spin_lock_irq(&bc->lock);
	bc->run = RUN_SUSPENDED;
	spin_unlock_irq(&bc->lock);
	barrier_park_debts(bc);
}

static void barrier_resume(struct dm_target *ti)
{
	struct barrier_c *bc = ti->private;

	barrier_adopt_debts(bc);
	spin_lock_irq(&bc->lock);
	bc->run = RUN_ACTIVE;
	spin_unlock_irq(&bc->lock);
}

/* -------------------------------------------------------------- status */

static void barrier_status(struct dm_target *ti, status_type_t type,
			   unsigned int status_flags, char *result, unsigned int maxlen)
{
	struct barrier_c *bc = ti->private;
	struct barrier_stats s;
	enum barrier_mode mode;
	unsigned int held, nfeat, debts;
	bool wc, fua, event;
	size_t sz = 0;

	spin_lock_irq(&bc->lock);
	event = barrier_note_cache(bc);
	s = bc->stats;
	mode = bc->mode;
	held = bc->hold != HOLD_NONE ? bc->queued_barriers : 0;
	debts = bc->nr_debts;
	wc = bc->last_wc;
	fua = bc->last_fua;
	spin_unlock_irq(&bc->lock);
	if (event)
		barrier_raise_event(bc);

	switch (type) {
	case STATUSTYPE_INFO:
		/* 1.1 appended debts: data parts owing a failed pre-flush now. */
		DMEMIT("%s %s %s %llu %llu %llu %llu %llu %u %llu %llu %llu %llu %llu %llu %u",
		       mode_names[mode], wc ? "writeback" : "writethrough",
		       fua ? "fua" : "nofua",
		       s.barriers, s.flushes, s.fua_writes, s.flush_errors, s.fallbacks,
		       held, div_u64(s.max_drain_ns, NSEC_PER_USEC),
		       s.shared, s.no_cache, s.refused, s.replayed, s.cache_changes, debts);
		break;
	case STATUSTYPE_TABLE:
		/* Defaults are left out; mode is the current one, so a reload of
		 * this line keeps a mode set by message or by a fallback.
		 */
		nfeat = (mode != MODE_FLUSH) + (bc->fallback != MODE_NONE) + !!bc->hold_ms;
		DMEMIT("%s %llu", bc->dev->name, (unsigned long long)bc->start);
		if (nfeat)
			DMEMIT(" %u", nfeat);
		if (mode != MODE_FLUSH)
			DMEMIT(" mode:%s", mode_names[mode]);
		if (bc->fallback != MODE_NONE)
			DMEMIT(" fallback:%s", mode_names[bc->fallback]);
		if (bc->hold_ms)
			DMEMIT(" hold_on_flush_error:%u", bc->hold_ms);
		break;
	case STATUSTYPE_IMA:
		DMEMIT_TARGET_NAME_VERSION(ti->type);
		DMEMIT(",device_name=%s,start=%llu,mode=%s,fallback=%s,hold_on_flush_error=%u;",
		       bc->dev->name, (unsigned long long)bc->start, mode_names[mode],
		       mode_names[bc->fallback], bc->hold_ms);
		break;
	}
}

/* --------------------------------------------------------- device glue */

static int barrier_ioctl_bdev(struct dm_target *ti, struct block_device **bdev)
{
	struct barrier_c *bc = ti->private;

	*bdev = bc->dev->bdev;
	/* Only pass ioctls through if the mapping is the whole device. */
	return bc->start || ti->len != bdev_nr_sectors(bc->dev->bdev);
}

static int barrier_iterate_devices(struct dm_target *ti, iterate_devices_callout_fn fn,
				   void *data)
{
	struct barrier_c *bc = ti->private;

	return fn(ti, bc->dev, bc->start, ti->len, data);
}

/*
 * dm core has stacked the backing device's limits through
 * iterate_devices(); keep its block sizes exactly, so a filesystem made on
 * the mapping sees the disk's own sector and I/O sizes.
 */
static void barrier_io_hints(struct dm_target *ti, struct queue_limits *limits)
{
	struct barrier_c *bc = ti->private;
	struct block_device *bdev = bc->dev->bdev;

	limits->logical_block_size = bdev_logical_block_size(bdev);
	limits->physical_block_size = bdev_physical_block_size(bdev);
	limits->io_min = max(limits->io_min, bdev_io_min(bdev));
}

static struct target_type barrier_target = {
	.name = "barrier",
	.version = {1, 1, 0},
	/*
	 * map() never sleeps (no lock on the fast path, a spin lock behind
	 * the gate; barriers and what arrives behind them are queued for the
	 * worker), so REQ_NOWAIT bios are welcome:
	 * without this the dm device does not advertise nowait and io_uring
	 * hands every O_DIRECT I/O to an io-wq thread, as it does not on
	 * dm-linear.
	 */
	.features = DM_TARGET_NOWAIT,
	.module = THIS_MODULE,
	.ctr = barrier_ctr,
	.dtr = barrier_dtr,
	.map = barrier_map,
	.end_io = barrier_end_io,
	.presuspend = barrier_presuspend,
	.presuspend_undo = barrier_presuspend_undo,
	.postsuspend = barrier_postsuspend,
	.resume = barrier_resume,
	.status = barrier_status,
	.message = barrier_message,
	.prepare_ioctl = dmb_prepare_ioctl,
	.iterate_devices = barrier_iterate_devices,
	.io_hints = barrier_io_hints,
};

static int __init dm_barrier_init(void)
{
	int r = dm_register_target(&barrier_target);

	if (r < 0)
		DMERR("register failed %d", r);
	return r;
}

static void __exit dm_barrier_exit(void)
{
	dm_unregister_target(&barrier_target);
}

module_init(dm_barrier_init);
module_exit(dm_barrier_exit);

MODULE_DESCRIPTION(DM_NAME " target that orders barrier bios: drain, flush, write, flush");
MODULE_AUTHOR("The dm-barrier authors");
MODULE_LICENSE("GPL");
