/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * macro.h: the few helpers the verification tools share: scope-based
 * cleanup (the _cleanup_ idiom libsystemd does not export) and a message
 * function that prefixes the program name.
 */
#ifndef DMB_TOOLS_MACRO_H
#define DMB_TOOLS_MACRO_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _printf_(a, b) __attribute__((format(printf, a, b)))

static inline void tool_freep(void *p)
{
	free(*(void **)p);
}

static inline void tool_closep(int *fd)
{
	int saved = errno;

	if (*fd >= 0)
		(void)close(*fd);
	errno = saved;
}

static inline void tool_fclosep(FILE **f)
{
	if (*f)
		(void)fclose(*f);
}

/* A decimal option value: digits only, no sign, no overflow; *out is
 * untouched on failure. */
static inline int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s[0] || s[0] == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

#define _cleanup_free_ _cleanup_(tool_freep)
#define _cleanup_close_ _cleanup_(tool_closep)
#define _cleanup_fclose_ _cleanup_(tool_fclosep)

#endif
