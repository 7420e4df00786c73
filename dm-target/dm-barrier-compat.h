/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every kernel-version difference dm-barrier depends on, named by the
 * feature it tests.  Kbuild defines DMB_HAVE_<feature> by looking for the
 * name in the headers of the kernel being built for.  The target is built
 * and tested against Debian's 6.1, 6.12 and 7.3; the notes say what changes
 * where, so that a port touches only this file (and the tests in Kbuild).
 */
#ifndef DM_BARRIER_COMPAT_H
#define DM_BARRIER_COMPAT_H

#include <linux/blkdev.h>
#include <linux/bio.h>
#include <linux/device-mapper.h>

/*
 * Volatile write cache and FUA of the backing device.
 * 6.0 added bdev_write_cache() and bdev_fua() over QUEUE_FLAG_WC/FUA.
 * 6.11 moved both into queue_limits.features (BLK_FEAT_WRITE_CACHE,
 * BLK_FEAT_FUA); the helpers kept their names and meaning, so 6.6 and 6.12
 * need nothing here.  A dm device advertises a write cache and FUA when one
 * of its targets sets ti->flush_supported (dm_table_supports_flush() in 6.1
 * and 6.6, the same test feeding limits->features in 6.12).
 */
#ifdef DMB_HAVE_BDEV_WRITE_CACHE
static inline bool dmb_bdev_write_cache(struct block_device *bdev)
{
	return bdev_write_cache(bdev);
}

static inline bool dmb_bdev_fua(struct block_device *bdev)
{
	return bdev_fua(bdev);
}
#else
static inline bool dmb_bdev_write_cache(struct block_device *bdev)
{
	return test_bit(QUEUE_FLAG_WC, &bdev_get_queue(bdev)->queue_flags);
}

static inline bool dmb_bdev_fua(struct block_device *bdev)
{
	return test_bit(QUEUE_FLAG_FUA, &bdev_get_queue(bdev)->queue_flags);
}
#endif

/*
 * The ioctl a dm device forwards to its one backing device: around 6.16
 * dm_prepare_ioctl_fn gained the ioctl's cmd and arg and a *forward flag a
 * target clears when it handled the ioctl itself.  dm-barrier handles none,
 * so the wrapper leaves *forward as dm core set it (true) and passes on
 * only the device; the return value keeps its meaning (> 0: the mapping is
 * not the whole device, dm core checks the ioctl is safe for a partition).
 * barrier_ioctl_bdev() is dm-barrier.c's, the one prepare_ioctl of both.
 */
static int barrier_ioctl_bdev(struct dm_target *ti, struct block_device **bdev);

#ifdef DMB_HAVE_PREPARE_IOCTL_FORWARD
static int dmb_prepare_ioctl(struct dm_target *ti, struct block_device **bdev,
			     unsigned int cmd, unsigned long arg, bool *forward)
{
	return barrier_ioctl_bdev(ti, bdev);
}
#else
static int dmb_prepare_ioctl(struct dm_target *ti, struct block_device **bdev)
{
	return barrier_ioctl_bdev(ti, bdev);
}
#endif

/*
 * Flushes must reach map(): the target orders them.  6.12 added
 * ti->flush_bypasses_map, letting dm core send empty flushes straight to
 * the devices of targets that set it; dm-barrier must never set it (it is
 * false unless set, so there is nothing to do, only nothing to copy from
 * dm-linear, which sets it from 6.12 on).
 *
 * Cloning a bio for the barrier's data write: bio_alloc_clone() since 5.18
 * (before: bio_clone_fast() plus bio_set_dev()).  Unchanged in 6.6/6.12.
 */
#if !defined(DMB_HAVE_BIO_ALLOC_CLONE) || !defined(DMB_HAVE_DM_SUBMIT_BIO_REMAP)
#error "dm-barrier needs bio_alloc_clone() and dm_submit_bio_remap() (Linux 5.18 or later)"
#endif

#endif /* DM_BARRIER_COMPAT_H */
