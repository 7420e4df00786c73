// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dmb-syncload: the two-thread durability stress of review finding N1 (the
 * absorbed write).  Thread A writes a fresh 4 KiB block (O_DIRECT pwrite)
 * and then fdatasync()s, N times, each block its own; thread B calls
 * fdatasync() on the same device as fast as it can while A runs, so most
 * of the barriers the target sees are clean ones (nothing written since
 * the last flush), which it answers without a flush.  The contract says
 * each of A's fdatasync() calls returns only when A's write before it is
 * on stable media; the trace of the run, checked by
 * `dmb-ordercheck --durability`, says whether it was.  --map writes
 * "seq kind sector" for A's writes (kind "write"), as dmb-orderload does,
 * and every block is read back at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "macro.h"

#define BLOCK 4096u
#define MAGIC "DMBSYNC1"

struct shared {
	int fd;
	uint64_t n;
	uint64_t first;
	uint64_t seed;
	atomic_bool done;
	_Atomic uint64_t a_done;	/* A's writes made durable so far */
	uint64_t b_per_a;		/* B's fdatasync()s per A write, at most */
	uint64_t b_syncs;
	int a_err, b_err;
};

static void fill(unsigned char *buf, uint64_t seed, uint64_t i)
{
	uint64_t x = seed ^ (i * 0x9e3779b97f4a7c15ULL);
	unsigned int k;

	memcpy(buf, MAGIC, 8);
	memcpy(buf + 8, &i, 8);
	for (k = 16; k < BLOCK; k += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(buf + k, &x, 8);
	}
}

static void *thread_a(void *arg)
{
	struct shared *s = arg;
	unsigned char *buf;
	uint64_t i;

	if (posix_memalign((void **)&buf, BLOCK, BLOCK)) {
		s->a_err = ENOMEM;
		goto out;
	}
	for (i = 0; i < s->n; i++) {
		fill(buf, s->seed, i);
		if (pwrite(s->fd, buf, BLOCK, (off_t)((s->first + i) * BLOCK)) != (ssize_t)BLOCK ||
		    fdatasync(s->fd)) {
			s->a_err = errno ? errno : EIO;
			fprintf(stderr, "dmb-syncload: A: write %" PRIu64 ": %s\n", i, strerror(s->a_err));
			break;
		}
		atomic_store(&s->a_done, i + 1);
	}
	free(buf);
out:
	atomic_store(&s->done, true);
	return NULL;
}

static void *thread_b(void *arg)
{
	struct shared *s = arg;

	while (!atomic_load(&s->done)) {
		/* A bounded trace: no more than b_per_a per A write. */
		if (s->b_syncs >= s->b_per_a * (atomic_load(&s->a_done) + 1)) {
			sched_yield();
			continue;
		}
		if (fdatasync(s->fd)) {
			s->b_err = errno;
			fprintf(stderr, "dmb-syncload: B: fdatasync: %s\n", strerror(errno));
			break;
		}
		s->b_syncs++;
	}
	return NULL;
}

static int verify(const struct shared *s)
{
	unsigned char *want, *got;
	uint64_t i, bad = 0;

	if (posix_memalign((void **)&want, BLOCK, BLOCK) ||
	    posix_memalign((void **)&got, BLOCK, BLOCK))
		return -ENOMEM;
	for (i = 0; i < s->n; i++) {
		fill(want, s->seed, i);
		if (pread(s->fd, got, BLOCK, (off_t)((s->first + i) * BLOCK)) != (ssize_t)BLOCK ||
		    memcmp(want, got, BLOCK)) {
			if (bad++ < 5)
				fprintf(stderr, "dmb-syncload: block %" PRIu64 " does not hold write %" PRIu64 "\n",
					s->first + i, i);
		}
	}
	free(want);
	free(got);
	return bad ? -EIO : 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: dmb-syncload [options] DEVICE\n"
		"Thread A: N times, an O_DIRECT 4 KiB write to a fresh block, then fdatasync.\n"
		"Thread B: fdatasync in a loop while A runs.  Then every block is read back.\n"
		"  -n, --writes N        A's writes (default 1000)\n"
		"  -b, --first-block N   first 4 KiB block A writes (default 0)\n"
		"  -s, --seed N          data seed (default 1)\n"
		"  -p, --b-per-a N       B's fdatasyncs per A write, at most (default 16)\n"
		"  -m, --map FILE        \"seq write sector\" per write of A\n"
		"  -h, --help            this text\n"
		"Exit status: 0 all succeeded and read back, 1 an I/O failed or a block\n"
		"does not hold its write, 64 bad usage.\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "writes", required_argument, NULL, 'n' },
		{ "first-block", required_argument, NULL, 'b' },
		{ "seed", required_argument, NULL, 's' },
		{ "b-per-a", required_argument, NULL, 'p' },
		{ "map", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct shared s = { .fd = -1, .n = 1000, .seed = 1, .b_per_a = 16 };
	_cleanup_close_ int fd = -1;
	const char *map = NULL;
	pthread_t a, b;
	uint64_t i;
	int c, r;

	while ((c = getopt_long(argc, argv, "n:b:s:p:m:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (parse_u64(optarg, &s.n) || !s.n)
				goto bad;
			break;
		case 'b':
			if (parse_u64(optarg, &s.first))
				goto bad;
			break;
		case 's':
			if (parse_u64(optarg, &s.seed))
				goto bad;
			break;
		case 'p':
			if (parse_u64(optarg, &s.b_per_a) || !s.b_per_a)
				goto bad;
			break;
		case 'm':
			map = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 64;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return 64;
	}
	fd = open(argv[optind], O_RDWR | O_DIRECT);
	if (fd < 0) {
		fprintf(stderr, "dmb-syncload: %s: %s\n", argv[optind], strerror(errno));
		return 1;
	}
	s.fd = fd;
	if (map) {
		_cleanup_fclose_ FILE *m = fopen(map, "w");

		if (!m) {
			fprintf(stderr, "dmb-syncload: %s: %s\n", map, strerror(errno));
			return 1;
		}
		for (i = 0; i < s.n; i++)
			fprintf(m, "%" PRIu64 " write %" PRIu64 "\n", i, (s.first + i) * (BLOCK / 512));
		if (fflush(m)) {
			fprintf(stderr, "dmb-syncload: %s: %s\n", map, strerror(errno));
			return 1;
		}
	}
	r = pthread_create(&a, NULL, thread_a, &s);
	if (!r) {
		r = pthread_create(&b, NULL, thread_b, &s);
		if (r)
			atomic_store(&s.done, true);
		pthread_join(a, NULL);
		if (!r)
			pthread_join(b, NULL);
	}
	if (r) {
		fprintf(stderr, "dmb-syncload: pthread_create: %s\n", strerror(r));
		return 1;
	}
	printf("writes %" PRIu64 " a_syncs %" PRIu64 " b_syncs %" PRIu64 "\n", s.n, s.n, s.b_syncs);
	if (s.a_err || s.b_err)
		return 1;
	if (verify(&s)) {
		fprintf(stderr, "dmb-syncload: blocks read back do not hold what was written\n");
		return 1;
	}
	return 0;
bad:
	fprintf(stderr, "dmb-syncload: bad value '%s'\n", optarg);
	usage(stderr);
	return 64;
}
