// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dmb-stamp: run a command and append "<start_ns> <end_ns> <text>" to a
 * file, the times read from CLOCK_MONOTONIC (the clock of the dmb_fault
 * log and of dmb-faultload) right before the command starts and right
 * after it ends.  The fault campaign logs every action it takes on a
 * mapping this way, so its oracle knows when a mode message, a fault or a
 * suspend could have taken effect: anywhere in that interval.
 *
 *   dmb-stamp FILE TEXT -- COMMAND [ARG...]
 *
 * Exits with the command's status (127 if it could not be run).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	uint64_t start, end;
	int status, rc;
	pid_t pid;
	FILE *f;

	if (argc < 5 || strcmp(argv[3], "--")) {
		fprintf(stderr, "usage: dmb-stamp FILE TEXT -- COMMAND [ARG...]\n");
		return 2;
	}
	start = now_ns();
	pid = fork();
	if (pid < 0) {
		perror("dmb-stamp: fork");
		return 127;
	}
	if (pid == 0) {
		execvp(argv[4], argv + 4);
		fprintf(stderr, "dmb-stamp: %s: %s\n", argv[4], strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			perror("dmb-stamp: waitpid");
			return 127;
		}
	}
	end = now_ns();
	rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);

	f = fopen(argv[1], "ae");
	if (!f || fprintf(f, "%" PRIu64 " %" PRIu64 " %s\n", start, end, argv[2]) < 0 ||
	    fclose(f)) {
		fprintf(stderr, "dmb-stamp: %s: %s\n", argv[1], strerror(errno));
		return 127;
	}
	return rc;
}
