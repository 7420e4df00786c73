// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dmb-replay-log: replays a dm-log-writes log onto a device and runs a
 * check command at every flush point (replay.c), the crash-consistency
 * check of docs/verification.md.  Exit status: 0 every point checked
 * clean, 1 some check failed, 2 the log is unusable or fewer points than
 * --min-points were checked, 64 bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "macro.h"
#include "replay.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: dmb-replay-log --log LOG [--replay DEV --check CMD] [options]\n"
		"Replays the dm-log-writes log LOG onto DEV and runs CMD (sh -c) at every\n"
		"flush point: each FLUSH or FUA entry after which DEV changed.  CMD sees\n"
		"DMB_REPLAY_DEV, DMB_REPLAY_POINT, DMB_REPLAY_ENTRY and DMB_REPLAY_MARK.\n"
		"  -l, --log LOG           the log device (or a copy of it in a file)\n"
		"  -r, --replay DEV        the device to replay onto\n"
		"  -c, --check CMD         the check; exit 0 means the state is good\n"
		"  -s, --start-mark NAME   replay from the start, check from this mark on\n"
		"  -e, --end-mark NAME     stop at this mark\n"
		"  -n, --max-points N      stop after N checked points\n"
		"  -f, --max-failures N    stop after N failed points\n"
		"  -E, --every N           check every Nth flush point (default 1)\n"
		"  -p, --min-points N      fail (status 2) when fewer points were checked\n"
		"  -m, --mutate MODE       a broken replay, a negative control the check must\n"
		"                          fail: lose-flushed (the writes before every other\n"
		"                          flush are lost) or lose-previous (at each point,\n"
		"                          every other write of the window before the last\n"
		"                          flush is missing, the later ones there; its odd\n"
		"                          positions) or lose-previous-even (its even ones);\n"
		"                          default none\n"
		"  -L, --list              print the entries, replay nothing\n"
		"  -h, --help              this text\n"
		"Exit status: 0 clean, 1 a check failed, 2 log unusable or too few points, 64 usage.\n");
}

/* A decimal count: digits only, no sign, no overflow. */
static int parse_count(const char *s, uint64_t *v)
{
	int end = -1;

	if (strspn(s, "0123456789") != strlen(s) || strlen(s) > 19)
		return -EINVAL;
	return sscanf(s, "%" SCNu64 "%n", v, &end) == 1 && s[end] == '\0' ? 0 : -EINVAL;
}

static void flags_str(uint64_t f, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s%s%s", f & REPLAY_FLUSH ? "F" : "", f & REPLAY_FUA ? "U" : "",
		 f & REPLAY_DISCARD ? "D" : "", f & REPLAY_MARK ? "K" : "",
		 f & REPLAY_METADATA ? "M" : "");
}

static int list_log(struct replay_log *log)
{
	struct replay_entry e;
	char fl[8];
	int r;

	printf("# sectorsize %" PRIu32 ", %" PRIu64 " entries\n", log->sectorsize, log->nr_entries);
	while ((r = replay_log_next(log, &e)) > 0) {
		flags_str(e.flags, fl, sizeof(fl));
		if (e.flags & REPLAY_MARK)
			printf("%" PRIu64 " mark %s\n", e.index, e.mark);
		else
			printf("%" PRIu64 " %s %" PRIu64 "+%" PRIu64 "\n", e.index, fl[0] ? fl : "-",
			       e.sector, e.nr_sectors);
	}
	return r;
}

struct check_ctx {
	const char *cmd;
	const char *dev;
};

static int run_check(uint64_t point, const struct replay_entry *e, const char *last_mark,
		     void *userdata)
{
	const struct check_ctx *c = userdata;
	char buf[32];
	int status;

	(void)fflush(stdout);
	snprintf(buf, sizeof(buf), "%" PRIu64, point);
	if (setenv("DMB_REPLAY_POINT", buf, 1) < 0)
		return -errno;
	snprintf(buf, sizeof(buf), "%" PRIu64, e->index);
	if (setenv("DMB_REPLAY_ENTRY", buf, 1) < 0 || setenv("DMB_REPLAY_MARK", last_mark, 1) < 0 ||
	    setenv("DMB_REPLAY_DEV", c->dev, 1) < 0)
		return -errno;
	status = system(c->cmd);
	if (status < 0)
		return -errno;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		return -ENOEXEC;	/* the shell did not find the command */
	printf("point %" PRIu64 " (entry %" PRIu64 ", after mark '%s'): check failed, %s %d\n",
	       point, e->index, last_mark, WIFEXITED(status) ? "status" : "signal",
	       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	return 1;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "log", required_argument, NULL, 'l' },
		{ "replay", required_argument, NULL, 'r' },
		{ "check", required_argument, NULL, 'c' },
		{ "start-mark", required_argument, NULL, 's' },
		{ "end-mark", required_argument, NULL, 'e' },
		{ "max-points", required_argument, NULL, 'n' },
		{ "max-failures", required_argument, NULL, 'f' },
		{ "every", required_argument, NULL, 'E' },
		{ "min-points", required_argument, NULL, 'p' },
		{ "mutate", required_argument, NULL, 'm' },
		{ "list", no_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct replay_opts o = { .every = 1 };
	struct check_ctx c = {};
	const char *logpath = NULL;
	uint64_t min_points = 1;
	struct replay_stats st;
	struct replay_log log;
	_cleanup_close_ int logfd = -1, devfd = -1;
	bool list = false;
	int opt, r;

	while ((opt = getopt_long(argc, argv, "l:r:c:s:e:n:f:E:p:m:Lh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'l': logpath = optarg; break;
		case 'r': c.dev = optarg; break;
		case 'c': c.cmd = optarg; break;
		case 's': o.start_mark = optarg; break;
		case 'e': o.end_mark = optarg; break;
		case 'L': list = true; break;
		case 'h': usage(stdout); return 0;
		case 'n': case 'f': case 'E': case 'p': {
			uint64_t v;

			if (parse_count(optarg, &v) < 0 || (opt == 'E' && v == 0)) {
				fprintf(stderr, "dmb-replay-log: bad number '%s'\n", optarg);
				return 64;
			}
			*(opt == 'n' ? &o.max_points : opt == 'f' ? &o.max_failures :
			  opt == 'E' ? &o.every : &min_points) = v;
			break;
		}
		case 'm':
			if (replay_mutation_from_name(optarg, &o.mutation) < 0) {
				fprintf(stderr, "dmb-replay-log: unknown mutation '%s'\n", optarg);
				return 64;
			}
			break;
		default: usage(stderr); return 64;
		}
	}
	if (optind != argc || !logpath || (!list && (!c.dev || !c.cmd))) {
		usage(stderr);
		return 64;
	}

	logfd = open(logpath, O_RDONLY | O_CLOEXEC);
	if (logfd < 0) {
		fprintf(stderr, "dmb-replay-log: %s: %m\n", logpath);
		return 2;
	}
	r = replay_log_open(&log, logfd);
	if (r < 0) {
		fprintf(stderr, "dmb-replay-log: %s: not a dm-log-writes log: %s\n", logpath, strerror(-r));
		return 2;
	}
	if (list) {
		r = list_log(&log);
		if (r < 0)
			fprintf(stderr, "dmb-replay-log: %s: entry %" PRIu64 ": %s\n", logpath,
				log.index, strerror(-r));
		return r < 0 ? 2 : 0;
	}

	devfd = open(c.dev, O_RDWR | O_CLOEXEC);
	if (devfd < 0) {
		fprintf(stderr, "dmb-replay-log: %s: %m\n", c.dev);
		return 2;
	}
	r = replay_run(&log, devfd, &o, run_check, &c, &st);
	printf("replay: %" PRIu64 " of %" PRIu64 " entries: %" PRIu64 " writes (%" PRIu64
	       " MiB), %" PRIu64 " discards, %" PRIu64 " flushes, %" PRIu64 " fua, %" PRIu64
	       " marks; mutation %s, %" PRIu64 " writes dropped\n",
	       st.entries, log.nr_entries, st.writes, st.bytes >> 20, st.discards, st.flushes,
	       st.fua, st.marks, replay_mutation_name(o.mutation), st.dropped);
	printf("replay: %" PRIu64 " points checked, %" PRIu64 " failed", st.points, st.failed);
	if (st.failed)
		printf(", the first at entry %" PRIu64, st.first_failed_entry);
	printf("\n");
	if (r == -ENOENT) {
		fprintf(stderr, "dmb-replay-log: mark '%s' is not in the log\n", o.start_mark);
		return 2;
	}
	if (r < 0) {
		fprintf(stderr, "dmb-replay-log: replay failed at entry %" PRIu64 ": %s\n",
			log.index, strerror(-r));
		return 2;
	}
	if (st.failed)
		return 1;
	if (st.points < min_points) {
		fprintf(stderr, "dmb-replay-log: %" PRIu64 " points checked, want at least %" PRIu64 "\n",
			st.points, min_points);
		return 2;
	}
	return 0;
}
