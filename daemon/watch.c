// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * watch.c: what wakes barrierd up, all in the one sd-event loop:
 *  - dm events (libdmbarrier's monitor: /dev/mapper/control made pollable):
 *    a mapping created, removed, reloaded, or its target raising an event
 *    (a failed flush, a mode change, a write-cache flag it noticed);
 *  - udev: change/remove of the disks under the mappings and of dm devices;
 *  - a low-rate timer, the backstop: hdparm -W emits no uevent, and the
 *    target notices a cache change only when a barrier or a status call
 *    passes, so an idle mapping is re-read every PollIntervalSec.
 * Nothing else runs: idle, barrierd sleeps in epoll between timer ticks.
 *
 * A rescan (DM_LIST_DEVICES, then a table read per dm device to find the
 * barrier ones) costs O(dm devices), so the events that call for one only
 * ask for it: a request after a quiet spell is served RESCAN_DELAY_USEC
 * later, and while requests keep coming there is at most one rescan per
 * RESCAN_INTERVAL_USEC, which sees all of them (vgchange -ay of a
 * thousand LVs is thousands of uevents and dm events, and costs two
 * rescans a second while it lasts, not one per event).  A failed flush's
 * dm event is acted on RESCAN_DELAY_USEC later, or within
 * RESCAN_INTERVAL_USEC in a storm: well inside the default hold (10 s).
 */
#include <errno.h>
#include <libudev.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "daemon.h"
#include "log.h"

#define RESCAN_DELAY_USEC (50 * USEC_PER_MSEC)
#define RESCAN_INTERVAL_USEC (500 * USEC_PER_MSEC)

static int on_rescan(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct manager *m = userdata;

	log_debug("rescan (%llu requests)", (unsigned long long)m->rescan_requests);
	m->rescan_requests = 0;
	(void)manager_rescan(m);
	m->rescan_last = manager_now(m);
	return 0;
}

void manager_request_rescan(struct manager *m)
{
	int enabled = SD_EVENT_OFF, r;
	usec_t at;

	m->rescan_requests++;
	if (m->rescan_source)
		(void)sd_event_source_get_enabled(m->rescan_source, &enabled);
	/* One is coming: it will see whatever this request is about. */
	if (enabled != SD_EVENT_OFF)
		return;
	at = MAX(manager_now(m) + RESCAN_DELAY_USEC, m->rescan_last + RESCAN_INTERVAL_USEC);
	r = m->rescan_source ? sd_event_source_set_time(m->rescan_source, at) : -ENXIO;
	if (r >= 0)
		r = sd_event_source_set_enabled(m->rescan_source, SD_EVENT_ONESHOT);
	if (r < 0) {
		/* Never lose one: do it now. */
		log_warning_errno(r, "Cannot schedule a rescan, rescanning now: %m");
		m->rescan_requests = 0;
		(void)manager_rescan(m);
	}
}

static int on_dm_event(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct manager *m = userdata;
	int r;

	/* Arm before looking, so nothing that happens while we look is lost. */
	r = dmb_monitor_arm(m->dm_monitor);
	if (r < 0) {
		/* The fd stays readable: park it until the next tick, no busy loop. */
		log_error_errno(r, "Cannot re-arm the dm event monitor: %s",
				dmb_ctx_get_error(m->ctx));
		(void)sd_event_source_set_enabled(s, SD_EVENT_OFF);
	}
	manager_request_rescan(m);
	return 0;
}

static bool is_dm(struct udev_device *dev)
{
	const char *sysname = udev_device_get_sysname(dev);

	return sysname && !strncmp(sysname, "dm-", 3);
}

static int on_udev_event(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct manager *m = userdata;
	struct udev_device *dev;
	const char *action;
	dev_t devnum;

	dev = udev_monitor_receive_device(m->udev_monitor);
	if (!dev)
		return 0;
	action = udev_device_get_action(dev);
	devnum = udev_device_get_devnum(dev);
	if (!action || major(devnum) == 0)
		goto out;
	if (is_dm(dev)) {
		if (!strcmp(action, "add") || !strcmp(action, "remove") ||
		    !strcmp(action, "change"))
			manager_request_rescan(m);
		goto out;
	}
	if (strcmp(action, "change") && strcmp(action, "remove"))
		goto out;
	for (size_t i = 0; i < m->n_devices; i++) {
		struct device *d = m->devices[i];

		if (d->disk != devnum)
			continue;
		if (!strcmp(action, "remove"))
			log_device_warning(d->name, "backing disk %s was removed", d->disk_name);
		(void)device_evaluate(d, EVALUATE_DRIVE);
	}
out:
	udev_device_unref(dev);
	return 0;
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct manager *m = userdata;
	bool rescan = false;
	int r;

	m->ticks++;
	for (size_t i = 0; i < m->n_devices; i++) {
		r = device_evaluate(m->devices[i], 0);
		if (r == -ENOENT || r == -EMEDIUMTYPE || r == -ESTALE)
			rescan = true;
	}
	if (rescan)
		(void)manager_rescan(m);
	/* A monitor that could not be re-armed gets another chance now. */
	if (m->dm_source) {
		int enabled = SD_EVENT_ON;

		(void)sd_event_source_get_enabled(m->dm_source, &enabled);
		if (enabled == SD_EVENT_OFF && dmb_monitor_arm(m->dm_monitor) >= 0) {
			(void)sd_event_source_set_enabled(m->dm_source, SD_EVENT_ON);
			(void)manager_rescan(m);
		}
	}
	r = sd_event_source_set_time_relative(s, m->config.poll_interval_usec);
	if (r >= 0)
		r = sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
	if (r < 0)
		return log_error_errno(r, "Cannot re-arm the poll timer: %m");
	return 0;
}

static int udev_setup(struct manager *m)
{
	int r;

	m->udev = udev_new();
	if (!m->udev)
		return log_error_errno(-ENOMEM, "Cannot create a udev context: %m");
	m->udev_monitor = udev_monitor_new_from_netlink(m->udev, "udev");
	if (!m->udev_monitor)
		return log_error_errno(errno ? -errno : -EIO, "Cannot open the udev monitor: %m");
	r = udev_monitor_filter_add_match_subsystem_devtype(m->udev_monitor, "block", NULL);
	if (r < 0)
		return log_error_errno(r, "Cannot filter the udev monitor: %m");
	r = udev_monitor_enable_receiving(m->udev_monitor);
	if (r < 0)
		return log_error_errno(r, "Cannot enable the udev monitor: %m");
	r = sd_event_add_io(m->event, &m->udev_source, udev_monitor_get_fd(m->udev_monitor),
			    EPOLLIN, on_udev_event, m);
	if (r < 0)
		return log_error_errno(r, "Cannot watch the udev monitor: %m");
	return 0;
}

int watch_setup(struct manager *m)
{
	usec_t accuracy = MIN(m->config.poll_interval_usec / 4, 250 * USEC_PER_MSEC);
	int r;

	r = dmb_monitor_new(m->ctx, &m->dm_monitor);
	if (r < 0)
		return log_error_errno(r, "Cannot watch dm events: %s", dmb_ctx_get_error(m->ctx));
	r = sd_event_add_io(m->event, &m->dm_source, dmb_monitor_get_fd(m->dm_monitor), EPOLLIN,
			    on_dm_event, m);
	if (r < 0)
		return log_error_errno(r, "Cannot watch dm events: %m");
	r = udev_setup(m);
	if (r < 0)
		return r;
	r = sd_event_add_time_relative(m->event, &m->timer_source, CLOCK_MONOTONIC,
				       m->config.poll_interval_usec, accuracy, on_timer, m);
	if (r < 0)
		return log_error_errno(r, "Cannot add the poll timer: %m");
	r = sd_event_add_time(m->event, &m->rescan_source, CLOCK_MONOTONIC, UINT64_MAX,
			      USEC_PER_MSEC, on_rescan, m);
	if (r >= 0)
		r = sd_event_source_set_enabled(m->rescan_source, SD_EVENT_OFF);
	if (r < 0)
		return log_error_errno(r, "Cannot add the rescan timer: %m");
	return 0;
}

void watch_done(struct manager *m)
{
	m->rescan_source = sd_event_source_disable_unref(m->rescan_source);
	m->timer_source = sd_event_source_disable_unref(m->timer_source);
	m->udev_source = sd_event_source_disable_unref(m->udev_source);
	m->dm_source = sd_event_source_disable_unref(m->dm_source);
	m->udev_monitor = udev_monitor_unref(m->udev_monitor);
	m->udev = udev_unref(m->udev);
	m->dm_monitor = dmb_monitor_free(m->dm_monitor);
}
