// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * log.c: where barrierd's log lines go (see log.h).  Decided once at
 * start: the journal's native protocol when the journal socket exists and
 * stderr is not a plain terminal or file, so that DMB_DEVICE=, the
 * priority and a line's own fields (MESSAGE_ID=, DMB_DISK=, ...) are
 * fields; else stderr.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
/* Our CODE_FILE=/CODE_LINE=/CODE_FUNC= are the caller's; without this,
 * sd_journal_sendv() adds a second set naming log.c. */
#define SD_JOURNAL_SUPPRESS_LOCATION
#include <systemd/sd-journal.h>
#include <unistd.h>

#include "log.h"

#define JOURNAL_SOCKET "/run/systemd/journal/socket"

static int max_level = LOG_INFO;
static bool use_journal;
static bool stderr_prefix;	/* stderr is a journal stream: "<N>" prefixes */

static const char *const level_names[] = {
	[LOG_EMERG] = "emerg",	 [LOG_ALERT] = "alert",	  [LOG_CRIT] = "crit",
	[LOG_ERR] = "err",	 [LOG_WARNING] = "warning", [LOG_NOTICE] = "notice",
	[LOG_INFO] = "info",	 [LOG_DEBUG] = "debug",
};

/* Is stderr the journal stream systemd set up ($JOURNAL_STREAM=dev:ino)? */
static bool stderr_is_journal(void)
{
	const char *e = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;
	char c;

	if (!e || sscanf(e, "%llu:%llu%c", &dev, &ino, &c) != 2)
		return false;
	if (fstat(STDERR_FILENO, &st) < 0)
		return false;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

void log_setup(enum log_target target)
{
	bool journal_stream = stderr_is_journal();

	switch (target) {
	case LOG_TARGET_JOURNAL:
		use_journal = true;
		break;
	case LOG_TARGET_STDERR:
		use_journal = false;
		break;
	default:
		use_journal = journal_stream && access(JOURNAL_SOCKET, W_OK) == 0;
		break;
	}
	stderr_prefix = journal_stream;
}

void log_set_max_level(int level)
{
	max_level = level;
}

int log_get_max_level(void)
{
	return max_level;
}

int log_level_from_string(const char *s)
{
	char *end;
	long v;

	if (!s || !*s)
		return -EINVAL;
	for (size_t i = 0; i < ELEMENTSOF(level_names); i++)
		if (!strcmp(s, level_names[i]))
			return (int)i;
	if (!strcmp(s, "error"))
		return LOG_ERR;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < LOG_EMERG || v > LOG_DEBUG)
		return -EINVAL;
	return (int)v;
}

static void log_journal(int level, int error, const char *device, const char *const *fields,
			const char *file, int line, const char *func, const char *msg)
{
	char prio[32], dev[256], cfile[512], cline[32], cfunc[256], err[32];
	const char *message_prefix = "MESSAGE=";
	_cleanup_(freep) char *message = NULL;
	struct iovec iov[8 + LOG_FIELDS_MAX];
	size_t n = 0;

	message = malloc(strlen(message_prefix) + strlen(msg) + 1);
	if (!message)
		return;
	strcpy(message, message_prefix);
	strcat(message, msg);
#define IOV(s) iov[n++] = (struct iovec){ .iov_base = (void *)(s), .iov_len = strlen(s) }
	IOV(message);
	snprintf(prio, sizeof(prio), "PRIORITY=%d", level);
	IOV(prio);
	IOV("SYSLOG_IDENTIFIER=barrierd");
	if (device) {
		snprintf(dev, sizeof(dev), "DMB_DEVICE=%s", device);
		IOV(dev);
	}
	snprintf(cfile, sizeof(cfile), "CODE_FILE=%s", file);
	IOV(cfile);
	snprintf(cline, sizeof(cline), "CODE_LINE=%d", line);
	IOV(cline);
	snprintf(cfunc, sizeof(cfunc), "CODE_FUNC=%s", func);
	IOV(cfunc);
	if (error) {
		snprintf(err, sizeof(err), "ERRNO=%d", abs(error));
		IOV(err);
	}
	for (size_t i = 0; fields && fields[i] && i < LOG_FIELDS_MAX; i++)
		IOV(fields[i]);
#undef IOV
	(void)sd_journal_sendv(iov, (int)n);
}

static int log_dispatch(int level, int error, const char *device, const char *const *fields,
			const char *file, int line, const char *func, const char *format, va_list ap)
{
	int saved = errno;
	char msg[2048];

	if (level > max_level)
		return error ? -abs(error) : 0;
	if (error)
		errno = abs(error);
	vsnprintf(msg, sizeof(msg), format, ap);
	/* Some libraries (libkmod) end their messages with a newline. */
	for (size_t n = strlen(msg); n > 0 && msg[n - 1] == '\n'; n--)
		msg[n - 1] = '\0';
	if (use_journal)
		log_journal(level, error, device, fields, file, line, func, msg);
	else if (stderr_prefix)
		fprintf(stderr, "<%d>%s%s%s\n", level, device ? device : "", device ? ": " : "", msg);
	else
		fprintf(stderr, "barrierd: %s: %s%s%s\n", level_names[level & 7], device ? device : "",
			device ? ": " : "", msg);
	errno = saved;
	return error ? -abs(error) : 0;
}

int log_internalv(int level, int error, const char *device, const char *file, int line,
		  const char *func, const char *format, va_list ap)
{
	return log_dispatch(level, error, device, NULL, file, line, func, format, ap);
}

int log_internal_fields(int level, int error, const char *device, const char *const *fields,
			const char *file, int line, const char *func, const char *format, ...)
{
	va_list ap;
	int r;

	va_start(ap, format);
	r = log_dispatch(level, error, device, fields, file, line, func, format, ap);
	va_end(ap);
	return r;
}

int log_internal(int level, int error, const char *device, const char *file, int line,
		 const char *func, const char *format, ...)
{
	va_list ap;
	int r;

	va_start(ap, format);
	r = log_internalv(level, error, device, file, line, func, format, ap);
	va_end(ap);
	return r;
}
