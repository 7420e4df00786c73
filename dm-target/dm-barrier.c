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
 * device has drained.  When the queue empties the fast path resumes.
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
#include <linux/device-mapper.h>

#include "dm-barrier-compat.h"

#define DM_MSG_PREFIX "barrier"

/* See barrier_map_direct(); off, every barrier goes through the worker. */
static bool dmb_direct = true;
module_param_named(direct, dmb_direct, bool, 0644);
MODULE_PARM_DESC(direct, "Issue a barrier that finds the target idle straight to the backing queue's flush sequence (default: on; off: always through the worker)");

#define BARRIER_MAX_HOLD_MS 600000U

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

struct barrier_c {
	struct dm_target *ti;
	struct dm_dev *dev;
	sector_t start;

	/* Table features; mode is the current mode (messages, fallbacks). */
	enum barrier_mode fallback;
	unsigned int hold_ms;

	spinlock_t lock;		/* protects everything up to inflight */
	enum barrier_mode mode;
	struct bio_list queue;		/* bios waiting, in arrival order */
	unsigned int queued_barriers;	/* barrier bios in queue */
	bool busy;			/* the worker owns the queue */
	bool dirty;			/* writes issued since the last flush */
	bool flush_debt;		/* an empty flush failed; see run_batch() */
	bool holding;			/* queue head: barriers whose flush failed */
	unsigned int held_failed;	/* ... how many of them */
	bool hold_expired;
	bool hold_replay;
	bool suspending;
	bool last_wc;
	bool last_fua;
	bool direct;			/* a barrier map() sent down is in flight */
	bool lower_mq;			/* the backing queue is blk-mq (has blk-flush) */
	struct barrier_stats stats;

	atomic_t inflight;		/* issued bios not yet completed */
	wait_queue_head_t drain_wait;

	struct workqueue_struct *wq;
	struct work_struct work;	/* runs the queue */
	struct delayed_work hold_work;	/* ends a hold */
	struct work_struct event_work;	/* dm_table_event() may sleep */
	struct bio_set bs;		/* clones for barrier data writes */
};

/* Per dm clone. */
struct barrier_pb {
	bool counted;			/* in ->inflight */
	bool direct;			/* a barrier map() sent down itself */
	bool data;			/* ... with data */
	u8 mode, eff;			/* ... the mode then, and what it ran as */
	struct block_device *bdev;	/* ... and what it was, to hold and */
	blk_opf_t opf;			/*     replay it if it fails */
	struct bvec_iter iter;
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
 * whose place in the order is already fixed.
 */
static void barrier_submit_queued(struct barrier_c *bc, struct bio *bio)
{
	bio->bi_opf &= ~REQ_NOWAIT;
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
	atomic_inc(&bc->inflight);
	if (op_is_write(bio_op(bio)))
		bc->dirty = true;
}

static void barrier_kick(struct barrier_c *bc)
{
	queue_work(bc->wq, &bc->work);
}

/* Called with bc->lock held. */
static void barrier_enqueue(struct barrier_c *bc, struct bio *bio)
{
	bio_list_add(&bc->queue, bio);
	if (bio_is_barrier(bio))
		bc->queued_barriers++;
}

static struct bio *barrier_dequeue(struct barrier_c *bc)
{
	struct bio *bio = bio_list_pop(&bc->queue);

	if (bio && bio_is_barrier(bio))
		bc->queued_barriers--;
	return bio;
}

static int barrier_map(struct dm_target *ti, struct bio *bio)
{
	struct barrier_c *bc = ti->private;
	struct barrier_pb *pb = dm_per_bio_data(bio, sizeof(struct barrier_pb));
	bool barrier = bio_is_barrier(bio);
	bool event = false, kick = false;
	int way = DIRECT_NO;
	unsigned long flags;

	pb->counted = false;
	pb->direct = false;

	spin_lock_irqsave(&bc->lock, flags);
	if (barrier) {
		bc->stats.barriers++;
		event = barrier_note_cache(bc);
	}
	if (bc->busy) {
		/* Behind a barrier: wait for it, whatever this bio is. */
		barrier_enqueue(bc, bio);
		spin_unlock_irqrestore(&bc->lock, flags);
		if (event)
			barrier_raise_event(bc);
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
		spin_unlock_irqrestore(&bc->lock, flags);
		if (event)
			barrier_raise_event(bc);
		bio->bi_status = BLK_STS_NOTSUPP;
		bio_endio(bio);
		return DM_MAPIO_SUBMITTED;
	default:
		way = barrier_map_direct(bc, bio, pb);
		if (way != DIRECT_NO)
			break;
		barrier_enqueue(bc, bio);
		bc->busy = true;
		kick = true;
		break;
	}
	spin_unlock_irqrestore(&bc->lock, flags);
	if (way == DIRECT_DONE) {
		if (event)
			barrier_raise_event(bc);
		bio_endio(bio);
		return DM_MAPIO_SUBMITTED;
	}
	if (event)
		barrier_raise_event(bc);
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
	}
	if (atomic_dec_and_test(&bc->inflight))
		wake_up(&bc->drain_wait);
	return DM_ENDIO_DONE;
}

static void barrier_complete(struct bio *bio, blk_status_t status)
{
	bio->bi_status = status;
	bio_endio(bio);
}

/* Wait until every bio issued so far has completed. */
static void barrier_drain(struct barrier_c *bc)
{
	u64 start = ktime_get_ns(), took;

	wait_event(bc->drain_wait, !atomic_read(&bc->inflight));
	took = ktime_get_ns() - start;

	spin_lock_irq(&bc->lock);
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
	bc->dirty = false;
	spin_unlock_irq(&bc->lock);

	r = blkdev_issue_flush(bc->dev->bdev);
	if (r) {
		spin_lock_irq(&bc->lock);
		bc->dirty = true;
		spin_unlock_irq(&bc->lock);
	}
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
	/* The worker may block: see barrier_submit_queued(). */
	clone->bi_opf &= ~(REQ_PREFLUSH | REQ_FUA | REQ_NOWAIT);
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

/*
 * A flush (or FUA write) the target issued failed: count it and fall back
 * once per transition.  Called with bc->lock held; returns true on a
 * transition, which the caller logs with barrier_log_fallback().
 */
static bool barrier_fall_back(struct barrier_c *bc, enum barrier_mode was)
{
	bc->stats.flush_errors++;
	if (bc->mode != was || (was != MODE_FLUSH && was != MODE_FUA))
		return false;
	bc->mode = bc->fallback;
	bc->stats.fallbacks++;
	return true;
}

static void barrier_log_fallback(struct barrier_c *bc, int err)
{
	if (bc->fallback == MODE_NONE)
		DMERR("%s: cache flush failed (error %d); %s",
		      barrier_name(bc), err, "ordered writes disabled (mode none)");
	else
		DMERR("%s: cache flush failed (error %d); falling back to mode %s",
		      barrier_name(bc), err, mode_names[bc->fallback]);
}

/*
 * The worker's flush failed: fall back, tell userspace.  Returns true when
 * the failed barriers are to be held rather than failed.
 */
static bool barrier_flush_failed(struct barrier_c *bc, enum barrier_mode was, int err,
				 bool holdable)
{
	bool transition, hold;

	spin_lock_irq(&bc->lock);
	transition = barrier_fall_back(bc, was);
	hold = holdable && bc->hold_ms && !bc->suspending;
	spin_unlock_irq(&bc->lock);

	if (transition)
		barrier_log_fallback(bc, err);
	barrier_raise_event(bc);
	return hold;
}

/* Put a batch whose flush failed back at the head of the queue and wait. */
static void barrier_hold_locked(struct barrier_c *bc, struct bio_list *batch)
{
	unsigned int n = bio_list_size(batch);
	struct bio *bio;

	bio_list_for_each(bio, batch)
		bc->queued_barriers++;
	bio_list_merge_head(&bc->queue, batch);
	bc->holding = true;
	bc->held_failed = n;
	bc->hold_expired = false;
	bc->hold_replay = false;
	queue_delayed_work(bc->wq, &bc->hold_work, msecs_to_jiffies(bc->hold_ms));
}

static void barrier_hold(struct barrier_c *bc, struct bio_list *batch)
{
	spin_lock_irq(&bc->lock);
	barrier_hold_locked(bc, batch);
	spin_unlock_irq(&bc->lock);
}

/*
 * What a flush or fua barrier runs as on the backing device as it is now:
 * drain on a write-through queue (completion means stable; order, do not
 * flush), flush for fua without FUA.  Called with bc->lock held.
 */
static enum barrier_mode barrier_effective_mode(struct barrier_c *bc, enum barrier_mode mode)
{
	if ((mode == MODE_FLUSH || mode == MODE_FUA) && !bc->last_wc)
		return MODE_DRAIN;
	if (mode == MODE_FUA && !bc->last_fua)
		return MODE_FLUSH;
	return mode;
}

/*
 * The direct way, for a barrier that finds the target idle: nothing of ours
 * in flight or queued, so the drain is done.  The bio goes down as it is,
 * with the flags its mode needs, and the backing queue's flush sequence
 * (block/blk-flush.c) runs pre-flush, write and FUA write or post-flush on
 * the disk, each step after the last completed, as the worker would, minus
 * the worker's wake-ups.  The target stays busy until it completes, so
 * nothing after it starts before.  Left to the worker: a busy target, an
 * explicit post-flush (mode flush on a disk with FUA), a flush debt, a
 * REQ_NOWAIT bio (the disk's -EAGAIN would read as a failed flush), and a
 * pre-flush with data over a bio-based device (a stacked dm device, whose
 * core drops the error of that pre-flush), and a bio the disk would split.
 * Called with bc->lock held.
 */
static int barrier_map_direct(struct barrier_c *bc, struct bio *bio, struct barrier_pb *pb)
{
	struct request_queue *q = bdev_get_queue(bc->dev->bdev);
	bool data = bio_sectors(bio) > 0;
	enum barrier_mode eff = bc->mode;
	blk_opf_t opf = 0;

	if (!READ_ONCE(dmb_direct) || atomic_read(&bc->inflight) || bc->flush_debt ||
	    (bio->bi_opf & REQ_NOWAIT))
		return DIRECT_NO;
	eff = barrier_effective_mode(bc, eff);
	if (eff == MODE_FLUSH && data && bc->last_fua)
		return DIRECT_NO;
	if (eff != MODE_DRAIN && data && bc->dirty && !bc->lower_mq)
		return DIRECT_NO;
	/* One request, or the disk would run a flush sequence per piece. */
	if (data && (bio_sectors(bio) > queue_max_sectors(q) ||
		     bio_segments(bio) > queue_max_segments(q)))
		return DIRECT_NO;

	if (eff == MODE_DRAIN && bc->mode != MODE_DRAIN)
		bc->stats.no_cache++;
	if (eff != MODE_DRAIN) {
		if (bc->dirty) {
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
		bc->dirty = false;
	} else if (data) {
		bc->dirty = true;
	}
	if (!opf && !data)
		return DIRECT_DONE;

	pb->direct = true;
	pb->data = data;
	pb->mode = bc->mode;
	pb->eff = eff;
	pb->bdev = bio->bi_bdev;
	pb->opf = bio->bi_opf;
	pb->iter = bio->bi_iter;
	pb->bi_flags = bio->bi_flags;
	pb->remaining = atomic_read(&bio->__bi_remaining);
	bio->bi_opf = (bio->bi_opf & ~(REQ_PREFLUSH | REQ_FUA)) | opf;
	bc->busy = true;
	bc->direct = true;
	return DIRECT_ISSUE;
}

/*
 * A direct barrier completed, maybe in interrupt context.  A failure is a
 * failed flush when the mode flushed (the sequence ran as one, so a write
 * error in it counts as one too): fall back, and with hold_on_flush_error
 * restore the bio and hold it, as the worker holds its own.  Then whatever
 * queued behind it runs.
 */
static int barrier_direct_endio(struct barrier_c *bc, struct bio *bio, struct barrier_pb *pb,
				blk_status_t *error)
{
	bool failed = *error && pb->eff != MODE_DRAIN;
	bool transition = false, held = false, kick;
	int err = blk_status_to_errno(*error);
	struct bio_list batch;
	unsigned long flags;

	pb->direct = false;
	spin_lock_irqsave(&bc->lock, flags);
	bc->direct = false;
	if (*error)
		bc->dirty = true;
	if (failed) {
		transition = barrier_fall_back(bc, pb->mode);
		if (bc->hold_ms && !bc->suspending) {
			bio->bi_bdev = pb->bdev;
			bio->bi_opf = pb->opf;
			bio->bi_iter = pb->iter;
			bio->bi_flags = pb->bi_flags;
			atomic_set(&bio->__bi_remaining, pb->remaining);
			bio->bi_status = BLK_STS_OK;
			bio_list_init(&batch);
			bio_list_add(&batch, bio);
			barrier_hold_locked(bc, &batch);
			held = true;
		} else {
			if (!pb->data)
				bc->flush_debt = true;
			*error = BLK_STS_IOERR;
		}
	}
	kick = held || !bio_list_empty(&bc->queue);
	if (!kick)
		bc->busy = false;
	spin_unlock_irqrestore(&bc->lock, flags);

	if (transition)
		barrier_log_fallback(bc, err);
	if (failed)
		barrier_raise_event(bc);
	if (kick && !held)
		barrier_kick(bc);
	return held ? DM_ENDIO_INCOMPLETE : DM_ENDIO_DONE;
}

/*
 * Run one barrier transaction for @batch: one barrier, or several empty
 * flushes that arrived back to back and share one flush.  The device has
 * nothing of ours in flight while it runs, and nothing else is issued
 * until it ends.
 */
static void barrier_run(struct barrier_c *bc, struct bio_list *batch, enum barrier_mode mode)
{
	struct bio *first = bio_list_peek(batch);
	bool data = bio_sectors(first) > 0;
	bool internal = bio_is_internal(first);
	unsigned int n = bio_list_size(batch);
	blk_status_t status = BLK_STS_OK;
	enum barrier_mode eff = mode;
	bool event, flush_needed, failed = false;
	int r = 0;

	barrier_drain(bc);

	spin_lock_irq(&bc->lock);
	event = barrier_note_cache(bc);
	/*
	 * An explicit barrier drains and flushes in every mode but none, also
	 * in drain and on a write-through queue: it is how userspace probes
	 * whether the cache still takes flushes.
	 */
	if (internal && eff != MODE_NONE) {
		eff = MODE_FLUSH;
	} else {
		eff = barrier_effective_mode(bc, eff);
		if (eff == MODE_DRAIN && mode != MODE_DRAIN)
			bc->stats.no_cache += n;
	}
	/*
	 * dm core (6.1) ignores the error of the empty flush it sends ahead
	 * of a REQ_PREFLUSH bio's data and sends the data anyway.  So when an
	 * empty flush failed and no flush has succeeded since, the next data
	 * barrier, usually that very data part, must not succeed either.
	 */
	if (data && bc->flush_debt && !internal && eff != MODE_PASSTHROUGH) {
		bc->flush_debt = false;
		spin_unlock_irq(&bc->lock);
		if (event)
			barrier_raise_event(bc);
		barrier_complete(first, mode == MODE_NONE ? BLK_STS_NOTSUPP : BLK_STS_IOERR);
		return;
	}
	flush_needed = (eff == MODE_FLUSH || eff == MODE_FUA) && (bc->dirty || internal);
	if ((eff == MODE_FLUSH || eff == MODE_FUA) && !flush_needed)
		bc->stats.shared += n;
	else if (flush_needed)
		bc->stats.shared += n - 1;
	spin_unlock_irq(&bc->lock);
	if (event)
		barrier_raise_event(bc);

	switch (eff) {
	case MODE_NONE:
		spin_lock_irq(&bc->lock);
		bc->stats.refused += n;
		spin_unlock_irq(&bc->lock);
		status = BLK_STS_NOTSUPP;
		goto out;
	case MODE_PASSTHROUGH:
		/* Queued before a switch to passthrough: issue as they are. */
		while ((first = bio_list_pop(batch))) {
			spin_lock_irq(&bc->lock);
			barrier_count_passthrough(bc, first);
			barrier_account_issue(bc, first);
			spin_unlock_irq(&bc->lock);
			barrier_submit_queued(bc, first);
		}
		return;
	default:
		break;
	}

	if (flush_needed) {
		r = barrier_flush(bc);
		if (r) {
			failed = true;
			status = errno_to_blk_status(r);
			goto out;
		}
	}
	if (data) {
		status = barrier_write(bc, first, eff == MODE_FUA);
		if (status) {
			failed = eff == MODE_FUA;
			r = blk_status_to_errno(status);
			goto out;
		}
		if (eff == MODE_FLUSH) {
			r = barrier_flush(bc);
			if (r) {
				failed = true;
				status = errno_to_blk_status(r);
				goto out;
			}
		}
	}

out:
	if (failed) {
		if (barrier_flush_failed(bc, mode, r, !internal)) {
			barrier_hold(bc, batch);
			return;
		}
		status = BLK_STS_IOERR;
	}
	spin_lock_irq(&bc->lock);
	if (failed && !data && !internal)
		bc->flush_debt = true;
	else if (!failed && flush_needed)
		bc->flush_debt = false;
	spin_unlock_irq(&bc->lock);

	while ((first = bio_list_pop(batch)))
		barrier_complete(first, status);
}

/*
 * Resolve a hold, with bc->lock held.  Returns false when it is still
 * waiting.  Expired: the barriers whose flush failed fail with EIO and the
 * rest of the queue runs under the current mode.  A mode change replays
 * them under the new mode.
 */
static bool barrier_resolve_hold(struct barrier_c *bc, struct bio_list *failed)
{
	if (bc->hold_replay) {
		bc->stats.replayed += bc->held_failed;
	} else if (bc->hold_expired) {
		while (bc->held_failed) {
			bio_list_add(failed, barrier_dequeue(bc));
			bc->held_failed--;
		}
	} else {
		return false;
	}
	bc->holding = false;
	bc->held_failed = 0;
	bc->hold_replay = false;
	bc->hold_expired = false;
	return true;
}

static void barrier_work(struct work_struct *work)
{
	struct barrier_c *bc = container_of(work, struct barrier_c, work);
	struct bio_list batch, failed;
	enum barrier_mode mode;
	struct bio *bio;
	bool debt;

	for (;;) {
		bio_list_init(&batch);
		bio_list_init(&failed);

		spin_lock_irq(&bc->lock);
		/* A stray run: the direct barrier's completion kicks again. */
		if (bc->direct) {
			spin_unlock_irq(&bc->lock);
			return;
		}
		if (bc->holding && !barrier_resolve_hold(bc, &failed)) {
			spin_unlock_irq(&bc->lock);
			return;
		}
		if (!bio_list_empty(&failed)) {
			debt = false;
			bio_list_for_each(bio, &failed)
				debt |= !bio_sectors(bio);
			bc->flush_debt |= debt;
			spin_unlock_irq(&bc->lock);
			while ((bio = bio_list_pop(&failed)))
				barrier_complete(bio, BLK_STS_IOERR);
			continue;
		}

		bio = bio_list_peek(&bc->queue);
		if (!bio) {
			bc->busy = false;
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
	kick = bc->holding;
	if (kick)
		bc->hold_expired = true;
	spin_unlock_irq(&bc->lock);
	if (kick)
		barrier_kick(bc);
}

/* ------------------------------------------------------------ messages */

static void barrier_msg_endio(struct bio *bio)
{
	complete(bio->bi_private);
}

/* An explicit barrier: drain and flush, in order with all other I/O. */
static int barrier_explicit(struct barrier_c *bc)
{
	DECLARE_COMPLETION_ONSTACK(done);
	struct bio bio;
	bool kick = false;

	bio_init(&bio, NULL, NULL, 0, REQ_OP_WRITE | REQ_PREFLUSH | REQ_SYNC);
	bio.bi_private = &done;
	bio.bi_end_io = barrier_msg_endio;

	spin_lock_irq(&bc->lock);
	if (bc->mode == MODE_NONE) {
		bc->stats.refused++;
		spin_unlock_irq(&bc->lock);
		bio_uninit(&bio);
		return -EOPNOTSUPP;
	}
	bc->stats.barriers++;
	barrier_enqueue(bc, &bio);
	if (!bc->busy) {
		bc->busy = true;
		kick = true;
	}
	spin_unlock_irq(&bc->lock);
	if (kick)
		barrier_kick(bc);

	wait_for_completion_io(&done);
	bio_uninit(&bio);
	return blk_status_to_errno(bio.bi_status);
}

static int barrier_set_mode(struct barrier_c *bc, enum barrier_mode mode)
{
	enum barrier_mode old;
	bool replay;

	spin_lock_irq(&bc->lock);
	old = bc->mode;
	bc->mode = mode;
	replay = bc->holding;
	if (replay)
		bc->hold_replay = true;
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
				*error = "Invalid hold_on_flush_error (milliseconds, 0 to 600000)";
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
	atomic_set(&bc->inflight, 0);
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

	r = bioset_init(&bc->bs, BIO_POOL_SIZE, 0, BIOSET_NEED_BVECS);
	if (r) {
		ti->error = "Cannot allocate bio set";
		goto bad_dev;
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
	bioset_exit(&bc->bs);
	dm_put_device(ti, bc->dev);
	kfree(bc);
}

/* ------------------------------------------------------------- suspend */

/*
 * A suspend must not wait on a hold: end it now, as if it had expired.
 * Bios already queued keep flowing, in order, so dm core's wait for
 * in-flight I/O ends; no bio is lost or completed twice.  (Requeueing held
 * bios to dm core cannot keep them ordered against bios still entering
 * map() until dm blocks I/O, so they are resolved here instead.)
 */
static void barrier_presuspend(struct dm_target *ti)
{
	struct barrier_c *bc = ti->private;
	bool kick;

	spin_lock_irq(&bc->lock);
	bc->suspending = true;
	kick = bc->holding;
	if (kick)
		bc->hold_expired = true;
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
	bc->suspending = false;
	spin_unlock_irq(&bc->lock);
}

static void barrier_postsuspend(struct dm_target *ti)
{
	struct barrier_c *bc = ti->private;

	flush_workqueue(bc->wq);
}

static void barrier_resume(struct dm_target *ti)
{
	barrier_presuspend_undo(ti);
}

/* -------------------------------------------------------------- status */

static void barrier_status(struct dm_target *ti, status_type_t type,
			   unsigned int status_flags, char *result, unsigned int maxlen)
{
	struct barrier_c *bc = ti->private;
	struct barrier_stats s;
	enum barrier_mode mode;
	unsigned int held, nfeat;
	bool wc, fua, event;
	size_t sz = 0;

	spin_lock_irq(&bc->lock);
	event = barrier_note_cache(bc);
	s = bc->stats;
	mode = bc->mode;
	held = bc->holding ? bc->queued_barriers : 0;
	wc = bc->last_wc;
	fua = bc->last_fua;
	spin_unlock_irq(&bc->lock);
	if (event)
		barrier_raise_event(bc);

	switch (type) {
	case STATUSTYPE_INFO:
		DMEMIT("%s %s %s %llu %llu %llu %llu %llu %u %llu %llu %llu %llu %llu %llu",
		       mode_names[mode], wc ? "writeback" : "writethrough",
		       fua ? "fua" : "nofua",
		       s.barriers, s.flushes, s.fua_writes, s.flush_errors, s.fallbacks,
		       held, div_u64(s.max_drain_ns, NSEC_PER_USEC),
		       s.shared, s.no_cache, s.refused, s.replayed, s.cache_changes);
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
	.version = {1, 0, 0},
	/*
	 * map() never sleeps (a spin lock; barriers and what arrives behind
	 * them are queued for the worker), so REQ_NOWAIT bios are welcome:
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
