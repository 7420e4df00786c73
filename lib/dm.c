// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * dm.c: every device-mapper operation, and the only file that uses
 * libdevmapper.  libdevmapper's 1/0 returns and its process-wide log hook
 * are turned here, once, into negative errno and the context's error
 * message and log function.  Creates, resumes and removes carry a udev
 * cookie and wait on it, so /dev/mapper nodes are there (or gone) when a
 * call returns, with or without udev.
 */
#include <libdevmapper.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "libdmbarrier-private.h"

#define TARGET_NAME "barrier"
/* libdevmapper's log levels (libdm/misc/dm-logging.h), low 3 bits. */
#define DM_LOG_LEVEL_MASK 7
#define DM_LOG_ERR 3

static inline void dm_task_destroyp(struct dm_task **t)
{
	if (*t)
		dm_task_destroy(*t);
}
#define _cleanup_task_ _cleanup_(dm_task_destroyp)

/* ---------------------------------------------------------- logging */

/* libdevmapper has one log hook per process: it feeds this context. */
static struct dmb_ctx *log_ctx;
static bool log_hooked;

_printf_(5, 6) static void dm_log_hook(int level, const char *file, int line, int dm_errno_or_class,
				       const char *f, ...)
{
	struct dmb_ctx *ctx = log_ctx;
	int saved = errno;
	int lvl = level & DM_LOG_LEVEL_MASK;
	va_list args;

	if (!ctx)
		return;
	if (lvl <= DM_LOG_ERR && !ctx->dm_error[0]) {
		/* The first error of a call is its cause; later ones are echoes. */
		va_start(args, f);
		vsnprintf(ctx->dm_error, sizeof(ctx->dm_error), f, args);
		va_end(args);
		if (dm_errno_or_class > 0)
			ctx->dm_errno = dm_errno_or_class;
	}
	if (ctx->log_fn && lvl <= ctx->log_priority) {
		va_start(args, f);
		ctx->log_fn(ctx->log_data, lvl < LOG_ERR ? LOG_ERR : lvl, file, line, "libdevmapper",
			    f, args);
		va_end(args);
	}
	errno = saved;
}

void dm_log_attach(struct dmb_ctx *ctx)
{
	if (!log_hooked) {
		dm_log_with_errno_init(dm_log_hook);
		log_hooked = true;
	}
	log_ctx = ctx;
}

void dm_log_detach(struct dmb_ctx *ctx)
{
	/* The hook stays installed: libdevmapper's default prints to stderr. */
	if (log_ctx == ctx)
		log_ctx = NULL;
}

/* ------------------------------------------------------------ tasks */

/* Names dm accepts for lookups (dmsetup may have made any of these). */
int dm_name_check(struct dmb_ctx *ctx, const char *name)
{
	if (!name || !*name)
		return dmb_fail(ctx, -EINVAL, "no mapping name given");
	if (strlen(name) >= DMB_NAME_MAX || strchr(name, '/'))
		return dmb_fail(ctx, -EINVAL, "'%.40s...' is not a device-mapper name", name);
	return 0;
}

static int task_new(struct dmb_ctx *ctx, int type, const char *name, struct dm_task **ret)
{
	struct dm_task *t;

	ctx->dm_error[0] = '\0';
	t = dm_task_create(type);
	if (!t && ctx->dm_error[0])
		return dmb_fail(ctx, -EIO, "device-mapper is not available: %s", ctx->dm_error);
	if (!t)
		return dmb_fail(ctx, -ENOMEM, "cannot create a device-mapper task");
	if (name && !dm_task_set_name(t, name)) {
		dm_task_destroy(t);
		return dmb_fail(ctx, -EINVAL, "'%s' is not a usable device-mapper name", name);
	}
	*ret = t;
	return 0;
}

/* Run t; 0 or the negative errno of its ioctl (EIO when dm has none). */
static int task_run(struct dmb_ctx *ctx, struct dm_task *t)
{
	int e;

	ctx->dm_errno = 0;
	ctx->dm_error[0] = '\0';
	if (dm_task_run(t))
		return 0;
	e = dm_task_get_errno(t);
	if (e <= 0)
		e = ctx->dm_errno > 0 ? ctx->dm_errno : EIO;
	return -e;
}

/* A task failed on NAME: the right errno and sentence for what it was doing. */
static int fail_task(struct dmb_ctx *ctx, int r, const char *what, const char *name)
{
	if (r == -ENXIO || r == -ENODEV)
		return dmb_fail(ctx, -ENOENT, "there is no device-mapper device '%s'", name);
	return dmb_fail(ctx, r, "%s '%s': %s", what, name, strerror(-r));
}

static void info_fill(struct dm_task *t, const struct dm_info *di, struct dmb_mapping_info *ret)
{
	const char *s;

	*ret = (struct dmb_mapping_info){
		.devnum = makedev(di->major, di->minor),
		.event_nr = di->event_nr,
		.open_count = di->open_count,
		.target_count = di->target_count > 0 ? (uint32_t)di->target_count : 0,
		.suspended = di->suspended,
		.inactive_table = di->inactive_table,
	};
	s = dm_task_get_name(t);
	if (s)
		snprintf(ret->name, sizeof(ret->name), "%s", s);
	s = dm_task_get_uuid(t);
	if (s)
		snprintf(ret->uuid, sizeof(ret->uuid), "%s", s);
}

static int target_check(struct dmb_ctx *ctx);

/*
 * Run a STATUS or TABLE task on NAME and hand back its single barrier
 * target's params (owned by *task).  -ENOENT, -EMEDIUMTYPE otherwise.
 */
static int barrier_query(struct dmb_ctx *ctx, int type, const char *name, struct dm_task **task,
			 char **ret_params, uint64_t *ret_length, struct dmb_mapping_info *ret_info)
{
	_cleanup_task_ struct dm_task *t = NULL;
	const char *what = type == DM_DEVICE_STATUS ? "status of" : "table of";
	uint64_t start, length;
	char *ttype = NULL, *params = NULL;
	struct dm_info di;
	void *next;
	int r;

	r = dm_name_check(ctx, name);
	if (r < 0)
		return r;
	r = task_new(ctx, type, name, &t);
	if (r < 0)
		return r;
	r = task_run(ctx, t);
	if (r < 0)
		return fail_task(ctx, r, what, name);
	if (!dm_task_get_info(t, &di) || !di.exists)
		return dmb_fail(ctx, -ENOENT, "there is no device-mapper device '%s'", name);
	if (!di.live_table || di.target_count == 0)
		return dmb_fail(ctx, -EMEDIUMTYPE, "'%s' has no live table, so no barrier target",
				name);
	next = dm_get_next_target(t, NULL, &start, &length, &ttype, &params);
	if (!ttype || strcmp(ttype, TARGET_NAME))
		return dmb_fail(ctx, -EMEDIUMTYPE,
				"'%s' is not a barrier mapping (its target is '%s')", name,
				ttype ? ttype : "?");
	if (next || di.target_count != 1)
		return dmb_fail(ctx, -EMEDIUMTYPE,
				"'%s' has %d targets; libdmbarrier handles mappings of one barrier target",
				name, di.target_count);
	if (!params)
		return dmb_fail(ctx, -EBADMSG, "%s '%s': the kernel returned no parameters", what,
				name);
	/* A status of another major version may mean something else: refuse it. */
	if (type == DM_DEVICE_STATUS) {
		r = target_check(ctx);
		if (r < 0)
			return r;
	}
	if (ret_info)
		info_fill(t, &di, ret_info);
	*ret_params = params;
	*ret_length = length;
	*task = TAKE_PTR(t);
	return 0;
}

/* ---------------------------------------------------------- target */

int dm_target_present(struct dmb_ctx *ctx, unsigned int v[3])
{
	_cleanup_task_ struct dm_task *t = NULL;
	struct dm_versions *target, *last;
	int r;

	r = task_new(ctx, DM_DEVICE_LIST_VERSIONS, NULL, &t);
	if (r < 0)
		return r;
	r = task_run(ctx, t);
	if (r < 0)
		return dmb_fail(ctx, r, "cannot list the kernel's device-mapper targets: %s",
				strerror(-r));
	target = dm_task_get_versions(t);
	if (!target)
		return 0;
	do {
		last = target;
		if (!strcmp(target->name, TARGET_NAME)) {
			if (v)
				memcpy(v, target->version, sizeof(target->version));
			return 1;
		}
		target = (struct dm_versions *)((char *)target + target->next);
	} while (last != target);
	return 0;
}

/*
 * Is the loaded barrier target one this library manages (its major version,
 * status fields it knows)?  0, -ENOENT (none loaded), -EPROTONOSUPPORT or
 * -errno.  The module cannot change while a barrier mapping uses it, so a
 * pass is kept in ctx; dmb_mapping_list(), which every rescan calls, and
 * dmb_target_load() look again.
 */
static int target_check(struct dmb_ctx *ctx)
{
	char err[DMB_ERROR_MAX - 32];
	unsigned int v[3];
	int r;

	if (ctx->target_ok)
		return 0;
	r = dm_target_present(ctx, v);
	if (r < 0)
		return r;
	if (r == 0)
		return dmb_fail(ctx, -ENOENT,
				"the kernel has no barrier target (dm-barrier is not loaded)");
	r = target_version_check(v, err, sizeof(err));
	if (r < 0)
		return dmb_fail(ctx, r, "%s", err);
	ctx->target_ok = true;
	return 0;
}

_public_ int dmb_target_version(struct dmb_ctx *ctx, unsigned int v[3])
{
	unsigned int ver[3];
	int r;

	dmb_call_begin(ctx);
	r = dm_target_present(ctx, ver);
	if (r < 0)
		return r;
	if (r == 0)
		return dmb_fail(ctx, -ENOENT, "the kernel has no barrier target (dm-barrier is not loaded)");
	memcpy(v, ver, sizeof(ver));
	return 0;
}

_public_ int dmb_target_load(struct dmb_ctx *ctx)
{
	/* Loads nothing any more (see libdmbarrier.h): the kernel does, on a table load. */
	dmb_call_begin(ctx);
	ctx->target_ok = false;
	return target_check(ctx);
}

/* ------------------------------------------------------------ specs */

static int uuid_for(struct dmb_ctx *ctx, const char *name, const char *uuid, char *buf, size_t size)
{
	if (!uuid) {
		snprintf(buf, size, "%s%s", DMB_UUID_PREFIX, name);
		return 0;
	}
	if (strncmp(uuid, DMB_UUID_PREFIX, strlen(DMB_UUID_PREFIX)) ||
	    strlen(uuid) == strlen(DMB_UUID_PREFIX) || strlen(uuid) >= size)
		return dmb_fail(ctx, -EINVAL,
				"UUID '%.60s' must be '%s' and 1 to %zu more characters", uuid,
				DMB_UUID_PREFIX, size - 1 - strlen(DMB_UUID_PREFIX));
	for (const char *p = uuid; *p; p++)
		if (*p <= ' ' || *p >= 0x7f)
			return dmb_fail(ctx, -EINVAL, "UUID '%.60s' has a blank or non-ASCII character",
					uuid);
	snprintf(buf, size, "%s", uuid);
	return 0;
}

/* Check spec and turn it into the target's table; *ret_length in sectors. */
static int spec_to_table(struct dmb_ctx *ctx, const char *name, const struct dmb_spec *spec,
			 char *params, size_t size, uint64_t *ret_length)
{
	struct dmb_table tab = {};
	uint64_t dev_sectors;
	int r;

	if (!spec || !spec->device || !*spec->device)
		return dmb_fail(ctx, -EINVAL, "mapping '%s': no backing device given", name);
	if (!dmb_mode_to_string(spec->mode))
		return dmb_fail(ctx, -EINVAL, "mapping '%s': invalid mode %d", name, (int)spec->mode);
	if (!dmb_fallback_to_string(spec->fallback))
		return dmb_fail(ctx, -EINVAL, "mapping '%s': invalid fallback %d", name,
				(int)spec->fallback);
	if (spec->hold_ms > DMB_HOLD_MS_MAX)
		return dmb_fail(ctx, -EINVAL,
				"mapping '%s': hold_on_flush_error %u ms is over the limit of %u",
				name, spec->hold_ms, DMB_HOLD_MS_MAX);
	r = dmb_disk_from_path(ctx, spec->device, &tab.backing);
	if (r < 0)
		return r;
	r = disk_size(ctx, tab.backing, &dev_sectors);
	if (r < 0)
		return r;
	if (spec->offset >= dev_sectors)
		return dmb_fail(ctx, -EINVAL,
				"mapping '%s': offset %llu is not inside %s (%llu sectors)", name,
				(unsigned long long)spec->offset, spec->device,
				(unsigned long long)dev_sectors);
	tab.length = spec->length ? spec->length : dev_sectors - spec->offset;
	if (tab.length > dev_sectors - spec->offset)
		return dmb_fail(ctx, -EINVAL,
				"mapping '%s': %llu sectors from offset %llu do not fit in %s (%llu sectors)",
				name, (unsigned long long)tab.length,
				(unsigned long long)spec->offset, spec->device,
				(unsigned long long)dev_sectors);
	tab.offset = spec->offset;
	tab.mode = spec->mode;
	tab.fallback = spec->fallback;
	tab.hold_ms = spec->hold_ms;
	r = table_format(&tab, params, size);
	if (r < 0)
		return dmb_fail(ctx, r, "mapping '%s': cannot format its table", name);
	*ret_length = tab.length;
	return 0;
}

_public_ void dmb_spec_init(struct dmb_spec *spec)
{
	*spec = (struct dmb_spec){ .mode = DMB_MODE_FLUSH, .fallback = DMB_FALLBACK_NONE };
}

/* ----------------------------------------------------- udev cookies */

/*
 * Run a task that makes, changes or removes a node, with a udev cookie,
 * and wait for udev (or libdevmapper's own node handling without udev).
 * As dmsetup does, the cookie is waited on even when the task failed, so
 * its semaphore is released.
 */
static int task_run_cookie(struct dmb_ctx *ctx, struct dm_task *t)
{
	uint32_t cookie = 0;
	int r;

	if (!dm_task_set_cookie(t, &cookie, 0))
		return dmb_fail(ctx, -EIO, "cannot set up udev synchronisation (udev cookie)");
	r = task_run(ctx, t);
	if (!dm_udev_wait(cookie) && r == 0)
		dmb_warn(ctx, "waiting for udev failed; /dev/mapper may lag");
	return r;
}

/* --------------------------------------------------------- mappings */

_public_ int dmb_mapping_info(struct dmb_ctx *ctx, const char *name, struct dmb_mapping_info *ret)
{
	_cleanup_task_ struct dm_task *t = NULL;
	struct dm_info di;
	int r;

	dmb_call_begin(ctx);
	r = dm_name_check(ctx, name);
	if (r < 0)
		return r;
	r = task_new(ctx, DM_DEVICE_INFO, name, &t);
	if (r < 0)
		return r;
	r = task_run(ctx, t);
	if (r < 0)
		return fail_task(ctx, r, "info of", name);
	if (!dm_task_get_info(t, &di) || !di.exists)
		return dmb_fail(ctx, -ENOENT, "there is no device-mapper device '%s'", name);
	info_fill(t, &di, ret);
	return 0;
}

_public_ int dmb_mapping_status(struct dmb_ctx *ctx, const char *name, struct dmb_status *ret,
				struct dmb_mapping_info *ret_info)
{
	_cleanup_task_ struct dm_task *t = NULL;
	struct dmb_mapping_info info;
	struct dmb_status st;
	char err[160];
	uint64_t length;
	char *params;
	int r;

	dmb_call_begin(ctx);
	r = barrier_query(ctx, DM_DEVICE_STATUS, name, &t, &params, &length, &info);
	if (r < 0)
		return r;
	r = dmb_status_parse(params, &st, err, sizeof(err));
	if (r < 0)
		return dmb_fail(ctx, r, "status of '%s': %s: \"%.80s\"", name, err, params);
	*ret = st;
	if (ret_info)
		*ret_info = info;
	return 0;
}

_public_ int dmb_mapping_table(struct dmb_ctx *ctx, const char *name, struct dmb_table *ret,
			       struct dmb_mapping_info *ret_info)
{
	_cleanup_task_ struct dm_task *t = NULL;
	struct dmb_mapping_info info;
	struct dmb_table tab;
	char err[160];
	uint64_t length;
	char *params;
	int r;

	dmb_call_begin(ctx);
	r = barrier_query(ctx, DM_DEVICE_TABLE, name, &t, &params, &length, &info);
	if (r < 0)
		return r;
	r = dmb_table_parse(params, &tab, err, sizeof(err));
	if (r < 0)
		return dmb_fail(ctx, r, "table of '%s': %s: \"%.80s\"", name, err, params);
	tab.length = length;
	*ret = tab;
	if (ret_info)
		*ret_info = info;
	return 0;
}

_public_ int dmb_mapping_backing_disk(struct dmb_ctx *ctx, const char *name, dev_t *ret_disk)
{
	struct dmb_table tab;
	int r;

	r = dmb_mapping_table(ctx, name, &tab, NULL);
	if (r < 0)
		return r;
	return dmb_disk_whole(ctx, tab.backing, ret_disk);
}

_public_ int dmb_mapping_create(struct dmb_ctx *ctx, const char *name, const struct dmb_spec *spec)
{
	_cleanup_task_ struct dm_task *t = NULL;
	char params[256], uuid[DMB_UUID_MAX];
	struct dmb_mapping_info info;
	uint64_t length;
	int r, present;

	dmb_call_begin(ctx);
	if (dmb_name_check(name) < 0)
		return dmb_fail(ctx, -EINVAL,
				"'%.60s' is not a valid mapping name (1 to %zu of A-Z a-z 0-9 # + - . : = @ _)",
				name ? name : "", DMB_NAME_MAX - 1 - strlen(DMB_UUID_PREFIX));
	r = uuid_for(ctx, name, spec ? spec->uuid : NULL, uuid, sizeof(uuid));
	if (r < 0)
		return r;
	r = spec_to_table(ctx, name, spec, params, sizeof(params), &length);
	if (r < 0)
		return r;
	/* A clear "exists" beats the kernel's EBUSY. */
	if (dmb_mapping_info(ctx, name, &info) == 0)
		return dmb_fail(ctx, -EEXIST, "a device-mapper device '%s' already exists", name);
	dmb_call_begin(ctx);
	/*
	 * No module loading here: if the target is missing, the table load
	 * below makes the kernel load dm-barrier (request_module).  A target
	 * already loaded must be one we manage; a freshly loaded one is checked
	 * after the create.
	 */
	present = dm_target_present(ctx, NULL);
	if (present < 0)
		present = 0;	/* no device-mapper yet: the create loads it, or says why */
	if (present > 0) {
		ctx->target_ok = false;
		r = target_check(ctx);
		if (r < 0)
			return r;
	}

	r = task_new(ctx, DM_DEVICE_CREATE, name, &t);
	if (r < 0)
		return r;
	if (!dm_task_set_uuid(t, uuid) || !dm_task_add_target(t, 0, length, TARGET_NAME, params))
		return dmb_fail(ctx, -ENOMEM, "create '%s': cannot build the task", name);
	dmb_dbg(ctx, "create %s uuid %s: 0 %llu %s %s", name, uuid, (unsigned long long)length,
		TARGET_NAME, params);
	/* On a failed load libdevmapper removes the half-made device itself. */
	r = task_run_cookie(ctx, t);
	if (r == -EBUSY)
		return dmb_fail(ctx, -EEXIST, "create '%s': the name or UUID %s is taken", name, uuid);
	if (r < 0 && present == 0 && dm_target_present(ctx, NULL) == 0)
		return dmb_fail(ctx, -ENOENT,
				"create '%s': the kernel has no barrier target and did not load dm-barrier for the table (is it installed for this kernel? see modprobe dm-barrier, dmesg)",
				name);
	if (r == -EINVAL)
		return dmb_fail(ctx, r,
				"create '%s': the kernel refused the table \"0 %llu barrier %s\" (the reason is in the kernel log)",
				name, (unsigned long long)length, params);
	if (r < 0)
		return fail_task(ctx, r, "create", name);
	if (present == 0) {
		char why[DMB_ERROR_MAX];

		r = target_check(ctx);
		if (r < 0) {
			/* Do not leave a mapping of a target we cannot manage behind. */
			snprintf(why, sizeof(why), "%s", ctx->error);
			(void)dmb_mapping_remove(ctx, name, DMB_REMOVE_RETRY);
			dmb_call_begin(ctx);
			return dmb_fail(ctx, r, "create '%s': %s; the mapping was removed again", name,
					why);
		}
		dmb_info(ctx, "the kernel loaded dm-barrier for '%s'", name);
	}
	return 0;
}

_public_ int dmb_mapping_reload(struct dmb_ctx *ctx, const char *name, const struct dmb_spec *spec)
{
	_cleanup_task_ struct dm_task *t = NULL, *resume = NULL;
	struct dmb_table old;
	char params[256];
	uint64_t length;
	int r;

	r = dmb_mapping_table(ctx, name, &old, NULL);
	if (r < 0)
		return r;
	r = target_check(ctx);
	if (r < 0)
		return r;
	r = spec_to_table(ctx, name, spec, params, sizeof(params), &length);
	if (r < 0)
		return r;
	r = task_new(ctx, DM_DEVICE_RELOAD, name, &t);
	if (r < 0)
		return r;
	if (!dm_task_add_target(t, 0, length, TARGET_NAME, params))
		return dmb_fail(ctx, -ENOMEM, "reload '%s': cannot build the task", name);
	r = task_run(ctx, t);
	if (r == -EINVAL)
		return dmb_fail(ctx, r,
				"reload '%s': the kernel refused the table \"0 %llu barrier %s\" (the reason is in the kernel log); the old table stays",
				name, (unsigned long long)length, params);
	if (r < 0)
		return fail_task(ctx, r, "reload", name);

	r = task_new(ctx, DM_DEVICE_RESUME, name, &resume);
	if (r < 0)
		return r;
	r = task_run_cookie(ctx, resume);
	if (r < 0) {
		int r2;

		/* Do not leave the device suspended with a table it refused. */
		r2 = 0;
		{
			_cleanup_task_ struct dm_task *c = NULL, *res2 = NULL;

			if (task_new(ctx, DM_DEVICE_CLEAR, name, &c) == 0)
				(void)task_run(ctx, c);
			if (task_new(ctx, DM_DEVICE_RESUME, name, &res2) == 0)
				r2 = task_run_cookie(ctx, res2);
		}
		return dmb_fail(ctx, r, "resume '%s' with the new table: %s%s", name,
				strerror(-r),
				r2 < 0 ? "; the device may still be suspended" : "; the old table stays");
	}
	return 0;
}

_public_ int dmb_mapping_remove(struct dmb_ctx *ctx, const char *name, unsigned int flags)
{
	_cleanup_task_ struct dm_task *t = NULL;
	struct dmb_table tab;
	int r;

	if (flags & ~(unsigned int)(DMB_REMOVE_RETRY | DMB_REMOVE_DEFERRED)) {
		dmb_call_begin(ctx);
		return dmb_fail(ctx, -EINVAL, "remove '%s': unknown flags 0x%x", name ? name : "",
				flags);
	}
	/* Only ever remove barrier mappings. */
	r = dmb_mapping_table(ctx, name, &tab, NULL);
	if (r < 0)
		return r;
	r = task_new(ctx, DM_DEVICE_REMOVE, name, &t);
	if (r < 0)
		return r;
	if ((flags & DMB_REMOVE_RETRY) && !dm_task_retry_remove(t))
		return dmb_fail(ctx, -ENOMEM, "remove '%s': cannot build the task", name);
	if ((flags & DMB_REMOVE_DEFERRED) && !dm_task_deferred_remove(t))
		return dmb_fail(ctx, -ENOMEM, "remove '%s': cannot build the task", name);
	r = task_run_cookie(ctx, t);
	if (r == -EBUSY)
		return dmb_fail(ctx, r, "remove '%s': it is in use (open or mounted)", name);
	if (r < 0)
		return fail_task(ctx, r, "remove", name);
	return 0;
}

static int strcmp_ptr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Does dm device NAME have a barrier target in its live table?  1/0/-errno. */
static int has_barrier_target(struct dmb_ctx *ctx, const char *name)
{
	_cleanup_task_ struct dm_task *t = NULL;
	uint64_t start, length;
	char *ttype, *params;
	struct dm_info di;
	void *next = NULL;
	int r;

	r = task_new(ctx, DM_DEVICE_TABLE, name, &t);
	if (r < 0)
		return r;
	r = task_run(ctx, t);
	if (r == -ENXIO || r == -ENODEV)
		return 0; /* removed meanwhile */
	if (r < 0)
		return fail_task(ctx, r, "table of", name);
	if (!dm_task_get_info(t, &di) || !di.exists || !di.live_table)
		return 0;
	do {
		ttype = NULL;
		next = dm_get_next_target(t, next, &start, &length, &ttype, &params);
		if (ttype && !strcmp(ttype, TARGET_NAME))
			return 1;
	} while (next);
	return 0;
}

_public_ int dmb_mapping_list(struct dmb_ctx *ctx, char ***ret_names)
{
	_cleanup_task_ struct dm_task *t = NULL;
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dm_names *dn;
	unsigned int next = 0;
	int r;

	dmb_call_begin(ctx);
	r = task_new(ctx, DM_DEVICE_LIST, NULL, &t);
	if (r < 0)
		return r;
	r = task_run(ctx, t);
	if (r < 0)
		return dmb_fail(ctx, r, "cannot list device-mapper devices: %s", strerror(-r));
	names = calloc(1, sizeof(char *));
	if (!names)
		return -ENOMEM;
	dn = dm_task_get_names(t);
	/* An empty list is one entry with dev 0. */
	if (dn && dn->dev) {
		do {
			dn = (struct dm_names *)((char *)dn + next);
			r = has_barrier_target(ctx, dn->name);
			if (r < 0)
				goto fail;
			if (r > 0) {
				if (n + 2 > cap) {
					char **nn;

					cap = cap ? cap * 2 : 8;
					nn = realloc(names, cap * sizeof(char *));
					if (!nn)
						goto nomem;
					names = nn;
				}
				names[n] = strdup(dn->name);
				if (!names[n])
					goto nomem;
				names[++n] = NULL;
			}
			next = dn->next;
		} while (next);
	}
	/* Mappings to manage: the target must be one we know (looked at every list). */
	if (n > 0) {
		ctx->target_ok = false;
		r = target_check(ctx);
		if (r < 0)
			goto fail;
	}
	qsort(names, n, sizeof(char *), strcmp_ptr);
	*ret_names = names;
	return (int)n;
nomem:
	r = dmb_fail(ctx, -ENOMEM, "out of memory listing mappings");
fail:
	dmb_strv_free(names);
	return r;
}

/* --------------------------------------------------------- messages */

static int message_send(struct dmb_ctx *ctx, const char *name, const char *msg)
{
	_cleanup_task_ struct dm_task *t = NULL;
	struct dmb_table tab;
	int r;

	/* A message meant for a barrier target must never reach another one. */
	r = dmb_mapping_table(ctx, name, &tab, NULL);
	if (r < 0)
		return r;
	r = task_new(ctx, DM_DEVICE_TARGET_MSG, name, &t);
	if (r < 0)
		return r;
	if (!dm_task_set_sector(t, 0) || !dm_task_set_message(t, msg))
		return dmb_fail(ctx, -ENOMEM, "message to '%s': cannot build the task", name);
	r = task_run(ctx, t);
	if (r == -EOPNOTSUPP)
		return dmb_fail(ctx, r, "'%s' refused \"%s\": the mapping is in mode none", name, msg);
	if (r == -EIO)
		return dmb_fail(ctx, r, "'%s': \"%s\" failed: the cache flush failed (I/O error)",
				name, msg);
	if (r < 0)
		return fail_task(ctx, r, "message to", name);
	return 0;
}

_public_ int dmb_mapping_set_mode(struct dmb_ctx *ctx, const char *name, enum dmb_mode mode)
{
	const char *m = dmb_mode_to_string(mode);
	char msg[32];

	dmb_call_begin(ctx);
	if (!m)
		return dmb_fail(ctx, -EINVAL, "set mode of '%s': invalid mode %d", name ? name : "",
				(int)mode);
	snprintf(msg, sizeof(msg), "mode %s", m);
	return message_send(ctx, name, msg);
}

_public_ int dmb_mapping_barrier(struct dmb_ctx *ctx, const char *name)
{
	dmb_call_begin(ctx);
	return message_send(ctx, name, "barrier");
}

_public_ int dmb_mapping_reset_stats(struct dmb_ctx *ctx, const char *name)
{
	dmb_call_begin(ctx);
	return message_send(ctx, name, "reset_stats");
}

/* The control node exists once libdevmapper has talked to the kernel. */
int dm_control_ensure(struct dmb_ctx *ctx)
{
	_cleanup_task_ struct dm_task *t = NULL;
	int r;

	r = task_new(ctx, DM_DEVICE_VERSION, NULL, &t);
	if (r < 0)
		return r;
	r = task_run(ctx, t);
	if (r < 0)
		return dmb_fail(ctx, r, "cannot talk to device-mapper (/dev/mapper/control): %s",
				strerror(-r));
	return 0;
}
