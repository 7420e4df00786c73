/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * macro.h: barrierd's small helpers.  The scope-based cleanup helpers are
 * lib/macro.h's (internal to the source tree, not installed); the daemon
 * adds time units and strna().
 */
#ifndef BARRIERD_MACRO_H
#define BARRIERD_MACRO_H

#include <stdint.h>

#include "../lib/macro.h"

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

typedef uint64_t usec_t;
#define USEC_PER_MSEC ((usec_t)1000)
#define USEC_PER_SEC ((usec_t)1000000)
#define USEC_INFINITY ((usec_t)UINT64_MAX)

static inline const char *strna(const char *s)
{
	return s ? s : "n/a";
}

#endif
