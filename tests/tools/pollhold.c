// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dmb-pollhold: a polled read its submitter does not reap (review finding
 * N6).  Opens DEVICE with O_DIRECT, sets up an io_uring with
 * IORING_SETUP_IOPOLL, submits one 4 KiB read without waiting for it,
 * prints "submitted", and sleeps SECONDS (or until SIGTERM) before it
 * polls for the read and reaps it.  A polled bio completes only when its submitter polls,
 * so for that time the read stays in flight below whatever it went
 * through: any user can do this to a device with poll queues.
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "macro.h"

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	_cleanup_close_ int fd = -1;
	uint64_t secs;
	void *buf;
	int r, res;

	if (argc != 3 || parse_u64(argv[2], &secs)) {
		fprintf(stderr, "usage: dmb-pollhold DEVICE SECONDS\n");
		return 64;
	}
	fd = open(argv[1], O_RDONLY | O_DIRECT);
	if (fd < 0) {
		fprintf(stderr, "dmb-pollhold: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	if (posix_memalign(&buf, 4096, 4096))
		return 1;
	r = io_uring_queue_init(4, &ring, IORING_SETUP_IOPOLL);
	if (r < 0) {
		fprintf(stderr, "dmb-pollhold: io_uring_queue_init: %s\n", strerror(-r));
		return 1;
	}
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_read(sqe, fd, buf, 4096, 0);
	/*
	 * Not io_uring_submit(): on an IOPOLL ring liburing asks the kernel
	 * for events too (IORING_ENTER_GETEVENTS), and that polls once, which
	 * on a device that completes at the first poll (null_blk) reaps the
	 * read at once.  Publish the SQE and enter without asking.
	 */
	ring.sq.sqe_head = ring.sq.sqe_tail;
	io_uring_smp_store_release(ring.sq.ktail, ring.sq.sqe_tail);
	r = io_uring_enter(ring.ring_fd, 1, 0, 0, NULL);
	if (r != 1) {
		fprintf(stderr, "dmb-pollhold: io_uring_submit: %s\n", r < 0 ? strerror(-r) : "nothing submitted");
		return 1;
	}
	printf("submitted\n");
	fflush(stdout);
	signal(SIGTERM, on_term);
	while (secs-- && !stop)
		sleep(1);
	r = io_uring_wait_cqe(&ring, &cqe);
	if (r < 0) {
		fprintf(stderr, "dmb-pollhold: io_uring_wait_cqe: %s\n", strerror(-r));
		return 1;
	}
	res = cqe->res;
	printf("reaped %d\n", res);
	io_uring_cqe_seen(&ring, cqe);
	io_uring_queue_exit(&ring);
	free(buf);
	return res == 4096 ? 0 : 1;
}
