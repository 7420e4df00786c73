// SPDX-License-Identifier: GPL-2.0
/*
 * dmb_fault: a device-mapper target for dm-barrier's guest tests only.
 *
 * It sits under a barrier mapping (barrier -> dmb_fault -> disk) and plays a
 * disk whose faults change while the test runs, which QEMU's blkdebug cannot
 * do: flushes, FUA writes or writes to chosen sectors fail with a chosen
 * status without reaching the disk, bios are delayed, or held until released.
 * Every bio it sees is logged for the tests' ordering oracle.  Not for use
 * on real data.
 *
 * Table: <dev_path> <offset> [<#features> <feature>...]
 *   flush_supported: the mapping advertises a write cache and FUA whatever
 *   the disk does (a SCSI disk with FUA over QEMU's ATA disk, which has none).
 *
 * Messages (bad input: -EINVAL, a warning, and nothing changes):
 *   fail_flush <N|all|off> [EIO|NOSPC|MEDIUM|AGAIN] [lose]
 *	the next N empty flushes fail with that status (default EIO); with
 *	"lose", the first of them also loses the volatile cache (below).
 *   fail_fua <N|all|off> [status]: the same for writes carrying REQ_FUA.
 *   fail_write <start> <len> <N|all|off> [status]
 *	writes overlapping target sectors [start, start + len) fail; up to
 *	FAULT_RANGES ranges; "fail_write off" clears them all.
 *   delay <ms>: every bio waits <ms> before it is sent down (0: off).
 *   stall on|off: every bio waits until "stall off".
 *   clear: every fault, delay and stall off; held bios are sent down.
 *   log_clear: empty the log (shared by all dmb_fault mappings).
 *   powercut: the volatile cache is lost now (below).
 *   cache_reset: forget the volatile cache (its writes stay as written).
 *
 * The volatile cache (1.2; issue 27, H2): a drive whose flush fails may
 * have lost what its cache held, and so does every power cut.  The target
 * keeps the writes (W bios without FUA) that completed since the flush
 * that covers them: a successful empty flush covers the writes completed
 * by its submit time.  A loss takes them all at once (under the lock that
 * orders completions, so the log says exactly which: those completed
 * before its time that no successful flush had covered by then) and
 * writes zeroes over them on the disk, before the lossy flush fails or
 * the powercut message returns.  A FUA write is stable when it completes.
 * The model assumes each sector is written once between flushes (the
 * campaign's workload); up to CACHE_MAX writes, past which a loss is
 * refused (not lossy, a warning) until cache_reset.
 *
 * REQ_NOWAIT bios are taken (1.1): map() never sleeps, and a held one is
 * sent down without the flag, as dm-barrier's worker does.
 *
 * Held bios (delay, stall) are sent down in arrival order by a worker.  A
 * fault is decided when a bio would be sent down, so a held bio meets the
 * faults set when it is released.  Presuspend releases every held bio and
 * nothing is held until resume, so a suspend or a remove never waits for
 * "stall off".
 *
 * Status: flushes fua_writes writes reads injected_flush injected_fua
 * injected_write held dirty lost (counts since the table was loaded; held
 * and dirty: now; lost: writes a loss zeroed).
 *
 * Log, /sys/kernel/debug/dmb_fault/log: a line per bio at its completion,
 *   <dm-N> <seq> <submit_ns> <complete_ns> <op> <flags> <sector> <sectors>
 *   <status> <injected> [lost <loss_ns> <n>]
 * seq is the arrival order (all mappings), times are CLOCK_MONOTONIC at
 * map() and at completion, op is W (write with data), F (empty flush),
 * R, D (discard), Z (write zeroes) or O, flags lists PREFLUSH, FUA, SYNC,
 * NOWAIT, POLLED or is "-", sector is target-relative, status is an errno;
 * a flush that lost the cache adds the loss's time and the writes lost.
 * The log keeps the last LOG_SIZE lines; a read of a log that lost lines
 * starts with "# overflow".
 *
 * What dm core (6.1) hands a target: a bio with REQ_PREFLUSH and data comes
 * as an empty flush, then the data without PREFLUSH.  That empty flush is
 * the clone dm_io embeds, made from the original bio: it keeps the original's
 * flags (an F line may show FUA), sector and bi_io_vec, with bi_size 0.  The
 * data part is sent even when the flush failed, and the flush's error is
 * dropped: fail_flush under a journal commit is not seen by the journal.
 */

#include <linux/module.h>
#include <linux/init.h>
#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/debugfs.h>
#include <linux/ktime.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>
#include <linux/device-mapper.h>

#define DM_MSG_PREFIX "dmb_fault"
#define DMB_LOG_NAME "dm-%u"

#include "dmb_fault_common.h"

struct fault_c {
	struct dm_dev *dev;
	sector_t start;
	bool flush_supported;
	u32 minor;

	spinlock_t lock;	/* protects everything below */
	struct fault flush;
	struct fault fua;
	struct fault_range ranges[FAULT_RANGES];
	unsigned int delay_ms;
	bool stall;
	bool suspending;	/* between presuspend and resume: hold nothing */
	bool releasing;		/* the worker is sending a batch down */
	struct list_head held;	/* struct fault_io, in arrival order */
	unsigned int nr_held;
	u64 flushes, fua_writes, writes, reads;
	u64 injected_flush, injected_fua, injected_write;
	bool flush_lose;	/* the flush fault's next failure loses the cache */
	struct fault_cache cache;	/* the volatile cache */
	struct cache_ent *losing;	/* a loss being written out, CACHE_MAX */
	unsigned int nr_losing;
	struct fault_io *lose_io;	/* its flush, failed once it is written */
	u64 lost;

	struct workqueue_struct *wq;
	struct delayed_work release;
	struct work_struct lose_work;
};

/* Per-bio data. */
struct fault_io {
	struct list_head list;
	u64 release_ns;
	blk_status_t fail;	/* decided when taken off the held list */
	bool lose;		/* and whether it loses the cache */
	struct fault_rec rec;
};

static atomic64_t bio_seq = ATOMIC64_INIT(0);
static struct dentry *log_dir;

/* --------------------------------------------------------------- faults */

/*
 * Under fc->lock: the cache is lost now, taken for @io to write out (its
 * record says when and how much).  False when it cannot be: a loss is
 * still being written, or the model overflowed.
 */
static bool cache_lose_locked(struct fault_c *fc, struct fault_io *io)
{
	int n;

	if (fc->lose_io)
		return false;
	n = cache_take(&fc->cache, fc->losing);
	if (n < 0)
		return false;
	fc->nr_losing = n;
	io->rec.loss_ns = ktime_get_ns();
	io->rec.nr_lost = fc->nr_losing;
	io->lose = true;
	fc->lose_io = io;
	return true;
}

/* Under fc->lock: the status a fault gives this bio, or BLK_STS_OK. */
static blk_status_t fault_pick(struct fault_c *fc, struct fault_io *io)
{
	const struct fault_rec *rec = &io->rec;
	struct fault_range *r;
	blk_status_t st;

	if (rec->op == 'F') {
		st = fault_take(&fc->flush, &fc->injected_flush);
		if (st && fc->flush_lose) {
			fc->flush_lose = false;
			if (!cache_lose_locked(fc, io))
				DMWARN("dm-%u: a lossy flush failure lost nothing: %s",
				       fc->minor, fc->lose_io ? "a loss is being written" :
				       "the model overflowed");
		}
		return st;
	}
	if (rec->op != 'W')
		return BLK_STS_OK;
	if ((rec->flags & FL_FUA) && fc->fua.left)
		return fault_take(&fc->fua, &fc->injected_fua);
	r = fault_range_hit(fc->ranges, rec->sector, rec->sectors);
	return r ? fault_take(&r->f, &fc->injected_write) : BLK_STS_OK;
}

static void fault_fail(struct bio *bio, struct fault_io *io, blk_status_t status)
{
	io->rec.injected = true;
	bio->bi_status = status;
	bio_endio(bio);
}

/* Under fc->lock: run the worker when the oldest held bio is due. */
static void fault_schedule(struct fault_c *fc)
{
	struct fault_io *head;
	u64 now;

	if (list_empty(&fc->held) || fc->stall)
		return;
	head = list_first_entry(&fc->held, struct fault_io, list);
	now = ktime_get_ns();
	queue_delayed_work(fc->wq, &fc->release, head->release_ns > now ?
			   nsecs_to_jiffies(head->release_ns - now) + 1 : 0);
}

/*
 * Under fc->lock: move the held bios that are due (@all: every one) to
 * @batch, oldest first, stopping at the first that is not, and decide
 * their faults.
 */
static void fault_take_due(struct fault_c *fc, struct list_head *batch, bool all)
{
	struct fault_io *io;
	u64 now = ktime_get_ns();

	while (!list_empty(&fc->held)) {
		io = list_first_entry(&fc->held, struct fault_io, list);
		if (!all && (fc->stall || io->release_ns > now))
			break;
		list_move_tail(&io->list, batch);
		fc->nr_held--;
		io->fail = fault_pick(fc, io);
	}
}

static void fault_send(struct fault_c *fc, struct list_head *batch)
{
	struct fault_io *io, *tmp;
	struct bio *bio;

	list_for_each_entry_safe(io, tmp, batch, list) {
		list_del(&io->list);
		bio = dm_bio_from_per_bio_data(io, sizeof(*io));
		if (io->lose) {
			queue_work(fc->wq, &fc->lose_work);
		} else if (io->fail) {
			fault_fail(bio, io, io->fail);
		} else {
			/* Its submitter was not blocked: the worker may be. */
			bio->bi_opf &= ~REQ_NOWAIT;
			dm_submit_bio_remap(bio, NULL);
		}
	}
}

static void fault_release(struct work_struct *work)
{
	struct fault_c *fc = container_of(to_delayed_work(work), struct fault_c, release);
	LIST_HEAD(batch);

	spin_lock_irq(&fc->lock);
	for (;;) {
		fault_take_due(fc, &batch, false);
		if (list_empty(&batch))
			break;
		/* map() queues behind this batch, so nothing overtakes it. */
		fc->releasing = true;
		spin_unlock_irq(&fc->lock);
		fault_send(fc, &batch);
		spin_lock_irq(&fc->lock);
	}
	fc->releasing = false;
	fault_schedule(fc);
	spin_unlock_irq(&fc->lock);
}

/* -------------------------------------------------------------- target */

static void fault_record(struct dm_target *ti, struct bio *bio, struct fault_rec *rec)
{
	blk_opf_t opf = bio->bi_opf;

	memset(rec, 0, sizeof(*rec));
	rec->sectors = bio_sectors(bio);
	if (rec->sectors)
		rec->sector = dm_target_offset(ti, bio->bi_iter.bi_sector);

	switch (bio_op(bio)) {
	case REQ_OP_READ:
		rec->op = 'R';
		break;
	case REQ_OP_WRITE:
		rec->op = rec->sectors ? 'W' : (opf & REQ_PREFLUSH) ? 'F' : 'O';
		break;
	case REQ_OP_DISCARD:
		rec->op = 'D';
		break;
	case REQ_OP_WRITE_ZEROES:
		rec->op = 'Z';
		break;
	default:
		rec->op = 'O';
		break;
	}

	rec->flags = fault_flags(opf);
}

/* Under fc->lock. */
static void fault_count(struct fault_c *fc, const struct fault_rec *rec)
{
	switch (rec->op) {
	case 'F':
		fc->flushes++;
		break;
	case 'W':
		fc->writes++;
		if (rec->flags & FL_FUA)
			fc->fua_writes++;
		break;
	case 'R':
		fc->reads++;
		break;
	}
}

static int fault_map(struct dm_target *ti, struct bio *bio)
{
	struct fault_c *fc = ti->private;
	struct fault_io *io = dm_per_bio_data(bio, sizeof(*io));
	blk_status_t fail = BLK_STS_OK;
	unsigned long flags;
	bool hold;

	fault_record(ti, bio, &io->rec);
	io->lose = false;
	bio_set_dev(bio, fc->dev->bdev);
	if (io->rec.sectors)
		bio->bi_iter.bi_sector = fc->start + io->rec.sector;

	spin_lock_irqsave(&fc->lock, flags);
	/* Numbered under the lock: seq order is the held list's order. */
	io->rec.seq = atomic64_inc_return(&bio_seq);
	io->rec.submit_ns = ktime_get_ns();
	fault_count(fc, &io->rec);
	hold = !fc->suspending && (fc->stall || fc->delay_ms || fc->releasing ||
				   !list_empty(&fc->held));
	if (hold) {
		io->release_ns = io->rec.submit_ns + (u64)fc->delay_ms * NSEC_PER_MSEC;
		list_add_tail(&io->list, &fc->held);
		if (++fc->nr_held == 1)
			fault_schedule(fc);
	} else {
		fail = fault_pick(fc, io);
		io->fail = fail;
	}
	spin_unlock_irqrestore(&fc->lock, flags);

	if (hold)
		return DM_MAPIO_SUBMITTED;
	if (io->lose) {
		queue_work(fc->wq, &fc->lose_work);
		return DM_MAPIO_SUBMITTED;
	}
	if (fail) {
		fault_fail(bio, io, fail);
		return DM_MAPIO_SUBMITTED;
	}
	return DM_MAPIO_REMAPPED;
}

/* Zeroes over the writes a loss took: they were never on the medium. */
static void cache_write_loss(struct fault_c *fc, const struct cache_ent *ents, unsigned int n)
{
	unsigned int i;
	int r;

	for (i = 0; i < n; i++) {
		r = blkdev_issue_zeroout(fc->dev->bdev, fc->start + ents[i].sector,
					 ents[i].sectors, GFP_NOIO, 0);
		if (r)
			DMWARN("dm-%u: cannot write the loss of sectors %llu+%u: %d", fc->minor,
			       ents[i].sector, ents[i].sectors, r);
	}
}

/* The lossy flush: its loss written, it fails. */
static void fault_lose_work(struct work_struct *work)
{
	struct fault_c *fc = container_of(work, struct fault_c, lose_work);
	struct fault_io *io;

	cache_write_loss(fc, fc->losing, fc->nr_losing);
	spin_lock_irq(&fc->lock);
	io = fc->lose_io;
	fc->lost += fc->nr_losing;
	fc->nr_losing = 0;
	fc->lose_io = NULL;
	spin_unlock_irq(&fc->lock);
	fault_fail(dm_bio_from_per_bio_data(io, sizeof(*io)), io, io->fail);
}

static int fault_end_io(struct dm_target *ti, struct bio *bio, blk_status_t *error)
{
	struct fault_c *fc = ti->private;
	struct fault_io *io = dm_per_bio_data(bio, sizeof(*io));
	unsigned long flags;

	/* Timed under the lock that orders completions and losses. */
	spin_lock_irqsave(&fc->lock, flags);
	io->rec.complete_ns = ktime_get_ns();
	if (!*error && io->rec.op == 'W' && !(io->rec.flags & FL_FUA))
		cache_add(&fc->cache, &io->rec);
	else if (!*error && io->rec.op == 'F')
		cache_flushed(&fc->cache, io->rec.submit_ns);
	spin_unlock_irqrestore(&fc->lock, flags);
	io->rec.status = blk_status_to_errno(*error);
	io->rec.dev = fc->minor;
	log_add(&io->rec);
	return DM_ENDIO_DONE;
}

static void fault_presuspend(struct dm_target *ti)
{
	struct fault_c *fc = ti->private;
	LIST_HEAD(batch);

	spin_lock_irq(&fc->lock);
	fc->suspending = true;
	spin_unlock_irq(&fc->lock);

	cancel_delayed_work_sync(&fc->release);

	spin_lock_irq(&fc->lock);
	fault_take_due(fc, &batch, true);
	spin_unlock_irq(&fc->lock);
	fault_send(fc, &batch);
}

static void fault_resume(struct dm_target *ti)
{
	struct fault_c *fc = ti->private;

	spin_lock_irq(&fc->lock);
	fc->suspending = false;
	spin_unlock_irq(&fc->lock);
}

static void fault_dtr(struct dm_target *ti)
{
	struct fault_c *fc = ti->private;

	if (fc->wq) {
		cancel_delayed_work_sync(&fc->release);
		flush_work(&fc->lose_work);
		destroy_workqueue(fc->wq);
	}
	kvfree(fc->cache.dirty);
	kvfree(fc->losing);
	WARN_ON_ONCE(!list_empty(&fc->held));
	if (fc->dev)
		dm_put_device(ti, fc->dev);
	kfree(fc);
}

static int fault_ctr(struct dm_target *ti, unsigned int argc, char **argv)
{
	static const struct dm_arg _args[] = {
		{0, 1, "Invalid number of feature arguments"},
	};
	struct dm_arg_set as = { .argc = argc, .argv = argv };
	struct gendisk *disk = dm_disk(dm_table_get_md(ti->table));
	unsigned long long start;
	struct fault_c *fc;
	const char *path, *feature;
	unsigned int nr_features;
	char dummy;
	int r;

	if (argc < 2) {
		ti->error = "Invalid argument count: <dev_path> <offset> [features]";
		return -EINVAL;
	}

	fc = kzalloc(sizeof(*fc), GFP_KERNEL);
	if (!fc) {
		ti->error = "Cannot allocate context";
		return -ENOMEM;
	}
	ti->private = fc;
	spin_lock_init(&fc->lock);
	INIT_LIST_HEAD(&fc->held);
	INIT_DELAYED_WORK(&fc->release, fault_release);
	INIT_WORK(&fc->lose_work, fault_lose_work);
	fc->minor = disk->first_minor;
	fc->cache.dirty = kvmalloc_array(CACHE_MAX, sizeof(*fc->cache.dirty), GFP_KERNEL);
	fc->losing = kvmalloc_array(CACHE_MAX, sizeof(*fc->losing), GFP_KERNEL);
	if (!fc->cache.dirty || !fc->losing) {
		ti->error = "Cannot allocate the cache model";
		r = -ENOMEM;
		goto bad;
	}

	path = dm_shift_arg(&as);
	if (sscanf(dm_shift_arg(&as), "%llu%c", &start, &dummy) != 1 ||
	    start != (sector_t)start) {
		ti->error = "Invalid device offset (sectors)";
		r = -EINVAL;
		goto bad;
	}
	fc->start = start;

	if (as.argc) {
		r = dm_read_arg_group(_args, &as, &nr_features, &ti->error);
		if (r)
			goto bad;
		while (nr_features--) {
			feature = dm_shift_arg(&as);
			if (strcasecmp(feature, "flush_supported")) {
				ti->error = "Unknown feature (known: flush_supported)";
				r = -EINVAL;
				goto bad;
			}
			fc->flush_supported = true;
		}
		if (as.argc) {
			ti->error = "Too many arguments";
			r = -EINVAL;
			goto bad;
		}
	}

	r = dm_get_device(ti, path, dm_table_get_mode(ti->table), &fc->dev);
	if (r) {
		ti->error = "Device lookup failed";
		goto bad;
	}

	fc->wq = alloc_workqueue("dmb_fault/%s", WQ_MEM_RECLAIM | WQ_UNBOUND, 0, disk->disk_name);
	if (!fc->wq) {
		ti->error = "Cannot allocate workqueue";
		r = -ENOMEM;
		goto bad;
	}

	ti->num_flush_bios = 1;
	ti->num_discard_bios = 1;
	ti->num_write_zeroes_bios = 1;
	ti->flush_supported = fc->flush_supported;
	ti->accounts_remapped_io = true;
	ti->per_io_data_size = sizeof(struct fault_io);
	return 0;

bad:
	fault_dtr(ti);
	return r;
}

static void fault_status(struct dm_target *ti, status_type_t type,
			 unsigned int status_flags, char *result, unsigned int maxlen)
{
	struct fault_c *fc = ti->private;
	unsigned int sz = 0;

	switch (type) {
	case STATUSTYPE_INFO:
		spin_lock_irq(&fc->lock);
		DMEMIT("%llu %llu %llu %llu %llu %llu %llu %u %u %llu", fc->flushes,
		       fc->fua_writes, fc->writes, fc->reads, fc->injected_flush,
		       fc->injected_fua, fc->injected_write, fc->nr_held, fc->cache.nr,
		       fc->lost);
		spin_unlock_irq(&fc->lock);
		break;
	case STATUSTYPE_TABLE:
		DMEMIT("%s %llu", fc->dev->name, (unsigned long long)fc->start);
		if (fc->flush_supported)
			DMEMIT(" 1 flush_supported");
		break;
	case STATUSTYPE_IMA:
		*result = '\0';
		break;
	}
}

/* ------------------------------------------------------------- messages */

/* fail_flush|fail_fua <N|all|off> [status], fail_flush ... [lose] */
static const char *msg_fail(struct fault_c *fc, struct fault *f,
			    unsigned int argc, char **argv)
{
	return parse_fail(f, f == &fc->flush ? &fc->flush_lose : NULL, &fc->lock, argc, argv);
}

/* powercut: the cache is lost now; cache_reset: forgotten. */
static const char *msg_cache(struct fault_c *fc, unsigned int argc, bool cut)
{
	struct cache_ent *ents = NULL;
	const char *why = NULL;
	int n = 0;

	if (argc != 1)
		return cut ? "usage: powercut" : "usage: cache_reset";
	if (cut) {
		ents = kvmalloc_array(CACHE_MAX, sizeof(*ents), GFP_KERNEL);
		if (!ents)
			return "cannot allocate";
	}
	spin_lock_irq(&fc->lock);
	if (cut && fc->lose_io) {
		why = "a loss is being written";
	} else if (cut) {
		n = cache_take(&fc->cache, ents);
		if (n < 0)
			why = "the cache model overflowed: cache_reset first";
		else
			fc->lost += n;
	} else {
		cache_reset(&fc->cache);
	}
	spin_unlock_irq(&fc->lock);
	if (cut && !why) {
		cache_write_loss(fc, ents, n);
		DMINFO("dm-%u: power cut: %d writes lost", fc->minor, n);
	}
	kvfree(ents);
	return why;
}

/* fail_write <start> <len> <N|all|off> [status] | fail_write off */
static const char *msg_fail_write(struct dm_target *ti, unsigned int argc, char **argv)
{
	struct fault_c *fc = ti->private;

	return parse_fail_write(fc->ranges, &fc->lock, ti->len, argc, argv);
}

static const char *msg_delay(struct fault_c *fc, unsigned int argc, char **argv)
{
	unsigned int ms;

	if (argc != 2 || kstrtouint(argv[1], 10, &ms) || ms > MAX_DELAY_MS)
		return "usage: delay <ms>, 0 to " __stringify(MAX_DELAY_MS);
	spin_lock_irq(&fc->lock);
	fc->delay_ms = ms;
	spin_unlock_irq(&fc->lock);
	return NULL;
}

static const char *msg_stall(struct fault_c *fc, unsigned int argc, char **argv)
{
	bool on;

	if (argc != 2 || kstrtobool(argv[1], &on))
		return "usage: stall on|off";
	spin_lock_irq(&fc->lock);
	fc->stall = on;
	fault_schedule(fc);
	spin_unlock_irq(&fc->lock);
	return NULL;
}

static const char *msg_clear(struct fault_c *fc, unsigned int argc)
{
	struct fault_io *io;

	if (argc != 1)
		return "usage: clear";
	spin_lock_irq(&fc->lock);
	memset(&fc->flush, 0, sizeof(fc->flush));
	fc->flush_lose = false;
	memset(&fc->fua, 0, sizeof(fc->fua));
	memset(fc->ranges, 0, sizeof(fc->ranges));
	fc->delay_ms = 0;
	fc->stall = false;
	/* Held bios go now, not at the end of their delay. */
	list_for_each_entry(io, &fc->held, list)
		io->release_ns = 0;
	if (!list_empty(&fc->held))
		mod_delayed_work(fc->wq, &fc->release, 0);
	spin_unlock_irq(&fc->lock);
	return NULL;
}

static const char *msg_log_clear(unsigned int argc)
{
	if (argc != 1)
		return "usage: log_clear";
	log_clear();
	return NULL;
}

static int fault_message(struct dm_target *ti, unsigned int argc, char **argv,
			 char *result, unsigned int maxlen)
{
	struct fault_c *fc = ti->private;
	const char *why = "unknown message";

	if (!argc)
		return -EINVAL;
	if (!strcasecmp(argv[0], "fail_flush"))
		why = msg_fail(fc, &fc->flush, argc, argv);
	else if (!strcasecmp(argv[0], "fail_fua"))
		why = msg_fail(fc, &fc->fua, argc, argv);
	else if (!strcasecmp(argv[0], "fail_write"))
		why = msg_fail_write(ti, argc, argv);
	else if (!strcasecmp(argv[0], "delay"))
		why = msg_delay(fc, argc, argv);
	else if (!strcasecmp(argv[0], "stall"))
		why = msg_stall(fc, argc, argv);
	else if (!strcasecmp(argv[0], "clear"))
		why = msg_clear(fc, argc);
	else if (!strcasecmp(argv[0], "log_clear"))
		why = msg_log_clear(argc);
	else if (!strcasecmp(argv[0], "powercut"))
		why = msg_cache(fc, argc, true);
	else if (!strcasecmp(argv[0], "cache_reset"))
		why = msg_cache(fc, argc, false);

	if (why) {
		DMWARN("dm-%u: message %s rejected: %s", fc->minor, argv[0], why);
		return -EINVAL;
	}
	return 0;
}

static int fault_iterate_devices(struct dm_target *ti,
				 iterate_devices_callout_fn fn, void *data)
{
	struct fault_c *fc = ti->private;

	return fn(ti, fc->dev, fc->start, ti->len, data);
}

static struct target_type fault_target = {
	.name = "dmb_fault",
	.version = {1, 2, 0},
	/* map() never sleeps: a held bio is queued, sent later without the flag. */
	.features = DM_TARGET_NOWAIT,
	.module = THIS_MODULE,
	.ctr = fault_ctr,
	.dtr = fault_dtr,
	.map = fault_map,
	.end_io = fault_end_io,
	.presuspend = fault_presuspend,
	.presuspend_undo = fault_resume,
	.resume = fault_resume,
	.status = fault_status,
	.message = fault_message,
	.iterate_devices = fault_iterate_devices,
};

static int __init dmb_fault_init(void)
{
	int r;

	r = log_alloc();
	if (r)
		return r;
	log_dir = debugfs_create_dir("dmb_fault", NULL);
	debugfs_create_file("log", 0444, log_dir, NULL, &log_fops);

	r = dm_register_target(&fault_target);
	if (r < 0) {
		DMERR("register failed %d", r);
		debugfs_remove_recursive(log_dir);
		log_free();
	}
	return r;
}

static void __exit dmb_fault_exit(void)
{
	dm_unregister_target(&fault_target);
	debugfs_remove_recursive(log_dir);
	log_free();
}

module_init(dmb_fault_init);
module_exit(dmb_fault_exit);

MODULE_DESCRIPTION(DM_NAME " dm-barrier test target: faults set at run time, bio log");
MODULE_LICENSE("GPL");
