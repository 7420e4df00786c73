/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libdmbarrier-private.h: what the library's files share and callers never
 * see: the context, logging and error reporting, and the internal entry
 * points between dm.c (the only libdevmapper user), kmod.c, event.c,
 * status.c and writecache.c.
 */
#ifndef LIBDMBARRIER_PRIVATE_H
#define LIBDMBARRIER_PRIVATE_H

#include <syslog.h>

#include "libdmbarrier.h"
#include "macro.h"

#define DMB_ERROR_MAX 512

struct dmb_ctx {
	int refcount;
	dmb_log_fn log_fn;
	void *log_data;
	int log_priority;
	/* The last failure's sentence, for dmb_ctx_get_error(). */
	char error[DMB_ERROR_MAX];
	/*
	 * libdevmapper's last error message and errno, caught by its log hook
	 * during the current call, to put the kernel's reason into ours.
	 */
	char dm_error[DMB_ERROR_MAX];
	int dm_errno;
	/* The loaded target passed the version check (dm.c's target_check()). */
	bool target_ok;
};

void dmb_log(struct dmb_ctx *ctx, int priority, const char *file, int line, const char *fn,
	     const char *format, ...) _printf_(6, 7);
void dmb_logv(struct dmb_ctx *ctx, int priority, const char *file, int line, const char *fn,
	      const char *format, va_list args) _printf_(6, 0);

#define dmb_log_cond(ctx, prio, ...)                                                     \
	do {                                                                             \
		struct dmb_ctx *_c = (ctx);                                              \
		if (_c->log_fn && (prio) <= _c->log_priority)                           \
			dmb_log(_c, (prio), __FILE__, __LINE__, __func__, __VA_ARGS__); \
	} while (0)

#define dmb_dbg(ctx, ...) dmb_log_cond(ctx, LOG_DEBUG, __VA_ARGS__)
#define dmb_info(ctx, ...) dmb_log_cond(ctx, LOG_INFO, __VA_ARGS__)
#define dmb_notice(ctx, ...) dmb_log_cond(ctx, LOG_NOTICE, __VA_ARGS__)
#define dmb_warn(ctx, ...) dmb_log_cond(ctx, LOG_WARNING, __VA_ARGS__)

/*
 * Record the failure of the current call (r < 0) as the context's error
 * message, log it at debug level and return r.  The caller decides how loud
 * it is: the library only reports.
 */
int dmb_fail(struct dmb_ctx *ctx, int r, const char *format, ...) _printf_(3, 4);
/* Start of every public call on ctx: clear the per-call state. */
void dmb_call_begin(struct dmb_ctx *ctx);

/* dm.c: libdevmapper's process-wide log hook follows this context. */
void dm_log_attach(struct dmb_ctx *ctx);
void dm_log_detach(struct dmb_ctx *ctx);
/* dm.c: is the barrier target in the kernel's target list?  1, 0 or -errno. */
int dm_target_present(struct dmb_ctx *ctx, unsigned int v[3]);

/* dm.c: is name one dm could know (any it accepts, not only ours)?  0/-EINVAL. */
int dm_name_check(struct dmb_ctx *ctx, const char *name);
/* dm.c: make libdevmapper open (and if need be create) /dev/mapper/control. */
int dm_control_ensure(struct dmb_ctx *ctx);

/*
 * The barrier target versions this library reads: major DMB_TARGET_MAJOR,
 * minor DMB_TARGET_MINOR_MIN or newer (a newer minor only appends status
 * fields).  The status line of 1.0 has the fifteen fields status.c reads.
 */
#define DMB_TARGET_MAJOR 1U
#define DMB_TARGET_MINOR_MIN 0U
/*
 * status.c: is a loaded target of version v one this library can manage?
 * 0, or -EPROTONOSUPPORT with a sentence for the user in err.
 */
int target_version_check(const unsigned int v[3], char *err, size_t errsize);

/* kmod.c: the module's state as libkmod sees it (never loads anything). */
int kmod_barrier_state(struct dmb_ctx *ctx, enum dmb_module_state *ret);

/* status.c: the table parameters for a spec whose device is already "maj:min". */
int table_format(const struct dmb_table *t, char *buf, size_t size);
/* status.c: "maj:min" to dev_t, strict; -EINVAL. */
int devnum_parse(const char *s, dev_t *ret);
/* status.c: a decimal uint64 without sign or leading zeros; -EINVAL/-ERANGE. */
int u64_parse(const char *s, size_t len, uint64_t *ret);

/* writecache.c: the size in sectors of a block device (sysfs). */
int disk_size(struct dmb_ctx *ctx, dev_t dev, uint64_t *ret);

#endif
