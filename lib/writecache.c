// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * writecache.c: block devices and the write cache of disks.  Resolves paths
 * and partitions through sysfs; reads the kernel's view of the cache from
 * queue/write_cache and the drive's own from ATA IDENTIFY DEVICE, and
 * switches it with ATA SET FEATURES, both through SG_IO ATA PASS-THROUGH(16)
 * as hdparm -W does.  The kernel and the drive can disagree (after -W0
 * while flushes fail, the kernel keeps "write back"), so setting checks
 * both and makes the kernel agree: a SCSI rescan, and if that is not
 * enough, queue/write_cache itself.
 */
#include <fcntl.h>
#include <limits.h>
#include <scsi/sg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "libdmbarrier-private.h"

#define SYS_DEV_BLOCK "/sys/dev/block"

/* ATA PASS-THROUGH(16), SAT-3 */
#define ATA_16 0x85
#define ATA_PROTO_NON_DATA (3 << 1)
#define ATA_PROTO_PIO_IN (4 << 1)
#define ATA_T_LENGTH_NSECT 0x02	/* transfer length in the sector count field */
#define ATA_BYT_BLOK 0x04	/* ... counted in 512-byte blocks */
#define ATA_T_DIR_IN 0x08
#define ATA_CMD_IDENTIFY 0xec
#define ATA_CMD_SET_FEATURES 0xef
#define ATA_SF_WC_ON 0x02
#define ATA_SF_WC_OFF 0x82
#define ATA_ERR_ABRT 0x04

/* SCSI sense keys */
#define SK_ILLEGAL_REQUEST 0x05
#define SK_ABORTED_COMMAND 0x0b
#define SAM_CHECK_CONDITION 0x02
#define SG_DRIVER_SENSE 0x08

#define SG_TIMEOUT_MS 15000

/* ------------------------------------------------------------ sysfs */

static int sysfs_path(char *buf, size_t size, dev_t dev, const char *attr)
{
	int n = snprintf(buf, size, SYS_DEV_BLOCK "/%u:%u%s%s", major(dev), minor(dev),
			 attr ? "/" : "", attr ? attr : "");

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

static int sysfs_open(dev_t dev, const char *attr, int flags)
{
	char path[PATH_MAX];
	int fd, r;

	r = sysfs_path(path, sizeof(path), dev, attr);
	if (r < 0)
		return r;
	fd = open(path, flags | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* One line of a sysfs attribute, without the newline. */
static int sysfs_read(dev_t dev, const char *attr, char *buf, size_t size)
{
	_cleanup_(closep) int fd = sysfs_open(dev, attr, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return fd;
	n = read(fd, buf, size - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static int sysfs_write(dev_t dev, const char *attr, const char *value)
{
	_cleanup_(closep) int fd = sysfs_open(dev, attr, O_WRONLY);
	size_t len = strlen(value);
	ssize_t n;

	if (fd < 0)
		return fd;
	n = write(fd, value, len);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

static bool sysfs_exists(dev_t dev, const char *attr)
{
	char path[PATH_MAX];

	return sysfs_path(path, sizeof(path), dev, attr) == 0 && access(path, F_OK) == 0;
}

_public_ int dmb_disk_from_path(struct dmb_ctx *ctx, const char *path, dev_t *ret)
{
	struct stat st;
	dev_t dev;

	dmb_call_begin(ctx);
	if (!path || !*path)
		return dmb_fail(ctx, -EINVAL, "no device given");
	if (devnum_parse(path, &dev) == 0) {
		if (!sysfs_exists(dev, NULL))
			return dmb_fail(ctx, -ENOENT, "there is no block device %s", path);
		*ret = dev;
		return 0;
	}
	if (stat(path, &st) < 0)
		return dmb_fail(ctx, -errno, "%s: %m", path);
	if (!S_ISBLK(st.st_mode))
		return dmb_fail(ctx, -ENOTBLK, "%s is not a block device", path);
	*ret = st.st_rdev;
	return 0;
}

_public_ int dmb_disk_whole(struct dmb_ctx *ctx, dev_t dev, dev_t *ret)
{
	char buf[32];
	dev_t whole;
	int r;

	dmb_call_begin(ctx);
	if (!sysfs_exists(dev, NULL))
		return dmb_fail(ctx, -ENOENT, "there is no block device %u:%u", major(dev),
				minor(dev));
	if (!sysfs_exists(dev, "partition")) {
		*ret = dev;
		return 0;
	}
	/* A partition's sysfs directory sits inside its disk's. */
	r = sysfs_read(dev, "../dev", buf, sizeof(buf));
	if (r < 0 || devnum_parse(buf, &whole) < 0)
		return dmb_fail(ctx, r < 0 ? r : -EIO, "cannot find the disk of partition %u:%u",
				major(dev), minor(dev));
	*ret = whole;
	return 0;
}

_public_ int dmb_disk_name(struct dmb_ctx *ctx, dev_t dev, char *buf, size_t size)
{
	char path[PATH_MAX], target[PATH_MAX];
	const char *base;
	ssize_t n;
	int r;

	dmb_call_begin(ctx);
	r = sysfs_path(path, sizeof(path), dev, NULL);
	if (r < 0)
		return dmb_fail(ctx, r, "bad device number");
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return dmb_fail(ctx, errno == ENOENT ? -ENOENT : -errno,
				"there is no block device %u:%u", major(dev), minor(dev));
	target[n] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if (strlen(base) >= size)
		return dmb_fail(ctx, -ENOBUFS, "device name %s is too long", base);
	snprintf(buf, size, "%s", base);
	return 0;
}

int disk_size(struct dmb_ctx *ctx, dev_t dev, uint64_t *ret)
{
	char buf[32];
	int r;

	r = sysfs_read(dev, "size", buf, sizeof(buf));
	if (r < 0)
		return dmb_fail(ctx, r, "cannot read the size of %u:%u: %s", major(dev), minor(dev),
				strerror(-r));
	if (u64_parse(buf, strlen(buf), ret) < 0)
		return dmb_fail(ctx, -EIO, "size of %u:%u is not a number: '%s'", major(dev),
				minor(dev), buf);
	return 0;
}

/* ---------------------------------------------------------- SG_IO / ATA */

/*
 * Only a whole disk with a real device behind it can be an ATA disk.  dm
 * (whose ioctls may reach the disk under a linear mapping), loop, md and
 * the like are refused here, before any SG_IO: their cache is that of the
 * disks under them.
 */
static int ata_candidate(struct dmb_ctx *ctx, dev_t disk, const char *name)
{
	if (sysfs_exists(disk, "dm"))
		return dmb_fail(ctx, -ENOTTY,
				"%s is a device-mapper device, not an ATA disk; its write cache is that of the disks under it",
				name);
	if (!sysfs_exists(disk, "device"))
		return dmb_fail(ctx, -ENOTTY,
				"%s is a virtual block device, not an ATA disk (no drive behind it)",
				name);
	return 0;
}

static int disk_open(struct dmb_ctx *ctx, dev_t disk, const char *name)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "/dev/%s", name);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return dmb_fail(ctx, -errno, "cannot open %s: %m", path);
	return fd;
}

/*
 * One ATA command through SG_IO.  data: 512 bytes in (IDENTIFY) or NULL
 * (non-data).  0, -ENOTTY when the device does not take ATA pass-through,
 * -EIO when the drive aborts or errs; the message says which.
 */
static int ata_command(struct dmb_ctx *ctx, int fd, const char *name, uint8_t command,
		       uint8_t feature, uint8_t *data, size_t len)
{
	uint8_t cdb[16] = {}, sense[32] = {};
	struct sg_io_hdr io = {
		.interface_id = 'S',
		.dxfer_direction = data ? SG_DXFER_FROM_DEV : SG_DXFER_NONE,
		.cmd_len = sizeof(cdb),
		.mx_sb_len = sizeof(sense),
		.dxfer_len = (unsigned int)len,
		.dxferp = data,
		.cmdp = cdb,
		.sbp = sense,
		.timeout = SG_TIMEOUT_MS,
	};
	unsigned int key = 0, asc = 0, ata_err = 0;

	cdb[0] = ATA_16;
	if (data) {
		cdb[1] = ATA_PROTO_PIO_IN;
		cdb[2] = ATA_T_DIR_IN | ATA_BYT_BLOK | ATA_T_LENGTH_NSECT;
		cdb[6] = (uint8_t)(len / 512);
	} else {
		cdb[1] = ATA_PROTO_NON_DATA;
	}
	cdb[4] = feature;
	cdb[14] = command;

	if (ioctl(fd, SG_IO, &io) < 0) {
		int r = -errno;

		if (r == -ENOTTY || r == -EINVAL)
			return dmb_fail(ctx, -ENOTTY, "%s takes no SCSI commands (SG_IO): not an ATA disk",
					name);
		if (r == -EPERM || r == -EACCES)
			return dmb_fail(ctx, r, "%s: ATA pass-through needs CAP_SYS_RAWIO: %s", name,
					strerror(-r));
		return dmb_fail(ctx, r, "%s: SG_IO: %s", name, strerror(-r));
	}
	if (io.sb_len_wr >= 8) {
		unsigned int rc = sense[0] & 0x7f;

		if (rc == 0x72 || rc == 0x73) {
			key = sense[1] & 0x0f;
			asc = sense[2];
			/* ATA Status Return descriptor (SAT) */
			if (sense[8] == 0x09 && io.sb_len_wr >= 8 + 14)
				ata_err = sense[8 + 3];
		} else if ((rc == 0x70 || rc == 0x71) && io.sb_len_wr >= 14) {
			key = sense[2] & 0x0f;
			asc = sense[12];
			ata_err = sense[3];
		}
	}
	if (io.status == 0 && io.host_status == 0 && (io.driver_status & ~SG_DRIVER_SENSE) == 0 &&
	    (key == 0 || key == 1 /* recovered */))
		return 0;
	if (key == SK_ILLEGAL_REQUEST)
		return dmb_fail(ctx, -ENOTTY,
				"%s refuses ATA PASS-THROUGH (sense key ILLEGAL REQUEST, asc 0x%02x): not an ATA disk",
				name, asc);
	if (io.host_status)
		return dmb_fail(ctx, -EIO, "%s: ATA command 0x%02x: transport error (host status 0x%x)",
				name, command, io.host_status);
	if (key == SK_ABORTED_COMMAND && (ata_err & ATA_ERR_ABRT))
		return dmb_fail(ctx, -EIO, "%s: the drive aborted ATA command 0x%02x (feature 0x%02x)",
				name, command, feature);
	return dmb_fail(ctx, -EIO,
			"%s: ATA command 0x%02x failed (status 0x%x, sense key 0x%x, asc 0x%02x)",
			name, command, io.status, key, asc);
}

static unsigned int id_word(const uint8_t *id, unsigned int w)
{
	return (unsigned int)id[2 * w] | (unsigned int)id[2 * w + 1] << 8;
}

/* The drive's write cache from IDENTIFY: 1/0, or -EOPNOTSUPP, -ENOTTY, -EIO. */
static int ata_identify_wc(struct dmb_ctx *ctx, int fd, const char *name)
{
	uint8_t id[512] = {};
	int r;

	r = ata_command(ctx, fd, name, ATA_CMD_IDENTIFY, 0, id, sizeof(id));
	if (r < 0)
		return r;
	/* Word 0 bit 15 set: an ATAPI device answered (it should have aborted). */
	if (id_word(id, 0) & 0x8000)
		return dmb_fail(ctx, -ENOTTY, "%s is an ATAPI device, not an ATA disk", name);
	/* Words 82-84 are valid only when word 83 reads 01b in bits 15:14. */
	if ((id_word(id, 83) & 0xc000) != 0x4000 || !(id_word(id, 82) & (1u << 5)))
		return dmb_fail(ctx, -EOPNOTSUPP, "%s: the drive has no write cache it can switch",
				name);
	return (id_word(id, 85) >> 5) & 1;
}

static int kernel_view(struct dmb_ctx *ctx, dev_t disk, const char *name, bool *wc, bool *fua)
{
	char buf[32];
	int r;

	r = sysfs_read(disk, "queue/write_cache", buf, sizeof(buf));
	if (r < 0)
		return dmb_fail(ctx, r, "cannot read /sys/block/%s/queue/write_cache: %s", name,
				strerror(-r));
	if (!strcmp(buf, "write back"))
		*wc = true;
	else if (!strcmp(buf, "write through"))
		*wc = false;
	else
		return dmb_fail(ctx, -EIO, "/sys/block/%s/queue/write_cache says '%s'", name, buf);
	*fua = sysfs_read(disk, "queue/fua", buf, sizeof(buf)) == 0 && !strcmp(buf, "1");
	return 0;
}

/* Resolve dev to its whole disk and fill the disk/name fields of wc. */
static int cache_target(struct dmb_ctx *ctx, dev_t dev, struct dmb_write_cache *wc)
{
	int r;

	r = dmb_disk_whole(ctx, dev, &wc->disk);
	if (r < 0)
		return r;
	return dmb_disk_name(ctx, wc->disk, wc->name, sizeof(wc->name));
}

_public_ int dmb_disk_write_cache_get(struct dmb_ctx *ctx, dev_t dev, struct dmb_write_cache *ret)
{
	_cleanup_(closep) int fd = -1;
	struct dmb_write_cache wc = {};
	int r;

	r = cache_target(ctx, dev, &wc);
	if (r < 0)
		return r;
	r = kernel_view(ctx, wc.disk, wc.name, &wc.kernel, &wc.kernel_fua);
	if (r < 0)
		return r;
	r = ata_candidate(ctx, wc.disk, wc.name);
	if (r == 0) {
		fd = disk_open(ctx, wc.disk, wc.name);
		r = fd < 0 ? fd : ata_identify_wc(ctx, fd, wc.name);
	}
	wc.drive = r;
	/* The drive's absence is an answer, not a failure of this call. */
	ctx->error[0] = '\0';
	*ret = wc;
	return 0;
}

_public_ int dmb_disk_write_cache_set(struct dmb_ctx *ctx, dev_t dev, bool enable,
				      struct dmb_write_cache *ret_after)
{
	_cleanup_(closep) int fd = -1;
	struct dmb_write_cache wc = {};
	const char *want = enable ? "write back" : "write through";
	char refused[DMB_ERROR_MAX];
	int r, set;

	r = cache_target(ctx, dev, &wc);
	if (r < 0)
		return r;
	r = ata_candidate(ctx, wc.disk, wc.name);
	if (r < 0)
		return r;
	fd = disk_open(ctx, wc.disk, wc.name);
	if (fd < 0)
		return fd;
	/* Asking first turns "not ATA" and "no cache" into clear errors. */
	r = ata_identify_wc(ctx, fd, wc.name);
	if (r < 0)
		return r;
	set = ata_command(ctx, fd, wc.name, ATA_CMD_SET_FEATURES,
			  enable ? ATA_SF_WC_ON : ATA_SF_WC_OFF, NULL, 0);
	if (set < 0 && set != -EIO)
		return set;
	/*
	 * The drive's answer to IDENTIFY is what counts.  A drive turning its
	 * cache off writes the cache back first, and may abort SET FEATURES
	 * when that fails, with the cache off all the same (QEMU does so
	 * while flushes fail).
	 */
	if (set < 0)
		snprintf(refused, sizeof(refused), "%s", dmb_ctx_get_error(ctx));
	r = ata_identify_wc(ctx, fd, wc.name);
	if (r < 0)
		return r;
	if (r != enable && set < 0)
		return dmb_fail(ctx, -EIO, "%s; its write cache is still %s", refused, r ? "on" : "off");
	if (r != enable)
		return dmb_fail(ctx, -EIO,
				"%s: the drive accepted SET FEATURES but still reports its write cache %s",
				wc.name, r ? "on" : "off");
	if (set < 0)
		dmb_warn(ctx, "%s, but its write cache is %s now (a failed write-back of the cache?)",
			 refused, enable ? "on" : "off");
	ctx->error[0] = '\0';
	wc.drive = r;

	r = kernel_view(ctx, wc.disk, wc.name, &wc.kernel, &wc.kernel_fua);
	if (r < 0)
		return r;
	if (wc.kernel != enable) {
		/*
		 * libata revalidates the drive after SET FEATURES (our IDENTIFY
		 * above queued behind that) but rescans the SCSI disk, which is
		 * what updates queue/write_cache, later from a work item.  Rescan
		 * now so the kernel reads the drive's new state before we look.
		 */
		r = sysfs_write(wc.disk, "device/rescan", "1");
		if (r < 0)
			dmb_dbg(ctx, "%s: rescan failed: %s", wc.name, strerror(-r));
		r = kernel_view(ctx, wc.disk, wc.name, &wc.kernel, &wc.kernel_fua);
		if (r < 0)
			return r;
	}
	if (wc.kernel != enable) {
		/* The kernel missed the change (seen while flushes fail): tell it. */
		dmb_notice(ctx, "%s: the drive's write cache is %s but the kernel says '%s'; setting it",
			   wc.name, enable ? "on" : "off", wc.kernel ? "write back" : "write through");
		r = sysfs_write(wc.disk, "queue/write_cache", want);
		if (r < 0)
			return dmb_fail(ctx, r,
					"%s: the drive's write cache is %s, but writing '%s' to queue/write_cache failed: %s",
					wc.name, enable ? "on" : "off", want, strerror(-r));
		r = kernel_view(ctx, wc.disk, wc.name, &wc.kernel, &wc.kernel_fua);
		if (r < 0)
			return r;
		if (wc.kernel != enable)
			return dmb_fail(ctx, -EIO, "%s: queue/write_cache does not stay '%s'", wc.name,
					want);
	}
	if (ret_after)
		*ret_after = wc;
	return 0;
}
