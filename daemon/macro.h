/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * macro.h: barrierd's small helpers: scope-based cleanup (systemd's
 * _cleanup_ idiom, which libsystemd does not export), time units and
 * array sizes.  Kept apart from lib/macro.h: the daemon is a client of the
 * library and shares none of its internals.
 */
#ifndef BARRIERD_MACRO_H
#define BARRIERD_MACRO_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _printf_(a, b) __attribute__((format(printf, a, b)))

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))

typedef uint64_t usec_t;
#define USEC_PER_MSEC ((usec_t)1000)
#define USEC_PER_SEC ((usec_t)1000000)
#define USEC_INFINITY ((usec_t)UINT64_MAX)

static inline const char *strna(const char *s)
{
	return s ? s : "n/a";
}

/* free()/close() at scope end must not clobber the errno being returned. */
static inline void freep(void *p)
{
	int saved = errno;

	free(*(void **)p);
	errno = saved;
}

static inline void closep(int *fd)
{
	int saved = errno;

	if (*fd >= 0)
		(void)close(*fd);
	errno = saved;
}

/* Hand ownership out of a _cleanup_ variable. */
#define TAKE_PTR(p)                        \
	({                                 \
		__typeof__(p) _ptr_ = (p); \
		(p) = NULL;                \
		_ptr_;                     \
	})

#endif
