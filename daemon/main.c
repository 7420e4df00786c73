// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * main.c: barrierd's life and its manager: command line, configuration,
 * the device list (adopt what the kernel has, create what the config asks
 * for), the one sd-event loop, and teardown.  barrierd keeps no state the
 * kernel does not hold except pins (device.c), so it can be killed and
 * restarted at any time and picks every mapping up as it is.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <systemd/sd-daemon.h>
#include <time.h>

#include "daemon.h"
#include "log.h"

#define EXIT_CONFIG 78	/* sysexits' EX_CONFIG, what systemd shows as "CONFIG" */

static const char *arg_config = CONFIG_FILE;
static const char *arg_config_dir = CONFIG_DROPIN_DIR;
static const char *arg_state_dir = STATE_DIR;
static bool arg_check_config;
static bool config_failed;	/* exit with EXIT_CONFIG */

/* ------------------------------------------------------------ devices */

usec_t manager_now(struct manager *m)
{
	struct timespec ts;
	uint64_t now;

	if (m->event && sd_event_now(m->event, CLOCK_MONOTONIC, &now) >= 0)
		return now;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (usec_t)ts.tv_sec * USEC_PER_SEC + (usec_t)ts.tv_nsec / 1000;
}

static size_t device_index(struct manager *m, const char *name, bool *found)
{
	size_t lo = 0, hi = m->n_devices;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(m->devices[mid]->name, name);

		if (c == 0) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

struct device *manager_find_device(struct manager *m, const char *name)
{
	bool found;
	size_t i = device_index(m, name, &found);

	return found ? m->devices[i] : NULL;
}

/*
 * pin: -1 (adopting) keep what the pin record says; 0/1 (barrierd just
 * created it) set it before the first decision.
 */
static int add_device(struct manager *m, const char *name, int pin, struct device **ret)
{
	struct device *d, **grown;
	bool found;
	size_t i = device_index(m, name, &found);
	int r;

	if (found) {
		if (ret)
			*ret = m->devices[i];
		return 0;
	}
	if (m->n_devices >= DEVICES_MAX)
		return log_error_errno(-E2BIG, "Not managing '%s': %d mappings already", name,
				       DEVICES_MAX);
	r = device_new(m, name, pin >= 0, &d);
	if (r < 0)
		return r;
	grown = realloc(m->devices, (m->n_devices + 1) * sizeof(*grown));
	if (!grown) {
		device_free(d);
		return -ENOMEM;
	}
	m->devices = grown;
	memmove(m->devices + i + 1, m->devices + i, (m->n_devices - i) * sizeof(*grown));
	m->devices[i] = d;
	m->n_devices++;
	if (pin >= 0)
		(void)device_set_pinned(d, pin);
	bus_emit_device_added(m, d);
	(void)device_evaluate(d, EVALUATE_DRIVE);
	if (ret)
		*ret = d;
	return 1;
}

int manager_add_device(struct manager *m, const char *name, struct device **ret)
{
	return add_device(m, name, -1, ret);
}

static void drop_device(struct manager *m, struct device *d, bool gone)
{
	bool found;
	size_t i = device_index(m, d->name, &found);

	if (!found || m->devices[i] != d)
		return;
	memmove(m->devices + i, m->devices + i + 1, (m->n_devices - i - 1) * sizeof(*m->devices));
	m->n_devices--;
	if (gone) {
		log_device_info(d->name, "mapping removed");
		/* A pin belongs to the mapping; it is gone with it. */
		(void)device_set_pinned(d, false);
		bus_emit_device_removed(m, d);
	}
	device_free(d);
}

void manager_remove_device(struct manager *m, struct device *d)
{
	drop_device(m, d, true);
}

static bool strv_contains(char **l, const char *s)
{
	for (; l && *l; l++)
		if (!strcmp(*l, s))
			return true;
	return false;
}

int manager_rescan(struct manager *m)
{
	char **names = NULL;
	int r;

	r = dmb_mapping_list(m->ctx, &names);
	if (r < 0)
		return log_error_errno(r, "Cannot list barrier mappings: %s",
				       dmb_ctx_get_error(m->ctx));
	for (size_t i = m->n_devices; i > 0; i--)
		if (!strv_contains(names, m->devices[i - 1]->name))
			manager_remove_device(m, m->devices[i - 1]);
	for (char **n = names; *n; n++) {
		struct device *d = manager_find_device(m, *n);

		if (!d) {
			r = manager_add_device(m, *n, NULL);
			if (r < 0 && r != -ENOENT && r != -EMEDIUMTYPE)
				log_device_error_errno(*n, r, "Cannot adopt the mapping: %s",
						       dmb_ctx_get_error(m->ctx));
			continue;
		}
		r = device_evaluate(d, EVALUATE_TABLE);
		if (r == -ENOENT || r == -EMEDIUMTYPE)
			manager_remove_device(m, d);
		else if (r == -ESTALE) {
			/* Removed and made again under the same name: another mapping. */
			log_device_notice(*n, "the mapping was recreated; adopting it afresh");
			manager_remove_device(m, d);
			r = manager_add_device(m, *n, NULL);
			if (r < 0 && r != -ENOENT && r != -EMEDIUMTYPE)
				log_device_error_errno(*n, r, "Cannot adopt the mapping: %s",
						       dmb_ctx_get_error(m->ctx));
		}
	}
	dmb_strv_free(names);
	return 0;
}

int manager_create_mapping(struct manager *m, const char *name, const struct dmb_spec *spec,
			   bool pin, struct device **ret)
{
	struct device *d;
	int r;

	r = dmb_mapping_create(m->ctx, name, spec);
	if (r < 0)
		return log_device_error_errno(name, r, "Cannot create the mapping: %s",
					      dmb_ctx_get_error(m->ctx));
	log_device_notice(name, "created over %s, mode %s%s, fallback %s, hold %u ms", spec->device,
			  dmb_mode_to_string(spec->mode), pin ? " (pinned)" : "",
			  dmb_fallback_to_string(spec->fallback), spec->hold_ms);
	r = add_device(m, name, pin, &d);
	if (r < 0) {
		log_device_error_errno(name, r, "Cannot manage the new mapping, removing it: %m");
		(void)dmb_mapping_remove(m->ctx, name, DMB_REMOVE_RETRY);
		return r;
	}
	if (ret)
		*ret = d;
	return 0;
}

/* ------------------------------------------------------------ config */

_printf_(4, 5) static int mapping_error(char *err, size_t errsize, const struct config_mapping *c,
					const char *format, ...)
{
	int n = snprintf(err, errsize, "%s:%u: [Mapping] '%s': ", c->file, c->line, c->name);
	va_list ap;

	if (n >= 0 && (size_t)n < errsize) {
		va_start(ap, format);
		vsnprintf(err + n, errsize - (size_t)n, format, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/*
 * Everything the config asks for is checked against the system before
 * anything is created: every Device= exists, every existing mapping of a
 * configured name is a barrier mapping over that device.  exists[i] says
 * which are there already.
 */
static int config_validate(struct manager *m, const struct config *c, bool *exists, char *err,
			   size_t errsize)
{
	for (size_t i = 0; i < c->n_mappings; i++) {
		const struct config_mapping *cm = &c->mappings[i];
		struct dmb_mapping_info info;
		struct dmb_table table;
		dev_t dev;
		int r;

		r = dmb_disk_from_path(m->ctx, cm->device, &dev);
		if (r < 0)
			return mapping_error(err, errsize, cm, "Device=%s: %s", cm->device,
					     dmb_ctx_get_error(m->ctx));
		exists[i] = dmb_mapping_info(m->ctx, cm->name, &info) == 0;
		if (!exists[i])
			continue;
		r = dmb_mapping_table(m->ctx, cm->name, &table, NULL);
		if (r < 0)
			return mapping_error(err, errsize, cm,
					     "a dm device of that name exists and is not a barrier mapping: %s",
					     dmb_ctx_get_error(m->ctx));
		if (table.backing != dev || table.offset != cm->offset)
			return mapping_error(err, errsize, cm,
					     "exists over %u:%u at sector %llu, not over %s at sector %llu",
					     major(table.backing), minor(table.backing),
					     (unsigned long long)table.offset, cm->device,
					     (unsigned long long)cm->offset);
	}
	return 0;
}

/* Is the configuration possible on this system?  Touches nothing. */
static int config_check_system(struct manager *m, const struct config *c, char *err,
			       size_t errsize)
{
	_cleanup_(freep) bool *exists = calloc(c->n_mappings + 1, sizeof(bool));

	if (!exists) {
		snprintf(err, errsize, "out of memory");
		return -ENOMEM;
	}
	return config_validate(m, c, exists, err, errsize);
}

/* Create what is missing, pin what asks for it; all or nothing. */
static int config_apply(struct manager *m, const struct config *c, char *err, size_t errsize)
{
	_cleanup_(freep) bool *exists = NULL, *created = NULL;
	int r = 0;

	exists = calloc(c->n_mappings + 1, sizeof(bool));
	created = calloc(c->n_mappings + 1, sizeof(bool));
	if (!exists || !created)
		return -ENOMEM;
	r = config_validate(m, c, exists, err, errsize);
	if (r < 0)
		return r;
	for (size_t i = 0; i < c->n_mappings; i++) {
		const struct config_mapping *cm = &c->mappings[i];
		struct dmb_spec spec;

		if (exists[i])
			continue;
		dmb_spec_init(&spec);
		spec.device = cm->device;
		spec.offset = cm->offset;
		spec.length = cm->length;
		if (cm->have_mode)
			spec.mode = cm->mode;
		spec.fallback = cm->have_fallback ? cm->fallback : c->fallback;
		spec.hold_ms = cm->have_hold ? cm->hold_ms : c->hold_ms;
		r = manager_create_mapping(m, cm->name, &spec, cm->pin, NULL);
		if (r < 0) {
			mapping_error(err, errsize, cm, "cannot create it: %s",
				      dmb_ctx_get_error(m->ctx));
			goto rollback;
		}
		created[i] = true;
	}
	/* Existing mappings the config pins take the configured mode. */
	for (size_t i = 0; i < c->n_mappings; i++) {
		const struct config_mapping *cm = &c->mappings[i];
		struct device *d;
		char e[256];

		if (!exists[i] || !cm->pin)
			continue;
		d = manager_find_device(m, cm->name);
		if (!d)
			continue;
		if (device_set_mode(d, dmb_mode_to_string(cm->mode), true, e, sizeof(e)) < 0)
			log_device_warning(d->name, "cannot pin mode %s from %s:%u: %s",
					   dmb_mode_to_string(cm->mode), cm->file, cm->line, e);
	}
	return 0;
rollback:
	for (size_t i = 0; i < c->n_mappings; i++) {
		struct device *d;

		if (!created[i])
			continue;
		d = manager_find_device(m, c->mappings[i].name);
		if (dmb_mapping_remove(m->ctx, c->mappings[i].name, DMB_REMOVE_RETRY) < 0)
			log_device_error_errno(c->mappings[i].name, -EBUSY,
					       "Cannot roll the mapping back: %s",
					       dmb_ctx_get_error(m->ctx));
		else if (d)
			manager_remove_device(m, d);
	}
	return r;
}

/* ------------------------------------------------------------ running */

static void lib_log(void *userdata, int priority, const char *file, int line, const char *fn,
		    const char *format, va_list args)
{
	char f[512];

	snprintf(f, sizeof(f), "libdmbarrier: %s", format);
	log_internalv(priority, 0, NULL, file, line, fn, f, args);
}

static int on_exit_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	struct manager *m = userdata;

	log_info("%s: stopping; the mappings stay as they are",
		 si->ssi_signo == SIGTERM ? "SIGTERM" : "SIGINT");
	(void)sd_notify(false, "STOPPING=1");
	return sd_event_exit(m->event, 0);
}

static int on_reload_signal(sd_event_source *s, const struct signalfd_siginfo *si,
			    void *userdata)
{
	struct manager *m = userdata;
	char err[CONFIG_ERROR_MAX];
	struct config c;
	bool changed;
	int r;

	config_init(&c);
	r = config_load(&c, arg_config, arg_config_dir, err, sizeof(err));
	if (r >= 0)
		r = config_apply(m, &c, err, sizeof(err));
	if (r < 0) {
		log_error("Reload: %s; nothing changed, the old configuration stays", err);
		config_done(&c);
		return 0;
	}
	/* The timer picks the new interval up at its next tick. */
	changed = c.poll_interval_usec != m->config.poll_interval_usec;
	config_done(&m->config);
	m->config = c;
	if (changed)
		bus_emit_manager_changed(m, "PollIntervalUSec");
	log_info("Reload: configuration applied");
	return 0;
}

/*
 * Say what dm-barrier the kernel has.  Loading it is the kernel's job (dm
 * core asks for "dm-barrier" when a barrier table is loaded), so barrierd
 * needs no CAP_SYS_MODULE; it only refuses to start on a target of a major
 * version the library does not manage.
 */
static int target_report(struct dmb_ctx *ctx)
{
	enum dmb_module_state st;
	unsigned int v[3];
	int r;

	r = dmb_module_state(ctx, &st);
	if (r < 0) {
		log_warning_errno(r, "Cannot read the state of dm_barrier, ignoring: %s",
				  dmb_ctx_get_error(ctx));
		st = DMB_MODULE_ABSENT;
	}
	r = dmb_target_load(ctx);
	if (r == -ENOENT) {
		log_info("dm-barrier: %s; the kernel loads it with the first barrier table",
			 dmb_module_state_to_string(st));
		return 0;
	}
	if (r == -EPROTONOSUPPORT)
		return log_error_errno(r, "Refusing to manage barrier mappings: %s",
				       dmb_ctx_get_error(ctx));
	if (r < 0) {
		log_warning_errno(r, "Cannot check the barrier target, ignoring: %s",
				  dmb_ctx_get_error(ctx));
		return 0;
	}
	if (dmb_target_version(ctx, v) == 0)
		log_info("dm-barrier: %s, target version %u.%u.%u", dmb_module_state_to_string(st),
			 v[0], v[1], v[2]);
	return 0;
}

static int manager_setup(struct manager *m)
{
	char err[CONFIG_ERROR_MAX];
	sigset_t mask;
	int r;

	m->state_dir = arg_state_dir;
	config_init(&m->config);
	r = config_load(&m->config, arg_config, arg_config_dir, err, sizeof(err));
	if (r < 0) {
		config_failed = true;
		return log_error_errno(r, "%s", err);
	}
	r = dmb_ctx_new(&m->ctx);
	if (r < 0)
		return log_error_errno(r, "Cannot create a libdmbarrier context: %m");
	dmb_ctx_set_log_fn(m->ctx, lib_log, NULL);
	/* The library's debug output (libkmod's, libdevmapper's) is too much even for --log-level=debug. */
	dmb_ctx_set_log_priority(m->ctx, MIN(log_get_max_level(), LOG_INFO));

	/* Signals and children come in through the loop, never asynchronously. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
		return log_error_errno(-errno, "Cannot block signals: %m");
	r = sd_event_default(&m->event);
	if (r < 0)
		return log_error_errno(r, "Cannot create the event loop: %m");
	r = sd_event_add_signal(m->event, NULL, SIGTERM, on_exit_signal, m);
	if (r >= 0)
		r = sd_event_add_signal(m->event, NULL, SIGINT, on_exit_signal, m);
	if (r >= 0)
		r = sd_event_add_signal(m->event, NULL, SIGHUP, on_reload_signal, m);
	if (r < 0)
		return log_error_errno(r, "Cannot watch signals: %m");

	r = target_report(m->ctx);
	if (r < 0)
		return r;
	r = config_check_system(m, &m->config, err, sizeof(err));
	if (r < 0) {
		config_failed = true;
		return log_error_errno(r, "%s; nothing created", err);
	}
	r = bus_setup(m);
	if (r < 0)
		return r;
	/* Watch first, then look: a mapping that appears in between is seen. */
	r = watch_setup(m);
	if (r < 0)
		return r;
	r = manager_rescan(m);
	if (r < 0)
		return r;
	r = config_apply(m, &m->config, err, sizeof(err));
	if (r < 0) {
		config_failed = true;
		return log_error_errno(r, "%s; nothing created", err);
	}
	return bus_request_name(m);
}

static void manager_done(struct manager *m)
{
	while (m->n_devices)
		drop_device(m, m->devices[m->n_devices - 1], false);
	free(m->devices);
	m->devices = NULL;
	watch_done(m);
	bus_done(m);
	m->event = sd_event_unref(m->event);
	m->ctx = dmb_ctx_unref(m->ctx);
	config_done(&m->config);
}

/* --check-config: parse, and check devices and names as a start would. */
static int check_config(void)
{
	struct manager m = { .state_dir = arg_state_dir };
	char err[CONFIG_ERROR_MAX];
	int r;

	config_init(&m.config);
	r = config_load(&m.config, arg_config, arg_config_dir, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "%s\n", err);
		return EXIT_CONFIG;
	}
	r = dmb_ctx_new(&m.ctx);
	if (r < 0) {
		fprintf(stderr, "barrierd: cannot create a libdmbarrier context: %s\n", strerror(-r));
		config_done(&m.config);
		return EXIT_FAILURE;
	}
	r = config_check_system(&m, &m.config, err, sizeof(err));
	if (r < 0)
		fprintf(stderr, "%s\n", err);
	else
		printf("configuration OK: %zu mapping%s, poll interval %llu ms, on flush error %s\n",
		       m.config.n_mappings, m.config.n_mappings == 1 ? "" : "s",
		       (unsigned long long)(m.config.poll_interval_usec / USEC_PER_MSEC),
		       on_flush_error_to_string(m.config.policy.on_flush_error));
	dmb_ctx_unref(m.ctx);
	config_done(&m.config);
	return r < 0 ? EXIT_CONFIG : EXIT_SUCCESS;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: barrierd [OPTION...]\n"
		"\n"
		"Watches every dm-barrier mapping and the write cache of the disks under\n"
		"them, keeps each in the right mode, and offers org.dmbarrier1 on the\n"
		"system bus.  See barrierd(8) and barrierd.conf(5).\n"
		"\n"
		"  -c, --config FILE      configuration file (default %s)\n"
		"  -C, --config-dir DIR   drop-in directory (default %s)\n"
		"      --state-dir DIR    where pins are kept (default %s)\n"
		"      --check-config     check the configuration and the devices it names, then exit\n"
		"  -l, --log-level LEVEL  err, warning, notice, info (default) or debug\n"
		"      --log-target T     auto (default), journal or stderr\n"
		"  -h, --help             this text\n"
		"      --version          print the version\n",
		CONFIG_FILE, CONFIG_DROPIN_DIR, STATE_DIR);
}

static int parse_args(int argc, char *argv[])
{
	enum { OPT_STATE_DIR = 0x100, OPT_CHECK, OPT_LOG_TARGET, OPT_VERSION };
	static const struct option options[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "config-dir", required_argument, NULL, 'C' },
		{ "state-dir", required_argument, NULL, OPT_STATE_DIR },
		{ "check-config", no_argument, NULL, OPT_CHECK },
		{ "log-level", required_argument, NULL, 'l' },
		{ "log-target", required_argument, NULL, OPT_LOG_TARGET },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{}
	};
	enum log_target target = LOG_TARGET_AUTO;
	int c, level;

	while ((c = getopt_long(argc, argv, "c:C:l:h", options, NULL)) >= 0) {
		switch (c) {
		case 'c':
			arg_config = optarg;
			break;
		case 'C':
			arg_config_dir = optarg;
			break;
		case OPT_STATE_DIR:
			arg_state_dir = optarg;
			break;
		case OPT_CHECK:
			arg_check_config = true;
			break;
		case 'l':
			level = log_level_from_string(optarg);
			if (level < 0) {
				fprintf(stderr, "barrierd: unknown log level '%s'\n", optarg);
				return -EINVAL;
			}
			log_set_max_level(level);
			break;
		case OPT_LOG_TARGET:
			if (!strcmp(optarg, "auto")) {
				target = LOG_TARGET_AUTO;
			} else if (!strcmp(optarg, "journal")) {
				target = LOG_TARGET_JOURNAL;
			} else if (!strcmp(optarg, "stderr")) {
				target = LOG_TARGET_STDERR;
			} else {
				fprintf(stderr, "barrierd: unknown log target '%s'\n", optarg);
				return -EINVAL;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		case OPT_VERSION:
			printf("barrierd %s\n", BARRIERD_VERSION);
			return 0;
		default:
			fprintf(stderr, "barrierd: see --help\n");
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "barrierd: unexpected argument '%s' (see --help)\n", argv[optind]);
		return -EINVAL;
	}
	log_setup(target);
	return 1;
}

int main(int argc, char *argv[])
{
	struct manager m = { 0 };
	int r;

	r = parse_args(argc, argv);
	if (r <= 0)
		return r < 0 ? 2 : EXIT_SUCCESS;
	if (arg_check_config)
		return check_config();

	r = manager_setup(&m);
	if (r >= 0) {
		r = sd_event_loop(m.event);
		if (r < 0)
			log_error_errno(r, "Event loop failed: %m");
	} else {
		(void)sd_notifyf(false, "STATUS=Failed to start: %s\nERRNO=%d", strerror(-r), -r);
	}
	manager_done(&m);
	if (config_failed)
		return EXIT_CONFIG;
	return r < 0 ? EXIT_FAILURE : r;
}
