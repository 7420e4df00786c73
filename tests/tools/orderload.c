// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dmb-orderload: the ordering verifier's workload.  Keeps a queue of
 * O_DIRECT 4 KiB writes full on a block device with io_uring, mixed at
 * random (seeded, reproducible) with barrier writes (RWF_DSYNC: REQ_FUA)
 * and asynchronous fsyncs (IORING_OP_FSYNC: an empty REQ_PREFLUSH bio).
 * Every write goes to a block of its own, so a blktrace of the run names
 * each bio by its sector; each block carries a header (magic, sequence
 * number, kind).  --map writes "seq kind sector" per bio, for
 * dmb-ordercheck to name bios and for a later --verify-map run (outside the
 * trace) to read every block back and check it holds the bio written there.
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

#include "macro.h"

#define BLOCK 4096u
#define MAGIC "DMBORDR1"

enum kind { K_WRITE, K_FUA, K_FSYNC, K_NR };
static const char *const kind_names[K_NR] = { "write", "fua", "fsync" };

/* On-disk header at the start of every block written. */
struct block_hdr {
	char magic[8];
	uint64_t seq;
	uint64_t block;
	uint64_t seed;
	uint32_t kind;
	uint32_t pad;
};

struct slot {
	void *buf;
	uint64_t seq;
	uint64_t block;
	enum kind kind;
};

struct opts {
	const char *dev;
	const char *map;
	uint64_t n;
	unsigned int qd;
	uint64_t seed;
	unsigned int fua_pm;	/* per mille */
	unsigned int fsync_pm;
	uint64_t first_block;
	uint64_t nblocks;	/* 0: to the end of the device */
	unsigned int workers;	/* io-wq bounded workers, 0: kernel default */
	uint64_t max_errors;
	const char *verify_map;
};

/* splitmix64: small, seedable, the same sequence on every machine. */
static uint64_t rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t rnd_below(uint64_t *s, uint64_t n)
{
	return rnd(s) % n;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: dmb-orderload [options] DEVICE\n"
		"Writes N bios to DEVICE (O_DIRECT, io_uring): 4 KiB writes to distinct\n"
		"blocks, FUA writes (RWF_DSYNC) and fsyncs, at queue depth QD.\n"
		"  -n, --bios N          bios to submit (default 10000)\n"
		"  -q, --qd N            queue depth, 1..1024 (default 32)\n"
		"  -s, --seed N          random seed (default 1)\n"
		"  -f, --fua PERMILLE    share of FUA writes (default 50)\n"
		"  -y, --fsync PERMILLE  share of fsyncs (default 50)\n"
		"  -b, --first-block N   first 4 KiB block to use (default 0)\n"
		"  -B, --blocks N        blocks to spread writes over (default: rest of device)\n"
		"  -w, --workers N       io-wq bounded workers (default: kernel's)\n"
		"  -e, --max-errors N    failed bios tolerated before exit status 1 (default 0)\n"
		"  -m, --map FILE        write \"seq kind sector\" per bio to FILE\n"
		"  -V, --verify-map FILE read back every block named in FILE (--map, same -s)\n"
		"                        names and check it; submits no load\n"
		"  -h, --help            this text\n");
}


static int parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "bios", required_argument, NULL, 'n' },
		{ "qd", required_argument, NULL, 'q' },
		{ "seed", required_argument, NULL, 's' },
		{ "fua", required_argument, NULL, 'f' },
		{ "fsync", required_argument, NULL, 'y' },
		{ "first-block", required_argument, NULL, 'b' },
		{ "blocks", required_argument, NULL, 'B' },
		{ "workers", required_argument, NULL, 'w' },
		{ "max-errors", required_argument, NULL, 'e' },
		{ "map", required_argument, NULL, 'm' },
		{ "verify-map", required_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	uint64_t v;
	int c;

	*o = (struct opts){ .n = 10000, .qd = 32, .seed = 1, .fua_pm = 50, .fsync_pm = 50 };
	while ((c = getopt_long(argc, argv, "n:q:s:f:y:b:B:w:e:m:V:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			o->verify_map = optarg;
			continue;
		case 'm':
			o->map = optarg;
			continue;
		case '?':
			return -EINVAL;
		default:
			break;
		}
		if (parse_u64(optarg, &v) < 0) {
			fprintf(stderr, "dmb-orderload: -%c: '%s' is not a number\n", c, optarg);
			return -EINVAL;
		}
		switch (c) {
		case 'n': o->n = v; break;
		case 'q': o->qd = v; break;
		case 's': o->seed = v; break;
		case 'f': o->fua_pm = v; break;
		case 'y': o->fsync_pm = v; break;
		case 'b': o->first_block = v; break;
		case 'B': o->nblocks = v; break;
		case 'w': o->workers = v; break;
		case 'e': o->max_errors = v; break;
		}
		if ((c == 'q' && (v < 1 || v > 1024)) || ((c == 'f' || c == 'y') && v > 1000) ||
		    (c == 'w' && v > 1024)) {
			fprintf(stderr, "dmb-orderload: -%c %s is out of range\n", c, optarg);
			return -EINVAL;
		}
	}
	if (o->fua_pm + o->fsync_pm > 1000) {
		fprintf(stderr, "dmb-orderload: --fua and --fsync add up to more than 1000\n");
		return -EINVAL;
	}
	if (optind != argc - 1) {
		usage(stderr);
		return -EINVAL;
	}
	o->dev = argv[optind];
	return 0;
}

/*
 * The first @k entries of a random permutation of [0, n): distinct blocks,
 * so no two bios of a run overlap and the checker can match them by sector.
 */
static int pick_blocks(uint64_t *seed, uint64_t n, uint64_t k, uint64_t **out)
{
	uint64_t *perm, i;

	if (k > n)
		return -ENOSPC;
	perm = malloc((n ? n : 1) * sizeof(*perm));
	if (!perm)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		perm[i] = i;
	for (i = 0; i < k; i++) {
		uint64_t j = i + rnd_below(seed, n - i), t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	*out = perm;
	return 0;
}

static void fill_block(void *buf, uint64_t seq, uint64_t block, uint64_t seed, enum kind k)
{
	struct block_hdr h = { .seq = seq, .block = block, .seed = seed, .kind = k };
	uint64_t *w = buf;
	size_t i;

	memcpy(h.magic, MAGIC, sizeof(h.magic));
	for (i = sizeof(h) / 8; i < BLOCK / 8; i++)
		w[i] = (seq << 20) ^ (block << 1) ^ i;
	memcpy(buf, &h, sizeof(h));
}

static bool check_block(const void *buf, uint64_t seq, uint64_t block, uint64_t seed, enum kind k)
{
	_Alignas(8) unsigned char want[BLOCK];

	fill_block(want, seq, block, seed, k);
	return !memcmp(want, buf, BLOCK);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

struct run {
	struct opts o;
	struct io_uring ring;
	int fd;
	FILE *map;
	struct slot *slots;
	unsigned int *free_slots;
	unsigned int nfree;
	uint64_t *blocks;	/* permutation; blocks[i] for the i-th write */
	uint64_t next_write;
	uint64_t count[K_NR], errors[K_NR];
	int first_error[K_NR];
};

static enum kind pick_kind(struct run *r, uint64_t *seed)
{
	uint64_t x = rnd_below(seed, 1000);

	if (x < r->o.fsync_pm)
		return K_FSYNC;
	if (x < r->o.fsync_pm + r->o.fua_pm)
		return K_FUA;
	return K_WRITE;
}

static int submit_one(struct run *r, uint64_t seq, enum kind k)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&r->ring);
	unsigned int si;
	struct slot *s;

	if (!sqe)
		return -EBUSY;
	si = r->free_slots[--r->nfree];
	s = &r->slots[si];
	s->seq = seq;
	s->kind = k;
	if (k == K_FSYNC) {
		io_uring_prep_fsync(sqe, r->fd, 0);
		if (r->map)
			fprintf(r->map, "%" PRIu64 " fsync -\n", seq);
	} else {
		uint64_t wi = r->next_write++;

		s->block = r->o.first_block + r->blocks[wi];
		fill_block(s->buf, seq, s->block, r->o.seed, k);
		io_uring_prep_write(sqe, r->fd, s->buf, BLOCK, s->block * BLOCK);
		if (k == K_FUA)
			sqe->rw_flags = RWF_DSYNC;
		if (r->map)
			fprintf(r->map, "%" PRIu64 " %s %" PRIu64 "\n", seq, kind_names[k],
				s->block * (BLOCK / 512));
	}
	io_uring_sqe_set_data64(sqe, si);
	r->count[k]++;
	return 0;
}

static void reap_one(struct run *r, struct io_uring_cqe *cqe)
{
	unsigned int si = (unsigned int)io_uring_cqe_get_data64(cqe);
	struct slot *s = &r->slots[si];
	int want = s->kind == K_FSYNC ? 0 : (int)BLOCK;

	if (cqe->res != want) {
		if (!r->errors[s->kind])
			r->first_error[s->kind] = cqe->res;
		r->errors[s->kind]++;
		if (r->errors[K_WRITE] + r->errors[K_FUA] + r->errors[K_FSYNC] <= 10)
			fprintf(stderr, "dmb-orderload: bio %" PRIu64 " (%s) failed: %s\n", s->seq,
				kind_names[s->kind], cqe->res < 0 ? strerror(-cqe->res) : "short write");
	}
	r->free_slots[r->nfree++] = si;
}

static int run_load(struct run *r)
{
	uint64_t seed = r->o.seed ^ 0x5eedULL, submitted = 0, done = 0, inflight = 0;
	struct io_uring_cqe *cqe;
	int ret;

	while (done < r->o.n) {
		/* Refill to the queue depth, then sleep only until one completes. */
		while (inflight < r->o.qd && submitted < r->o.n) {
			enum kind k = pick_kind(r, &seed);

			ret = submit_one(r, submitted, k);
			if (ret < 0)
				break;
			submitted++;
			inflight++;
		}
		ret = io_uring_submit_and_wait(&r->ring, 1);
		if (ret < 0 && ret != -EINTR) {
			fprintf(stderr, "dmb-orderload: io_uring_submit_and_wait: %s\n", strerror(-ret));
			return ret;
		}
		while (io_uring_peek_cqe(&r->ring, &cqe) == 0) {
			reap_one(r, cqe);
			io_uring_cqe_seen(&r->ring, cqe);
			inflight--;
			done++;
		}
	}
	return 0;
}

/* Every block named in a --map file must hold the bio written there. */
static int verify_map(int fd, const char *map, uint64_t seed)
{
	_cleanup_fclose_ FILE *f = fopen(map, "re");
	_cleanup_free_ void *buf = NULL;
	_cleanup_free_ char *line = NULL;
	uint64_t checked = 0, bad = 0;
	size_t len = 0;

	if (!f) {
		fprintf(stderr, "dmb-orderload: cannot read %s: %m\n", map);
		return -errno;
	}
	if (posix_memalign(&buf, BLOCK, BLOCK))
		return -ENOMEM;
	while (getline(&line, &len, f) >= 0) {
		unsigned long long seq, sector;
		char kname[8];
		enum kind k;
		ssize_t n;

		if (sscanf(line, "%llu %7s %llu", &seq, kname, &sector) != 3)
			continue; /* an fsync */
		k = strcmp(kname, "fua") == 0 ? K_FUA : K_WRITE;
		n = pread(fd, buf, BLOCK, sector * 512);
		if (n != (ssize_t)BLOCK) {
			fprintf(stderr, "dmb-orderload: verify: read of sector %llu failed: %s\n", sector,
				n < 0 ? strerror(errno) : "short read");
			return -EIO;
		}
		checked++;
		if (check_block(buf, seq, sector / (BLOCK / 512), seed, k))
			continue;
		if (bad++ < 10)
			fprintf(stderr, "dmb-orderload: verify: sector %llu does not hold bio %llu\n",
				sector, seq);
	}
	printf("verify: %" PRIu64 " blocks read back, %" PRIu64 " wrong\n", checked, bad);
	return bad ? -EIO : 0;
}

int main(int argc, char **argv)
{
	struct run r = { .fd = -1 };
	uint64_t size = 0, nwrites_max, t0, t1, errs;
	struct io_uring_params p = {};
	struct stat st;
	unsigned int i;
	int ret;

	if (parse_args(argc, argv, &r.o) < 0)
		return 2;

	r.fd = open(r.o.dev, (r.o.verify_map ? O_RDONLY : O_RDWR) | O_DIRECT | O_CLOEXEC);
	if (r.fd < 0) {
		fprintf(stderr, "dmb-orderload: cannot open %s: %m\n", r.o.dev);
		return 1;
	}
	if (fstat(r.fd, &st) < 0 || !S_ISBLK(st.st_mode) || ioctl(r.fd, BLKGETSIZE64, &size) < 0) {
		fprintf(stderr, "dmb-orderload: %s is not a block device\n", r.o.dev);
		return 1;
	}
	if (r.o.verify_map)
		return verify_map(r.fd, r.o.verify_map, r.o.seed) < 0 ? 1 : 0;
	if (r.o.first_block >= size / BLOCK) {
		fprintf(stderr, "dmb-orderload: --first-block is past the end of %s\n", r.o.dev);
		return 1;
	}
	if (!r.o.nblocks)
		r.o.nblocks = size / BLOCK - r.o.first_block;
	if (r.o.first_block + r.o.nblocks > size / BLOCK) {
		fprintf(stderr, "dmb-orderload: --blocks reaches past the end of %s\n", r.o.dev);
		return 1;
	}
	/* Every bio might be a write: there must be a block for each. */
	nwrites_max = r.o.n;
	{
		uint64_t seed = r.o.seed;

		ret = pick_blocks(&seed, r.o.nblocks, nwrites_max, &r.blocks);
	}
	if (ret == -ENOSPC) {
		fprintf(stderr, "dmb-orderload: %" PRIu64 " bios need as many distinct blocks; the range has %" PRIu64 "\n",
			r.o.n, r.o.nblocks);
		return 1;
	}
	r.slots = calloc(r.o.qd, sizeof(*r.slots));
	r.free_slots = calloc(r.o.qd, sizeof(*r.free_slots));
	if (ret < 0 || !r.slots || !r.free_slots) {
		fprintf(stderr, "dmb-orderload: out of memory\n");
		return 1;
	}
	for (i = 0; i < r.o.qd; i++) {
		if (posix_memalign(&r.slots[i].buf, BLOCK, BLOCK)) {
			fprintf(stderr, "dmb-orderload: out of memory\n");
			return 1;
		}
		r.free_slots[r.nfree++] = i;
	}
	if (r.o.map) {
		r.map = fopen(r.o.map, "we");
		if (!r.map) {
			fprintf(stderr, "dmb-orderload: cannot write %s: %m\n", r.o.map);
			return 1;
		}
	}

	ret = io_uring_queue_init_params(r.o.qd, &r.ring, &p);
	if (ret < 0) {
		fprintf(stderr, "dmb-orderload: io_uring_queue_init: %s\n", strerror(-ret));
		return 1;
	}
	if (r.o.workers) {
		/* [0] bounded (block I/O), [1] unbounded; 0 leaves a limit alone. */
		unsigned int w[2] = { r.o.workers, 0 };

		ret = io_uring_register_iowq_max_workers(&r.ring, w);
		if (ret < 0) {
			fprintf(stderr, "dmb-orderload: io_uring_register_iowq_max_workers: %s\n",
				strerror(-ret));
			return 1;
		}
	}

	t0 = now_ns();
	ret = run_load(&r);
	t1 = now_ns();
	io_uring_queue_exit(&r.ring);
	if (r.map && fclose(r.map) != 0) {
		fprintf(stderr, "dmb-orderload: writing %s failed: %m\n", r.o.map);
		ret = -EIO;
	}
	r.map = NULL;
	if (ret < 0)
		return 1;

	errs = r.errors[K_WRITE] + r.errors[K_FUA] + r.errors[K_FSYNC];
	printf("bios %" PRIu64 " (write %" PRIu64 " fua %" PRIu64 " fsync %" PRIu64 ") qd %u seed %" PRIu64
	       " in %.3f s; errors %" PRIu64 " (write %" PRIu64 " fua %" PRIu64 " fsync %" PRIu64 ")\n",
	       r.o.n, r.count[K_WRITE], r.count[K_FUA], r.count[K_FSYNC], r.o.qd, r.o.seed,
	       (double)(t1 - t0) / 1e9, errs, r.errors[K_WRITE], r.errors[K_FUA], r.errors[K_FSYNC]);
	if (errs > r.o.max_errors) {
		fprintf(stderr, "dmb-orderload: %" PRIu64 " bios failed (tolerated: %" PRIu64 ")\n", errs,
			r.o.max_errors);
		return 1;
	}
	close(r.fd);
	for (i = 0; i < r.o.qd; i++)
		free(r.slots[i].buf);
	free(r.slots);
	free(r.free_slots);
	free(r.blocks);
	return 0;
}
