// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * event.c: waiting for dm events without threads.  The kernel makes
 * /dev/mapper/control pollable: a file opened on it is readable once any
 * dm event (a target's dm_table_event(), a create, remove or rename) has
 * happened since the file was opened or armed (dm-ioctl.c dm_open/dm_poll).
 * Arming by opening a fresh file needs no hand-made ioctl; an epoll fd in
 * front of it keeps the caller's fd the same across re-arms.
 */
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>

#include "libdmbarrier-private.h"

#define DM_CONTROL "/dev/mapper/control"

struct dmb_monitor {
	struct dmb_ctx *ctx;
	int epfd;
	int ctlfd;
};

static int control_open(struct dmb_ctx *ctx)
{
	int fd, r;

	fd = open(DM_CONTROL, O_RDWR | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 && errno == ENOENT) {
		/* libdevmapper creates the node when it first talks to dm. */
		r = dm_control_ensure(ctx);
		if (r < 0)
			return r;
		fd = open(DM_CONTROL, O_RDWR | O_CLOEXEC | O_NONBLOCK);
	}
	if (fd < 0)
		return dmb_fail(ctx, -errno, "cannot open %s: %m", DM_CONTROL);
	return fd;
}

_public_ int dmb_monitor_new(struct dmb_ctx *ctx, struct dmb_monitor **ret)
{
	_cleanup_(closep) int epfd = -1, ctlfd = -1;
	struct epoll_event ev = { .events = EPOLLIN };
	struct dmb_monitor *m;

	dmb_call_begin(ctx);
	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (epfd < 0)
		return dmb_fail(ctx, -errno, "epoll_create1: %m");
	ctlfd = control_open(ctx);
	if (ctlfd < 0)
		return ctlfd;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, ctlfd, &ev) < 0)
		return dmb_fail(ctx, -errno, "cannot poll %s: %m", DM_CONTROL);
	m = calloc(1, sizeof(*m));
	if (!m)
		return dmb_fail(ctx, -ENOMEM, "out of memory");
	m->ctx = dmb_ctx_ref(ctx);
	m->epfd = TAKE_FD(epfd);
	m->ctlfd = TAKE_FD(ctlfd);
	*ret = m;
	return 0;
}

_public_ struct dmb_monitor *dmb_monitor_free(struct dmb_monitor *m)
{
	if (!m)
		return NULL;
	closep(&m->ctlfd);
	closep(&m->epfd);
	dmb_ctx_unref(m->ctx);
	free(m);
	return NULL;
}

_public_ int dmb_monitor_get_fd(const struct dmb_monitor *m)
{
	return m ? m->epfd : -EINVAL;
}

_public_ int dmb_monitor_arm(struct dmb_monitor *m)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct dmb_ctx *ctx = m->ctx;
	int fd;

	dmb_call_begin(ctx);
	/* The new file's event count is taken now: this is the arming point. */
	fd = control_open(ctx);
	if (fd < 0)
		return fd;
	if (epoll_ctl(m->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		int r = -errno;

		closep(&fd);
		return dmb_fail(ctx, r, "cannot poll %s: %s", DM_CONTROL, strerror(-r));
	}
	(void)epoll_ctl(m->epfd, EPOLL_CTL_DEL, m->ctlfd, NULL);
	closep(&m->ctlfd);
	m->ctlfd = fd;
	return 0;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

_public_ int dmb_mapping_wait_event(struct dmb_ctx *ctx, const char *name, uint32_t event_nr,
				    int timeout_ms, uint32_t *ret_event_nr)
{
	struct dmb_monitor *m = NULL;
	struct dmb_mapping_info info;
	int64_t deadline = timeout_ms >= 0 ? now_ms() + timeout_ms : -1;
	int r;

	dmb_call_begin(ctx);
	r = dm_name_check(ctx, name);
	if (r < 0)
		return r;
	/* Armed before the first look, so no event slips in between. */
	r = dmb_monitor_new(ctx, &m);
	if (r < 0)
		return r;
	for (;;) {
		struct pollfd p = { .fd = m->epfd, .events = POLLIN };
		int wait_ms = -1;

		r = dmb_mapping_info(ctx, name, &info);
		if (r < 0)
			break;
		if (info.event_nr != event_nr) {
			if (ret_event_nr)
				*ret_event_nr = info.event_nr;
			r = 0;
			break;
		}
		if (deadline >= 0) {
			int64_t left = deadline - now_ms();

			wait_ms = left > 0 ? (int)(left > INT32_MAX ? INT32_MAX : left) : 0;
		}
		r = poll(&p, 1, wait_ms);
		if (r < 0) {
			r = dmb_fail(ctx, -errno, "waiting for an event of '%s': %m", name);
			break;
		}
		if (r == 0) {
			r = dmb_fail(ctx, -ETIMEDOUT, "no event on '%s' within %d ms", name, timeout_ms);
			break;
		}
		r = dmb_monitor_arm(m);
		if (r < 0)
			break;
	}
	dmb_monitor_free(m);
	return r;
}
