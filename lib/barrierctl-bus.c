// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * barrierctl-bus.c: barrierctl --bus: the same commands made through
 * barrierd's D-Bus API (docs/dbus/org.dmbarrier1.xml) with sd-bus, and
 * printed through the same output functions.  barrierd's errors map to the
 * same exit codes as the library's errno values.  barrierd asks polkit
 * about every change; from a terminal, barrierctl lets polkit ask the user
 * to authenticate (through the session's agent, as systemctl does).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include "barrierctl.h"
#include "macro.h"

#define BUS_NAME "org.dmbarrier1"
#define BUS_PATH "/org/dmbarrier1"
#define IFACE_MANAGER "org.dmbarrier1.Manager"
#define IFACE_DEVICE "org.dmbarrier1.Device"
#define IFACE_PROPERTIES "org.freedesktop.DBus.Properties"
/* Barrier() waits behind held barriers: up to hold_on_flush_error. */
#define BARRIER_TIMEOUT_USEC ((uint64_t)(DMB_HOLD_MS_MAX + 60000) * 1000)

static const struct {
	const char *name;
	int errnum;
} bus_errors[] = {
	{ "org.dmbarrier1.Error.NoSuchDevice", ENOENT },
	{ "org.dmbarrier1.Error.Exists", EEXIST },
	{ "org.dmbarrier1.Error.Busy", EBUSY },
	{ "org.dmbarrier1.Error.NotSupported", EOPNOTSUPP },
	{ "org.dmbarrier1.Error.Failed", EIO },
	{ "org.freedesktop.DBus.Error.ServiceUnknown", EHOSTDOWN },
	{ "org.freedesktop.DBus.Error.NameHasNoOwner", EHOSTDOWN },
	{ "org.freedesktop.DBus.Error.AccessDenied", EACCES },
	{ "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired", EACCES },
	{ "org.freedesktop.DBus.Error.InvalidArgs", EINVAL },
};

/* Print barrierd's (or the bus's) reason once; the exit code it maps to. */
static int bus_fail(const sd_bus_error *e, int r, const char *what)
{
	int errnum = -r;

	if (e && sd_bus_error_is_set(e)) {
		errnum = sd_bus_error_get_errno(e);
		for (size_t i = 0; i < ELEMENTSOF(bus_errors); i++)
			if (sd_bus_error_has_name(e, bus_errors[i].name))
				errnum = bus_errors[i].errnum;
		if (errnum == EHOSTDOWN)
			fprintf(stderr, "barrierctl: %s: barrierd is not running (%s)\n", what,
				e->message ? e->message : e->name);
		else
			fprintf(stderr, "barrierctl: %s: %s\n", what, e->message ? e->message : e->name);
	} else {
		fprintf(stderr, "barrierctl: %s: %s\n", what, strerror(errnum));
	}
	return bctl_exit_code(-errnum);
}

static int call(sd_bus *bus, const char *path, const char *iface, const char *member,
		uint64_t timeout, sd_bus_error *e, sd_bus_message **reply, const char *types, ...)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
	va_list ap;
	int r;

	r = sd_bus_message_new_method_call(bus, &m, BUS_NAME, path, iface, member);
	if (r < 0)
		return r;
	if (types) {
		va_start(ap, types);
		r = sd_bus_message_appendv(m, types, ap);
		va_end(ap);
		if (r < 0)
			return r;
	}
	return sd_bus_call(bus, m, timeout, e, reply);
}

/* The object of mapping NAME (GetDevice). */
static int device_path(sd_bus *bus, const char *name, sd_bus_error *e, char **ret)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	const char *path;
	int r;

	r = call(bus, BUS_PATH, IFACE_MANAGER, "GetDevice", 0, e, &reply, "s", name);
	if (r < 0)
		return r;
	r = sd_bus_message_read(reply, "o", &path);
	if (r < 0)
		return r;
	*ret = strdup(path);
	return *ret ? 0 : -ENOMEM;
}

static int read_string_into(sd_bus_message *m, char *buf, size_t size)
{
	const char *s;
	int r = sd_bus_message_read(m, "v", "s", &s);

	if (r >= 0)
		snprintf(buf, size, "%s", s);
	return r;
}

/* One property of org.dmbarrier1.Device into the record; unknown ones skipped. */
static int property_read(sd_bus_message *m, const char *key, struct bctl_mapping *out)
{
	char buf[64];
	uint64_t t;
	uint32_t u;
	int b, r;

	if (!strcmp(key, "Name"))
		return read_string_into(m, out->name, sizeof(out->name));
	if (!strcmp(key, "Backing"))
		return read_string_into(m, out->backing, sizeof(out->backing));
	if (!strcmp(key, "State"))
		return read_string_into(m, out->state, sizeof(out->state));
	if (!strcmp(key, "Mode") || !strcmp(key, "Fallback")) {
		r = read_string_into(m, buf, sizeof(buf));
		if (r < 0)
			return r;
		if (!strcmp(key, "Mode"))
			r = dmb_mode_from_string(buf, &out->status.mode);
		else
			r = dmb_fallback_from_string(buf, &out->table.fallback);
		out->table.mode = out->status.mode;
		return r < 0 ? -EBADMSG : 0;
	}
	if (!strcmp(key, "DriveWriteCache")) {
		r = read_string_into(m, buf, sizeof(buf));
		if (r < 0)
			return r;
		out->drive_cache = !strcmp(buf, "on") ? 1 : !strcmp(buf, "off") ? 0 : -1;
		return 0;
	}
	/* WriteCache mixes both views; the record keeps them apart. */
	if (!strcmp(key, "Pinned") || !strcmp(key, "KernelWriteCache") || !strcmp(key, "Fua")) {
		r = sd_bus_message_read(m, "v", "b", &b);
		if (r < 0)
			return r;
		if (!strcmp(key, "Pinned"))
			out->pinned = b;
		else if (!strcmp(key, "KernelWriteCache"))
			out->status.cache_writeback = b;
		else
			out->status.fua = b;
		return 0;
	}
	if (!strcmp(key, "HoldOnFlushErrorMSec") || !strcmp(key, "Held")) {
		r = sd_bus_message_read(m, "v", "u", &u);
		if (r < 0)
			return r;
		if (!strcmp(key, "Held"))
			out->status.held = u;
		else
			out->table.hold_ms = u;
		return 0;
	}
	{
		static const struct {
			const char *key;
			size_t off;
		} counters[] = {
			{ "Barriers", offsetof(struct dmb_status, barriers) },
			{ "Flushes", offsetof(struct dmb_status, flushes) },
			{ "FlushErrors", offsetof(struct dmb_status, flush_errors) },
			{ "Fallbacks", offsetof(struct dmb_status, fallbacks) },
		};

		for (size_t i = 0; i < ELEMENTSOF(counters); i++)
			if (!strcmp(key, counters[i].key)) {
				r = sd_bus_message_read(m, "v", "t", &t);
				if (r >= 0)
					memcpy((char *)&out->status + counters[i].off, &t, sizeof(t));
				return r;
			}
	}
	return sd_bus_message_skip(m, "v");
}

static int device_read(sd_bus *bus, const char *path, sd_bus_error *e, struct bctl_mapping *out)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	int r;

	*out = (struct bctl_mapping){ .have_daemon = true, .drive_cache = -1 };
	r = call(bus, path, IFACE_PROPERTIES, "GetAll", 0, e, &reply, "s", IFACE_DEVICE);
	if (r < 0)
		return r;
	r = sd_bus_message_enter_container(reply, 'a', "{sv}");
	if (r < 0)
		return r;
	while ((r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
		const char *key;

		r = sd_bus_message_read(reply, "s", &key);
		if (r < 0)
			return r;
		r = property_read(reply, key, out);
		if (r < 0)
			return r;
		r = sd_bus_message_exit_container(reply);
		if (r < 0)
			return r;
	}
	if (r < 0)
		return r;
	return sd_bus_message_exit_container(reply);
}

static int bus_show(sd_bus *bus, const struct bctl_args *a)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	_cleanup_(freep) struct bctl_mapping *maps = NULL;
	sd_bus_error e = SD_BUS_ERROR_NULL;
	size_t n = 0, cap = 0;
	int r;

	if (a->name) {
		_cleanup_(freep) char *path = NULL;

		maps = calloc(1, sizeof(*maps));
		if (!maps)
			return bus_fail(NULL, -ENOMEM, "status");
		r = device_path(bus, a->name, &e, &path);
		if (r >= 0)
			r = device_read(bus, path, &e, &maps[0]);
		if (r < 0)
			goto fail;
		n = 1;
		goto print;
	}
	r = call(bus, BUS_PATH, IFACE_MANAGER, "ListDevices", 0, &e, &reply, NULL);
	if (r < 0)
		goto fail;
	r = sd_bus_message_enter_container(reply, 'a', "(so)");
	if (r < 0)
		goto fail;
	for (;;) {
		const char *name, *path;

		r = sd_bus_message_read(reply, "(so)", &name, &path);
		if (r < 0)
			goto fail;
		if (r == 0)
			break;
		if (n == cap) {
			struct bctl_mapping *mm;

			cap = cap ? 2 * cap : 8;
			mm = reallocarray(maps, cap, sizeof(*maps));
			if (!mm) {
				r = -ENOMEM;
				goto fail;
			}
			maps = mm;
		}
		r = device_read(bus, path, &e, &maps[n]);
		/* Removed since the list was taken. */
		if (r < 0 && sd_bus_error_has_name(&e, "org.freedesktop.DBus.Error.UnknownObject")) {
			sd_bus_error_free(&e);
			continue;
		}
		if (r < 0)
			goto fail;
		n++;
	}
print:
	if (a->verb == BCTL_LIST)
		r = bctl_print_list(stdout, maps, n, a->json, !a->no_legend);
	else
		r = bctl_print_status(stdout, maps, n, a->json, a->name != NULL);
	if (r < 0)
		goto fail;
	return BCTL_EXIT_OK;
fail:
	r = bus_fail(&e, r, a->name ? a->name : "list");
	sd_bus_error_free(&e);
	return r;
}

static int bus_create(sd_bus *bus, const struct bctl_args *a, sd_bus_error *e)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
	int r;

	r = sd_bus_message_new_method_call(bus, &m, BUS_NAME, BUS_PATH, IFACE_MANAGER,
					   "CreateDevice");
	if (r < 0)
		return r;
	r = sd_bus_message_append(m, "ss", a->name, a->device);
	if (r >= 0)
		r = sd_bus_message_open_container(m, 'a', "{sv}");
	if (r >= 0 && a->have_offset)
		r = sd_bus_message_append(m, "{sv}", "Offset", "t", a->offset);
	if (r >= 0 && a->have_length)
		r = sd_bus_message_append(m, "{sv}", "Length", "t", a->length);
	if (r >= 0 && a->have_mode)
		r = sd_bus_message_append(m, "{sv}", "Mode", "s", dmb_mode_to_string(a->mode));
	if (r >= 0 && a->pin)
		r = sd_bus_message_append(m, "{sv}", "Pin", "b", 1);
	if (r >= 0 && a->have_fallback)
		r = sd_bus_message_append(m, "{sv}", "Fallback", "s",
					  dmb_fallback_to_string(a->fallback));
	if (r >= 0 && a->have_hold)
		r = sd_bus_message_append(m, "{sv}", "HoldOnFlushErrorMSec", "u", a->hold_ms);
	if (r >= 0)
		r = sd_bus_message_close_container(m);
	if (r < 0)
		return r;
	return sd_bus_call(bus, m, 0, e, &reply);
}

static int bus_write_cache(sd_bus *bus, const struct bctl_args *a, const char *path,
			   sd_bus_error *e)
{
	struct bctl_mapping m;
	int r;

	if (a->write_cache != BCTL_WC_QUERY) {
		r = call(bus, path, IFACE_DEVICE, "SetWriteCache", 0, e, NULL, "ba{sv}",
			 (int)(a->write_cache == BCTL_WC_ON), 0);
		if (r < 0)
			return r;
	}
	r = device_read(bus, path, e, &m);
	if (r < 0)
		return r;
	return bctl_print_bus_write_cache(stdout, a->device, &m, a->json);
}

/* The commands on one mapping's object. */
static int bus_device(sd_bus *bus, const struct bctl_args *a)
{
	_cleanup_(freep) char *path = NULL;
	const char *name = a->verb == BCTL_WRITE_CACHE ? a->device : a->name;
	sd_bus_error e = SD_BUS_ERROR_NULL;
	int r;

	r = device_path(bus, name, &e, &path);
	if (r < 0)
		goto fail;
	switch (a->verb) {
	case BCTL_SET_MODE:
		r = call(bus, path, IFACE_DEVICE, "SetMode", 0, &e, NULL, "sba{sv}",
			 a->mode_auto ? "auto" : dmb_mode_to_string(a->mode), (int)a->pin, 0);
		break;
	case BCTL_BARRIER:
		r = call(bus, path, IFACE_DEVICE, "Barrier", BARRIER_TIMEOUT_USEC, &e, NULL, "a{sv}",
			 0);
		break;
	case BCTL_RESET_STATS:
		r = call(bus, path, IFACE_DEVICE, "ResetStats", 0, &e, NULL, "a{sv}", 0);
		break;
	case BCTL_WRITE_CACHE:
		r = bus_write_cache(bus, a, path, &e);
		break;
	default:
		r = -EINVAL;
		break;
	}
	if (r < 0)
		goto fail;
	return BCTL_EXIT_OK;
fail:
	r = bus_fail(&e, r, name);
	sd_bus_error_free(&e);
	return r;
}

int bctl_bus_run(const struct bctl_args *a)
{
	_cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
	sd_bus_error e = SD_BUS_ERROR_NULL;
	int r;

	r = sd_bus_open_system(&bus);
	if (r < 0) {
		fprintf(stderr, "barrierctl: cannot connect to the system bus: %s\n", strerror(-r));
		return BCTL_EXIT_NO_DAEMON;
	}
	/* polkit may ask for a password only where someone can type it. */
	r = sd_bus_set_allow_interactive_authorization(bus, isatty(STDIN_FILENO));
	if (r < 0)
		return bus_fail(NULL, r, "D-Bus");
	switch (a->verb) {
	case BCTL_LIST:
	case BCTL_STATUS:
		return bus_show(bus, a);
	case BCTL_CREATE:
		r = bus_create(bus, a, &e);
		break;
	case BCTL_REMOVE:
		r = call(bus, BUS_PATH, IFACE_MANAGER, "RemoveDevice", 0, &e, NULL, "sa{sv}", a->name,
			 0);
		break;
	case BCTL_SET_MODE:
	case BCTL_BARRIER:
	case BCTL_RESET_STATS:
	case BCTL_WRITE_CACHE:
		return bus_device(bus, a);
	default:
		fprintf(stderr, "barrierctl: this command has no --bus form\n");
		return BCTL_EXIT_USAGE;
	}
	if (r < 0) {
		r = bus_fail(&e, r, a->name);
		sd_bus_error_free(&e);
		return r;
	}
	return BCTL_EXIT_OK;
}
