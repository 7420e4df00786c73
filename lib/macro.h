/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * macro.h: the small helpers libdmbarrier and barrierctl share: scope-based
 * cleanup (systemd's _cleanup_ idiom, which libsystemd does not export),
 * array sizes and errno-preserving frees.
 */
#ifndef DMB_MACRO_H
#define DMB_MACRO_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _unused_ __attribute__((unused))
#define _public_ __attribute__((visibility("default")))

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

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

static inline void fclosep(FILE **f)
{
	int saved = errno;

	if (*f)
		(void)fclose(*f);
	errno = saved;
}

/* Hand ownership out of a _cleanup_ variable. */
#define TAKE_PTR(p)                        \
	({                                 \
		__typeof__(p) _ptr_ = (p); \
		(p) = NULL;                \
		_ptr_;                     \
	})
#define TAKE_FD(fd)              \
	({                       \
		int _fd_ = (fd); \
		(fd) = -1;       \
		_fd_;            \
	})

#endif
