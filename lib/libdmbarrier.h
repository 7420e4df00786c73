/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libdmbarrier: the public API for dm-barrier mappings (docs/dm-barrier.rst)
 * and for the write cache of the disks under them.
 *
 * Conventions, all calls:
 * - Functions that can fail return 0 (or a count) on success and a negative
 *   errno on failure; output parameters are left untouched on failure.
 *   After a failure, dmb_ctx_get_error() holds one printable sentence that
 *   names the object and the reason ("barrier mapping 'x': no such device").
 * - The library never prints and never exits.  It logs only through the
 *   function installed with dmb_ctx_set_log_fn(), and libdevmapper's own
 *   messages are routed there too.
 * - A context is not thread-safe: use it from one thread.  libdevmapper's
 *   log hook is process-wide; it follows the context that made the last call.
 * - Errors callers may want to tell apart:
 *     -ENOENT       no such dm device / disk
 *     -EMEDIUMTYPE  the dm device exists but is not a barrier mapping
 *     -EEXIST       create: the name is taken
 *     -EINVAL       bad argument (the error message says which)
 *     -ENOTTY       not an ATA disk (write cache via SG_IO impossible)
 *     -EOPNOTSUPP   the drive has no write cache it lets us switch, or
 *                   (barrier) the mapping is in mode none
 *     -EIO          the drive refused/failed a command, or a flush failed
 *     -ETIMEDOUT    dmb_mapping_wait_event() ran out of time
 *     -EBADMSG      the target's status or table line is malformed
 */
#ifndef LIBDMBARRIER_H
#define LIBDMBARRIER_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The DM UUID of every mapping the library creates starts with this. */
#define DMB_UUID_PREFIX "BARRIER-"
/* Buffer sizes, including the NUL (the kernel's DM_NAME_LEN, DM_UUID_LEN). */
#define DMB_NAME_MAX 128
#define DMB_UUID_MAX 129
#define DMB_DISK_NAME_MAX 32
/* The target's limit for hold_on_flush_error:<ms>. */
#define DMB_HOLD_MS_MAX 60000U

/* ------------------------------------------------------------ context */

struct dmb_ctx;

/*
 * priority is a syslog priority (LOG_ERR ... LOG_DEBUG).  Messages above the
 * context's log priority are not passed on.  format/args carry no trailing
 * newline.
 */
typedef void (*dmb_log_fn)(void *userdata, int priority, const char *file, int line,
			   const char *fn, const char *format, va_list args);

/*
 * A new context with refcount 1, log priority LOG_ERR (or $DMB_LOG: a
 * number or err, warning, notice, info, debug) and no log function.
 */
int dmb_ctx_new(struct dmb_ctx **ret);
struct dmb_ctx *dmb_ctx_ref(struct dmb_ctx *ctx);
/* Drops a reference; frees at zero.  Accepts NULL; returns NULL. */
struct dmb_ctx *dmb_ctx_unref(struct dmb_ctx *ctx);

void dmb_ctx_set_log_fn(struct dmb_ctx *ctx, dmb_log_fn fn, void *userdata);
void dmb_ctx_set_log_priority(struct dmb_ctx *ctx, int priority);
int dmb_ctx_get_log_priority(const struct dmb_ctx *ctx);

/*
 * The message of the last call on ctx that failed ("" if none has).  Valid
 * until the next call on ctx.
 */
const char *dmb_ctx_get_error(const struct dmb_ctx *ctx);

/* ------------------------------------------------------ modes, names */

/* In the target's order (dm-barrier.c mode_names). */
enum dmb_mode {
	DMB_MODE_FLUSH,
	DMB_MODE_FUA,
	DMB_MODE_DRAIN,
	DMB_MODE_PASSTHROUGH,
	DMB_MODE_NONE,
	_DMB_MODE_MAX,
};

/* What a failed flush switches flush/fua mode to. */
enum dmb_fallback {
	DMB_FALLBACK_NONE,
	DMB_FALLBACK_DRAIN,
	_DMB_FALLBACK_MAX,
};

/* "flush", ...; NULL for a value out of range. */
const char *dmb_mode_to_string(enum dmb_mode mode);
/* Exact, case-sensitive match of the target's names; -EINVAL otherwise. */
int dmb_mode_from_string(const char *s, enum dmb_mode *ret);
const char *dmb_fallback_to_string(enum dmb_fallback fallback);
int dmb_fallback_from_string(const char *s, enum dmb_fallback *ret);

/*
 * Is name usable as the name of a mapping the library creates?  1 to
 * DMB_NAME_MAX - 1 - strlen(DMB_UUID_PREFIX) characters (so that the UUID
 * fits) from [A-Za-z0-9#+-.:=@_], not "." or "..".  0 or -EINVAL.
 * Existing mappings made by dmsetup may have other names; every call that
 * only looks a mapping up accepts any name dm accepts.
 */
int dmb_name_check(const char *name);

/* --------------------------------------------------------- status, table */

/* The fifteen fields of the target's status line, in its order. */
struct dmb_status {
	enum dmb_mode mode;
	bool cache_writeback;	/* cache: writeback (true) / writethrough */
	bool fua;		/* fua: fua (true) / nofua */
	uint64_t barriers;
	uint64_t flushes;
	uint64_t fua_writes;
	uint64_t flush_errors;
	uint64_t fallbacks;
	uint32_t held;
	uint64_t max_drain_us;
	uint64_t shared;
	uint64_t no_cache;
	uint64_t refused;
	uint64_t replayed;
	uint64_t cache_changes;
};

/* A barrier target's table, as the kernel prints it. */
struct dmb_table {
	uint64_t length;	/* sectors of the mapping (0 from dmb_table_parse) */
	dev_t backing;		/* the device under the mapping */
	uint64_t offset;	/* first sector used on it */
	enum dmb_mode mode;	/* current mode */
	enum dmb_fallback fallback;
	uint32_t hold_ms;	/* hold_on_flush_error, 0 = off */
};

/*
 * Pure parsers of the target's output (the part after "<start> <len>
 * barrier"), strict: the documented fields, single spaces, decimal
 * numbers without sign or leading zeros that fit their type.  The status
 * parser skips fields after the fifteenth (a newer 1.x target may append
 * some) and refuses fewer.  Any deviation is -EBADMSG and *ret is
 * untouched.  err/errsize (may be NULL/0)
 * receive the reason.  The table parser takes what STATUSTYPE_TABLE prints:
 * "<major>:<minor> <offset> [<n> <feature>...]".
 */
int dmb_status_parse(const char *params, struct dmb_status *ret, char *err, size_t errsize);
int dmb_table_parse(const char *params, struct dmb_table *ret, char *err, size_t errsize);

/* ------------------------------------------------------------- target */

/*
 * The library never loads a kernel module: the kernel loads dm-barrier
 * itself when the first "barrier" table is loaded (dm core asks for
 * "dm-barrier"), so dmb_mapping_create() needs no CAP_SYS_MODULE.
 *
 * The library manages targets of major version 1, minor 0 or newer (a
 * newer minor may append status fields, which are skipped).  Every call
 * that lists, creates or reloads mappings checks the loaded target's
 * version and fails with -EPROTONOSUPPORT and a sentence saying what to do
 * if the major version differs.
 *
 * dmb_target_load() is kept for the ABI and loads nothing: 0 if the kernel
 * has a barrier target of a version this library manages, -ENOENT if it
 * has none, -EPROTONOSUPPORT if it has another major version.
 */
int dmb_target_load(struct dmb_ctx *ctx);
/* The loaded target's version (v[0].v[1].v[2]); -ENOENT if not loaded. */
int dmb_target_version(struct dmb_ctx *ctx, unsigned int v[3]);

/* The module dm_barrier as libkmod sees it: for reports, never a load. */
enum dmb_module_state {
	DMB_MODULE_ABSENT,	/* not loaded (the first barrier table loads it) */
	DMB_MODULE_LIVE,
	DMB_MODULE_COMING,
	DMB_MODULE_GOING,
	DMB_MODULE_BUILTIN,
	_DMB_MODULE_STATE_MAX,
};
int dmb_module_state(struct dmb_ctx *ctx, enum dmb_module_state *ret);
/* "not loaded", "loaded", "loading", "unloading", "built in"; NULL if invalid. */
const char *dmb_module_state_to_string(enum dmb_module_state state);

/* ----------------------------------------------------------- mappings */

/* What a mapping is made of: dmb_spec_init() fills in the defaults. */
struct dmb_spec {
	const char *device;	/* backing device: a path or "major:minor" */
	uint64_t offset;	/* first sector on it (default 0) */
	uint64_t length;	/* sectors; 0 (default): to the end of device */
	enum dmb_mode mode;	/* default flush */
	enum dmb_fallback fallback; /* default none */
	uint32_t hold_ms;	/* hold_on_flush_error, default 0 */
	const char *uuid;	/* create only: NULL (default) = DMB_UUID_PREFIX
				 * + name; else must start with the prefix */
};
void dmb_spec_init(struct dmb_spec *spec);

/* What dm says about a device (DM_DEV_STATUS / DM_TABLE_STATUS info). */
struct dmb_mapping_info {
	char name[DMB_NAME_MAX];
	char uuid[DMB_UUID_MAX];	/* "" if it has none */
	dev_t devnum;			/* the mapping's own block device */
	uint32_t event_nr;		/* dm event counter, see wait/monitor */
	int32_t open_count;
	uint32_t target_count;
	bool suspended;
	bool inactive_table;		/* a table is loaded but not live */
};

/*
 * Create (and resume) a mapping NAME.  Loads the target if needed.  Waits
 * for udev (cookies) so /dev/mapper/NAME exists when it returns; works with
 * no udev running or DM_DISABLE_UDEV=1 (libdevmapper makes the node).
 * On failure nothing is left behind.
 */
int dmb_mapping_create(struct dmb_ctx *ctx, const char *name, const struct dmb_spec *spec);
/*
 * Load a new table into an existing barrier mapping and swap it in
 * (suspend/resume: in-flight I/O completes first).  spec->uuid is ignored.
 * On a failed load the old table stays live.
 */
int dmb_mapping_reload(struct dmb_ctx *ctx, const char *name, const struct dmb_spec *spec);

/* Flags for dmb_mapping_remove(). */
enum {
	DMB_REMOVE_RETRY = 1 << 0,	/* retry while it is briefly open (udev) */
	DMB_REMOVE_DEFERRED = 1 << 1,	/* remove when the last opener closes */
};
/* Remove a barrier mapping; -EMEDIUMTYPE if NAME is another kind of dm device. */
int dmb_mapping_remove(struct dmb_ctx *ctx, const char *name, unsigned int flags);

/*
 * The names of every dm device whose live table has a barrier target (made
 * by this library or by plain dmsetup), sorted, NULL-terminated; free with
 * dmb_strv_free().  No mappings: a list with no names, return 0.
 */
int dmb_mapping_list(struct dmb_ctx *ctx, char ***ret_names);
char **dmb_strv_free(char **strv);

/* dm's info of any dm device NAME; -ENOENT if there is none. */
int dmb_mapping_info(struct dmb_ctx *ctx, const char *name, struct dmb_mapping_info *ret);

/*
 * Status / table of a barrier mapping, with the info from the same ioctl
 * (ret_info may be NULL).  A device with another target, or more than one
 * target, is -EMEDIUMTYPE; a malformed line -EBADMSG.  A status call makes
 * the target look at the backing write cache (it may raise an event).
 */
int dmb_mapping_status(struct dmb_ctx *ctx, const char *name, struct dmb_status *ret,
		       struct dmb_mapping_info *ret_info);
int dmb_mapping_table(struct dmb_ctx *ctx, const char *name, struct dmb_table *ret,
		      struct dmb_mapping_info *ret_info);

/*
 * The whole disk under a barrier mapping (its table's device; a partition
 * resolves to its disk).  The result may be a dm or other virtual device;
 * the write cache functions then say it is not an ATA disk.
 */
int dmb_mapping_backing_disk(struct dmb_ctx *ctx, const char *name, dev_t *ret_disk);

/* The target's messages.  Each fails as the target does (-EINVAL, ...). */
int dmb_mapping_set_mode(struct dmb_ctx *ctx, const char *name, enum dmb_mode mode);
/*
 * An explicit barrier: drain and flush, in order with all other I/O.
 * Blocks until done: behind held barriers for up to hold_on_flush_error.
 * -EIO when the flush failed, -EOPNOTSUPP in mode none.
 */
int dmb_mapping_barrier(struct dmb_ctx *ctx, const char *name);
int dmb_mapping_reset_stats(struct dmb_ctx *ctx, const char *name);

/*
 * Wait until the mapping's dm event counter differs from event_nr (take it
 * from dmb_mapping_info/status), for at most timeout_ms (< 0: no limit).
 * Returns 0 and the new counter in *ret_event_nr (may be NULL), -ETIMEDOUT,
 * -ENOENT if the mapping goes away, -EINTR if a signal interrupts.  Blocks
 * in poll(); no threads.
 */
int dmb_mapping_wait_event(struct dmb_ctx *ctx, const char *name, uint32_t event_nr,
			   int timeout_ms, uint32_t *ret_event_nr);

/* ------------------------------------------- dm events in an event loop */

/*
 * A pollable source of "some dm event happened": creation, removal, rename
 * or a target event of any dm device.  Usage, e.g. with sd-event:
 *   dmb_monitor_new(ctx, &m);
 *   sd_event_add_io(e, &s, dmb_monitor_get_fd(m), EPOLLIN, handler, m);
 *   handler: dmb_monitor_arm(m), then re-read the event_nr of every
 *   mapping of interest (dmb_mapping_info) and act on those that changed.
 * The fd stays readable until dmb_monitor_arm(); arming before re-reading
 * means no event can be lost between the two.  The fd is the same for the
 * monitor's whole life (an epoll fd wrapping /dev/mapper/control); do not
 * read or close it.  The monitor holds a reference on ctx.
 */
struct dmb_monitor;
int dmb_monitor_new(struct dmb_ctx *ctx, struct dmb_monitor **ret);
/* Accepts NULL; returns NULL. */
struct dmb_monitor *dmb_monitor_free(struct dmb_monitor *monitor);
int dmb_monitor_get_fd(const struct dmb_monitor *monitor);
int dmb_monitor_arm(struct dmb_monitor *monitor);

/* ---------------------------------------------------- disks, write cache */

/* A block device's number from a path (/dev/sda, /dev/mapper/x) or "major:minor". */
int dmb_disk_from_path(struct dmb_ctx *ctx, const char *path, dev_t *ret);
/* The whole disk of a partition; any other block device is its own. */
int dmb_disk_whole(struct dmb_ctx *ctx, dev_t dev, dev_t *ret);
/* The kernel name of a block device ("sda", "dm-3") into buf. */
int dmb_disk_name(struct dmb_ctx *ctx, dev_t dev, char *buf, size_t size);

/* The write cache of a whole disk, as the kernel and as the drive see it. */
struct dmb_write_cache {
	dev_t disk;			/* the whole disk (partitions resolve to it) */
	char name[DMB_DISK_NAME_MAX];	/* its kernel name, "sda" */
	bool kernel;			/* queue/write_cache: "write back" */
	bool kernel_fua;		/* queue/fua: the disk takes FUA writes */
	/*
	 * The drive's own state from ATA IDENTIFY DEVICE (word 85 bit 5) via
	 * SG_IO ATA PASS-THROUGH(16): 1 on, 0 off, or why it is unknown:
	 * -ENOTTY not an ATA disk (dm, loop, SCSI...), -EOPNOTSUPP the drive
	 * has no write cache (word 82 bit 5 clear), -EIO the drive failed,
	 * -EACCES/-EPERM no permission for SG_IO.
	 */
	int drive;
};

/*
 * Both views of the write cache of dev's whole disk.  Fails only when the
 * kernel view cannot be read; a drive that cannot be asked is in ->drive.
 */
int dmb_disk_write_cache_get(struct dmb_ctx *ctx, dev_t dev, struct dmb_write_cache *ret);
/*
 * Turn the drive's write cache on or off (ATA SET FEATURES 0x02 / 0x82, as
 * hdparm -W1 / -W0), check the drive's answer by IDENTIFY again, then make
 * the kernel agree: if queue/write_cache still says otherwise (it does
 * after -W0 while flushes are failing), write "write back"/"write through"
 * to it.  -ENOTTY for a device that is not an ATA disk, -EOPNOTSUPP for a
 * drive without a switchable cache, -EIO if the drive refuses or does not
 * change.  ret_after (may be NULL) gets both views afterwards.
 */
int dmb_disk_write_cache_set(struct dmb_ctx *ctx, dev_t dev, bool enable,
			     struct dmb_write_cache *ret_after);

#ifdef __cplusplus
}
#endif

#endif
