/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dmb_fault_common.h: what dmb_fault (a device-mapper target, this
 * directory) and dmb_disk (a blk-mq disk, tests/vm/diskmod) share, for
 * dm-barrier's guest tests only: the log line and the ring that keeps it,
 * the faults and the statuses they fail with, and the volatile cache's
 * bookkeeping.  Definitions, not just declarations: each module includes
 * it once, after defining DMB_LOG_NAME, the format of a log line's first
 * field from the record's dev number ("dm-%u", "dmbd%u").
 */
#ifndef DMB_FAULT_COMMON_H
#define DMB_FAULT_COMMON_H

#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/seq_file.h>
#include <linux/spinlock.h>
#include <linux/vmalloc.h>

#define LOG_SIZE	262144U		/* lines; a power of two */
#define FAULT_RANGES	4
#define FAULT_ALL	UINT_MAX
#define MAX_DELAY_MS	60000U
#define CACHE_MAX	32768U

enum {
	FL_PREFLUSH	= BIT(0),
	FL_FUA		= BIT(1),
	FL_SYNC		= BIT(2),
	FL_NOWAIT	= BIT(3),
	FL_POLLED	= BIT(4),
};

static const char * const flag_names[] = {
	"PREFLUSH", "FUA", "SYNC", "NOWAIT", "POLLED",
};

static inline u8 fault_flags(blk_opf_t opf)
{
	return (opf & REQ_PREFLUSH ? FL_PREFLUSH : 0) |
	       (opf & REQ_FUA ? FL_FUA : 0) |
	       (opf & REQ_SYNC ? FL_SYNC : 0) |
	       (opf & REQ_NOWAIT ? FL_NOWAIT : 0) |
	       (opf & REQ_POLLED ? FL_POLLED : 0);
}

/* One log line. */
struct fault_rec {
	u64 seq;
	u64 submit_ns;
	u64 complete_ns;
	u64 sector;
	u32 sectors;
	u32 dev;		/* printed with DMB_LOG_NAME */
	int status;
	char op;
	u8 flags;
	bool injected;
	u32 nr_lost;		/* a lossy flush: the writes it lost ... */
	u64 loss_ns;		/* ... taken at this time */
};

/* ------------------------------------------------------------------ log */

static struct fault_rec *log_ring;
static u64 log_total;		/* lines written since load or log_clear */
static DEFINE_SPINLOCK(log_lock);	/* protects log_ring, log_total */

static int log_alloc(void)
{
	log_ring = vmalloc(array_size(LOG_SIZE, sizeof(*log_ring)));
	return log_ring ? 0 : -ENOMEM;
}

static void log_free(void)
{
	vfree(log_ring);
}

static void log_add(const struct fault_rec *rec)
{
	unsigned long flags;

	spin_lock_irqsave(&log_lock, flags);
	log_ring[log_total % LOG_SIZE] = *rec;
	log_total++;
	spin_unlock_irqrestore(&log_lock, flags);
}

static void log_clear(void)
{
	spin_lock_irq(&log_lock);
	log_total = 0;
	spin_unlock_irq(&log_lock);
}

/*
 * Position 0 is the "# overflow" line, position p > 0 the line numbered
 * p - 1 since the log was cleared; lines overwritten meanwhile are skipped.
 * The line is copied out under the lock, so writers never wait for a reader.
 */
struct log_iter {
	bool overflow_line;
	struct fault_rec rec;
};

static void *log_fetch(struct seq_file *m, loff_t *pos)
{
	struct log_iter *it = m->private;
	void *ret = it;
	u64 first, idx;

	spin_lock_irq(&log_lock);
	first = log_total > LOG_SIZE ? log_total - LOG_SIZE : 0;
	if (*pos == 0) {
		it->overflow_line = true;
		if (first)
			goto out;
		*pos = 1;
	}
	it->overflow_line = false;
	idx = max_t(u64, *pos - 1, first);
	*pos = idx + 1;
	if (idx >= log_total)
		ret = NULL;
	else
		it->rec = log_ring[idx % LOG_SIZE];
out:
	spin_unlock_irq(&log_lock);
	return ret;
}

static void *log_start(struct seq_file *m, loff_t *pos)
{
	return log_fetch(m, pos);
}

static void *log_next(struct seq_file *m, void *v, loff_t *pos)
{
	++*pos;
	return log_fetch(m, pos);
}

static void log_stop(struct seq_file *m, void *v)
{
}

static int log_show(struct seq_file *m, void *v)
{
	const struct log_iter *it = v;
	const struct fault_rec *r = &it->rec;
	bool any = false;
	unsigned int i;

	if (it->overflow_line) {
		seq_puts(m, "# overflow\n");
		return 0;
	}
	seq_printf(m, DMB_LOG_NAME " %llu %llu %llu %c ", r->dev, r->seq,
		   r->submit_ns, r->complete_ns, r->op);
	for (i = 0; i < ARRAY_SIZE(flag_names); i++) {
		if (r->flags & BIT(i)) {
			seq_printf(m, "%s%s", any ? "," : "", flag_names[i]);
			any = true;
		}
	}
	seq_printf(m, "%s %llu %u %d %d", any ? "" : "-", r->sector,
		   r->sectors, r->status, r->injected);
	if (r->loss_ns)
		seq_printf(m, " lost %llu %u", r->loss_ns, r->nr_lost);
	seq_putc(m, '\n');
	return 0;
}

static const struct seq_operations log_seq_ops = {
	.start = log_start,
	.next = log_next,
	.stop = log_stop,
	.show = log_show,
};

static int log_open(struct inode *inode, struct file *file)
{
	return seq_open_private(file, &log_seq_ops, sizeof(struct log_iter));
}

static const struct file_operations log_fops = {
	.owner = THIS_MODULE,
	.open = log_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = seq_release_private,
};

/* --------------------------------------------------------------- faults */

/* A fault: how many more bios it fails (FAULT_ALL: all, 0: off), and how. */
struct fault {
	unsigned int left;
	blk_status_t status;
};

struct fault_range {
	sector_t start;
	sector_t len;
	struct fault f;
};

/* Under the owner's lock: use up one bio of @f; its status, or BLK_STS_OK. */
static blk_status_t fault_take(struct fault *f, u64 *injected)
{
	if (!f->left)
		return BLK_STS_OK;
	if (f->left != FAULT_ALL)
		f->left--;
	(*injected)++;
	return f->status;
}

/* The first of @ranges with bios left that [sector, + sectors) meets. */
static struct fault_range *fault_range_hit(struct fault_range *ranges, u64 sector, u32 sectors)
{
	unsigned int i;

	for (i = 0; i < FAULT_RANGES; i++)
		if (ranges[i].f.left && sector < ranges[i].start + ranges[i].len &&
		    ranges[i].start < sector + sectors)
			return &ranges[i];
	return NULL;
}

static const struct {
	const char *name;
	blk_status_t status;
} fault_statuses[] = {
	{ "EIO", BLK_STS_IOERR },
	{ "NOSPC", BLK_STS_NOSPC },
	{ "MEDIUM", BLK_STS_MEDIUM },
	{ "AGAIN", BLK_STS_AGAIN },
};

/* <N|all|off> [status] into @f; a reason when they are invalid. */
static const char *parse_fault(unsigned int argc, char **argv, struct fault *f)
{
	unsigned int i;

	if (!strcasecmp(argv[0], "all"))
		f->left = FAULT_ALL;
	else if (!strcasecmp(argv[0], "off"))
		f->left = 0;
	else if (kstrtouint(argv[0], 10, &f->left) || f->left == FAULT_ALL)
		return "the count must be a number, all or off";
	f->status = BLK_STS_IOERR;
	if (argc < 2)
		return NULL;
	for (i = 0; i < ARRAY_SIZE(fault_statuses); i++) {
		if (!strcasecmp(argv[1], fault_statuses[i].name)) {
			f->status = fault_statuses[i].status;
			return NULL;
		}
	}
	return "the status must be EIO, NOSPC, MEDIUM or AGAIN";
}

/*
 * fail_flush|fail_fua <N|all|off> [status], fail_flush ... [lose]: into @f
 * under @lock; *@lose (NULL: the fault takes no "lose") says whether its
 * next failure loses the cache.
 */
static const char *parse_fail(struct fault *f, bool *lose, spinlock_t *lock,
			      unsigned int argc, char **argv)
{
	bool l = lose && argc >= 3 && !strcasecmp(argv[argc - 1], "lose");
	struct fault n;
	const char *why;

	if (l)
		argc--;
	if (argc < 2 || argc > 3)
		return "usage: <N|all|off> [EIO|NOSPC|MEDIUM|AGAIN] (fail_flush: [lose])";
	why = parse_fault(argc - 1, argv + 1, &n);
	if (why)
		return why;
	spin_lock_irq(lock);
	*f = n;
	if (lose)
		*lose = l && n.left;
	spin_unlock_irq(lock);
	return NULL;
}

/*
 * fail_write <start> <len> <N|all|off> [status] | fail_write off, over
 * @ranges of a device of @size sectors, under @lock.
 */
static const char *parse_fail_write(struct fault_range *ranges, spinlock_t *lock, sector_t size,
				    unsigned int argc, char **argv)
{
	struct fault_range *r, *slot = NULL;
	unsigned long long start, len;
	struct fault n;
	const char *why;
	unsigned int i;

	if (argc == 2 && !strcasecmp(argv[1], "off")) {
		spin_lock_irq(lock);
		memset(ranges, 0, FAULT_RANGES * sizeof(*ranges));
		spin_unlock_irq(lock);
		return NULL;
	}
	if (argc < 4 || argc > 5)
		return "usage: <start> <len> <N|all|off> [EIO|NOSPC|MEDIUM|AGAIN], or off";
	if (kstrtoull(argv[1], 10, &start) || kstrtoull(argv[2], 10, &len) ||
	    !len || start >= size || len > size - start)
		return "the range must be non-empty and inside the device";
	why = parse_fault(argc - 3, argv + 3, &n);
	if (why)
		return why;
	spin_lock_irq(lock);
	for (i = 0; i < FAULT_RANGES; i++) {
		r = &ranges[i];
		if (r->f.left && r->start == start && r->len == len) {
			slot = r;
			break;
		}
		if (!r->f.left && !slot)
			slot = r;
	}
	if (slot) {
		slot->start = start;
		slot->len = len;
		slot->f = n;
	}
	spin_unlock_irq(lock);
	if (!slot && n.left)
		return "all " __stringify(FAULT_RANGES) " ranges are in use";
	return NULL;
}

/* ------------------------------------------------------ volatile cache */

/* A write in the volatile cache: completed, not yet covered by a flush. */
struct cache_ent {
	u64 sector;
	u64 done_ns;
	u32 sectors;
};

/* The writes (non-FUA, completed) no flush has covered yet; CACHE_MAX. */
struct fault_cache {
	struct cache_ent *dirty;
	unsigned int nr;
	bool overflow;		/* more than CACHE_MAX: a loss is refused */
};

/* Under the owner's lock: a write completed into the cache. */
static void cache_add(struct fault_cache *c, const struct fault_rec *rec)
{
	if (c->nr == CACHE_MAX) {
		c->overflow = true;
		return;
	}
	c->dirty[c->nr++] = (struct cache_ent){
		.sector = rec->sector, .sectors = rec->sectors, .done_ns = rec->complete_ns,
	};
}

/* Under the owner's lock: a flush covered the writes completed by @submit_ns. */
static void cache_flushed(struct fault_cache *c, u64 submit_ns)
{
	unsigned int i, n = 0;

	for (i = 0; i < c->nr; i++)
		if (c->dirty[i].done_ns > submit_ns)
			c->dirty[n++] = c->dirty[i];
	c->nr = n;
}

/*
 * Under the owner's lock: the cache is lost now, its writes moved to @ents
 * (CACHE_MAX) for the caller to zero; how many, or -1 when the model
 * overflowed (nothing is taken).
 */
static int cache_take(struct fault_cache *c, struct cache_ent *ents)
{
	int n = c->nr;

	if (c->overflow)
		return -1;
	memcpy(ents, c->dirty, n * sizeof(*ents));
	c->nr = 0;
	return n;
}

static void cache_reset(struct fault_cache *c)
{
	c->nr = 0;
	c->overflow = false;
}

#endif
