/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * replay.h: reading a dm-log-writes log (format of drivers/md/dm-log-writes.c,
 * Documentation/admin-guide/device-mapper/log-writes.rst) and replaying it
 * onto a device, stopping at every flush point for a check.  No policy
 * about what the check is: the caller passes a function.
 */
#ifndef DMB_TOOLS_REPLAY_H
#define DMB_TOOLS_REPLAY_H

#include <stdbool.h>
#include <stdint.h>

/* On-disk format, little-endian; each entry header fills one log block. */
#define REPLAY_LOG_MAGIC 0x6a736677736872ULL
#define REPLAY_LOG_VERSION 1ULL

#define REPLAY_FLUSH	(1u << 0)
#define REPLAY_FUA	(1u << 1)
#define REPLAY_DISCARD	(1u << 2)
#define REPLAY_MARK	(1u << 3)
#define REPLAY_METADATA	(1u << 4)
#define REPLAY_KNOWN_FLAGS 0x1fu

#define REPLAY_SUPER_SIZE 28	/* magic, version, nr_entries (le64), sectorsize (le32) */
#define REPLAY_ENTRY_SIZE 32	/* sector, nr_sectors, flags, data_len (le64) */
#define REPLAY_MARK_MAX 512

struct replay_log {
	int fd;
	uint64_t nr_entries;
	uint32_t sectorsize;	/* the logged device's logical block size */
	uint64_t size;		/* bytes of the log device or file */
	uint64_t next;		/* byte offset of the next entry header */
	uint64_t index;		/* entries read so far */
};

struct replay_entry {
	uint64_t index;		/* 0-based position in the log */
	uint64_t sector;	/* in sectorsize units, as logged */
	uint64_t nr_sectors;	/* in sectorsize units */
	uint64_t flags;
	uint64_t data_len;	/* bytes of mark text */
	uint64_t data_off;	/* byte offset of the write's data in the log */
	char mark[REPLAY_MARK_MAX];
};

/* What a replay did, and what it saw. */
struct replay_stats {
	uint64_t entries, writes, discards, flushes, fua, marks;
	uint64_t bytes;		/* written to the replay device */
	uint64_t dropped;	/* writes a mutation left out */
	uint64_t points;	/* flush points checked */
	uint64_t failed;	/* of those, the ones whose check failed */
	uint64_t first_failed_entry;	/* UINT64_MAX if none */
};

enum replay_mutation {
	REPLAY_EXACT,		/* what the disk holds after each flush */
	/*
	 * A disk that acknowledges flushes without writing its cache, every
	 * other time: the writes logged between flush entries 2k and 2k+1
	 * are never replayed.  Only inside the checked region.
	 */
	REPLAY_LOSE_FLUSHED,
	/*
	 * A disk that writes its cache back out of order across flushes: at
	 * each flush point every other write between the two flushes before
	 * it is missing while the later ones are there (they are put back
	 * after the check, so the replay goes on from the exact state).
	 * Every other: the writes at odd positions of that window.
	 */
	REPLAY_LOSE_PREVIOUS,
	/*
	 * The same, the writes at even positions lost (the first among them):
	 * which of a journal's blocks a lost write hits depends on the order
	 * the writes completed in, so a negative control runs both.
	 */
	REPLAY_LOSE_PREVIOUS_EVEN,
};

struct replay_opts {
	const char *start_mark;	/* check from this mark on (NULL: from the start) */
	const char *end_mark;	/* stop at this mark (NULL: the end of the log) */
	uint64_t max_points;	/* 0: no limit */
	uint64_t max_failures;	/* stop after this many failed points; 0: no limit */
	uint64_t every;		/* check every Nth distinct point (default 1) */
	enum replay_mutation mutation;
};

/*
 * The check at one flush point: the device holds the replayed state (and
 * is synced).  Returns 0 if the state is good, > 0 if not, < 0 (errno) if
 * the check itself could not run.
 */
typedef int (*replay_check_fn)(uint64_t point, const struct replay_entry *e,
			       const char *last_mark, void *userdata);

/* Opens the log on fd (not taken over): reads and validates the super block. */
int replay_log_open(struct replay_log *log, int fd);

/*
 * Reads the next entry.  Returns 1 with *e filled, 0 at the end of the log,
 * negative errno (-EBADMSG: a malformed entry) otherwise.
 */
int replay_log_next(struct replay_log *log, struct replay_entry *e);

/* Writes one entry's effect (data, or zeroes for a discard) to devfd. */
int replay_apply(const struct replay_log *log, const struct replay_entry *e, int devfd,
		 uint64_t *bytes);

/*
 * Replays the whole log onto devfd and calls check at every flush point
 * (a FLUSH or FUA entry after which the device differs from the last
 * point checked) from start_mark on.  Returns 0 when it got to the end
 * (or end_mark, or a limit), negative errno on an I/O or format error or
 * a missing start mark.
 */
int replay_run(struct replay_log *log, int devfd, const struct replay_opts *opts,
	       replay_check_fn check, void *userdata, struct replay_stats *st);

const char *replay_mutation_name(enum replay_mutation m);
int replay_mutation_from_name(const char *s, enum replay_mutation *m);

#endif
