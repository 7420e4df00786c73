/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * log.h: barrierd's logging.  To the journal with structured fields
 * (PRIORITY, DMB_DEVICE= for the mapping a line is about) when journald is
 * there; otherwise to stderr, with "<N>" priority prefixes when stderr is a
 * journal stream, plain text when it is not (the test guest).  Every log
 * call with an error returns it as a negative errno, so a failure is
 * logged and returned in one statement.
 *
 * The lines an administrator or a monitor looks for carry a MESSAGE_ID
 * and fields of their own (log_device_struct()), so that
 * `journalctl MESSAGE_ID=...` finds every mode change or flush failure
 * without matching text; barrierd(8), LOGGING, lists them.
 */
#ifndef BARRIERD_LOG_H
#define BARRIERD_LOG_H

#include <stdarg.h>
#include <syslog.h>

#include "macro.h"

/* MESSAGE_IDs (systemd-id128 new): a mapping changed mode; a flush failed and was handled. */
#define BARRIERD_MESSAGE_MODE_CHANGED "d2d1764a90cc4c94b19e2d5a6b51d099"
#define BARRIERD_MESSAGE_FLUSH_FAILED "f43d44cac08543faaa4ac0155ab0f108"
/* Extra journal fields one line may carry. */
#define LOG_FIELDS_MAX 8

enum log_target {
	LOG_TARGET_AUTO,
	LOG_TARGET_JOURNAL,
	LOG_TARGET_STDERR,
};

void log_setup(enum log_target target);
void log_set_max_level(int level);
int log_get_max_level(void);
/* "err", "warning", "notice", "info", "debug" or 0..7; -EINVAL otherwise. */
int log_level_from_string(const char *s);

/*
 * Log one line about device (may be NULL).  error (0, or an errno with
 * either sign) is what %m prints.  Returns -abs(error).
 */
int log_internal(int level, int error, const char *device, const char *file, int line,
		 const char *func, const char *format, ...) _printf_(7, 8);
int log_internalv(int level, int error, const char *device, const char *file, int line,
		  const char *func, const char *format, va_list ap) _printf_(7, 0);
/*
 * The same with extra journal fields: a NULL-terminated list of at most
 * LOG_FIELDS_MAX "KEY=value" strings (MESSAGE_ID=, DMB_DISK=, ...).  On
 * stderr the fields are not shown.
 */
int log_internal_fields(int level, int error, const char *device, const char *const *fields,
			const char *file, int line, const char *func, const char *format, ...)
	_printf_(8, 9);

#define log_full_errno(level, error, ...) \
	log_internal(level, error, NULL, __FILE__, __LINE__, __func__, __VA_ARGS__)
#define log_debug(...) log_full_errno(LOG_DEBUG, 0, __VA_ARGS__)
#define log_info(...) log_full_errno(LOG_INFO, 0, __VA_ARGS__)
#define log_notice(...) log_full_errno(LOG_NOTICE, 0, __VA_ARGS__)
#define log_warning(...) log_full_errno(LOG_WARNING, 0, __VA_ARGS__)
#define log_error(...) log_full_errno(LOG_ERR, 0, __VA_ARGS__)
#define log_warning_errno(e, ...) log_full_errno(LOG_WARNING, e, __VA_ARGS__)
#define log_error_errno(e, ...) log_full_errno(LOG_ERR, e, __VA_ARGS__)
#define log_debug_errno(e, ...) log_full_errno(LOG_DEBUG, e, __VA_ARGS__)

#define log_device_full_errno(dev, level, error, ...) \
	log_internal(level, error, dev, __FILE__, __LINE__, __func__, __VA_ARGS__)
#define log_device_debug(dev, ...) log_device_full_errno(dev, LOG_DEBUG, 0, __VA_ARGS__)
#define log_device_info(dev, ...) log_device_full_errno(dev, LOG_INFO, 0, __VA_ARGS__)
#define log_device_notice(dev, ...) log_device_full_errno(dev, LOG_NOTICE, 0, __VA_ARGS__)
#define log_device_warning(dev, ...) log_device_full_errno(dev, LOG_WARNING, 0, __VA_ARGS__)
#define log_device_warning_errno(dev, e, ...) log_device_full_errno(dev, LOG_WARNING, e, __VA_ARGS__)
#define log_device_error_errno(dev, e, ...) log_device_full_errno(dev, LOG_ERR, e, __VA_ARGS__)
#define log_device_struct(dev, level, fields, ...) \
	log_internal_fields(level, 0, dev, fields, __FILE__, __LINE__, __func__, __VA_ARGS__)

#endif
