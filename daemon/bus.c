// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * bus.c: barrierd's D-Bus API, org.dmbarrier1 on the system bus
 * (docs/dbus/org.dmbarrier1.xml is its reference).  One static vtable per
 * interface, next to its handlers; device objects come from a fallback
 * vtable with a find function and an enumerator, so they follow the
 * manager's device list with no per-object registration.
 *
 * Every mutating method reads and checks its arguments (its options
 * dictionary included: no key is ignored), then asks polkit whether the
 * caller may (polkit.c; the actions are daemon/org.dmbarrier1.policy), and
 * only then acts.  The polkit question is asynchronous: the handler
 * returns, and runs again from the start when the answer is in.  Without
 * polkit on the bus the rule is root only.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>

#include "daemon.h"
#include "log.h"
#include "polkit.h"

#define ERROR_NO_SUCH_DEVICE "org.dmbarrier1.Error.NoSuchDevice"
#define ERROR_EXISTS "org.dmbarrier1.Error.Exists"
#define ERROR_NOT_SUPPORTED "org.dmbarrier1.Error.NotSupported"
#define ERROR_FAILED "org.dmbarrier1.Error.Failed"

/* ------------------------------------------------------------ helpers */

/*
 * May the caller do action?  1: yes; 0: polkit was asked and the handler
 * must return 1 (it runs again with the answer); < 0: refused, error set.
 */
static int authorize(struct manager *m, sd_bus_message *msg, const char *action,
		     sd_bus_error *error)
{
	return polkit_authorize(&m->polkit, msg, action, error);
}

/*
 * The options of a method that has none yet: an empty a{sv}.  A key is
 * refused rather than ignored, so that a caller relying on an option a
 * later barrierd knows learns that this one does not.
 */
static int read_no_options(sd_bus_message *msg, sd_bus_error *error)
{
	const char *key;
	int r;

	r = sd_bus_message_enter_container(msg, 'a', "{sv}");
	if (r < 0)
		return r;
	r = sd_bus_message_enter_container(msg, 'e', "sv");
	if (r < 0)
		return r;
	if (r > 0) {
		r = sd_bus_message_read(msg, "s", &key);
		if (r < 0)
			return r;
		return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
					 "unknown option \"%.64s\" (%s() takes none)", key,
					 sd_bus_message_get_member(msg));
	}
	return sd_bus_message_exit_container(msg);
}

/* The D-Bus error name for a libdmbarrier failure. */
static const char *error_name(int r)
{
	switch (r) {
	case -ENOENT:
	case -EMEDIUMTYPE:
		return ERROR_NO_SUCH_DEVICE;
	case -EEXIST:
		return ERROR_EXISTS;
	case -EBUSY:
		return ERROR_BUSY;
	case -ENOTTY:
	case -EOPNOTSUPP:
		return ERROR_NOT_SUPPORTED;
	case -EINVAL:
		return SD_BUS_ERROR_INVALID_ARGS;
	default:
		return ERROR_FAILED;
	}
}

/* A libdmbarrier failure as a D-Bus error, with the library's sentence. */
static int error_from_dmb(struct manager *m, sd_bus_error *error, int r)
{
	const char *msg = dmb_ctx_get_error(m->ctx);

	if (!msg || !*msg)
		msg = strerror(-r);
	return sd_bus_error_setf(error, error_name(r), "%s", msg);
}

/* ------------------------------------------------------- Manager */

static int property_get_version(sd_bus *bus, const char *path, const char *interface,
				const char *property, sd_bus_message *reply, void *userdata,
				sd_bus_error *error)
{
	return sd_bus_message_append(reply, "s", BARRIERD_VERSION);
}

static int property_get_poll_interval(sd_bus *bus, const char *path, const char *interface,
				      const char *property, sd_bus_message *reply, void *userdata,
				      sd_bus_error *error)
{
	struct manager *m = userdata;

	return sd_bus_message_append(reply, "t", (uint64_t)m->config.poll_interval_usec);
}

static int method_list_devices(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	struct manager *m = userdata;
	int r;

	r = sd_bus_message_new_method_return(msg, &reply);
	if (r < 0)
		return r;
	r = sd_bus_message_open_container(reply, 'a', "(so)");
	if (r < 0)
		return r;
	for (size_t i = 0; i < m->n_devices; i++) {
		r = sd_bus_message_append(reply, "(so)", m->devices[i]->name, m->devices[i]->path);
		if (r < 0)
			return r;
	}
	r = sd_bus_message_close_container(reply);
	if (r < 0)
		return r;
	return sd_bus_send(NULL, reply, NULL);
}

/* The device a call names in its first argument. */
static int read_device(sd_bus_message *msg, struct manager *m, sd_bus_error *error,
		       struct device **ret)
{
	const char *name;
	int r;

	r = sd_bus_message_read(msg, "s", &name);
	if (r < 0)
		return r;
	*ret = manager_find_device(m, name);
	if (!*ret)
		return sd_bus_error_setf(error, ERROR_NO_SUCH_DEVICE, "no barrier mapping '%.128s'",
					 name);
	return 0;
}

static int method_get_device(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	struct device *d;
	int r;

	r = read_device(msg, userdata, error, &d);
	if (r < 0)
		return r;
	return sd_bus_reply_method_return(msg, "o", d->path);
}

/* CreateDevice's options, a{sv}, checked whole before anything happens. */
struct create_options {
	struct dmb_spec spec;
	bool have_mode;
	bool pin;
};

static int read_variant(sd_bus_message *msg, const char *key, char type, void *ret,
			sd_bus_error *error)
{
	const char sig[2] = { type, '\0' };
	int r;

	r = sd_bus_message_enter_container(msg, 'v', sig);
	if (r == -ENXIO)
		return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
					 "option \"%s\" must be of type '%s'", key, sig);
	if (r < 0)
		return r;
	r = sd_bus_message_read_basic(msg, type, ret);
	if (r < 0)
		return r;
	return sd_bus_message_exit_container(msg);
}

static int read_create_options(struct manager *m, sd_bus_message *msg, struct create_options *o,
			       sd_bus_error *error)
{
	static const char *const names[] = { "Offset", "Length", "Mode", "Pin", "Fallback",
					     "HoldOnFlushErrorMSec" };
	unsigned int seen = 0;
	int r;

	*o = (struct create_options){ 0 };
	dmb_spec_init(&o->spec);
	o->spec.fallback = m->config.fallback;
	o->spec.hold_ms = m->config.hold_ms;
	r = sd_bus_message_enter_container(msg, 'a', "{sv}");
	if (r < 0)
		return r;
	while ((r = sd_bus_message_enter_container(msg, 'e', "sv")) > 0) {
		const char *key, *s;
		unsigned int i;
		uint32_t u;
		int b;

		r = sd_bus_message_read(msg, "s", &key);
		if (r < 0)
			return r;
		for (i = 0; i < ELEMENTSOF(names); i++)
			if (!strcmp(key, names[i]))
				break;
		if (i == ELEMENTSOF(names))
			return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
						 "unknown option \"%.64s\" (Offset, Length, Mode, Pin, Fallback, HoldOnFlushErrorMSec)",
						 key);
		if (seen & (1U << i))
			return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
						 "option \"%s\" given twice", key);
		seen |= 1U << i;
		switch (i) {
		case 0:
			r = read_variant(msg, key, 't', &o->spec.offset, error);
			break;
		case 1:
			r = read_variant(msg, key, 't', &o->spec.length, error);
			break;
		case 2:
			r = read_variant(msg, key, 's', &s, error);
			if (r >= 0 && dmb_mode_from_string(s, &o->spec.mode) < 0)
				return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
							 "unknown mode \"%.40s\" (flush, fua, drain, passthrough, none)",
							 s);
			o->have_mode = true;
			break;
		case 3:
			r = read_variant(msg, key, 'b', &b, error);
			o->pin = b;
			break;
		case 4:
			r = read_variant(msg, key, 's', &s, error);
			if (r >= 0 && dmb_fallback_from_string(s, &o->spec.fallback) < 0)
				return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
							 "unknown fallback \"%.40s\" (none, drain)", s);
			break;
		default:
			r = read_variant(msg, key, 'u', &u, error);
			if (r >= 0 && u > DMB_HOLD_MS_MAX)
				return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
							 "HoldOnFlushErrorMSec %u is over %u", u,
							 DMB_HOLD_MS_MAX);
			o->spec.hold_ms = u;
			break;
		}
		if (r < 0)
			return r;
		r = sd_bus_message_exit_container(msg);
		if (r < 0)
			return r;
	}
	if (r < 0)
		return r;
	r = sd_bus_message_exit_container(msg);
	if (r < 0)
		return r;
	if (o->pin && !o->have_mode)
		return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
					 "option \"Pin\" needs \"Mode\"");
	return 0;
}

static int method_create_device(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	struct manager *m = userdata;
	struct create_options o;
	const char *name, *backing;
	struct device *d;
	dev_t dev;
	int r;

	r = sd_bus_message_read(msg, "ss", &name, &backing);
	if (r < 0)
		return r;
	r = read_create_options(m, msg, &o, error);
	if (r < 0)
		return r;
	r = authorize(m, msg, POLKIT_ACTION_MANAGE_DEVICES, error);
	if (r <= 0)
		return r < 0 ? r : 1;
	if (dmb_name_check(name) < 0)
		return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
					 "'%.64s' is not a valid mapping name (1 to %zu of A-Z a-z 0-9 # + - . : = @ _)",
					 name, (size_t)(DMB_NAME_MAX - 1 - strlen(DMB_UUID_PREFIX)));
	if (!*backing)
		return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
					 "no backing device given");
	r = dmb_disk_from_path(m->ctx, backing, &dev);
	if (r < 0)
		/* Missing: NoSuchDevice (barrierctl's exit 3); not a disk: bad argument. */
		return sd_bus_error_setf(error,
					 r == -ENOENT ? ERROR_NO_SUCH_DEVICE : SD_BUS_ERROR_INVALID_ARGS,
					 "backing device: %s", dmb_ctx_get_error(m->ctx));
	if (m->n_devices >= DEVICES_MAX)
		return sd_bus_error_setf(error, ERROR_FAILED, "barrierd manages %d mappings already",
					 DEVICES_MAX);
	o.spec.device = backing;
	r = manager_create_mapping(m, name, &o.spec, o.pin, &d);
	if (r < 0)
		return error_from_dmb(m, error, r);
	return sd_bus_reply_method_return(msg, "o", d->path);
}

static int method_remove_device(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	struct manager *m = userdata;
	struct device *d;
	int r;

	r = read_device(msg, m, error, &d);
	if (r < 0)
		return r;
	r = read_no_options(msg, error);
	if (r < 0)
		return r;
	r = authorize(m, msg, POLKIT_ACTION_MANAGE_DEVICES, error);
	if (r <= 0)
		return r < 0 ? r : 1;
	r = dmb_mapping_remove(m->ctx, d->name, DMB_REMOVE_RETRY);
	if (r < 0)
		return error_from_dmb(m, error, r);
	log_device_notice(d->name, "removed by request");
	(void)device_set_pinned(d, false);
	manager_remove_device(m, d);
	return sd_bus_reply_method_return(msg, NULL);
}

static const sd_bus_vtable manager_vtable[] = {
	SD_BUS_VTABLE_START(0),
	SD_BUS_PROPERTY("Version", "s", property_get_version, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("PollIntervalUSec", "t", property_get_poll_interval, 0,
			SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_METHOD_WITH_ARGS("ListDevices", SD_BUS_NO_ARGS, SD_BUS_RESULT("a(so)", devices),
				method_list_devices, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("GetDevice", SD_BUS_ARGS("s", name), SD_BUS_RESULT("o", device),
				method_get_device, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("CreateDevice",
				SD_BUS_ARGS("s", name, "s", backing, "a{sv}", options),
				SD_BUS_RESULT("o", device), method_create_device,
				SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("RemoveDevice", SD_BUS_ARGS("s", name, "a{sv}", options),
				SD_BUS_NO_RESULT, method_remove_device, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_SIGNAL_WITH_ARGS("DeviceAdded", SD_BUS_ARGS("s", name, "o", device), 0),
	SD_BUS_SIGNAL_WITH_ARGS("DeviceRemoved", SD_BUS_ARGS("s", name, "o", device), 0),
	SD_BUS_VTABLE_END,
};

/* -------------------------------------------------------- Device */

static bool is_counter(const char *property)
{
	static const char *const counters[] = { "Barriers", "Flushes", "FlushErrors", "Fallbacks",
						"Held" };

	for (size_t i = 0; i < ELEMENTSOF(counters); i++)
		if (!strcmp(property, counters[i]))
			return true;
	return false;
}

static int property_get_device(sd_bus *bus, const char *path, const char *interface,
			       const char *property, sd_bus_message *reply, void *userdata,
			       sd_bus_error *error)
{
	struct device *d = userdata;
	const struct dmb_status *st = &d->status;

	/* Counters are read fresh, but at most a few times a second. */
	if (is_counter(property))
		(void)device_refresh_counters(d);

	if (!strcmp(property, "Name"))
		return sd_bus_message_append(reply, "s", d->name);
	if (!strcmp(property, "Backing"))
		return sd_bus_message_append(reply, "s", d->disk_name);
	if (!strcmp(property, "Mode"))
		return sd_bus_message_append(reply, "s", dmb_mode_to_string(st->mode));
	if (!strcmp(property, "Pinned"))
		return sd_bus_message_append(reply, "b", d->pinned);
	if (!strcmp(property, "WriteCache"))
		return sd_bus_message_append(reply, "b", device_write_cache(d));
	if (!strcmp(property, "KernelWriteCache"))
		return sd_bus_message_append(reply, "b", d->status.cache_writeback);
	if (!strcmp(property, "DriveWriteCache"))
		return sd_bus_message_append(reply, "s",
					     d->wc.drive < 0 ? "unknown" : d->wc.drive ? "on" : "off");
	if (!strcmp(property, "Fua"))
		return sd_bus_message_append(reply, "b", st->fua);
	if (!strcmp(property, "State"))
		return sd_bus_message_append(reply, "s", policy_phase_to_string(d->policy.phase));
	if (!strcmp(property, "Fallback"))
		return sd_bus_message_append(reply, "s", dmb_fallback_to_string(d->table.fallback));
	if (!strcmp(property, "HoldOnFlushErrorMSec"))
		return sd_bus_message_append(reply, "u", d->table.hold_ms);
	if (!strcmp(property, "Barriers"))
		return sd_bus_message_append(reply, "t", st->barriers);
	if (!strcmp(property, "Flushes"))
		return sd_bus_message_append(reply, "t", st->flushes);
	if (!strcmp(property, "FlushErrors"))
		return sd_bus_message_append(reply, "t", st->flush_errors);
	if (!strcmp(property, "Fallbacks"))
		return sd_bus_message_append(reply, "t", st->fallbacks);
	if (!strcmp(property, "Held"))
		return sd_bus_message_append(reply, "u", st->held);
	return sd_bus_error_setf(error, SD_BUS_ERROR_UNKNOWN_PROPERTY, "no property %s", property);
}

static int method_set_mode(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	struct device *d = userdata;
	char err[256] = "";
	const char *mode;
	int pin, r;

	r = sd_bus_message_read(msg, "sb", &mode, &pin);
	if (r < 0)
		return r;
	r = read_no_options(msg, error);
	if (r < 0)
		return r;
	r = authorize(d->manager, msg, POLKIT_ACTION_SET_MODE, error);
	if (r <= 0)
		return r < 0 ? r : 1;
	r = device_set_mode(d, mode, pin, err, sizeof(err));
	if (r == -EINVAL && err[0])
		return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "%s", err);
	if (r < 0 && err[0])
		return sd_bus_error_setf(error, ERROR_FAILED, "%s", err);
	if (r < 0 && r != -ENOENT && r != -EMEDIUMTYPE && r != -ESTALE)
		return error_from_dmb(d->manager, error, r);
	return sd_bus_reply_method_return(msg, NULL);
}

static int method_set_write_cache(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	struct device *d = userdata;
	int enable, r;

	r = sd_bus_message_read(msg, "b", &enable);
	if (r < 0)
		return r;
	r = read_no_options(msg, error);
	if (r < 0)
		return r;
	r = authorize(d->manager, msg, POLKIT_ACTION_SET_WRITE_CACHE, error);
	if (r <= 0)
		return r < 0 ? r : 1;
	r = device_set_write_cache(d, enable, msg);
	if (r == -EBUSY && d->job_abandoned)
		return sd_bus_error_setf(error, ERROR_BUSY,
					 "%s has not answered an earlier command yet", d->disk_name);
	if (r == -EBUSY)
		return sd_bus_error_setf(error, ERROR_BUSY,
					 "a write cache switch on '%s' is in progress already",
					 d->name);
	if (r == -ENXIO)
		return sd_bus_error_setf(error, ERROR_NO_SUCH_DEVICE,
					 "'%s' was removed or made again meanwhile", d->name);
	if (r < 0)
		return error_from_dmb(d->manager, error, r);
	return 1;	/* answered when the drive has (device.c: drive jobs) */
}

static int method_barrier(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	struct device *d = userdata;
	int r;

	r = read_no_options(msg, error);
	if (r < 0)
		return r;
	r = authorize(d->manager, msg, POLKIT_ACTION_BARRIER, error);
	if (r <= 0)
		return r < 0 ? r : 1;
	r = device_barrier(d, msg);
	if (r == -EBUSY)
		return sd_bus_error_setf(error, ERROR_BUSY,
					 "an explicit barrier on '%s' is running already", d->name);
	if (r < 0)
		return sd_bus_error_setf(error, ERROR_FAILED, "cannot start the barrier: %s",
					 strerror(-r));
	return 1;	/* replied when the barrier is done */
}

static int method_reset_stats(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	struct device *d = userdata;
	int r;

	r = read_no_options(msg, error);
	if (r < 0)
		return r;
	r = authorize(d->manager, msg, POLKIT_ACTION_RESET_STATS, error);
	if (r <= 0)
		return r < 0 ? r : 1;
	r = device_reset_stats(d);
	if (r < 0 && r != -ENOENT && r != -EMEDIUMTYPE && r != -ESTALE)
		return error_from_dmb(d->manager, error, r);
	return sd_bus_reply_method_return(msg, NULL);
}

#define DEVICE_PROPERTY(name, sig, flags) \
	SD_BUS_PROPERTY(name, sig, property_get_device, 0, flags)

static const sd_bus_vtable device_vtable[] = {
	SD_BUS_VTABLE_START(0),
	DEVICE_PROPERTY("Name", "s", SD_BUS_VTABLE_PROPERTY_CONST),
	DEVICE_PROPERTY("Backing", "s", SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	DEVICE_PROPERTY("Mode", "s", SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	DEVICE_PROPERTY("Pinned", "b", SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	DEVICE_PROPERTY("WriteCache", "b", SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	DEVICE_PROPERTY("KernelWriteCache", "b", SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	DEVICE_PROPERTY("DriveWriteCache", "s", SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	DEVICE_PROPERTY("Fua", "b", SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	DEVICE_PROPERTY("State", "s", SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	DEVICE_PROPERTY("Fallback", "s", SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	DEVICE_PROPERTY("HoldOnFlushErrorMSec", "u", SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	DEVICE_PROPERTY("Barriers", "t", 0),
	DEVICE_PROPERTY("Flushes", "t", 0),
	DEVICE_PROPERTY("FlushErrors", "t", 0),
	DEVICE_PROPERTY("Fallbacks", "t", 0),
	DEVICE_PROPERTY("Held", "u", 0),
	SD_BUS_METHOD_WITH_ARGS("SetMode", SD_BUS_ARGS("s", mode, "b", pin, "a{sv}", options),
				SD_BUS_NO_RESULT, method_set_mode, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("SetWriteCache", SD_BUS_ARGS("b", enabled, "a{sv}", options),
				SD_BUS_NO_RESULT, method_set_write_cache,
				SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("Barrier", SD_BUS_ARGS("a{sv}", options), SD_BUS_NO_RESULT,
				method_barrier, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("ResetStats", SD_BUS_ARGS("a{sv}", options), SD_BUS_NO_RESULT,
				method_reset_stats, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_SIGNAL_WITH_ARGS("FlushFailed",
				SD_BUS_ARGS("t", flush_errors, "s", mode, "b", write_cache), 0),
	SD_BUS_VTABLE_END,
};

static int device_find(sd_bus *bus, const char *path, const char *interface, void *userdata,
		       void **found, sd_bus_error *error)
{
	_cleanup_(freep) char *name = NULL;
	struct manager *m = userdata;
	struct device *d;
	int r;

	r = sd_bus_path_decode(path, BUS_DEVICE_PREFIX, &name);
	if (r <= 0)
		return r;
	d = manager_find_device(m, name);
	if (!d)
		return 0;
	*found = d;
	return 1;
}

static int device_enumerate(sd_bus *bus, const char *path, void *userdata, char ***nodes,
			    sd_bus_error *error)
{
	struct manager *m = userdata;
	char **l;

	l = calloc(m->n_devices + 1, sizeof(char *));
	if (!l)
		return -ENOMEM;
	for (size_t i = 0; i < m->n_devices; i++) {
		l[i] = strdup(m->devices[i]->path);
		if (!l[i]) {
			for (size_t j = 0; j < i; j++)
				free(l[j]);
			free(l);
			return -ENOMEM;
		}
	}
	*nodes = l;
	return 0;
}

/* ------------------------------------------------------ signals, replies */

void bus_emit_device_added(struct manager *m, struct device *d)
{
	if (!m->bus)
		return;
	(void)sd_bus_emit_signal(m->bus, BUS_PATH, BUS_MANAGER_IFACE, "DeviceAdded", "so", d->name,
				 d->path);
	(void)sd_bus_emit_object_added(m->bus, d->path);
}

void bus_emit_device_removed(struct manager *m, struct device *d)
{
	if (!m->bus)
		return;
	(void)sd_bus_emit_object_removed(m->bus, d->path);
	(void)sd_bus_emit_signal(m->bus, BUS_PATH, BUS_MANAGER_IFACE, "DeviceRemoved", "so",
				 d->name, d->path);
}

void bus_emit_properties_changed(struct device *d, char **names)
{
	struct manager *m = d->manager;
	int r;

	if (!m->bus)
		return;
	r = sd_bus_emit_properties_changed_strv(m->bus, d->path, BUS_DEVICE_IFACE, names);
	if (r < 0)
		log_device_warning_errno(d->name, r, "Cannot send PropertiesChanged, ignoring: %m");
}

void bus_emit_manager_changed(struct manager *m, const char *property)
{
	if (m->bus)
		(void)sd_bus_emit_properties_changed(m->bus, BUS_PATH, BUS_MANAGER_IFACE, property,
						     NULL);
}

void bus_emit_flush_failed(struct device *d)
{
	struct manager *m = d->manager;
	int r;

	if (!m->bus)
		return;
	r = sd_bus_emit_signal(m->bus, d->path, BUS_DEVICE_IFACE, "FlushFailed", "tsb",
			       d->status.flush_errors, dmb_mode_to_string(d->status.mode),
			       device_write_cache(d));
	if (r < 0)
		log_device_warning_errno(d->name, r, "Cannot send FlushFailed, ignoring: %m");
}

void bus_reply_barrier_call(struct device *d, int result)
{
	sd_bus_message *call = d->barrier_call;
	int r;

	d->barrier_call = NULL;
	if (result == 0)
		r = sd_bus_reply_method_return(call, NULL);
	else if (result == -EOPNOTSUPP)
		r = sd_bus_reply_method_errorf(call, ERROR_NOT_SUPPORTED,
					       "'%s' is in mode none: barriers are refused", d->name);
	else
		r = sd_bus_reply_method_errorf(call, ERROR_FAILED, "the barrier on '%s' failed: %s",
					       d->name, strerror(-result));
	if (r < 0)
		log_device_warning_errno(d->name, r, "Cannot reply to Barrier(), ignoring: %m");
	sd_bus_message_unref(call);
}

void bus_reply_write_cache_call(struct device *d, sd_bus_message *call, int result,
				const char *why)
{
	int r;

	if (result == 0)
		r = sd_bus_reply_method_return(call, NULL);
	else if (result == -ENXIO)
		r = sd_bus_reply_method_errorf(call, ERROR_NO_SUCH_DEVICE, "'%s': %s", d->name,
					       why ? why : strerror(-result));
	else
		r = sd_bus_reply_method_errorf(call, error_name(result), "%s",
					       why && *why ? why : strerror(-result));
	if (r < 0)
		log_device_warning_errno(d->name, r, "Cannot reply to SetWriteCache(), ignoring: %m");
}

void bus_fail_barrier_call(struct device *d, int error)
{
	sd_bus_message *call = d->barrier_call;

	d->barrier_call = NULL;
	(void)sd_bus_reply_method_errorf(call, ERROR_NO_SUCH_DEVICE,
					 "'%s' went away during the barrier: %s", d->name,
					 strerror(-error));
	sd_bus_message_unref(call);
}

/* ------------------------------------------------------------ setup */

static int on_name_acquired(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
	struct manager *m = userdata;
	const sd_bus_error *e = sd_bus_message_get_error(reply);

	if (e) {
		log_error("Cannot own the bus name %s: %s", BUS_NAME, e->message);
		return sd_event_exit(m->event, 1);
	}
	m->bus_ready = true;
	log_info("ready: %s on the system bus, %zu mapping%s", BUS_NAME, m->n_devices,
		 m->n_devices == 1 ? "" : "s");
	(void)sd_notifyf(false, "READY=1\nSTATUS=Managing %zu barrier mapping%s", m->n_devices,
			 m->n_devices == 1 ? "" : "s");
	return 0;
}

int bus_setup(struct manager *m)
{
	int r;

	r = sd_bus_open_system_with_description(&m->bus, "barrierd");
	if (r < 0)
		return log_error_errno(r, "Cannot connect to the system bus: %m");
	r = sd_bus_add_object_vtable(m->bus, &m->manager_slot, BUS_PATH, BUS_MANAGER_IFACE,
				     manager_vtable, m);
	if (r < 0)
		return log_error_errno(r, "Cannot add the Manager object: %m");
	r = sd_bus_add_fallback_vtable(m->bus, &m->device_slot, BUS_DEVICE_PREFIX,
				       BUS_DEVICE_IFACE, device_vtable, device_find, m);
	if (r < 0)
		return log_error_errno(r, "Cannot add the Device objects: %m");
	r = sd_bus_add_node_enumerator(m->bus, &m->enumerator_slot, BUS_DEVICE_PREFIX,
				       device_enumerate, m);
	if (r < 0)
		return log_error_errno(r, "Cannot add the Device enumerator: %m");
	r = sd_bus_add_object_manager(m->bus, &m->object_manager_slot, BUS_PATH);
	if (r < 0)
		return log_error_errno(r, "Cannot add the object manager: %m");
	r = sd_bus_attach_event(m->bus, m->event, SD_EVENT_PRIORITY_NORMAL);
	if (r < 0)
		return log_error_errno(r, "Cannot attach the bus to the event loop: %m");
	return 0;
}

/* The name last: requests may arrive only once everything is in place. */
int bus_request_name(struct manager *m)
{
	int r;

	r = sd_bus_request_name_async(m->bus, NULL, BUS_NAME, 0, on_name_acquired, m);
	if (r < 0)
		return log_error_errno(r, "Cannot request the bus name %s: %m", BUS_NAME);
	return 0;
}

void bus_done(struct manager *m)
{
	m->polkit = polkit_registry_free(m->polkit);
	m->object_manager_slot = sd_bus_slot_unref(m->object_manager_slot);
	m->enumerator_slot = sd_bus_slot_unref(m->enumerator_slot);
	m->device_slot = sd_bus_slot_unref(m->device_slot);
	m->manager_slot = sd_bus_slot_unref(m->manager_slot);
	if (m->bus) {
		(void)sd_bus_flush(m->bus);
		m->bus = sd_bus_flush_close_unref(m->bus);
	}
}
