// SPDX-License-Identifier: GPL-2.0
/*
 * dmb_disk: a request-based (blk-mq) disk for dm-barrier's guest tests only.
 *
 * dmb_fault is a device-mapper target, so a stack over it is bio-based:
 * dm core splits a REQ_PREFLUSH bio into an empty flush and its data and
 * drops the flush's error, and dm-barrier never sends a dirty data barrier
 * down the direct way over it.  Over a real disk the direct way is what an
 * ext4 commit takes, and there the block layer's flush machinery
 * (block/blk-flush.c) runs pre-flush, write and post-flush (or FUA write)
 * as requests.  This disk is that disk with dmb_fault's faults: it keeps
 * its data in memory, and flushes, FUA writes or writes to chosen sectors
 * fail with a chosen status, requests are delayed, held or executed out
 * of order, and the volatile cache is modelled as in dmb_fault 1.2
 * (issue 27, item 5).  Not for use on real data.
 *
 * Module parameters: nr_disks (2), sectors (each disk's size, 1 GiB);
 * disk i is /dev/dmbdI, with a volatile write cache, and FUA for even I
 * (dmbd0 takes FUA writes, dmbd1 has the block layer turn them into a
 * write and a post-flush).
 *
 * Control, /sys/kernel/debug/dmb_disk/dmbdI/ctl: one command per write,
 * the messages of dmb_fault (fail_flush <N|all|off> [EIO|NOSPC|MEDIUM|
 * AGAIN] [lose], fail_fua, fail_write <start> <len> <N|all|off> [status]
 * or fail_write off, delay <ms>, stall on|off, clear, log_clear,
 * powercut, cache_reset) and reorder <N>: each request is executed,
 * when due, in arrival order (1, the default) or as a random one of the
 * first N due (a drive reorders what it has queued; clear keeps it, as
 * a property of the drive, not a fault).  Bad input: -EINVAL,
 * a warning, and nothing changes.  status: as dmb_fault's, flushes
 * fua_writes writes reads injected_flush injected_fua injected_write held
 * dirty lost.
 *
 * Log, /sys/kernel/debug/dmb_disk/log: dmb_fault's format, a line per
 * request at its completion (requests are never merged: one per bio),
 * named by the disk ("dmbd0 <seq> ...");
 * submit_ns is queue_rq(), complete_ns the end of the request.  A flush
 * request is op F with flags PREFLUSH; the flush machinery's data request
 * is W, with FUA when the disk takes it.
 *
 * The volatile cache: writes without FUA that completed since the flush
 * that covers them (a successful flush covers the writes completed by its
 * submit time).  A loss (a lossy flush failure, a power cut) zeroes them
 * in memory before the flush fails or the power cut returns.  One worker
 * executes the requests, so a loss and a request's data never race.
 */

#include <linux/module.h>
#include <linux/init.h>
#include <linux/blkdev.h>
#include <linux/blk-mq.h>
#include <linux/debugfs.h>
#include <linux/highmem.h>
#include <linux/ktime.h>
#include <linux/random.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#define DMB_LOG_NAME "dmbd%u"
#include "../faultmod/dmb_fault_common.h"

#define MAX_DISKS	4
#define MAX_REORDER	64U
#define CTL_MAX		128

static unsigned int nr_disks = 2;
module_param(nr_disks, uint, 0444);
MODULE_PARM_DESC(nr_disks, "Disks to make, 1 to 4 (default 2)");
static unsigned long long disk_sectors = 2097152;
module_param_named(sectors, disk_sectors, ullong, 0444);
MODULE_PARM_DESC(sectors, "Each disk's size in 512-byte sectors (default 1 GiB)");

struct dmbd {
	unsigned int index;
	bool fua;
	struct gendisk *disk;
	struct blk_mq_tag_set set;
	struct xarray pages;		/* page index -> struct page, the medium */
	struct dentry *dir;

	spinlock_t lock;		/* protects everything below */
	struct fault flush;
	struct fault fua_fault;
	struct fault_range ranges[FAULT_RANGES];
	bool flush_lose;
	unsigned int delay_ms;
	unsigned int reorder;
	bool stall;
	bool cutting;			/* a power cut zeroes the medium: execute nothing */
	struct list_head queued;	/* struct dmbd_cmd, in arrival order */
	unsigned int nr_queued;
	u64 flushes, fua_writes, writes, reads;
	u64 injected_flush, injected_fua, injected_write;
	struct fault_cache cache;	/* the volatile cache */
	u64 lost;

	struct workqueue_struct *wq;
	struct delayed_work work;
};

struct dmbd_cmd {
	struct list_head list;
	u64 release_ns;
	struct fault_rec rec;
};

static struct dmbd *disks[MAX_DISKS];
static int dmbd_major;
static atomic64_t rq_seq = ATOMIC64_INIT(0);
static struct dentry *top_dir;

/* --------------------------------------------------------------- medium */

/* The page of the medium at @idx; allocated (zeroed) if @alloc. */
static struct page *medium_page(struct dmbd *d, pgoff_t idx, bool alloc)
{
	struct page *page = xa_load(&d->pages, idx), *old;

	if (page || !alloc)
		return page;
	page = alloc_page(GFP_NOIO | __GFP_ZERO);
	if (!page)
		return NULL;
	old = xa_cmpxchg(&d->pages, idx, NULL, page, GFP_NOIO);
	if (old) {
		__free_page(page);
		return xa_is_err(old) ? NULL : old;
	}
	return page;
}

/*
 * Copy @len bytes between @buf and the medium at byte @pos (@write: to the
 * medium; @buf NULL: zeroes).  Reads of what was never written are zeroes.
 */
static int medium_copy(struct dmbd *d, u64 pos, void *buf, unsigned int len, bool write)
{
	while (len) {
		unsigned int off = pos & ~PAGE_MASK, n = min_t(unsigned int, len, PAGE_SIZE - off);
		struct page *page = medium_page(d, pos >> PAGE_SHIFT, write && buf);
		void *p;

		if (write && buf && !page)
			return -ENOMEM;
		if (page) {
			p = kmap_local_page(page);
			if (!write)
				memcpy(buf, p + off, n);
			else if (buf)
				memcpy(p + off, buf, n);
			else
				memset(p + off, 0, n);
			kunmap_local(p);
		} else if (!write) {
			memset(buf, 0, n);
		}
		pos += n;
		len -= n;
		if (buf)
			buf += n;
	}
	return 0;
}

static blk_status_t medium_rw(struct dmbd *d, struct request *rq)
{
	bool write = req_op(rq) == REQ_OP_WRITE;
	u64 pos = (u64)blk_rq_pos(rq) << SECTOR_SHIFT;
	struct req_iterator iter;
	struct bio_vec bv;
	void *p;
	int r;

	rq_for_each_segment(bv, rq, iter) {
		p = kmap_local_page(bv.bv_page);
		r = medium_copy(d, pos, p + bv.bv_offset, bv.bv_len, write);
		kunmap_local(p);
		if (r)
			return BLK_STS_RESOURCE;
		pos += bv.bv_len;
	}
	return BLK_STS_OK;
}

static void medium_free(struct dmbd *d)
{
	struct page *page;
	unsigned long idx;

	xa_for_each(&d->pages, idx, page)
		__free_page(page);
	xa_destroy(&d->pages);
}

/* --------------------------------------------------------------- faults */

/* Under d->lock: the status a fault gives this request, or BLK_STS_OK. */
static blk_status_t fault_pick(struct dmbd *d, const struct fault_rec *rec, bool *lose)
{
	struct fault_range *r;
	blk_status_t st;

	*lose = false;
	if (rec->op == 'F') {
		st = fault_take(&d->flush, &d->injected_flush);
		if (st && d->flush_lose) {
			d->flush_lose = false;
			*lose = true;
		}
		return st;
	}
	if (rec->op != 'W')
		return BLK_STS_OK;
	if ((rec->flags & FL_FUA) && d->fua_fault.left)
		return fault_take(&d->fua_fault, &d->injected_fua);
	r = fault_range_hit(d->ranges, rec->sector, rec->sectors);
	return r ? fault_take(&r->f, &d->injected_write) : BLK_STS_OK;
}

static void cache_write_loss(struct dmbd *d, const struct cache_ent *ents, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		medium_copy(d, ents[i].sector << SECTOR_SHIFT, NULL,
			    ents[i].sectors << SECTOR_SHIFT, true);
}

/* ------------------------------------------------------------- requests */

static void dmbd_record(struct dmbd *d, struct request *rq, struct fault_rec *rec)
{
	blk_opf_t opf = rq->cmd_flags;

	memset(rec, 0, sizeof(*rec));
	rec->dev = d->index;
	rec->sectors = blk_rq_sectors(rq);
	if (rec->sectors)
		rec->sector = blk_rq_pos(rq);
	switch (req_op(rq)) {
	case REQ_OP_READ:
		rec->op = 'R';
		break;
	case REQ_OP_WRITE:
		rec->op = rec->sectors ? 'W' : 'O';
		break;
	case REQ_OP_FLUSH:
		rec->op = 'F';
		opf |= REQ_PREFLUSH;
		break;
	default:
		rec->op = 'O';
		break;
	}
	rec->flags = fault_flags(opf);
}

/* Under d->lock: run the worker when the oldest queued request is due. */
static void dmbd_schedule(struct dmbd *d)
{
	struct dmbd_cmd *head;
	u64 now;

	if (list_empty(&d->queued) || d->stall)
		return;
	head = list_first_entry(&d->queued, struct dmbd_cmd, list);
	now = ktime_get_ns();
	mod_delayed_work(d->wq, &d->work, head->release_ns > now ?
			 nsecs_to_jiffies(head->release_ns - now) + 1 : 0);
}

/* Under d->lock: the next request to execute, or NULL. */
static struct dmbd_cmd *dmbd_next(struct dmbd *d)
{
	struct dmbd_cmd *cmd, *pick = NULL;
	unsigned int n = 0, k;
	u64 now = ktime_get_ns();

	if (d->stall || d->cutting)
		return NULL;
	list_for_each_entry(cmd, &d->queued, list) {
		if (cmd->release_ns > now || n == d->reorder)
			break;
		n++;
	}
	if (!n)
		return NULL;
	k = n > 1 ? get_random_u32() % n : 0;
	list_for_each_entry(cmd, &d->queued, list) {
		if (!k--) {
			pick = cmd;
			break;
		}
	}
	list_del(&pick->list);
	d->nr_queued--;
	return pick;
}

static void dmbd_work(struct work_struct *work)
{
	struct dmbd *d = container_of(to_delayed_work(work), struct dmbd, work);
	struct cache_ent *ents = NULL;
	struct dmbd_cmd *cmd;
	struct request *rq;
	blk_status_t st;
	bool lose;
	int n;

	spin_lock_irq(&d->lock);
	while ((cmd = dmbd_next(d))) {
		n = 0;
		st = fault_pick(d, &cmd->rec, &lose);
		if (lose) {
			if (!ents) {
				spin_unlock_irq(&d->lock);
				ents = kvmalloc_array(CACHE_MAX, sizeof(*ents), GFP_NOIO);
				spin_lock_irq(&d->lock);
			}
			n = ents ? cache_take(&d->cache, ents) : -1;
			if (n >= 0) {
				d->lost += n;
				cmd->rec.loss_ns = ktime_get_ns();
			} else {
				pr_warn("dmbd%u: a lossy flush failure lost nothing: %s\n",
					d->index, ents ? "the model overflowed" : "no memory");
			}
		}
		spin_unlock_irq(&d->lock);

		rq = blk_mq_rq_from_pdu(cmd);
		if (n > 0) {
			cache_write_loss(d, ents, n);
			cmd->rec.nr_lost = n;
		}
		if (st)
			cmd->rec.injected = true;
		else if (cmd->rec.op == 'W' || cmd->rec.op == 'R')
			st = medium_rw(d, rq);

		spin_lock_irq(&d->lock);
		cmd->rec.complete_ns = ktime_get_ns();
		if (!st && cmd->rec.op == 'W' && !(cmd->rec.flags & FL_FUA))
			cache_add(&d->cache, &cmd->rec);
		else if (!st && cmd->rec.op == 'F')
			cache_flushed(&d->cache, cmd->rec.submit_ns);
		spin_unlock_irq(&d->lock);
		cmd->rec.status = blk_status_to_errno(st);
		log_add(&cmd->rec);
		blk_mq_end_request(rq, st);
		spin_lock_irq(&d->lock);
	}
	dmbd_schedule(d);
	spin_unlock_irq(&d->lock);
	kvfree(ents);
}

static void dmbd_count(struct dmbd *d, const struct fault_rec *rec)
{
	switch (rec->op) {
	case 'F':
		d->flushes++;
		break;
	case 'W':
		d->writes++;
		if (rec->flags & FL_FUA)
			d->fua_writes++;
		break;
	case 'R':
		d->reads++;
		break;
	}
}

static blk_status_t dmbd_queue_rq(struct blk_mq_hw_ctx *hctx, const struct blk_mq_queue_data *bd)
{
	struct dmbd *d = hctx->queue->queuedata;
	struct request *rq = bd->rq;
	struct dmbd_cmd *cmd = blk_mq_rq_to_pdu(rq);
	unsigned long flags;

	dmbd_record(d, rq, &cmd->rec);
	blk_mq_start_request(rq);
	spin_lock_irqsave(&d->lock, flags);
	cmd->rec.seq = atomic64_inc_return(&rq_seq);
	cmd->rec.submit_ns = ktime_get_ns();
	cmd->release_ns = cmd->rec.submit_ns + (u64)d->delay_ms * NSEC_PER_MSEC;
	dmbd_count(d, &cmd->rec);
	list_add_tail(&cmd->list, &d->queued);
	d->nr_queued++;
	dmbd_schedule(d);
	spin_unlock_irqrestore(&d->lock, flags);
	return BLK_STS_OK;
}

/* A request held by "stall" must not be failed by the block layer. */
static enum blk_eh_timer_return dmbd_timeout(struct request *rq)
{
	return BLK_EH_RESET_TIMER;
}

static const struct blk_mq_ops dmbd_mq_ops = {
	.queue_rq = dmbd_queue_rq,
	.timeout = dmbd_timeout,
};

static const struct block_device_operations dmbd_fops = {
	.owner = THIS_MODULE,
};

/* ------------------------------------------------------------- control */

static const char *ctl_fail(struct dmbd *d, struct fault *f, unsigned int argc, char **argv)
{
	return parse_fail(f, f == &d->flush ? &d->flush_lose : NULL, &d->lock, argc, argv);
}

static const char *ctl_fail_write(struct dmbd *d, unsigned int argc, char **argv)
{
	return parse_fail_write(d->ranges, &d->lock, disk_sectors, argc, argv);
}

static const char *ctl_number(struct dmbd *d, unsigned int argc, char **argv,
			      unsigned int *field, unsigned int lo, unsigned int hi)
{
	unsigned int v;

	if (argc != 2 || kstrtouint(argv[1], 10, &v) || v < lo || v > hi)
		return "usage: delay <ms> (0 to 60000), reorder <n> (1 to 64)";
	spin_lock_irq(&d->lock);
	*field = v;
	dmbd_schedule(d);
	spin_unlock_irq(&d->lock);
	return NULL;
}

static const char *ctl_stall(struct dmbd *d, unsigned int argc, char **argv)
{
	bool on;

	if (argc != 2 || kstrtobool(argv[1], &on))
		return "usage: stall on|off";
	spin_lock_irq(&d->lock);
	d->stall = on;
	dmbd_schedule(d);
	spin_unlock_irq(&d->lock);
	return NULL;
}

static const char *ctl_clear(struct dmbd *d, unsigned int argc)
{
	struct dmbd_cmd *cmd;

	if (argc != 1)
		return "usage: clear";
	spin_lock_irq(&d->lock);
	memset(&d->flush, 0, sizeof(d->flush));
	d->flush_lose = false;
	memset(&d->fua_fault, 0, sizeof(d->fua_fault));
	memset(d->ranges, 0, sizeof(d->ranges));
	d->delay_ms = 0;
	d->stall = false;
	list_for_each_entry(cmd, &d->queued, list)
		cmd->release_ns = 0;
	dmbd_schedule(d);
	spin_unlock_irq(&d->lock);
	return NULL;
}

/* powercut: the cache is lost now; cache_reset: forgotten. */
static const char *ctl_cache(struct dmbd *d, unsigned int argc, bool cut)
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
	/* The worker is the only other writer of the medium: keep it off. */
	spin_lock_irq(&d->lock);
	d->cutting = true;
	spin_unlock_irq(&d->lock);
	cancel_delayed_work_sync(&d->work);
	spin_lock_irq(&d->lock);
	if (cut) {
		n = cache_take(&d->cache, ents);
		if (n < 0)
			why = "the cache model overflowed: cache_reset first";
		else
			d->lost += n;
	} else {
		cache_reset(&d->cache);
	}
	spin_unlock_irq(&d->lock);
	if (n > 0)
		cache_write_loss(d, ents, n);
	if (cut && !why)
		pr_info("dmbd%u: power cut: %d writes lost\n", d->index, n);
	spin_lock_irq(&d->lock);
	d->cutting = false;
	dmbd_schedule(d);
	spin_unlock_irq(&d->lock);
	kvfree(ents);
	return why;
}

static const char *ctl_log_clear(unsigned int argc)
{
	if (argc != 1)
		return "usage: log_clear";
	log_clear();
	return NULL;
}

static const char *ctl_run(struct dmbd *d, unsigned int argc, char **argv)
{
	if (!argc)
		return "empty command";
	if (!strcasecmp(argv[0], "fail_flush"))
		return ctl_fail(d, &d->flush, argc, argv);
	if (!strcasecmp(argv[0], "fail_fua"))
		return ctl_fail(d, &d->fua_fault, argc, argv);
	if (!strcasecmp(argv[0], "fail_write"))
		return ctl_fail_write(d, argc, argv);
	if (!strcasecmp(argv[0], "delay"))
		return ctl_number(d, argc, argv, &d->delay_ms, 0, MAX_DELAY_MS);
	if (!strcasecmp(argv[0], "reorder"))
		return ctl_number(d, argc, argv, &d->reorder, 1, MAX_REORDER);
	if (!strcasecmp(argv[0], "stall"))
		return ctl_stall(d, argc, argv);
	if (!strcasecmp(argv[0], "clear"))
		return ctl_clear(d, argc);
	if (!strcasecmp(argv[0], "log_clear"))
		return ctl_log_clear(argc);
	if (!strcasecmp(argv[0], "powercut"))
		return ctl_cache(d, argc, true);
	if (!strcasecmp(argv[0], "cache_reset"))
		return ctl_cache(d, argc, false);
	return "unknown command";
}

static ssize_t ctl_write(struct file *file, const char __user *ubuf, size_t len, loff_t *ppos)
{
	struct dmbd *d = file_inode(file)->i_private;
	char buf[CTL_MAX], *argv[8], *p = buf, *tok;
	unsigned int argc = 0;
	const char *why;

	if (!len || len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	while ((tok = strsep(&p, " \t\n"))) {
		if (!*tok)
			continue;
		if (argc == ARRAY_SIZE(argv)) {
			pr_warn("dmbd%u: too many words in a command\n", d->index);
			return -EINVAL;
		}
		argv[argc++] = tok;
	}
	why = ctl_run(d, argc, argv);
	if (why) {
		pr_warn("dmbd%u: %s%s%s\n", d->index, argc ? argv[0] : "", argc ? ": " : "", why);
		return -EINVAL;
	}
	return len;
}

static const struct file_operations ctl_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = ctl_write,
	.llseek = noop_llseek,
};

static int status_show(struct seq_file *m, void *v)
{
	struct dmbd *d = m->private;

	spin_lock_irq(&d->lock);
	seq_printf(m, "%llu %llu %llu %llu %llu %llu %llu %u %u %llu\n", d->flushes,
		   d->fua_writes, d->writes, d->reads, d->injected_flush, d->injected_fua,
		   d->injected_write, d->nr_queued, d->cache.nr, d->lost);
	spin_unlock_irq(&d->lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(status);

/* ---------------------------------------------------------------- disks */

static struct gendisk *dmbd_alloc_disk(struct dmbd *d)
{
/* 6.11 moved the cache flags into the limits blk_mq_alloc_disk() takes. */
#ifdef BLK_FEAT_WRITE_CACHE
	struct queue_limits lim = {
		.features = BLK_FEAT_WRITE_CACHE | (d->fua ? BLK_FEAT_FUA : 0),
		.max_hw_sectors = 256,
	};

	return blk_mq_alloc_disk(&d->set, &lim, d);
#else
	struct gendisk *disk = blk_mq_alloc_disk(&d->set, d);

	if (!IS_ERR(disk)) {
		blk_queue_write_cache(disk->queue, true, d->fua);
		blk_queue_max_hw_sectors(disk->queue, 256);
	}
	return disk;
#endif
}

static void dmbd_destroy(struct dmbd *d)
{
	if (d->disk) {
		spin_lock_irq(&d->lock);
		d->stall = false;
		d->delay_ms = 0;
		dmbd_schedule(d);
		spin_unlock_irq(&d->lock);
		del_gendisk(d->disk);
		put_disk(d->disk);
	}
	if (d->wq) {
		cancel_delayed_work_sync(&d->work);
		destroy_workqueue(d->wq);
	}
	if (d->set.tags)
		blk_mq_free_tag_set(&d->set);
	debugfs_remove_recursive(d->dir);
	medium_free(d);
	kvfree(d->cache.dirty);
	kfree(d);
}

static int dmbd_create(unsigned int index)
{
	struct dmbd *d = kzalloc(sizeof(*d), GFP_KERNEL);
	char name[16];
	int r = -ENOMEM;

	if (!d)
		return -ENOMEM;
	d->index = index;
	d->fua = !(index & 1);
	d->reorder = 1;
	spin_lock_init(&d->lock);
	INIT_LIST_HEAD(&d->queued);
	xa_init(&d->pages);
	INIT_DELAYED_WORK(&d->work, dmbd_work);
	d->cache.dirty = kvmalloc_array(CACHE_MAX, sizeof(*d->cache.dirty), GFP_KERNEL);
	d->wq = alloc_workqueue("dmbd%u", WQ_MEM_RECLAIM | WQ_UNBOUND, 0, index);
	if (!d->cache.dirty || !d->wq)
		goto bad;

	d->set.ops = &dmbd_mq_ops;
	d->set.nr_hw_queues = 1;
	d->set.queue_depth = 64;
	d->set.numa_node = NUMA_NO_NODE;
	d->set.cmd_size = sizeof(struct dmbd_cmd);
	d->set.timeout = 600 * HZ;
	r = blk_mq_alloc_tag_set(&d->set);
	if (r) {
		d->set.tags = NULL;
		goto bad;
	}
	d->disk = dmbd_alloc_disk(d);
	if (IS_ERR(d->disk)) {
		r = PTR_ERR(d->disk);
		d->disk = NULL;
		goto bad;
	}
	/* One request per bio: the log names each write by its sector. */
	blk_queue_flag_set(QUEUE_FLAG_NOMERGES, d->disk->queue);
	d->disk->major = dmbd_major;
	d->disk->first_minor = index;
	d->disk->minors = 1;
	d->disk->fops = &dmbd_fops;
	d->disk->private_data = d;
	d->disk->flags |= GENHD_FL_NO_PART;
	snprintf(d->disk->disk_name, DISK_NAME_LEN, "dmbd%u", index);
	set_capacity(d->disk, disk_sectors);

	snprintf(name, sizeof(name), "dmbd%u", index);
	d->dir = debugfs_create_dir(name, top_dir);
	debugfs_create_file("ctl", 0200, d->dir, d, &ctl_fops);
	debugfs_create_file("status", 0444, d->dir, d, &status_fops);

	r = add_disk(d->disk);
	if (r) {
		put_disk(d->disk);
		d->disk = NULL;
		goto bad;
	}
	disks[index] = d;
	return 0;
bad:
	dmbd_destroy(d);
	return r;
}

static void dmbd_cleanup(void)
{
	unsigned int i;

	for (i = 0; i < MAX_DISKS; i++) {
		if (disks[i])
			dmbd_destroy(disks[i]);
		disks[i] = NULL;
	}
	if (dmbd_major > 0)
		unregister_blkdev(dmbd_major, "dmbd");
	debugfs_remove_recursive(top_dir);
	log_free();
}

static int __init dmb_disk_init(void)
{
	unsigned int i;
	int r;

	if (!nr_disks || nr_disks > MAX_DISKS || !disk_sectors || disk_sectors & 7)
		return -EINVAL;
	r = log_alloc();
	if (r)
		return r;
	top_dir = debugfs_create_dir("dmb_disk", NULL);
	debugfs_create_file("log", 0444, top_dir, NULL, &log_fops);
	dmbd_major = register_blkdev(0, "dmbd");
	if (dmbd_major < 0) {
		r = dmbd_major;
		goto bad;
	}
	for (i = 0; i < nr_disks; i++) {
		r = dmbd_create(i);
		if (r)
			goto bad;
	}
	return 0;
bad:
	dmbd_cleanup();
	return r;
}

static void __exit dmb_disk_exit(void)
{
	dmbd_cleanup();
}

module_init(dmb_disk_init);
module_exit(dmb_disk_exit);

MODULE_DESCRIPTION("dm-barrier test disk: blk-mq, faults set at run time, request log");
MODULE_LICENSE("GPL");
