// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only module: submits bios with the flags a test names, which no
 * system call can make.  A journal's commit block is a write carrying
 * REQ_PREFLUSH (with or without REQ_FUA) and data; dm core splits it into
 * an empty flush and the data part, and what dm-barrier does with that
 * pair is what the guest tests check.  With this module a test builds the
 * exact interleaving it needs instead of hoping a file system makes it.
 *
 * debugfs /sys/kernel/debug/dmb_bio/:
 *   ctl      write "open MAJ:MIN", "close", or
 *            "submit ID W|F|R FLAGS SECTOR SECTORS" (W a write, F an empty
 *            flush, R a read; FLAGS: comma list of PREFLUSH,FUA,SYNC,NOWAIT, or
 *            -); submit returns once the bio is submitted, it completes
 *            asynchronously
 *   results  one line per bio submitted since open: "ID STATUS", STATUS
 *            being the errno it completed with, or "pending"
 */
#include <linux/module.h>
#include <linux/blkdev.h>
#include <linux/bio.h>
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#define DMB_BIO_MAX 8192

struct dmb_bio_rec {
	unsigned int id;
	bool done;
	int status;
};

static DEFINE_MUTEX(dmb_bio_mutex);	/* open, close, submit */
static DEFINE_SPINLOCK(dmb_bio_lock);	/* recs, nr_recs, pending */
static struct dmb_bio_rec dmb_bio_recs[DMB_BIO_MAX];
static unsigned int dmb_bio_nr;
static atomic_t dmb_bio_pending = ATOMIC_INIT(0);
static DECLARE_WAIT_QUEUE_HEAD(dmb_bio_wait);
static struct dentry *dmb_bio_dir;

#ifdef DMB_HAVE_BDEV_FILE_OPEN
static struct file *dmb_bio_file;

static struct block_device *dmb_bio_open(dev_t dev)
{
	dmb_bio_file = bdev_file_open_by_dev(dev, BLK_OPEN_READ | BLK_OPEN_WRITE, NULL, NULL);
	if (IS_ERR(dmb_bio_file))
		return ERR_CAST(dmb_bio_file);
	return file_bdev(dmb_bio_file);
}

static void dmb_bio_close(struct block_device *bdev)
{
	fput(dmb_bio_file);
}
#else
static struct block_device *dmb_bio_open(dev_t dev)
{
	return blkdev_get_by_dev(dev, FMODE_READ | FMODE_WRITE, NULL);
}

static void dmb_bio_close(struct block_device *bdev)
{
	blkdev_put(bdev, FMODE_READ | FMODE_WRITE);
}
#endif

static struct block_device *dmb_bio_bdev;

static void dmb_bio_endio(struct bio *bio)
{
	struct dmb_bio_rec *rec = bio->bi_private;
	unsigned long flags;

	spin_lock_irqsave(&dmb_bio_lock, flags);
	rec->status = blk_status_to_errno(bio->bi_status);
	rec->done = true;
	spin_unlock_irqrestore(&dmb_bio_lock, flags);
	if (bio->bi_vcnt)
		__free_page(bio->bi_io_vec[0].bv_page);
	bio_put(bio);
	if (atomic_dec_and_test(&dmb_bio_pending))
		wake_up(&dmb_bio_wait);
}

static int dmb_bio_submit(unsigned int id, char op, char *flags, u64 sector, u32 sectors)
{
	blk_opf_t opf = REQ_OP_WRITE;
	struct dmb_bio_rec *rec;
	struct page *page = NULL;
	struct bio *bio;
	char *f;

	if (!dmb_bio_bdev || (op != 'W' && op != 'F' && op != 'R') || (op == 'F') == !!sectors ||
	    sectors > PAGE_SIZE >> SECTOR_SHIFT)
		return -EINVAL;
	if (op == 'R')
		opf = REQ_OP_READ;
	while ((f = strsep(&flags, ",")) && strcmp(f, "-")) {
		if (!strcmp(f, "PREFLUSH"))
			opf |= REQ_PREFLUSH;
		else if (!strcmp(f, "FUA"))
			opf |= REQ_FUA;
		else if (!strcmp(f, "SYNC"))
			opf |= REQ_SYNC;
		else if (!strcmp(f, "NOWAIT"))
			opf |= REQ_NOWAIT;
		else
			return -EINVAL;
	}
	if (dmb_bio_nr == DMB_BIO_MAX)
		return -ENOSPC;
	if (sectors) {
		page = alloc_page(GFP_KERNEL);
		if (!page)
			return -ENOMEM;
		memset(page_address(page), id & 0xff, PAGE_SIZE);
	}
	bio = bio_alloc(dmb_bio_bdev, 1, opf, GFP_KERNEL);
	bio->bi_iter.bi_sector = sector;
	if (page)
		__bio_add_page(bio, page, sectors << SECTOR_SHIFT, 0);

	spin_lock_irq(&dmb_bio_lock);
	rec = &dmb_bio_recs[dmb_bio_nr++];
	rec->id = id;
	rec->done = false;
	spin_unlock_irq(&dmb_bio_lock);
	bio->bi_private = rec;
	bio->bi_end_io = dmb_bio_endio;
	atomic_inc(&dmb_bio_pending);
	submit_bio(bio);
	return 0;
}

static int dmb_bio_ctl(char *cmd)
{
	unsigned int id, maj, min, sectors;
	char op, flags[32];
	struct block_device *bdev;
	u64 sector;

	if (sscanf(cmd, "open %u:%u", &maj, &min) == 2) {
		if (dmb_bio_bdev)
			return -EBUSY;
		bdev = dmb_bio_open(MKDEV(maj, min));
		if (IS_ERR(bdev))
			return PTR_ERR(bdev);
		dmb_bio_bdev = bdev;
		dmb_bio_nr = 0;
		return 0;
	}
	if (!strcmp(cmd, "close")) {
		if (!dmb_bio_bdev)
			return -EINVAL;
		wait_event(dmb_bio_wait, !atomic_read(&dmb_bio_pending));
		dmb_bio_close(dmb_bio_bdev);
		dmb_bio_bdev = NULL;
		return 0;
	}
	if (sscanf(cmd, "submit %u %c %31s %llu %u", &id, &op, flags, &sector, &sectors) == 5)
		return dmb_bio_submit(id, op, flags, sector, sectors);
	return -EINVAL;
}

static ssize_t dmb_bio_ctl_write(struct file *file, const char __user *ubuf, size_t len,
				 loff_t *pos)
{
	char buf[96];
	int r;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	strim(buf);
	mutex_lock(&dmb_bio_mutex);
	r = dmb_bio_ctl(buf);
	mutex_unlock(&dmb_bio_mutex);
	return r ? r : len;
}

static const struct file_operations dmb_bio_ctl_fops = {
	.owner = THIS_MODULE,
	.write = dmb_bio_ctl_write,
};

static int dmb_bio_results_show(struct seq_file *m, void *v)
{
	unsigned int i;

	spin_lock_irq(&dmb_bio_lock);
	for (i = 0; i < dmb_bio_nr; i++) {
		if (dmb_bio_recs[i].done)
			seq_printf(m, "%u %d\n", dmb_bio_recs[i].id, dmb_bio_recs[i].status);
		else
			seq_printf(m, "%u pending\n", dmb_bio_recs[i].id);
	}
	spin_unlock_irq(&dmb_bio_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(dmb_bio_results);

static int __init dmb_bio_init(void)
{
	dmb_bio_dir = debugfs_create_dir("dmb_bio", NULL);
	debugfs_create_file("ctl", 0200, dmb_bio_dir, NULL, &dmb_bio_ctl_fops);
	debugfs_create_file("results", 0400, dmb_bio_dir, NULL, &dmb_bio_results_fops);
	return 0;
}

static void __exit dmb_bio_exit(void)
{
	debugfs_remove_recursive(dmb_bio_dir);
	mutex_lock(&dmb_bio_mutex);
	if (dmb_bio_bdev) {
		wait_event(dmb_bio_wait, !atomic_read(&dmb_bio_pending));
		dmb_bio_close(dmb_bio_bdev);
	}
	mutex_unlock(&dmb_bio_mutex);
}

module_init(dmb_bio_init);
module_exit(dmb_bio_exit);

MODULE_DESCRIPTION("dm-barrier tests: submit bios with chosen flags");
MODULE_LICENSE("GPL");
