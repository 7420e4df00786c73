/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * daemon.h: the objects barrierd's layers share: the manager (one per
 * process: the event loop and everything it owns) and a device (one per
 * barrier mapping), and the functions each layer offers the others.
 *   main.c    the manager's life: setup, config, the loop, teardown
 *   watch.c   event sources: dm events, udev, the re-read timer
 *   device.c  per-mapping state: adopt, refresh, decide, act, pin
 *   bus.c     the D-Bus API (docs/dbus/org.dmbarrier1.xml)
 *   polkit.c  who may call its mutating methods (polkit.h)
 *   policy.c  the decision (pure)     config.c  barrierd.conf (pure)
 */
#ifndef BARRIERD_DAEMON_H
#define BARRIERD_DAEMON_H

#include <stdbool.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "config.h"
#include "libdmbarrier.h"
#include "macro.h"
#include "policy.h"

#define BARRIERD_VERSION "1.0.0"
#define BUS_NAME "org.dmbarrier1"
#define BUS_PATH "/org/dmbarrier1"
#define BUS_DEVICE_PREFIX "/org/dmbarrier1/device"
#define BUS_MANAGER_IFACE "org.dmbarrier1.Manager"
#define BUS_DEVICE_IFACE "org.dmbarrier1.Device"
/* The reply to a call that cannot be taken now (bus.c, polkit.c). */
#define ERROR_BUSY "org.dmbarrier1.Error.Busy"
#define STATE_DIR "/run/barrierd"

/* Mappings barrierd will manage at most (each costs a few ioctls per tick). */
#define DEVICES_MAX 1024

struct udev;
struct udev_monitor;
struct device;
struct polkit_registry;

/* What a drive job does (device.c). */
enum drive_job_kind {
	JOB_READ,	/* both views of the write cache (IDENTIFY) */
	JOB_SET,	/* switch it (SET FEATURES, IDENTIFY, queue/write_cache) */
};

struct manager {
	sd_event *event;
	sd_bus *bus;
	struct dmb_ctx *ctx;
	struct config config;
	const char *state_dir;		/* pins: STATE_DIR, or --state-dir */

	struct device **devices;	/* sorted by name */
	size_t n_devices;

	/* watch.c */
	struct dmb_monitor *dm_monitor;
	sd_event_source *dm_source;
	struct udev *udev;
	struct udev_monitor *udev_monitor;
	sd_event_source *udev_source;
	sd_event_source *timer_source;
	uint64_t ticks;			/* timer wakeups, for --debug accounting */
	sd_event_source *rescan_source;	/* the coalesced rescan (watch.c) */
	usec_t rescan_last;		/* when the last coalesced rescan ran */
	uint64_t rescan_requests;	/* requests since the last rescan, for the debug line */

	/* bus.c */
	sd_bus_slot *manager_slot;
	sd_bus_slot *device_slot;
	sd_bus_slot *enumerator_slot;
	sd_bus_slot *object_manager_slot;
	struct polkit_registry *polkit;	/* authorization checks in flight */
	bool bus_ready;			/* the name is ours: signals may go out */
};

/* What device_publish() compares to send PropertiesChanged. */
struct device_published {
	bool valid;
	enum dmb_mode mode;
	bool pinned;
	bool write_cache;
	bool kernel_write_cache;
	int drive_write_cache;		/* 1/0, -1 unknown */
	bool fua;
	enum policy_phase phase;
	enum dmb_fallback fallback;
	uint32_t hold_ms;
	dev_t disk;
};

struct device {
	struct manager *manager;
	char *name;
	char *path;			/* D-Bus object path */

	/* What the kernel says, as of the last refresh. */
	struct dmb_mapping_info info;
	struct dmb_status status;
	struct dmb_table table;
	dev_t disk;			/* whole disk under the table's device */
	char disk_name[DMB_DISK_NAME_MAX];
	bool disk_changed;		/* a new table maps another disk */
	bool disk_lost;			/* ... that cannot be found (said once) */
	uint64_t diskseq;		/* the mapping's diskseq, 0 unknown (device.c: pins) */
	struct dmb_write_cache wc;	/* wc.drive: 1/0, or < 0 unknown */
	usec_t status_at;		/* loop time of the last status read */
	usec_t drive_next_ask;		/* a marginal disk is asked again at this time */
	usec_t drive_backoff;		/* ... and the interval doubles each time */

	bool pinned;
	struct policy_state policy;
	enum probe_result probe;

	/*
	 * The drive job (device.c): the one command to the drive in flight
	 * for this mapping, run in a child process.
	 */
	pid_t job_pid;			/* 0: none */
	enum drive_job_kind job_kind;
	bool job_enable;		/* JOB_SET: turn the cache on (or off) */
	bool job_abandoned;		/* given up on; reaped when it dies */
	dev_t job_disk;			/* the disk it talks to */
	int job_fd;			/* read end of its result pipe, -1 */
	usec_t job_started;		/* CLOCK_MONOTONIC */
	sd_event_source *job_child;
	sd_event_source *job_timer;
	sd_bus_message *job_call;	/* SetWriteCache() answered when the job is done */
	sd_bus_message *queued_call;	/* ... one more, waiting for the running job */
	bool queued_enable;
	int cache_off_result;		/* the policy's cache-off: 1 not done, 0 done, < 0 errno */
	bool flush_failed_pending;	/* a failure being handled: reported once it is */
	usec_t flush_failed_started;	/* CLOCK_MONOTONIC */

	/* The explicit barrier running in a child process, if any. */
	pid_t child;
	bool child_is_probe;
	sd_event_source *child_source;
	sd_bus_message *barrier_call;	/* Barrier() waiting for its reply */

	struct device_published published;
};

/* ---- main.c */
int manager_rescan(struct manager *m);
struct device *manager_find_device(struct manager *m, const char *name);
int manager_add_device(struct manager *m, const char *name, struct device **ret);
void manager_remove_device(struct manager *m, struct device *d);
int manager_create_mapping(struct manager *m, const char *name, const struct dmb_spec *spec,
			   bool pin, struct device **ret);
usec_t manager_now(struct manager *m);

/* ---- device.c */
/* Flags for device_evaluate(). */
enum {
	EVALUATE_DRIVE = 1 << 0,	/* also ask the drive (SG_IO IDENTIFY) */
	EVALUATE_TABLE = 1 << 1,	/* also re-read the table */
};
/* created: barrierd made it just now (not adopted). */
int device_new(struct manager *m, const char *name, bool created, struct device **ret);
struct device *device_free(struct device *d);
int device_evaluate(struct device *d, unsigned int flags);
/* Read the status again unless it was read in this loop iteration. */
int device_refresh_status(struct device *d);
int device_set_mode(struct device *d, const char *mode, bool pin, char *err, size_t errsize);
int device_set_pinned(struct device *d, bool pinned);
/* Answers call (SetWriteCache) through bus_reply_write_cache_call() once done. */
int device_set_write_cache(struct device *d, bool enable, sd_bus_message *call);
int device_barrier(struct device *d, sd_bus_message *call);
int device_reset_stats(struct device *d);
bool device_write_cache(const struct device *d);
/* The pin record's file name for a mapping name (escaped). */
int device_pin_file(const char *state_dir, const char *name, char *buf, size_t size);

/* Counters read for the bus are at most this old (device_refresh_counters). */
#define COUNTERS_MAX_AGE_USEC (250 * USEC_PER_MSEC)
/*
 * A command to a drive that has not finished after this long is given up
 * (the default hold_on_flush_error is 10 s; SG_IO itself waits 15 s).
 */
#define DRIVE_JOB_TIMEOUT_USEC (4 * USEC_PER_SEC)
/* A disk whose flush failed is asked about its cache at most this rarely. */
#define DRIVE_RECHECK_MAX_USEC (300 * USEC_PER_SEC)
int device_refresh_counters(struct device *d);

/* ---- watch.c */
int watch_setup(struct manager *m);
void manager_request_rescan(struct manager *m);
void watch_done(struct manager *m);

/* ---- bus.c */
int bus_setup(struct manager *m);
int bus_request_name(struct manager *m);
void bus_done(struct manager *m);
void bus_emit_device_added(struct manager *m, struct device *d);
void bus_emit_device_removed(struct manager *m, struct device *d);
void bus_emit_properties_changed(struct device *d, char **names);
void bus_emit_flush_failed(struct device *d);
void bus_emit_manager_changed(struct manager *m, const char *property);
void bus_fail_barrier_call(struct device *d, int error);
void bus_reply_barrier_call(struct device *d, int result);
/* Answer the SetWriteCache() call (result 0, or -errno and why). */
void bus_reply_write_cache_call(struct device *d, sd_bus_message *call, int result,
				const char *why);

#endif
