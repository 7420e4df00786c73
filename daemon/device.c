// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * device.c: one barrier mapping as barrierd manages it.  Adopts it (the
 * kernel's table and status are the state; only the pin lives outside the
 * kernel, see below), refreshes what the kernel and the drive say, runs
 * policy_decide() on it and carries the decision out through libdmbarrier,
 * and publishes the result on the bus.
 *
 * Where the pin lives: the target's table has no field a daemon could
 * borrow (unknown features fail the load) and a DM UUID cannot be changed
 * once set, so the pin is a small file in /run/barrierd/pins/, which is a
 * tmpfs with exactly the lifetime of the mappings themselves (both end at
 * reboot).  The file records the mapping's UUID, device number and disk
 * sequence number (/sys/block/dm-N/diskseq, Linux 5.15 and later): the
 * UUID ("BARRIER-<name>") and the device number (dm reuses the lowest
 * free minor) repeat when a mapping is removed and made again, the
 * diskseq never does until reboot.  A pin whose mapping was recreated,
 * while barrierd was down or between two looks, does not match and is
 * dropped.  The pinned mode itself is the table's mode.
 *
 * The explicit barrier of a probe (and of Barrier()) can block for as long
 * as the target holds barriers (hold_on_flush_error, up to 60 s), which
 * is exactly when barrierd must stay responsive; so it runs in a forked
 * child that only makes that one ioctl, and sd-event reaps it.  So does
 * every call that talks to a drive (see "drive jobs" below).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"
#include "log.h"

/* policy_decide() rounds per evaluation: decide, act, decide on the result. */
#define EVALUATE_ROUNDS 4

/* The wall time spent reacting (the loop's time stands still in one run). */
static usec_t clock_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (usec_t)ts.tv_sec * USEC_PER_SEC + (usec_t)ts.tv_nsec / 1000;
}

/* ------------------------------------------------------------ pins */

int device_pin_file(const char *state_dir, const char *name, char *buf, size_t size)
{
	static const char hex[] = "0123456789abcdef";
	size_t n;
	int w;

	w = snprintf(buf, size, "%s/pins/", state_dir);
	if (w < 0 || (size_t)w >= size)
		return -ENAMETOOLONG;
	n = (size_t)w;
	/* dm names may hold anything but '/': escape all but a safe set. */
	for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
		bool plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			     (*p >= '0' && *p <= '9') || strchr("+-:=@_", *p) ||
			     (*p == '.' && p != (const unsigned char *)name);

		if (n + 4 >= size)
			return -ENAMETOOLONG;
		if (plain) {
			buf[n++] = (char)*p;
		} else {
			buf[n++] = '%';
			buf[n++] = hex[*p >> 4];
			buf[n++] = hex[*p & 15];
		}
	}
	buf[n] = '\0';
	return 0;
}

static int pin_record(const struct device *d, char *buf, size_t size)
{
	int n = snprintf(buf, size, "uuid=%s\ndevnum=%u:%u\n", d->info.uuid, major(d->info.devnum),
			 minor(d->info.devnum));

	if (n >= 0 && (size_t)n < size && d->diskseq)
		n += snprintf(buf + n, size - (size_t)n, "diskseq=%llu\n",
			      (unsigned long long)d->diskseq);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : n;
}

static int pin_save(const struct device *d)
{
	const char *dir = d->manager->state_dir;
	char path[4096], tmp[4200], rec[256], pins[4096];
	_cleanup_(closep) int fd = -1;
	int n, r;

	snprintf(pins, sizeof(pins), "%s/pins", dir);
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return log_error_errno(-errno, "Cannot create %s: %m", dir);
	if (mkdir(pins, 0755) < 0 && errno != EEXIST)
		return log_error_errno(-errno, "Cannot create %s: %m", pins);
	r = device_pin_file(dir, d->name, path, sizeof(path));
	if (r < 0)
		return log_error_errno(r, "Pin file name for '%s': %m", d->name);
	n = pin_record(d, rec, sizeof(rec));
	if (n < 0)
		return n;
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return log_error_errno(-errno, "Cannot write %s: %m", tmp);
	if (write(fd, rec, (size_t)n) != n || fsync(fd) < 0) {
		r = log_error_errno(errno ? -errno : -EIO, "Cannot write %s: %m", tmp);
		(void)unlink(tmp);
		return r;
	}
	if (rename(tmp, path) < 0) {
		r = log_error_errno(-errno, "Cannot rename %s: %m", tmp);
		(void)unlink(tmp);
		return r;
	}
	return 0;
}

static int pin_remove(const struct device *d)
{
	char path[4096];
	int r;

	r = device_pin_file(d->manager->state_dir, d->name, path, sizeof(path));
	if (r < 0)
		return r;
	if (unlink(path) < 0 && errno != ENOENT)
		return log_error_errno(-errno, "Cannot remove %s: %m", path);
	return 0;
}

/* Is there a pin for this very mapping?  A stale one is removed. */
static bool pin_load(const struct device *d)
{
	char path[4096], want[256], got[256];
	_cleanup_(closep) int fd = -1;
	ssize_t n;
	int w;

	if (device_pin_file(d->manager->state_dir, d->name, path, sizeof(path)) < 0)
		return false;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return false;
	n = read(fd, got, sizeof(got) - 1);
	w = pin_record(d, want, sizeof(want));
	if (n >= 0 && w >= 0 && n == w && !memcmp(got, want, (size_t)n))
		return true;
	log_device_notice(d->name, "dropping a stale pin (the mapping was recreated)");
	(void)unlink(path);
	return false;
}

/* ------------------------------------------------------------ reading */

/*
 * The disk sequence number of a block device: unique per device made
 * since boot, so it tells a recreated mapping from the one it replaced
 * when name, UUID and device number all repeat.  0 when the kernel has
 * none (before 5.15) or the device is gone.
 */
static uint64_t read_diskseq(dev_t devnum)
{
	char path[64], buf[32];
	_cleanup_(closep) int fd = -1;
	unsigned long long v;
	char *end;
	ssize_t n;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/diskseq", major(devnum), minor(devnum));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (errno || end == buf || (*end && *end != '\n'))
		return 0;
	return v;
}

/*
 * Is info (just read by name) still the mapping d was adopted as?  A
 * mapping removed and made again under the same name between two looks
 * is another mapping: -ESTALE, and the caller re-adopts it from scratch
 * (its pin, policy state and disk belong to the old one).
 */
static int check_identity(struct device *d, const struct dmb_mapping_info *info)
{
	uint64_t seq;

	if (info->devnum != d->info.devnum || strcmp(info->uuid, d->info.uuid))
		return -ESTALE;
	seq = read_diskseq(info->devnum);
	if (seq && d->diskseq && seq != d->diskseq)
		return -ESTALE;
	return 0;
}

/*
 * The whole disk under the table's backing device, again: a reload may
 * have put the mapping over another disk (barrierctl reload NAME NEWDEV,
 * dmsetup reload), and then the write cache to read and to switch is the
 * new disk's.  Called whenever the table was read.
 */
static void resolve_disk(struct device *d)
{
	struct manager *m = d->manager;
	char name[DMB_DISK_NAME_MAX];
	dev_t disk;
	int r;

	r = dmb_disk_whole(m->ctx, d->table.backing, &disk);
	if (r < 0) {
		/* A disk that died stays dead: say it once, not at every look. */
		if (!d->disk_lost)
			log_device_warning_errno(d->name, r, "Cannot find the disk under %u:%u: %s",
						 major(d->table.backing), minor(d->table.backing),
						 dmb_ctx_get_error(m->ctx));
		d->disk_lost = true;
		return;
	}
	d->disk_lost = false;
	if (disk == d->disk)
		return;
	if (dmb_disk_name(m->ctx, disk, name, sizeof(name)) < 0)
		snprintf(name, sizeof(name), "%u:%u", major(disk), minor(disk));
	if (d->disk)
		log_device_notice(d->name, "the table now maps %s (was %s); following its write cache",
				  name, d->disk_name);
	d->disk = disk;
	snprintf(d->disk_name, sizeof(d->disk_name), "%s", name);
	/* Nothing known about the old disk holds for this one. */
	d->wc.drive = -ENODATA;
	d->disk_changed = true;
}

static void cache_from_status(struct device *d)
{
	d->wc.kernel = d->status.cache_writeback;
	d->wc.kernel_fua = d->status.fua;
}

/* What the drive said, taken in: the kernel views come from the status line. */
static void take_drive(struct device *d, int r, const struct dmb_write_cache *wc, const char *why)
{
	int drive = r < 0 ? r : wc->drive;

	if (r < 0) {
		/* Said once, not at every look. */
		if (d->wc.drive != r)
			log_device_warning_errno(d->name, r, "Cannot read the write cache of %s: %s",
						 d->disk_name, why);
	} else if (drive != d->wc.drive) {
		if (drive < 0)
			log_device_info(d->name,
					"the drive %s cannot be asked about its write cache (%s); using the kernel's view",
					d->disk_name, strerror(-drive));
		else
			log_device_debug(d->name, "%s: drive write cache %d (kernel: %s)", d->disk_name,
					 drive, wc->kernel ? "write back" : "write through");
	}
	if (r >= 0)
		d->wc = *wc;
	d->wc.drive = drive;
}

/* ------------------------------------------------------------ drive jobs */

/*
 * Everything that talks to a drive can wait on it far longer than a
 * barrier may be held: ATA IDENTIFY and SET FEATURES go through SG_IO
 * with a 15 s timeout, a cache switch rescans the SCSI device and writes
 * queue/write_cache (which freezes the queue), and a drive that stalls
 * stalls all of them.  barrierd is one thread serving every mapping and
 * the bus, so none of that runs in it: each such call is a drive job, run
 * in a forked child that makes the call, writes the result to a pipe and
 * exits; sd-event reaps it and the loop takes the result up.  One job per
 * mapping at a time.  A job not done after DRIVE_JOB_TIMEOUT_USEC is
 * given up: its caller gets -ETIMEDOUT and the mapping is decided on
 * without the drive (a failed flush then ends in none, not in a hold
 * running out).  The child is killed, but a process inside SG_IO dies
 * only when its command does, so until it has been reaped no other job
 * starts on that mapping: a stalled drive is not sent a queue of
 * commands.
 */
struct job_result {
	int r;
	struct dmb_write_cache wc;
	char why[256];
};

static void job_done(struct device *d, enum drive_job_kind kind, bool enable, dev_t disk,
		     const struct job_result *res);
static void start_queued_call(struct device *d);

static bool job_running(const struct device *d)
{
	return d->job_pid && !d->job_abandoned;
}

static void job_close(struct device *d)
{
	d->job_timer = sd_event_source_disable_unref(d->job_timer);
	if (d->job_fd >= 0)
		(void)close(d->job_fd);
	d->job_fd = -1;
}

static int on_job_exit(sd_event_source *s, const siginfo_t *si, void *userdata)
{
	struct device *d = userdata;
	struct job_result res = { .r = -EIO };
	ssize_t n = -1;

	if (!d)
		return 0;	/* its device is gone; the source floats */
	d->job_child = sd_event_source_unref(d->job_child);
	d->job_pid = 0;
	if (d->job_abandoned) {
		d->job_abandoned = false;
		log_device_info(d->name, "the command given up on %s has ended after %llu s",
				d->disk_name,
				(unsigned long long)((clock_usec() - d->job_started) / USEC_PER_SEC));
		/* Whatever it said is old: ask again. */
		(void)device_evaluate(d, EVALUATE_DRIVE);
		start_queued_call(d);
		return 0;
	}
	if (d->job_fd >= 0)
		n = read(d->job_fd, &res, sizeof(res));
	job_close(d);
	if (n != (ssize_t)sizeof(res)) {
		res = (struct job_result){ .r = -EIO };
		snprintf(res.why, sizeof(res.why), "the process asking it %s %d",
			 si->si_code == CLD_EXITED ? "exited with status" : "was killed by signal",
			 si->si_status);
	}
	res.why[sizeof(res.why) - 1] = '\0';
	job_done(d, d->job_kind, d->job_enable, d->job_disk, &res);
	return 0;
}

static int on_job_timeout(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct device *d = userdata;
	struct job_result res = { .r = -ETIMEDOUT };

	log_device_warning(d->name,
			   "%s has not answered within %llu s; going on without it (it is not sent another command until this one ends)",
			   d->disk_name, (unsigned long long)(DRIVE_JOB_TIMEOUT_USEC / USEC_PER_SEC));
	(void)kill(d->job_pid, SIGKILL);
	d->job_abandoned = true;
	job_close(d);
	snprintf(res.why, sizeof(res.why), "%s has not answered within %llu s", d->disk_name,
		 (unsigned long long)(DRIVE_JOB_TIMEOUT_USEC / USEC_PER_SEC));
	job_done(d, d->job_kind, d->job_enable, d->job_disk, &res);
	return 0;
}

/* The child: one call, its result into the pipe. */
static _Noreturn void job_child(struct device *d, int fd, enum drive_job_kind kind, bool enable)
{
	struct dmb_ctx *ctx = d->manager->ctx;
	struct job_result res = { 0 };

	if (kind == JOB_READ)
		res.r = dmb_disk_write_cache_get(ctx, d->disk, &res.wc);
	else
		res.r = dmb_disk_write_cache_set(ctx, d->disk, enable, &res.wc);
	if (res.r < 0)
		snprintf(res.why, sizeof(res.why), "%s", dmb_ctx_get_error(ctx));
	_exit(write(fd, &res, sizeof(res)) == (ssize_t)sizeof(res) ? 0 : 1);
}

/* -EBUSY: a job is running, or one given up on has not ended yet. */
static int job_start(struct device *d, enum drive_job_kind kind, bool enable)
{
	struct manager *m = d->manager;
	int fds[2], r;
	pid_t pid;

	if (d->job_pid)
		return -EBUSY;
	if (!d->disk || d->disk_lost)
		return -ENODEV;
	if (pipe2(fds, O_CLOEXEC) < 0)
		return log_device_error_errno(d->name, -errno, "Cannot make a pipe: %m");
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		r = log_device_error_errno(d->name, -errno, "Cannot fork to ask %s: %m", d->disk_name);
		goto fail;
	}
	if (pid == 0) {
		(void)close(fds[0]);
		job_child(d, fds[1], kind, enable);
	}
	(void)close(fds[1]);
	fds[1] = -1;
	d->job_pid = pid;
	d->job_fd = fds[0];
	d->job_kind = kind;
	d->job_enable = enable;
	d->job_disk = d->disk;
	d->job_started = clock_usec();
	r = sd_event_add_child(m->event, &d->job_child, pid, WEXITED, on_job_exit, d);
	if (r >= 0)
		r = sd_event_add_time_relative(m->event, &d->job_timer, CLOCK_MONOTONIC,
					       DRIVE_JOB_TIMEOUT_USEC, 0, on_job_timeout, d);
	if (r < 0) {
		log_device_error_errno(d->name, r, "Cannot watch the process asking %s: %m",
				       d->disk_name);
		(void)kill(pid, SIGKILL);
		(void)waitpid(pid, NULL, 0);
		d->job_child = sd_event_source_unref(d->job_child);
		d->job_pid = 0;
		job_close(d);
		return r;
	}
	return 0;
fail:
	(void)close(fds[0]);
	(void)close(fds[1]);
	return r;
}

/* A SetWriteCache() that waited for the job before it. */
static void start_queued_call(struct device *d)
{
	sd_bus_message *call;
	int r;

	if (!d->queued_call || job_running(d))
		return;		/* it goes on waiting */
	r = job_start(d, JOB_SET, d->queued_enable);
	call = TAKE_PTR(d->queued_call);
	if (r < 0) {
		bus_reply_write_cache_call(d, call, r,
					   r == -EBUSY ? "the drive has not answered an earlier command"
						       : NULL);
		sd_bus_message_unref(call);
	} else
		d->job_call = call;
}

static void job_done(struct device *d, enum drive_job_kind kind, bool enable, dev_t disk,
		     const struct job_result *res)
{
	sd_bus_message *call = TAKE_PTR(d->job_call);
	const char *why = res->why[0] ? res->why : strerror(-res->r);

	if (disk != d->disk) {
		/* A reload moved the mapping to another disk meanwhile. */
		if (call) {
			bus_reply_write_cache_call(d, call, -ENXIO,
						   "the mapping was moved to another disk meanwhile");
			sd_bus_message_unref(call);
		}
		(void)device_evaluate(d, EVALUATE_DRIVE);
		start_queued_call(d);
		return;
	}
	if (kind == JOB_READ) {
		take_drive(d, res->r, &res->wc, why);
	} else {
		if (res->r >= 0) {
			log_device_notice(d->name, "write cache of %s turned %s%s (drive: %d, kernel: %s)",
					  d->disk_name, enable ? "on" : "off",
					  call ? " by request" : "", res->wc.drive,
					  res->wc.kernel ? "write back" : "write through");
			d->wc = res->wc;
		} else if (call) {
			log_device_warning_errno(d->name, res->r, "Cannot turn the write cache of %s %s: %s",
						 d->disk_name, enable ? "on" : "off", why);
		} else {
			log_device_full_errno(d->name, LOG_CRIT, res->r,
					      "Cannot turn the write cache of %s off: %s", d->disk_name,
					      why);
		}
		if (!call)
			d->cache_off_result = res->r < 0 ? res->r : 0;
	}
	if (call) {
		bus_reply_write_cache_call(d, call, res->r < 0 ? res->r : 0, why);
		sd_bus_message_unref(call);
	}
	(void)device_evaluate(d, 0);
	start_queued_call(d);
}

/*
 * The counters for the bus: the status of this loop iteration or one at
 * most COUNTERS_MAX_AGE_USEC old, so that a client polling properties
 * costs at most a few status ioctls a second, however fast it asks.
 * Anything that changes a counter on barrierd's side (a barrier, a reset,
 * a mode) reads the status again itself.
 */
int device_refresh_counters(struct device *d)
{
	usec_t now = manager_now(d->manager);

	if (d->status_at && now >= d->status_at && now - d->status_at < COUNTERS_MAX_AGE_USEC)
		return 0;
	return device_refresh_status(d);
}

int device_refresh_status(struct device *d)
{
	struct manager *m = d->manager;
	struct dmb_status st;
	struct dmb_mapping_info info;
	usec_t now = manager_now(m);
	int r;

	if (d->status_at == now)
		return 0;
	r = dmb_mapping_status(m->ctx, d->name, &st, &info);
	if (r < 0)
		return r;
	r = check_identity(d, &info);
	if (r < 0)
		return r;
	d->status = st;
	d->info = info;
	d->status_at = now;
	return 0;
}

/*
 * A disk whose flush failed (phase failed: its cache was turned off; or
 * broken: it stayed on) is marginal, and its drive may disagree with the
 * kernel's flag (a flush failure leaves the flag behind, see GUEST-FACTS),
 * so it is asked on a timer too, not only when something moves, but less
 * and less often: after one poll interval, then two, four, ... up to
 * DRIVE_RECHECK_MAX_USEC, the interval starting again at one poll after
 * anything that moved.  A sick disk is not sent an ATA command a second.
 */
static bool ask_marginal(struct device *d, bool moved)
{
	struct manager *m = d->manager;
	usec_t now = manager_now(m), poll = m->config.poll_interval_usec;
	bool marginal = d->policy.phase == PHASE_FAILED || d->policy.phase == PHASE_BROKEN;

	if (!marginal || moved) {
		d->drive_backoff = poll;
		d->drive_next_ask = now + poll;
		return moved;
	}
	if (now + poll / 8 < d->drive_next_ask)
		return false;
	d->drive_backoff = MIN(MAX(d->drive_backoff, poll) * 2, MAX(DRIVE_RECHECK_MAX_USEC, poll));
	d->drive_next_ask = now + d->drive_backoff;
	return true;
}

/* A flush failed (or barriers are held) since the policy last looked. */
static bool failure_pending(const struct device *d)
{
	return d->status.flush_errors != d->policy.flush_errors_seen ||
	       d->status.fallbacks != d->policy.fallbacks_seen || d->status.held > 0;
}

static int refresh(struct device *d, unsigned int flags)
{
	struct manager *m = d->manager;
	bool was_kernel = d->wc.kernel, was_fua = d->wc.kernel_fua, ask;
	int r;

	d->status_at = 0;
	r = device_refresh_status(d);
	if (r < 0)
		return r;
	cache_from_status(d);
	/*
	 * The drive is asked (an ATA command) only when something moved or
	 * is wrong, not on every tick: the kernel's flag follows hdparm -W
	 * except while flushes fail, and then we are asking anyway.
	 */
	ask = (flags & EVALUATE_DRIVE) || was_kernel != d->wc.kernel ||
	      was_fua != d->wc.kernel_fua || d->status.held > 0 ||
	      d->status.flush_errors != d->policy.flush_errors_seen ||
	      d->policy.phase == PHASE_FAILING;
	ask = ask_marginal(d, ask);
	/*
	 * Whatever moved may be a new table over another disk (the status
	 * line already speaks of it, the uevent may not be here yet): the
	 * drive asked, and any cache switch decided from it, must be the one
	 * under the table now.
	 */
	if ((flags & EVALUATE_TABLE) || ask) {
		r = dmb_mapping_table(m->ctx, d->name, &d->table, NULL);
		if (r < 0)
			return r;
		resolve_disk(d);
	}
	if (d->disk_changed) {
		/*
		 * A new table is a new target: its counters start at zero and
		 * what the policy knew was about the old disk.  The pin stays.
		 */
		d->disk_changed = false;
		policy_state_init(&d->policy);
		d->policy.flush_errors_seen = d->status.flush_errors;
		d->policy.fallbacks_seen = d->status.fallbacks;
		ask = true;
	}
	/*
	 * The drive is asked in a job, and the decision waits for its answer
	 * (device_evaluate() does not decide while a job runs): a cache just
	 * turned off by hdparm -W0 must not be judged by the drive's answer
	 * from before.  Not so for a failed flush: that is acted on at once,
	 * on what is known (the cache-off job asks the drive anyway), for
	 * the hold on the barriers is running.
	 */
	if (ask && !failure_pending(d) && !d->job_pid)
		(void)job_start(d, JOB_READ, false);
	cache_from_status(d);
	return 0;
}

bool device_write_cache(const struct device *d)
{
	return d->wc.drive >= 0 ? d->wc.drive > 0 : d->status.cache_writeback;
}

/* ------------------------------------------------------------ publishing */

static void publish(struct device *d)
{
	struct device_published now = {
		.valid = true,
		.mode = d->status.mode,
		.pinned = d->pinned,
		.write_cache = device_write_cache(d),
		.kernel_write_cache = d->status.cache_writeback,
		.drive_write_cache = d->wc.drive >= 0 ? d->wc.drive > 0 : -1,
		.fua = d->status.fua,
		.phase = d->policy.phase,
		.fallback = d->table.fallback,
		.hold_ms = d->table.hold_ms,
		.disk = d->disk,
	};
	const struct device_published *old = &d->published;
	char *names[11];
	size_t n = 0;

	if (old->valid) {
		if (old->mode != now.mode)
			names[n++] = (char *)"Mode";
		if (old->pinned != now.pinned)
			names[n++] = (char *)"Pinned";
		if (old->write_cache != now.write_cache)
			names[n++] = (char *)"WriteCache";
		if (old->kernel_write_cache != now.kernel_write_cache)
			names[n++] = (char *)"KernelWriteCache";
		if (old->drive_write_cache != now.drive_write_cache)
			names[n++] = (char *)"DriveWriteCache";
		if (old->fua != now.fua)
			names[n++] = (char *)"Fua";
		if (policy_phase_to_string(old->phase) != policy_phase_to_string(now.phase))
			names[n++] = (char *)"State";
		if (old->fallback != now.fallback)
			names[n++] = (char *)"Fallback";
		if (old->hold_ms != now.hold_ms)
			names[n++] = (char *)"HoldOnFlushErrorMSec";
		if (old->disk != now.disk)
			names[n++] = (char *)"Backing";
	}
	names[n] = NULL;
	d->published = now;
	if (n)
		bus_emit_properties_changed(d, names);
}

/* ------------------------------------------------------------ the child */

static int on_child_exit(sd_event_source *s, const siginfo_t *si, void *userdata)
{
	struct device *d = userdata;
	int r = si->si_code == CLD_EXITED ? -si->si_status : -EINTR;

	if (!d)
		return 0;	/* its device is gone; the source floats */
	d->child_source = sd_event_source_unref(d->child_source);
	d->child = 0;
	if (d->child_is_probe) {
		d->probe = r == 0 ? PROBE_OK : PROBE_FAILED;
		if (r < 0)
			log_device_warning_errno(d->name, r, "Probe barrier failed: %m");
		else
			log_device_debug(d->name, "probe barrier succeeded");
	}
	if (d->barrier_call)
		bus_reply_barrier_call(d, r);
	(void)device_evaluate(d, EVALUATE_DRIVE);
	return 0;
}

static int start_barrier(struct device *d, bool probe)
{
	struct manager *m = d->manager;
	pid_t pid;
	int r;

	if (d->child)
		return -EBUSY;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return log_device_error_errno(d->name, -errno, "Cannot fork for a barrier: %m");
	if (pid == 0) {
		r = dmb_mapping_barrier(m->ctx, d->name);
		_exit(r < 0 ? MIN(-r, 255) : 0);
	}
	r = sd_event_add_child(m->event, &d->child_source, pid, WEXITED, on_child_exit, d);
	if (r < 0) {
		(void)kill(pid, SIGKILL);
		(void)waitpid(pid, NULL, 0);
		return log_device_error_errno(d->name, r, "Cannot watch the barrier process: %m");
	}
	d->child = pid;
	d->child_is_probe = probe;
	if (probe)
		d->probe = PROBE_RUNNING;
	return 0;
}

/* ------------------------------------------------------------ deciding */

static void fill_input(const struct device *d, usec_t now, int cache_off_result,
		       struct policy_input *in)
{
	*in = (struct policy_input){
		.now = now,
		.pinned = d->pinned,
		.mode = d->status.mode,
		.kernel_cache = d->status.cache_writeback,
		.drive_cache = d->wc.drive,
		.fua = d->status.fua,
		.flush_errors = d->status.flush_errors,
		.fallbacks = d->status.fallbacks,
		.held = d->status.held,
		.probe = d->probe,
		.cache_off_result = cache_off_result,
	};
}

static bool decision_changes(const struct device *d, const struct policy_decision *dec)
{
	return dec->next.phase != d->policy.phase || dec->set_mode || dec->action != ACTION_NONE ||
	       dec->flush_failed;
}

static void log_decision(const struct device *d, const struct policy_decision *dec)
{
	if (!dec->reason || !decision_changes(d, dec))
		return;
	if (dec->set_mode && dec->mode != d->status.mode) {
		char disk[16 + DMB_DISK_NAME_MAX], from[32], to[32];
		const char *fields[] = { "MESSAGE_ID=" BARRIERD_MESSAGE_MODE_CHANGED, disk, from, to,
					 NULL };

		snprintf(disk, sizeof(disk), "DMB_DISK=%s", d->disk_name);
		snprintf(from, sizeof(from), "DMB_MODE_FROM=%s", dmb_mode_to_string(d->status.mode));
		snprintf(to, sizeof(to), "DMB_MODE=%s", dmb_mode_to_string(dec->mode));
		log_device_struct(d->name, dec->priority, fields, "%s [mode %s -> %s]", dec->reason,
				  dmb_mode_to_string(d->status.mode), dmb_mode_to_string(dec->mode));
	} else
		log_device_full_errno(d->name, dec->priority, 0, "%s [mode %s]", dec->reason,
				      dmb_mode_to_string(d->status.mode));
}

/* The flush failure being handled is handled: say so, once. */
static void report_flush_failure(struct device *d)
{
	char disk[16 + DMB_DISK_NAME_MAX], mode[32], cache[32];
	const char *fields[] = { "MESSAGE_ID=" BARRIERD_MESSAGE_FLUSH_FAILED, disk, mode, cache,
				 NULL };

	d->flush_failed_pending = false;
	snprintf(disk, sizeof(disk), "DMB_DISK=%s", d->disk_name);
	snprintf(mode, sizeof(mode), "DMB_MODE=%s", dmb_mode_to_string(d->status.mode));
	snprintf(cache, sizeof(cache), "DMB_WRITE_CACHE=%d", device_write_cache(d) ? 1 : 0);
	log_device_struct(d->name, LOG_INFO, fields,
			  "flush failure handled in %llu ms: mode %s, write cache %s",
			  (unsigned long long)((clock_usec() - d->flush_failed_started) / USEC_PER_MSEC),
			  dmb_mode_to_string(d->status.mode), device_write_cache(d) ? "on" : "off");
	bus_emit_flush_failed(d);
}

/*
 * Read, decide, act.  Nothing here waits on a drive: the drive is asked,
 * and its cache switched, in drive jobs, and while one runs for this
 * mapping nothing is decided (it ends within DRIVE_JOB_TIMEOUT_USEC, and
 * then this runs again with its result).
 */
int device_evaluate(struct device *d, unsigned int flags)
{
	struct manager *m = d->manager;
	struct policy_decision dec;
	struct policy_input in;
	bool mode_set = false;
	int r;

	r = refresh(d, flags);
	if (r < 0) {
		if (r != -ENOENT && r != -EMEDIUMTYPE && r != -ESTALE)
			log_device_warning_errno(d->name, r, "Cannot read the mapping's status: %s",
						 dmb_ctx_get_error(m->ctx));
		return r;
	}

	for (unsigned int round = 0; round < EVALUATE_ROUNDS && !job_running(d); round++) {
		fill_input(d, manager_now(m), d->cache_off_result, &in);
		policy_decide(&m->config.policy, &d->policy, &in, &dec);
		log_decision(d, &dec);
		if (dec.flush_failed && !d->flush_failed_pending) {
			d->flush_failed_pending = true;
			d->flush_failed_started = clock_usec();
		}
		d->policy = dec.next;
		d->cache_off_result = 1;	/* used once */
		/* A probe's result is used once. */
		if (d->probe == PROBE_OK || d->probe == PROBE_FAILED)
			d->probe = PROBE_IDLE;

		if (dec.set_mode) {
			mode_set = true;
			r = dmb_mapping_set_mode(m->ctx, d->name, dec.mode);
			if (r < 0)
				log_device_error_errno(d->name, r, "Cannot set mode %s: %s",
						       dmb_mode_to_string(dec.mode),
						       dmb_ctx_get_error(m->ctx));
		}
		if (dec.action == ACTION_CACHE_OFF) {
			/* Decided again when the job is done, or now if it cannot start. */
			r = job_start(d, JOB_SET, false);
			if (r < 0) {
				log_device_full_errno(d->name, LOG_CRIT, r,
						      "Cannot turn the write cache of %s off: %s",
						      d->disk_name,
						      r == -EBUSY ? "the drive has not answered an earlier command"
								  : strerror(-r));
				d->cache_off_result = r;
				continue;
			}
			break;
		}
		/* A probe that cannot start is tried again at the next tick. */
		if (dec.action == ACTION_PROBE)
			(void)start_barrier(d, true);
		break;
	}
	if (mode_set) {
		d->status_at = 0;
		(void)device_refresh_status(d);
		cache_from_status(d);
	}
	if (d->flush_failed_pending && !job_running(d) && d->policy.phase != PHASE_FAILING)
		report_flush_failure(d);
	publish(d);
	return 0;
}

/* ------------------------------------------------------------ requests */

int device_set_pinned(struct device *d, bool pinned)
{
	int r;

	if (pinned == d->pinned)
		return pinned ? pin_save(d) : 0;
	r = pinned ? pin_save(d) : pin_remove(d);
	if (r < 0)
		return r;
	d->pinned = pinned;
	return 0;
}

int device_set_mode(struct device *d, const char *mode_name, bool pin, char *err, size_t errsize)
{
	struct manager *m = d->manager;
	bool was_pinned = d->pinned;
	enum dmb_mode mode;
	int r;

	if (!strcmp(mode_name, "auto")) {
		if (pin) {
			snprintf(err, errsize, "mode \"auto\" cannot be pinned");
			return -EINVAL;
		}
		r = device_set_pinned(d, false);
		if (r < 0) {
			snprintf(err, errsize, "cannot remove the pin: %s", strerror(-r));
			return r;
		}
		log_device_notice(d->name, "unpinned; barrierd manages the mode");
		return device_evaluate(d, EVALUATE_DRIVE);
	}
	if (dmb_mode_from_string(mode_name, &mode) < 0) {
		snprintf(err, errsize,
			 "unknown mode \"%.40s\" (flush, fua, drain, passthrough, none, auto)",
			 mode_name);
		return -EINVAL;
	}
	/* Pin first: if the pin cannot be recorded, nothing has changed. */
	r = device_set_pinned(d, pin);
	if (r < 0) {
		snprintf(err, errsize, "cannot record the pin: %s", strerror(-r));
		return r;
	}
	r = dmb_mapping_set_mode(m->ctx, d->name, mode);
	if (r < 0) {
		snprintf(err, errsize, "%s", dmb_ctx_get_error(m->ctx));
		(void)device_set_pinned(d, was_pinned);
		return r;
	}
	log_device_notice(d->name, "mode %s set by request%s", mode_name, pin ? ", pinned" : "");
	if (!pin)
		d->policy.phase = PHASE_UNKNOWN;
	return device_evaluate(d, EVALUATE_DRIVE);
}

int device_set_write_cache(struct device *d, bool enable, sd_bus_message *call)
{
	int r;

	if (d->job_call || d->queued_call)
		return -EBUSY;
	/*
	 * The disk under the table as it is now, not as it was adopted.  A
	 * mapping gone or recreated meanwhile is not switched (-ENXIO: the
	 * caller must not take it for "gone after the switch").
	 */
	r = refresh(d, EVALUATE_TABLE);
	if (r == -ENOENT || r == -EMEDIUMTYPE || r == -ESTALE)
		return -ENXIO;
	if (r < 0)
		return r;
	if (job_running(d)) {
		/* After the job in flight (at most DRIVE_JOB_TIMEOUT_USEC). */
		d->queued_call = sd_bus_message_ref(call);
		d->queued_enable = enable;
		return 0;
	}
	r = job_start(d, JOB_SET, enable);
	if (r < 0)
		return r;
	d->job_call = sd_bus_message_ref(call);
	return 0;
}

int device_barrier(struct device *d, sd_bus_message *call)
{
	int r;

	if (d->child)
		return -EBUSY;
	r = start_barrier(d, false);
	if (r < 0)
		return r;
	d->barrier_call = sd_bus_message_ref(call);
	return 0;
}

int device_reset_stats(struct device *d)
{
	int r;

	r = dmb_mapping_reset_stats(d->manager->ctx, d->name);
	if (r < 0)
		return r;
	log_device_info(d->name, "counters reset by request");
	return device_evaluate(d, 0);
}

/* ------------------------------------------------------------ life */

/*
 * AdoptHoldOnFlushErrorMSec= (off unless configured): give a mapping
 * without a hold the configured one, so that a failed flush can be
 * survived: the same table otherwise, swapped in by a suspend/resume (a
 * lockfs freeze of the file system on it; in-flight I/O completes first).
 * That rewrites a table barrierd did not make, so it is opt-in, and even
 * then it is done only to a mapping that appears while barrierd runs,
 * never to what a start finds: a start can come from anyone (D-Bus and
 * udev activation) and must not suspend anybody's disks.
 */
static void adopt_hold(struct device *d)
{
	struct manager *m = d->manager;
	char backing[32];
	struct dmb_spec spec;
	int r;

	if (d->pinned || d->table.hold_ms || !m->config.adopt_hold_ms || d->info.suspended)
		return;
	if (!m->bus_ready) {
		log_device_debug(d->name,
				 "no hold; AdoptHoldOnFlushErrorMSec= is not applied to what a start finds");
		return;
	}
	snprintf(backing, sizeof(backing), "%u:%u", major(d->table.backing), minor(d->table.backing));
	dmb_spec_init(&spec);
	spec.device = backing;
	spec.offset = d->table.offset;
	spec.length = d->table.length;
	spec.mode = d->status.mode;
	spec.fallback = d->table.fallback;
	spec.hold_ms = m->config.adopt_hold_ms;
	r = dmb_mapping_reload(m->ctx, d->name, &spec);
	if (r < 0) {
		log_device_warning_errno(d->name, r,
					 "Cannot set hold_on_flush_error:%u; a failed flush will fail the barrier at once: %s",
					 spec.hold_ms, dmb_ctx_get_error(m->ctx));
		return;
	}
	log_device_info(d->name, "table reloaded with hold_on_flush_error:%u", spec.hold_ms);
	if (dmb_mapping_table(m->ctx, d->name, &d->table, NULL) >= 0)
		resolve_disk(d);
}

int device_new(struct manager *m, const char *name, bool created, struct device **ret)
{
	_cleanup_(freep) struct device *d = NULL;
	int r;

	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->manager = m;
	d->wc.drive = -ENODATA;
	d->job_fd = -1;
	d->cache_off_result = 1;
	policy_state_init(&d->policy);
	d->name = strdup(name);
	if (!d->name)
		return -ENOMEM;
	r = sd_bus_path_encode(BUS_DEVICE_PREFIX, name, &d->path);
	if (r < 0)
		goto fail;
	r = dmb_mapping_table(m->ctx, name, &d->table, NULL);
	if (r < 0)
		goto fail;
	r = dmb_mapping_status(m->ctx, name, &d->status, &d->info);
	if (r < 0)
		goto fail;
	d->status_at = manager_now(m);
	d->diskseq = read_diskseq(d->info.devnum);
	r = dmb_disk_whole(m->ctx, d->table.backing, &d->disk);
	if (r < 0)
		goto fail;
	if (dmb_disk_name(m->ctx, d->disk, d->disk_name, sizeof(d->disk_name)) < 0)
		snprintf(d->disk_name, sizeof(d->disk_name), "%u:%u", major(d->disk), minor(d->disk));
	cache_from_status(d);
	d->pinned = pin_load(d);
	/* Failures from before barrierd looked are not news; held barriers are. */
	d->policy.flush_errors_seen = d->status.flush_errors;
	d->policy.fallbacks_seen = d->status.fallbacks;
	if (!created)
		adopt_hold(d);
	log_device_info(d->name, "adopted: %s on %s, mode %s%s, fallback %s, hold %u ms, write cache %s",
			d->info.uuid[0] ? d->info.uuid : "(no uuid)", d->disk_name,
			dmb_mode_to_string(d->status.mode), d->pinned ? " (pinned)" : "",
			dmb_fallback_to_string(d->table.fallback), d->table.hold_ms,
			device_write_cache(d) ? "on" : "off");
	*ret = TAKE_PTR(d);
	return 0;
fail:
	free(d->name);
	free(d->path);
	return r;
}

struct device *device_free(struct device *d)
{
	if (!d)
		return NULL;
	if (d->barrier_call)
		bus_fail_barrier_call(d, -ENOENT);
	if (d->job_call) {
		bus_reply_write_cache_call(d, d->job_call, -ENXIO, "the mapping went away");
		d->job_call = sd_bus_message_unref(d->job_call);
	}
	if (d->queued_call) {
		bus_reply_write_cache_call(d, d->queued_call, -ENXIO, "the mapping went away");
		d->queued_call = sd_bus_message_unref(d->queued_call);
	}
	job_close(d);
	if (d->job_child) {
		(void)sd_event_source_set_userdata(d->job_child, NULL);
		(void)sd_event_source_set_floating(d->job_child, 1);
		d->job_child = sd_event_source_unref(d->job_child);
	}
	if (d->child_source) {
		/* Let the loop reap the child; it no longer points here. */
		(void)sd_event_source_set_userdata(d->child_source, NULL);
		(void)sd_event_source_set_floating(d->child_source, 1);
		d->child_source = sd_event_source_unref(d->child_source);
	}
	free(d->name);
	free(d->path);
	free(d);
	return NULL;
}
