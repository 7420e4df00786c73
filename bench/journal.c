// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dmb-journal: the journal-pipeline benchmark's writer.  Commits
 * transactions of K 4 KiB data blocks plus one commit block to a block
 * device, opened O_DIRECT, in one of two ways:
 *
 *   wait     the way a journal must commit on today's Linux: write the K
 *            blocks, wait for them, fdatasync, write the commit block,
 *            fdatasync.  Nothing of the next transaction is queued before
 *            the commit is known to be stable.
 *   barrier  the way a barrier device allows: queue the K blocks, then the
 *            commit block as a barrier write (RWF_DSYNC on an O_DIRECT fd:
 *            REQ_FUA) without waiting, and go on queueing the next
 *            transactions; up to --depth transactions in flight.  The
 *            device, not the writer, keeps the commit behind its blocks and
 *            the next transaction behind the commit.
 *
 * A transaction is committed when its commit block has completed.  The
 * journal is a ring of --blocks blocks from --first-block; transaction i
 * takes K + 1 consecutive blocks.  Each block carries a header (magic,
 * transaction, index), so a dump of the device shows what went where.
 * --map FILE writes "seq kind sector" per bio (kinds write and fua, the
 * format of dmb-orderload --map), for dmb-ordercheck to name the bios of a
 * trace of the run; the ring must not wrap then.
 *
 * Output, one line: "mode M k K commits N seconds S commits_per_s R".
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <liburing.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BLOCK 4096u
#define MAGIC "DMBJRNL1"
#define MAX_K 256u
#define MAX_DEPTH 64u

struct jhdr {
	char magic[8];
	uint64_t txn;
	uint32_t index;		/* 0..K-1 data, K the commit block */
	uint32_t k;
};

struct opts {
	const char *dev;
	const char *map;
	bool barrier;
	unsigned int k;
	unsigned int depth;
	uint64_t ntxn;		/* 0: run for --seconds */
	double seconds;
	uint64_t first_block;
	uint64_t nblocks;	/* 0: to the end of the device */
};

struct jrun {
	struct opts o;
	struct io_uring ring;
	int fd;
	FILE *map;
	void *bufs;		/* (K + 1) * depth blocks */
	unsigned int pending[MAX_DEPTH];	/* bios in flight per buffer slot */
	uint64_t bio_seq;
	uint64_t errors;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: dmb-journal [options] --mode wait|barrier BLOCKDEV\n"
		"Commits journal transactions of K data blocks and a commit block.\n"
		"  -M, --mode wait|barrier  wait for each commit, or queue commits as barrier writes\n"
		"  -k, --blocks-per-txn K   data blocks per transaction (default 8)\n"
		"  -d, --depth N            barrier mode: transactions in flight (default 4)\n"
		"  -n, --transactions N     commit N transactions\n"
		"  -t, --seconds S          or commit for S seconds (default 5)\n"
		"  -f, --first-block N      the journal's first 4 KiB block (default 0)\n"
		"  -b, --blocks N           the journal's size in blocks (default: to the end)\n"
		"  -m, --map FILE           write \"seq kind sector\" per bio (no wrapping)\n"
		"  -h, --help               this text\n");
}

/* A decimal count: digits only, no sign, nothing after. */
static int parse_count(const char *s, uint64_t *v)
{
	char extra;

	if (strspn(s, "0123456789") != strlen(s))
		return -EINVAL;
	return sscanf(s, "%" SCNu64 "%c", v, &extra) == 1 ? 0 : -EINVAL;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "mode", required_argument, NULL, 'M' },
		{ "blocks-per-txn", required_argument, NULL, 'k' },
		{ "depth", required_argument, NULL, 'd' },
		{ "transactions", required_argument, NULL, 'n' },
		{ "seconds", required_argument, NULL, 't' },
		{ "first-block", required_argument, NULL, 'f' },
		{ "blocks", required_argument, NULL, 'b' },
		{ "map", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	const char *mode = NULL;
	uint64_t v;
	char *end;
	int c;

	*o = (struct opts){ .k = 8, .depth = 4, .seconds = 5 };
	while ((c = getopt_long(argc, argv, "M:k:d:n:t:f:b:m:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'M':
			mode = optarg;
			break;
		case 't':
			o->seconds = strtod(optarg, &end);
			if (*end || !(o->seconds > 0 && o->seconds <= 86400)) {
				fprintf(stderr, "dmb-journal: --seconds '%s' is not a duration\n", optarg);
				return -EINVAL;
			}
			break;
		case 'm':
			o->map = optarg;
			break;
		case 'k':
		case 'd':
		case 'n':
		case 'f':
		case 'b':
			if (parse_count(optarg, &v) < 0) {
				fprintf(stderr, "dmb-journal: -%c: '%s' is not a number\n", c, optarg);
				return -EINVAL;
			}
			if ((c == 'k' && (v < 1 || v > MAX_K)) || (c == 'd' && (v < 1 || v > MAX_DEPTH))) {
				fprintf(stderr, "dmb-journal: -%c %s is out of range\n", c, optarg);
				return -EINVAL;
			}
			if (c == 'k')
				o->k = (unsigned int)v;
			else if (c == 'd')
				o->depth = (unsigned int)v;
			else if (c == 'n')
				o->ntxn = v;
			else if (c == 'f')
				o->first_block = v;
			else
				o->nblocks = v;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (!mode || (strcmp(mode, "wait") && strcmp(mode, "barrier")) || optind != argc - 1) {
		usage(stderr);
		return -EINVAL;
	}
	o->barrier = strcmp(mode, "barrier") == 0;
	o->dev = argv[optind];
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The device block of block @index (0..K) of transaction @txn. */
static uint64_t txn_block(const struct jrun *j, uint64_t txn, unsigned int index)
{
	uint64_t per = j->o.k + 1;
	uint64_t slots = j->o.nblocks / per;

	return j->o.first_block + (txn % slots) * per + index;
}

/* Fill the buffer for block @index of @txn (buffers cycle over depth). */
static void *txn_buf(struct jrun *j, uint64_t txn, unsigned int index)
{
	size_t slot = (size_t)(txn % j->o.depth) * (j->o.k + 1) + index;
	char *buf = (char *)j->bufs + slot * BLOCK;
	struct jhdr h = { .txn = txn, .index = index, .k = j->o.k };

	memcpy(h.magic, MAGIC, sizeof(h.magic));
	memset(buf, (int)(txn & 0xff), BLOCK);
	memcpy(buf, &h, sizeof(h));
	return buf;
}

/*
 * Queue one write; user_data is the transaction, with the top bit set for
 * its commit block.
 */
static int queue_write(struct jrun *j, uint64_t txn, unsigned int index, bool fua)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&j->ring);
	uint64_t blk = txn_block(j, txn, index);

	if (!sqe) {
		int r = io_uring_submit(&j->ring);

		if (r < 0)
			return r;
		sqe = io_uring_get_sqe(&j->ring);
		if (!sqe)
			return -EBUSY;
	}
	io_uring_prep_write(sqe, j->fd, txn_buf(j, txn, index), BLOCK, blk * BLOCK);
	if (fua)
		sqe->rw_flags = RWF_DSYNC;
	io_uring_sqe_set_data64(sqe, txn | (fua ? 1ULL << 63 : 0));
	j->pending[txn % j->o.depth]++;
	if (j->map)
		fprintf(j->map, "%" PRIu64 " %s %" PRIu64 "\n", j->bio_seq, fua ? "fua" : "write",
			blk * (BLOCK / 512));
	j->bio_seq++;
	return 0;
}

/* Reap one completion; returns 1 if it was a commit block, 0 if not. */
static int reap(struct jrun *j, bool wait)
{
	struct io_uring_cqe *cqe;
	uint64_t ud;
	int r;

	r = wait ? io_uring_wait_cqe(&j->ring, &cqe) : io_uring_peek_cqe(&j->ring, &cqe);
	if (r < 0)
		return r;
	ud = io_uring_cqe_get_data64(cqe);
	j->pending[(ud & ~(1ULL << 63)) % j->o.depth]--;
	if (cqe->res != (int)BLOCK) {
		if (j->errors++ < 10)
			fprintf(stderr, "dmb-journal: write of transaction %" PRIu64 " failed: %s\n",
				(uint64_t)(ud & ~(1ULL << 63)), cqe->res < 0 ? strerror(-cqe->res) : "short write");
	}
	io_uring_cqe_seen(&j->ring, cqe);
	return ud >> 63 ? 1 : 0;
}

static bool more(const struct jrun *j, uint64_t txn, uint64_t deadline)
{
	if (j->o.ntxn)
		return txn < j->o.ntxn;
	return now_ns() < deadline;
}

/* Submit what is queued, reap @n completions, then fdatasync the device. */
static int settle(struct jrun *j, unsigned int n)
{
	int r = io_uring_submit(&j->ring);

	while (r >= 0 && n--)
		r = reap(j, true);
	if (r < 0)
		return r;
	if (fdatasync(j->fd) < 0)
		return -errno;
	if (j->map)
		fprintf(j->map, "%" PRIu64 " fsync -\n", j->bio_seq++);
	return 0;
}

/* (a): write K, wait, fdatasync, write the commit, wait, fdatasync. */
static int run_wait(struct jrun *j, uint64_t deadline, uint64_t *committed)
{
	uint64_t txn;
	unsigned int i;
	int r = 0;

	for (txn = 0; more(j, txn, deadline); txn++) {
		for (i = 0; i < j->o.k && r >= 0; i++)
			r = queue_write(j, txn, i, false);
		if (r >= 0)
			r = settle(j, j->o.k);
		if (r >= 0)
			r = queue_write(j, txn, j->o.k, false);
		if (r >= 0)
			r = settle(j, 1);
		if (r < 0)
			return r;
		(*committed)++;
	}
	return 0;
}

/*
 * (b): queue K writes and the commit as a barrier write, never waiting but
 * for a free transaction slot: one whose buffers are no longer in flight
 * (without ordering, a commit may complete before its data blocks).
 */
static int run_barrier(struct jrun *j, uint64_t deadline, uint64_t *committed)
{
	uint64_t txn = 0, inflight;
	unsigned int i;
	int r;

	for (;;) {
		bool go = more(j, txn, deadline);

		if (go && !j->pending[txn % j->o.depth]) {
			for (i = 0; i < j->o.k; i++) {
				r = queue_write(j, txn, i, false);
				if (r < 0)
					return r;
			}
			r = queue_write(j, txn, j->o.k, true);
			if (r < 0)
				return r;
			txn++;
			continue;
		}
		for (inflight = 0, i = 0; i < j->o.depth; i++)
			inflight += j->pending[i];
		if (!go && !inflight)
			break;
		r = io_uring_submit_and_wait(&j->ring, 1);
		if (r < 0)
			return r;
		while ((r = reap(j, false)) >= 0)
			*committed += (uint64_t)r;
		if (r != -EAGAIN)
			return r;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct jrun j = { .fd = -1 };
	uint64_t size = 0, t0, t1, committed = 0;
	unsigned int entries;
	struct stat st;
	double secs;
	int r;

	if (parse_args(argc, argv, &j.o) < 0)
		return 2;
	j.fd = open(j.o.dev, O_RDWR | O_DIRECT | O_CLOEXEC);
	if (j.fd < 0) {
		fprintf(stderr, "dmb-journal: cannot open %s: %m\n", j.o.dev);
		return 1;
	}
	if (fstat(j.fd, &st) < 0 || !S_ISBLK(st.st_mode) || ioctl(j.fd, BLKGETSIZE64, &size) < 0) {
		fprintf(stderr, "dmb-journal: %s is not a block device\n", j.o.dev);
		return 1;
	}
	if (j.o.first_block >= size / BLOCK) {
		fprintf(stderr, "dmb-journal: --first-block is past the end of %s\n", j.o.dev);
		return 1;
	}
	if (!j.o.nblocks)
		j.o.nblocks = size / BLOCK - j.o.first_block;
	if (j.o.first_block + j.o.nblocks > size / BLOCK || j.o.nblocks < j.o.k + 1) {
		fprintf(stderr, "dmb-journal: --blocks does not fit %s\n", j.o.dev);
		return 1;
	}
	if (j.o.map) {
		if (!j.o.ntxn || j.o.ntxn > j.o.nblocks / (j.o.k + 1)) {
			fprintf(stderr, "dmb-journal: --map needs -n, and the journal must hold every transaction\n");
			return 1;
		}
		j.map = fopen(j.o.map, "we");
		if (!j.map) {
			fprintf(stderr, "dmb-journal: cannot write %s: %m\n", j.o.map);
			return 1;
		}
	}
	if (posix_memalign(&j.bufs, BLOCK, (size_t)BLOCK * (j.o.k + 1) * j.o.depth)) {
		fprintf(stderr, "dmb-journal: out of memory\n");
		return 1;
	}
	entries = (j.o.k + 1) * (j.o.barrier ? j.o.depth : 1);
	r = io_uring_queue_init(entries, &j.ring, 0);
	if (r < 0) {
		fprintf(stderr, "dmb-journal: io_uring_queue_init: %s\n", strerror(-r));
		return 1;
	}

	t0 = now_ns();
	r = j.o.barrier ? run_barrier(&j, t0 + (uint64_t)(j.o.seconds * 1e9), &committed)
			: run_wait(&j, t0 + (uint64_t)(j.o.seconds * 1e9), &committed);
	t1 = now_ns();
	io_uring_queue_exit(&j.ring);
	free(j.bufs);
	if (j.map && fclose(j.map) != 0) {
		fprintf(stderr, "dmb-journal: writing %s failed: %m\n", j.o.map);
		r = r < 0 ? r : -EIO;
	}
	(void)close(j.fd);
	if (r < 0) {
		fprintf(stderr, "dmb-journal: %s\n", strerror(-r));
		return 1;
	}
	if (j.errors) {
		fprintf(stderr, "dmb-journal: %" PRIu64 " writes failed\n", j.errors);
		return 1;
	}
	secs = (double)(t1 - t0) / 1e9;
	printf("mode %s k %u commits %" PRIu64 " seconds %.3f commits_per_s %.1f\n",
	       j.o.barrier ? "barrier" : "wait", j.o.k, committed, secs, (double)committed / secs);
	return 0;
}
