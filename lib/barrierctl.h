/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * barrierctl.h: what barrierctl's files share: the parsed command line
 * (barrierctl-args.c, pure), the records both back ends (libdmbarrier
 * directly, or barrierd over D-Bus) fill in, their output
 * (barrierctl-output.c) and the exit codes.
 */
#ifndef BARRIERCTL_H
#define BARRIERCTL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "libdmbarrier.h"

/* Exit codes, documented in --help and barrierctl(8). */
enum {
	BCTL_EXIT_OK = 0,
	BCTL_EXIT_FAILURE = 1,
	BCTL_EXIT_USAGE = 2,
	BCTL_EXIT_NOT_FOUND = 3,	/* no such mapping or device; not a barrier mapping */
	BCTL_EXIT_NOT_SUPPORTED = 4,	/* not an ATA disk; no switchable cache; mode none */
	BCTL_EXIT_TIMEOUT = 5,		/* wait-event: no event in time */
	BCTL_EXIT_NO_DAEMON = 6,	/* --bus: barrierd is not reachable */
};

enum bctl_verb {
	BCTL_NONE,
	BCTL_HELP,
	BCTL_VERSION,
	BCTL_CREATE,
	BCTL_RELOAD,
	BCTL_REMOVE,
	BCTL_LIST,
	BCTL_STATUS,
	BCTL_SET_MODE,
	BCTL_BARRIER,
	BCTL_RESET_STATS,
	BCTL_WRITE_CACHE,
	BCTL_WAIT_EVENT,
};

/* A write-cache request: query, or switch on / off. */
enum bctl_wc {
	BCTL_WC_QUERY = -1,
	BCTL_WC_OFF = 0,
	BCTL_WC_ON = 1,
};

struct bctl_args {
	enum bctl_verb verb;
	bool json;
	bool bus;
	bool no_legend;
	int verbose;
	const char *name;		/* mapping name */
	const char *device;		/* create: backing device; write-cache: disk */
	bool have_mode;
	enum dmb_mode mode;
	bool mode_auto;			/* set-mode auto (--bus) */
	bool pin;			/* --pin (--bus) */
	bool have_fallback;
	enum dmb_fallback fallback;
	bool have_hold;
	uint32_t hold_ms;
	bool have_offset;
	uint64_t offset;
	bool have_length;
	uint64_t length;
	enum bctl_wc write_cache;
	int timeout_ms;			/* wait-event: -1 = none */
	bool have_event_nr;
	uint32_t event_nr;
};

/*
 * Parse argv (argv[0] is the program).  0, or -EINVAL with the reason in
 * err.  Options may come before or after the subcommand; "--" ends them.
 */
int bctl_parse_args(int argc, char *const *argv, struct bctl_args *ret, char *err,
		    size_t errsize);
/* Strict decimal number parsers for arguments; 0 or -EINVAL/-ERANGE. */
int bctl_parse_u64(const char *s, uint64_t *ret);
int bctl_parse_seconds(const char *s, int *ret_ms);
/* The exit code for a negative errno. */
int bctl_exit_code(int r);

void bctl_usage(FILE *f);

/*
 * One mapping as shown by list and status.  Both back ends fill name,
 * backing, table.mode/fallback/hold_ms, drive_cache and, of the status,
 * mode, cache_writeback, fua, barriers, flushes, flush_errors, fallbacks, held;
 * the rest only where it is known: the D-Bus API carries less than the
 * kernel, and the kernel knows nothing of barrierd's pin and state.
 */
struct bctl_mapping {
	char name[DMB_NAME_MAX];
	char backing[64];		/* "sda", or "8:0" if nameless */
	struct dmb_table table;
	struct dmb_status status;
	bool have_dm;			/* uuid, devnum, backing_devnum, offset, length, event_nr */
	char uuid[DMB_UUID_MAX];
	dev_t devnum;
	dev_t backing_devnum;
	uint32_t event_nr;
	bool full_status;		/* the other seven counters of the status */
	/*
	 * The write cache has two views, and both back ends give both: the
	 * kernel's (status.cache_writeback, the target's reading of
	 * queue/write_cache) and the drive's (ATA IDENTIFY): 1 on, 0 off, -1
	 * unknown (not an ATA disk, no switchable cache, not readable).
	 */
	int drive_cache;
	bool have_daemon;		/* pinned, state (barrierd) */
	bool pinned;
	char state[32];
};

/* Output, human or JSON, to f.  0 or -errno. */
int bctl_print_list(FILE *f, const struct bctl_mapping *m, size_t n, bool json, bool legend);
int bctl_print_status(FILE *f, const struct bctl_mapping *m, size_t n, bool json, bool single);
int bctl_print_write_cache(FILE *f, const struct dmb_write_cache *wc, const char *drive_error,
			   bool json);
int bctl_print_event(FILE *f, const char *name, uint32_t event_nr, bool json);
/*
 * write-cache over D-Bus, for a mapping's disk: barrierd's WriteCache
 * (write_cache) and the two views it is made of (kernel, drive).
 */
int bctl_print_bus_write_cache(FILE *f, const char *mapping, const struct bctl_mapping *m,
			       bool json);

/* barrierctl-bus.c: the same verbs over barrierd's D-Bus API. */
int bctl_bus_run(const struct bctl_args *a);

#endif
