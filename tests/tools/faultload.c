// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dmb-faultload: the fault campaign's workload.  T threads issue a seeded
 * random mix of O_DIRECT 4 KiB writes (kind W), O_DIRECT writes with
 * RWF_DSYNC (kind S: a REQ_FUA write, then an empty flush) and
 * fdatasync() calls (kind F: an empty REQ_PREFLUSH) on a block device (the
 * barrier mapping) or a file, and with --commit, journal commits (kind C:
 * a 4 KiB write with REQ_PREFLUSH|REQ_FUA, which no system call makes,
 * submitted through the test module dmb_bio, tests/vm/biomod, opened on
 * the device by the caller; its block holds its id's low byte).  Op ids are handed out in order; op k's kind
 * is a function of the seed and k alone, and a write of op k goes to sector
 * base + 8k, never written before in the run, so the fault target's bio
 * log names each write by its sector.  One line per op, written (one
 * write(2), O_APPEND) when it completes:
 *
 *   <id> <thread> <kind> <sector> <sectors> <submit_ns> <complete_ns> <result>
 *
 * times CLOCK_MONOTONIC just before the syscall and just after it returns,
 * result 0 or -errno (sector and sectors 0 for F).  A C line has a ninth
 * field, <accepted_ns>: when dmb_bio's submit returned, so the bio had
 * entered the mapping by then (its completion is seen by polling dmb_bio's
 * results, up to 0.2 ms late).  Comments: a
 * "# dmb-faultload" header, "# slow <id> <thread> <kind> <sector>
 * <submit_ns>" the moment an op has run longer than --timeout-ms (so a hung
 * op is named even if the tool is killed), "# end <n> ops" at the end.
 * Failed ops do not stop the run; exit status 1 only when the tool itself
 * failed, 64 for bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <limits.h>

#include "macro.h"

#define BLOCK 4096u
#define BLOCK_SECTORS (BLOCK / 512)
#define MAX_THREADS 256
#define MAGIC "DMBFAULT"

enum kind { K_W, K_S, K_F, K_C, K_NR };
static const char kind_chars[K_NR] = { 'W', 'S', 'F', 'C' };
#define DMB_BIO_MAX 8192	/* bios dmb_bio keeps results of per open */

struct opts {
	const char *dev;
	const char *log;
	uint64_t seed;
	unsigned int threads;
	uint64_t ops;		/* 0: no limit */
	double seconds;		/* 0: no limit */
	unsigned int mix[K_NR];
	uint64_t base;		/* sector */
	uint64_t timeout_ms;
	bool create;
	const char *verify;	/* --verify: the promised writes to read back */
	const char *commit;	/* --commit: dmb_bio's debugfs directory */
};

/* What a thread is doing, for the watchdog: op id + 1 (0: none) and since when. */
struct slot {
	_Atomic uint64_t op;	/* id + 1 */
	_Atomic uint64_t sub;
	_Atomic int kind;
	uint64_t reported;	/* id + 1 of the last op reported slow (watchdog only) */
};

struct run {
	struct opts o;
	int fd;
	int logfd;
	uint64_t limit_sectors;	/* block device: its size; file: none */
	uint64_t deadline;	/* ns, 0: none */
	_Atomic uint64_t next_id;
	_Atomic uint64_t done;
	_Atomic uint64_t count[K_NR], failed[K_NR], slow;
	_Atomic bool stop;
	int ctlfd;		/* dmb_bio's ctl, -1 without --commit */
	bool full;		/* --ops cut to what fits on the device */
	_Atomic int fatal;	/* the tool's own error (the log), 0 if none */
	struct slot slots[MAX_THREADS];
};

struct worker {
	struct run *r;
	unsigned int idx;
	pthread_t tid;
};

/* splitmix64, as dmb-orderload. */
static uint64_t mix64(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ULL;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Op @id's kind: the seed and the id alone, whatever thread runs it. */
static enum kind kind_of(const struct opts *o, uint64_t id)
{
	unsigned int total = o->mix[K_W] + o->mix[K_S] + o->mix[K_F] + o->mix[K_C];
	uint64_t x = mix64(o->seed ^ mix64(id)) % total;

	if (x < o->mix[K_W])
		return K_W;
	if (x < o->mix[K_W] + o->mix[K_S])
		return K_S;
	if (x < o->mix[K_W] + o->mix[K_S] + o->mix[K_F])
		return K_F;
	return K_C;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: dmb-faultload [options] DEVICE|FILE\n"
		"Issues a seeded random mix of O_DIRECT 4 KiB writes (W), RWF_DSYNC writes\n"
		"(S) and fdatasync() calls (F) from T threads, each write to a block of its\n"
		"own (sector = base + 8 * op id), and logs every op when it completes.\n"
		"  -s, --seed N            random seed (default 1)\n"
		"  -t, --threads N         threads, 1..%u (default 4)\n"
		"  -n, --ops N             ops to run\n"
		"  -d, --seconds S         run this long (decimals allowed); with --ops,\n"
		"                          whichever ends first (one of them is needed)\n"
		"  -m, --mix W:S:F[:C]     weights of the kinds (default 8:1:1:0)\n"
		"  -C, --commit DIR        dmb_bio's debugfs directory, opened on DEVICE:\n"
		"                          kind C, REQ_PREFLUSH|REQ_FUA writes (needs a C weight)\n"
		"  -b, --base-sector N     first sector, a multiple of 8 (default 0)\n"
		"  -l, --log FILE          the op log (default: standard output)\n"
		"  -T, --timeout-ms N      an op slower than this gets a \"# slow\" line at\n"
		"                          once and a warning (default 30000)\n"
		"  -c, --create            create FILE if it does not exist\n"
		"  -V, --verify FILE       run nothing: read back the blocks FILE lists\n"
		"                          (dmb-oracle --promised: \"<sector> <sectors> <id>\n"
		"                          <kind>\" lines) and check each holds what op <id>\n"
		"                          of this seed wrote; exit 1 when one does not\n"
		"  -h, --help              this text\n"
		"Log line: <id> <thread> <kind> <sector> <sectors> <submit_ns> <complete_ns> <result>\n"
		"(kind C: and <accepted_ns>, when its bio had been submitted)\n",
		MAX_THREADS);
}


static int parse_mix(const char *s, unsigned int mix[K_NR])
{
	unsigned int a, b, c, d = 0;
	int n = -1;

	if (sscanf(s, "%u:%u:%u%n", &a, &b, &c, &n) != 3 || n < 0)
		return -EINVAL;
	if (s[n] == ':') {
		s += n + 1;
		n = -1;
		if (sscanf(s, "%u%n", &d, &n) != 1 || n < 0)
			return -EINVAL;
	}
	if (s[n] || strchr(s, '-') || a > 1000000 || b > 1000000 || c > 1000000 || d > 1000000 ||
	    a + b + c + d == 0)
		return -EINVAL;
	mix[K_W] = a;
	mix[K_S] = b;
	mix[K_F] = c;
	mix[K_C] = d;
	return 0;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "seed", required_argument, NULL, 's' },
		{ "threads", required_argument, NULL, 't' },
		{ "ops", required_argument, NULL, 'n' },
		{ "seconds", required_argument, NULL, 'd' },
		{ "mix", required_argument, NULL, 'm' },
		{ "base-sector", required_argument, NULL, 'b' },
		{ "log", required_argument, NULL, 'l' },
		{ "timeout-ms", required_argument, NULL, 'T' },
		{ "create", no_argument, NULL, 'c' },
		{ "verify", required_argument, NULL, 'V' },
		{ "commit", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	uint64_t v;
	char *end;
	int c;

	*o = (struct opts){ .seed = 1, .threads = 4, .mix = { 8, 1, 1 }, .timeout_ms = 30000 };
	while ((c = getopt_long(argc, argv, "s:t:n:d:m:b:l:T:cV:C:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'C':
			o->commit = optarg;
			continue;
		case 'V':
			o->verify = optarg;
			continue;
		case 'h':
			usage(stdout);
			exit(0);
		case 'l':
			o->log = optarg;
			continue;
		case 'c':
			o->create = true;
			continue;
		case 'm':
			if (parse_mix(optarg, o->mix) < 0) {
				fprintf(stderr, "dmb-faultload: --mix '%s' is not W:S:F[:C] (weights, not all 0)\n",
					optarg);
				return -EINVAL;
			}
			continue;
		case 'd':
			errno = 0;
			o->seconds = strtod(optarg, &end);
			if (errno || *end || !(o->seconds > 0) || o->seconds > 1e6) {
				fprintf(stderr, "dmb-faultload: --seconds '%s' is not a positive number\n",
					optarg);
				return -EINVAL;
			}
			continue;
		case '?':
			return -EINVAL;
		default:
			break;
		}
		if (parse_u64(optarg, &v) < 0) {
			fprintf(stderr, "dmb-faultload: -%c: '%s' is not a number\n", c, optarg);
			return -EINVAL;
		}
		switch (c) {
		case 's': o->seed = v; break;
		case 't': o->threads = (unsigned int)v; break;
		case 'n': o->ops = v; break;
		case 'b': o->base = v; break;
		case 'T': o->timeout_ms = v; break;
		}
		if ((c == 't' && (v < 1 || v > MAX_THREADS)) || (c == 'n' && v < 1) ||
		    (c == 'b' && v % BLOCK_SECTORS) || (c == 'T' && (v < 1 || v > 86400000))) {
			fprintf(stderr, "dmb-faultload: -%c %s is out of range\n", c, optarg);
			return -EINVAL;
		}
	}
	if (!o->ops && !o->seconds && !o->verify) {
		fprintf(stderr, "dmb-faultload: give --ops or --seconds (or both)\n");
		return -EINVAL;
	}
	if (!o->verify && !o->commit != !o->mix[K_C]) {
		fprintf(stderr, "dmb-faultload: kind C needs both --commit and a C weight in --mix\n");
		return -EINVAL;
	}
	if (optind != argc - 1) {
		usage(stderr);
		return -EINVAL;
	}
	o->dev = argv[optind];
	return 0;
}

/* One whole line with one write(2): O_APPEND keeps lines apart. */
_printf_(2, 3)
static void log_line(struct run *r, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(buf)) {
		atomic_store(&r->fatal, EOVERFLOW);
		return;
	}
	for (;;) {
		ssize_t w = write(r->logfd, buf, (size_t)n);

		if (w == n)
			return;
		if (w < 0 && errno == EINTR)
			continue;
		/* The log is the tool's output: a failure here is the tool's. */
		atomic_store(&r->fatal, w < 0 ? errno : EIO);
		atomic_store(&r->stop, true);
		return;
	}
}

static void fill_block(void *buf, uint64_t id, uint64_t sector, uint64_t seed, enum kind k)
{
	uint64_t *w = buf;

	for (size_t i = 0; i < BLOCK / 8; i++)
		w[i] = (id << 20) ^ (sector << 1) ^ i ^ seed;
	memcpy(buf, MAGIC, 8);
	w[1] = id;
	w[2] = sector;
	w[3] = seed;
	w[4] = k;
}

/*
 * Kind C: op @id's REQ_PREFLUSH|REQ_FUA write through dmb_bio, then its
 * result from dmb_bio's results, polled every 0.2 ms.  *acc: when the
 * submit returned (the bio had entered the mapping).  The op's result, or
 * INT_MIN when the tool itself failed (r->fatal says why).
 */
static int commit_op(struct run *r, uint64_t id, uint64_t sector, uint64_t *acc)
{
	static _Atomic unsigned int submitted;
	char cmd[96], path[PATH_MAX], line[64];
	unsigned long long got;
	int n, status;

	if (atomic_fetch_add(&submitted, 1) >= DMB_BIO_MAX - 1) {
		atomic_store(&r->fatal, ENOSPC);	/* dmb_bio keeps 8192 results */
		return INT_MIN;
	}
	n = snprintf(cmd, sizeof(cmd), "submit %" PRIu64 " W PREFLUSH,FUA %" PRIu64 " %u\n", id,
		     sector, BLOCK_SECTORS);
	if (write(r->ctlfd, cmd, (size_t)n) != n) {
		atomic_store(&r->fatal, errno ? errno : EIO);
		return INT_MIN;
	}
	*acc = now_ns();
	snprintf(path, sizeof(path), "%s/results", r->o.commit);
	for (;;) {
		_cleanup_fclose_ FILE *f = fopen(path, "re");
		char st[16];

		if (!f) {
			atomic_store(&r->fatal, errno);
			return INT_MIN;
		}
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, "%llu %15s", &got, st) != 2 || got != id)
				continue;
			if (strcmp(st, "pending") && sscanf(st, "%d", &status) == 1)
				return status;
			break;
		}
		nanosleep(&(struct timespec){ .tv_nsec = 200000 }, NULL);
	}
}

static void *worker_main(void *arg)
{
	struct worker *wk = arg;
	struct run *r = wk->r;
	struct slot *slot = &r->slots[wk->idx];
	void *buf = NULL;

	if (posix_memalign(&buf, BLOCK, BLOCK)) {
		atomic_store(&r->fatal, ENOMEM);
		atomic_store(&r->stop, true);
		return NULL;
	}
	while (!atomic_load(&r->stop)) {
		uint64_t id, sector = 0, sectors = 0, sub, comp, acc = 0;
		struct iovec iov = { .iov_base = buf, .iov_len = BLOCK };
		enum kind k;
		int result = 0;

		if (r->deadline && now_ns() >= r->deadline)
			break;
		id = atomic_fetch_add(&r->next_id, 1);
		if (r->o.ops && id >= r->o.ops)
			break;
		k = kind_of(&r->o, id);
		if (k != K_F) {
			sector = r->o.base + id * BLOCK_SECTORS;
			sectors = BLOCK_SECTORS;
			if (k != K_C)
				fill_block(buf, id, sector, r->o.seed, k);
		}

		atomic_store(&slot->kind, (int)k);
		atomic_store(&slot->sub, now_ns());
		atomic_store(&slot->op, id + 1);
		sub = now_ns();
		if (k == K_F) {
			if (fdatasync(r->fd) < 0)
				result = -errno;
		} else if (k == K_C) {
			result = commit_op(r, id, sector, &acc);
			if (result == INT_MIN) {
				atomic_store(&r->stop, true);
				break;
			}
		} else {
			ssize_t n = pwritev2(r->fd, &iov, 1, (off_t)(sector * 512),
					     k == K_S ? RWF_DSYNC : 0);

			if (n < 0)
				result = -errno;
			else if (n != (ssize_t)BLOCK)
				result = -EIO;	/* short write: not expected on 4 KiB */
		}
		comp = now_ns();
		atomic_store(&slot->op, 0);

		if (k == K_C)
			log_line(r, "%" PRIu64 " %u C %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
				 " %d %" PRIu64 "\n", id, wk->idx, sector, sectors, sub, comp, result, acc);
		else
			log_line(r, "%" PRIu64 " %u %c %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
				 " %d\n", id, wk->idx, kind_chars[k], sector, sectors, sub, comp, result);
		atomic_fetch_add(&r->count[k], 1);
		if (result)
			atomic_fetch_add(&r->failed[k], 1);
		if (comp - sub > r->o.timeout_ms * 1000000ULL)
			fprintf(stderr, "dmb-faultload: op %" PRIu64 " (%c) took %.3f ms (timeout %" PRIu64 " ms)\n",
				id, kind_chars[k], (double)(comp - sub) / 1e6, r->o.timeout_ms);
		atomic_fetch_add(&r->done, 1);
	}
	free(buf);
	return NULL;
}

/* Names an op that has run past --timeout-ms, once, while it still runs. */
static void watchdog(struct run *r)
{
	uint64_t limit = r->o.timeout_ms * 1000000ULL, t = now_ns();

	for (unsigned int i = 0; i < r->o.threads; i++) {
		struct slot *s = &r->slots[i];
		uint64_t op = atomic_load(&s->op), sub = atomic_load(&s->sub);
		enum kind k = (enum kind)atomic_load(&s->kind);

		if (!op || op == s->reported || t < sub || t - sub <= limit)
			continue;
		if (atomic_load(&s->op) != op)
			continue;	/* it just completed */
		s->reported = op;
		atomic_fetch_add(&r->slow, 1);
		log_line(r, "# slow %" PRIu64 " %u %c %" PRIu64 " %" PRIu64 "\n", op - 1, i,
			 kind_chars[k], k == K_F ? 0 : r->o.base + (op - 1) * BLOCK_SECTORS, sub);
		fprintf(stderr, "dmb-faultload: op %" PRIu64 " (%c, thread %u) still running after %" PRIu64 " ms\n",
			op - 1, kind_chars[k], i, limit / 1000000);
	}
}

static int open_target(struct run *r)
{
	struct stat st;
	int flags = O_RDWR | O_DIRECT | O_CLOEXEC | (r->o.create ? O_CREAT : 0);

	r->fd = open(r->o.dev, flags, 0644);
	if (r->fd < 0 && errno == EINVAL) {
		/* Some file systems (tmpfs) refuse O_DIRECT. */
		int fd = open(r->o.dev, (flags & ~O_DIRECT), 0644);

		if (fd >= 0) {
			close(fd);
			fprintf(stderr, "dmb-faultload: %s: O_DIRECT is not supported there "
				"(file system without direct I/O?); use a block device or a file on ext4/xfs\n",
				r->o.dev);
			return -EINVAL;
		}
		errno = EINVAL;
	}
	if (r->fd < 0) {
		fprintf(stderr, "dmb-faultload: cannot open %s: %m\n", r->o.dev);
		return -errno;
	}
	if (fstat(r->fd, &st) < 0) {
		fprintf(stderr, "dmb-faultload: fstat %s: %m\n", r->o.dev);
		return -errno;
	}
	if (S_ISBLK(st.st_mode)) {
		uint64_t size, max_ops;

		if (ioctl(r->fd, BLKGETSIZE64, &size) < 0) {
			fprintf(stderr, "dmb-faultload: BLKGETSIZE64 %s: %m\n", r->o.dev);
			return -errno;
		}
		r->limit_sectors = size / 512;
		if (r->o.base + BLOCK_SECTORS > r->limit_sectors) {
			fprintf(stderr, "dmb-faultload: --base-sector is past the end of %s\n", r->o.dev);
			return -EINVAL;
		}
		/* Op k writes at base + 8k: no more ops than blocks left. */
		max_ops = (r->limit_sectors - r->o.base) / BLOCK_SECTORS;
		if (!r->o.ops || r->o.ops > max_ops) {
			r->o.ops = max_ops;
			r->full = true;
		}
	} else if (!S_ISREG(st.st_mode)) {
		fprintf(stderr, "dmb-faultload: %s is neither a block device nor a file\n", r->o.dev);
		return -EINVAL;
	}
	return 0;
}

/*
 * --verify: each listed block holds what its op wrote (fill_block()).  A
 * power cut or a lossy flush failure writes zeroes over what the cache
 * lost, so a promised write that was not on the medium reads as zeroes.
 */
static int verify(struct run *r)
{
	_cleanup_fclose_ FILE *f = fopen(r->o.verify, "re");
	unsigned long long sector, id, n = 0, bad = 0;
	unsigned int sectors;
	void *want = NULL, *got = NULL;
	char kind, line[128];
	int ret = 0;

	if (!f) {
		fprintf(stderr, "dmb-faultload: cannot read %s: %m\n", r->o.verify);
		return 2;
	}
	if (posix_memalign(&want, BLOCK, BLOCK) || posix_memalign(&got, BLOCK, BLOCK)) {
		free(want);
		return 2;
	}
	while (fgets(line, sizeof(line), f)) {
		const char *k;
		ssize_t rd;

		if (sscanf(line, "%llu %u %llu %c", &sector, &sectors, &id, &kind) != 4 ||
		    sectors != BLOCK_SECTORS || !(k = memchr(kind_chars, kind, K_NR)) || kind == 'F') {
			fprintf(stderr, "dmb-faultload: %s: malformed line: %s", r->o.verify, line);
			ret = 2;
			break;
		}
		n++;
		if (kind == 'C')
			memset(want, (int)(id & 0xff), BLOCK);	/* dmb_bio's fill */
		else
			fill_block(want, id, sector, r->o.seed, (enum kind)(k - kind_chars));
		rd = pread(r->fd, got, BLOCK, (off_t)(sector * 512));
		if (rd != BLOCK) {
			fprintf(stderr, "dmb-faultload: reading sector %llu: %s\n", sector,
				rd < 0 ? strerror(errno) : "short read");
			ret = 2;
			break;
		}
		if (memcmp(want, got, BLOCK)) {
			const uint64_t *g = got;
			bool zero = true;

			for (size_t i = 0; i < BLOCK / 8; i++)
				zero &= !g[i];
			if (bad++ < 10)
				printf("verify: sector %llu, promised by op %llu (%c): %s\n", sector, id,
				       kind, zero ? "zeroes (lost)" :
				       !memcmp(got, MAGIC, 8) ? "another op's block" : "other data");
		}
	}
	free(want);
	free(got);
	printf("verify: %llu promised blocks read back, %llu wrong\n", n, bad);
	return ret ? ret : bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	static struct run r;
	struct worker workers[MAX_THREADS];
	uint64_t t0, t1, total, failed;
	unsigned int i, started = 0;
	int ret;

	if (parse_args(argc, argv, &r.o) < 0)
		return 64;
	r.fd = -1;
	r.ctlfd = -1;
	if (open_target(&r) < 0)
		return 1;
	if (r.o.verify)
		return verify(&r);
	if (r.o.commit) {
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/ctl", r.o.commit);
		r.ctlfd = open(path, O_WRONLY | O_CLOEXEC);
		if (r.ctlfd < 0) {
			fprintf(stderr, "dmb-faultload: cannot open %s (dmb_bio loaded and opened?): %m\n",
				path);
			return 1;
		}
	}
	if (r.o.log) {
		r.logfd = open(r.o.log, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
		if (r.logfd < 0) {
			fprintf(stderr, "dmb-faultload: cannot write %s: %m\n", r.o.log);
			return 1;
		}
	} else {
		r.logfd = STDOUT_FILENO;
	}
	log_line(&r, "# dmb-faultload seed %" PRIu64 " threads %u mix %u:%u:%u:%u base %" PRIu64
		 " ops %" PRIu64 " seconds %g timeout-ms %" PRIu64 " target %.150s\n",
		 r.o.seed, r.o.threads, r.o.mix[K_W], r.o.mix[K_S], r.o.mix[K_F], r.o.mix[K_C],
		 r.o.base, r.o.ops,
		 r.o.seconds, r.o.timeout_ms, r.o.dev);

	t0 = now_ns();
	if (r.o.seconds)
		r.deadline = t0 + (uint64_t)(r.o.seconds * 1e9);
	for (i = 0; i < r.o.threads; i++) {
		workers[i] = (struct worker){ .r = &r, .idx = i };
		ret = pthread_create(&workers[i].tid, NULL, worker_main, &workers[i]);
		if (ret) {
			fprintf(stderr, "dmb-faultload: pthread_create: %s\n", strerror(ret));
			atomic_store(&r.fatal, ret);
			atomic_store(&r.stop, true);
			break;
		}
		started++;
	}
	/* Wait for the workers, naming ops that run too long meanwhile. */
	{
		bool joined[MAX_THREADS] = { false };
		unsigned int left = started;

		while (left) {
			watchdog(&r);
			usleep(20000);
			for (i = 0; i < started; i++) {
				if (!joined[i] && pthread_tryjoin_np(workers[i].tid, NULL) == 0) {
					joined[i] = true;
					left--;
				}
			}
		}
	}
	t1 = now_ns();

	total = atomic_load(&r.done);
	failed = r.failed[K_W] + r.failed[K_S] + r.failed[K_F] + r.failed[K_C];
	log_line(&r, "# end %" PRIu64 " ops\n", total);
	if (r.o.log && close(r.logfd) < 0 && !atomic_load(&r.fatal))
		atomic_store(&r.fatal, errno);
	close(r.fd);
	if (r.ctlfd >= 0)
		close(r.ctlfd);
	fprintf(stderr,
		"dmb-faultload: %" PRIu64 " ops (W %" PRIu64 " S %" PRIu64 " F %" PRIu64 " C %" PRIu64
		") in %.3f s, %u threads, seed %" PRIu64 "; failed %" PRIu64 " (W %" PRIu64
		" S %" PRIu64 " F %" PRIu64 " C %" PRIu64 "), slow %" PRIu64 "%s\n",
		total, (uint64_t)r.count[K_W], (uint64_t)r.count[K_S], (uint64_t)r.count[K_F],
		(uint64_t)r.count[K_C], (double)(t1 - t0) / 1e9, r.o.threads, r.o.seed, failed,
		(uint64_t)r.failed[K_W], (uint64_t)r.failed[K_S], (uint64_t)r.failed[K_F],
		(uint64_t)r.failed[K_C], (uint64_t)r.slow,
		r.full && total == r.o.ops ? "; stopped at the end of the device" : "");
	if (atomic_load(&r.fatal)) {
		fprintf(stderr, "dmb-faultload: %s failed: %s\n",
			r.ctlfd >= 0 ? "writing the log or a commit through dmb_bio" : "writing the log",
			strerror(r.fatal));
		return 1;
	}
	return 0;
}
