// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * barrierctl-args.c: barrierctl's command line, parsed into struct
 * bctl_args by a pure function (no getopt state, no I/O), so every bad
 * argument is a unit-tested usage error that happens before anything is
 * touched.  Also the usage text and the errno -> exit code table.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "barrierctl.h"
#include "macro.h"

enum {
	OPT_JSON = 1 << 0,
	OPT_BUS = 1 << 1,
	OPT_NO_LEGEND = 1 << 2,
	OPT_VERBOSE = 1 << 3,
	OPT_HELP = 1 << 4,
	OPT_VERSION = 1 << 5,
	OPT_MODE = 1 << 6,
	OPT_FALLBACK = 1 << 7,
	OPT_HOLD = 1 << 8,
	OPT_OFFSET = 1 << 9,
	OPT_LENGTH = 1 << 10,
	OPT_TIMEOUT = 1 << 11,
	OPT_EVENT_NR = 1 << 12,
	OPT_PIN = 1 << 13,
};
#define OPT_GLOBAL (OPT_JSON | OPT_BUS | OPT_NO_LEGEND | OPT_VERBOSE | OPT_HELP | OPT_VERSION)

static const struct option_def {
	const char *name;
	char short_name;
	unsigned int bit;
	bool has_value;
} options[] = {
	{ "json", 0, OPT_JSON, false },
	{ "bus", 0, OPT_BUS, false },
	{ "no-legend", 'n', OPT_NO_LEGEND, false },
	{ "verbose", 'v', OPT_VERBOSE, false },
	{ "help", 'h', OPT_HELP, false },
	{ "version", 0, OPT_VERSION, false },
	{ "mode", 0, OPT_MODE, true },
	{ "fallback", 0, OPT_FALLBACK, true },
	{ "hold-on-flush-error", 0, OPT_HOLD, true },
	{ "offset", 0, OPT_OFFSET, true },
	{ "length", 0, OPT_LENGTH, true },
	{ "timeout", 0, OPT_TIMEOUT, true },
	{ "event-nr", 0, OPT_EVENT_NR, true },
	{ "pin", 0, OPT_PIN, false },
};

static const struct verb_def {
	const char *name;
	enum bctl_verb verb;
	int min_args, max_args;
	unsigned int options;
	const char *synopsis;
} verbs[] = {
	{ "create", BCTL_CREATE, 2, 2,
	  OPT_MODE | OPT_FALLBACK | OPT_HOLD | OPT_OFFSET | OPT_LENGTH | OPT_PIN,
	  "create NAME DEVICE [--mode M] [--fallback none|drain] [--hold-on-flush-error MS] "
	  "[--offset SECTORS] [--length SECTORS] [--bus [--pin]]" },
	{ "reload", BCTL_RELOAD, 1, 2, OPT_MODE | OPT_FALLBACK | OPT_HOLD | OPT_OFFSET | OPT_LENGTH,
	  "reload NAME [DEVICE] [--mode M] [--fallback none|drain] [--hold-on-flush-error MS] "
	  "[--offset SECTORS] [--length SECTORS]" },
	{ "remove", BCTL_REMOVE, 1, 1, 0, "remove NAME" },
	{ "list", BCTL_LIST, 0, 0, 0, "list" },
	{ "status", BCTL_STATUS, 0, 1, 0, "status [NAME]" },
	{ "set-mode", BCTL_SET_MODE, 2, 2, OPT_PIN, "set-mode NAME MODE|auto [--bus [--pin]]" },
	{ "barrier", BCTL_BARRIER, 1, 1, 0, "barrier NAME" },
	{ "reset-stats", BCTL_RESET_STATS, 1, 1, 0, "reset-stats NAME" },
	{ "write-cache", BCTL_WRITE_CACHE, 1, 2, 0, "write-cache DEVICE [on|off]" },
	{ "wait-event", BCTL_WAIT_EVENT, 1, 1, OPT_TIMEOUT | OPT_EVENT_NR,
	  "wait-event NAME [--timeout SECONDS] [--event-nr N] (not with --bus)" },
	{ "help", BCTL_HELP, 0, 0, 0, "help" },
};

#define MAX_POSITIONAL 3

void bctl_usage(FILE *f)
{
	fputs("usage: barrierctl [OPTIONS] COMMAND [ARGS]\n"
	      "\n"
	      "Create and inspect dm-barrier mappings, switch their mode, and read or set\n"
	      "the write cache of ATA disks.\n"
	      "\n"
	      "Commands:\n"
	      "  create NAME DEVICE    map all of DEVICE (or --offset/--length sectors)\n"
	      "      [--mode flush|fua|drain|passthrough|none] [--fallback none|drain]\n"
	      "      [--hold-on-flush-error MS] [--offset SECTORS] [--length SECTORS]\n"
	      "  reload NAME [DEVICE]  swap in a new table, same options as create; what\n"
	      "                        is not given stays as it is\n"
	      "  remove NAME           remove a barrier mapping\n"
	      "  list                  a table of every barrier mapping\n"
	      "  status [NAME]         everything about one mapping (or all)\n"
	      "  set-mode NAME MODE    switch the mode (raises a dm event)\n"
	      "                        with --bus: --pin keeps it (barrierd will not\n"
	      "                        change it), MODE auto hands it back to barrierd\n"
	      "  barrier NAME          an explicit barrier: drain and flush, in order\n"
	      "  reset-stats NAME      zero the counters\n"
	      "  write-cache DEVICE [on|off]\n"
	      "                        show or switch the disk's write cache (ATA disks);\n"
	      "                        with --bus DEVICE is a mapping name: its disk\n"
	      "  wait-event NAME [--timeout SECONDS] [--event-nr N]\n"
	      "                        wait for the mapping's next dm event (after event N)\n"
	      "\n"
	      "Options:\n"
	      "      --json            machine-readable output\n"
	      "      --bus             go through barrierd on the system bus\n"
	      "      --pin             with --bus: create/set-mode pin the mode\n"
	      "  -n, --no-legend       no header line in tables\n"
	      "  -v, --verbose         log the library's work to stderr (twice: debug)\n"
	      "  -h, --help            this text\n"
	      "      --version         the version\n"
	      "\n"
	      "Exit status: 0 ok, 1 failure, 2 usage error, 3 no such mapping or device (or\n"
	      "not a barrier mapping), 4 not supported (not an ATA disk, no switchable\n"
	      "write cache, barrier in mode none), 5 wait-event timed out, 6 --bus:\n"
	      "barrierd not reachable.\n",
	      f);
}

_printf_(3, 4) static int usage_error(char *err, size_t errsize, const char *format, ...)
{
	va_list args;

	va_start(args, format);
	vsnprintf(err, errsize, format, args);
	va_end(args);
	return -EINVAL;
}

int bctl_parse_u64(const char *s, uint64_t *ret)
{
	uint64_t v = 0;

	if (!s || !*s)
		return -EINVAL;
	for (const char *p = s; *p; p++)
		if (*p < '0' || *p > '9')
			return -EINVAL;
	for (const char *p = s; *p; p++) {
		unsigned int d = (unsigned int)(*p - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*ret = v;
	return 0;
}

/* "SECONDS" or "SECONDS.FRACTION" (to the millisecond), up to INT_MAX ms. */
int bctl_parse_seconds(const char *s, int *ret_ms)
{
	const char *dot;
	char whole[24];
	uint64_t sec = 0, ms = 0;
	size_t wlen;
	int r;

	if (!s || !*s)
		return -EINVAL;
	dot = strchr(s, '.');
	wlen = dot ? (size_t)(dot - s) : strlen(s);
	if (wlen == 0 || wlen >= sizeof(whole))
		return wlen ? -ERANGE : -EINVAL;
	memcpy(whole, s, wlen);
	whole[wlen] = '\0';
	r = bctl_parse_u64(whole, &sec);
	if (r < 0)
		return r;
	if (dot) {
		size_t flen = strlen(dot + 1);
		uint64_t frac;

		if (flen == 0 || flen > 3 || bctl_parse_u64(dot + 1, &frac) < 0)
			return -EINVAL;
		ms = frac;
		for (size_t i = flen; i < 3; i++)
			ms *= 10;
	}
	if (sec > (uint64_t)INT_MAX / 1000 || sec * 1000 + ms > (uint64_t)INT_MAX)
		return -ERANGE;
	*ret_ms = (int)(sec * 1000 + ms);
	return 0;
}

int bctl_exit_code(int r)
{
	switch (-r) {
	case 0:
		return BCTL_EXIT_OK;
	case ENOENT:
	case ENXIO:
	case ENODEV:
	case EMEDIUMTYPE:
		return BCTL_EXIT_NOT_FOUND;
	case ENOTTY:
	case EOPNOTSUPP:
		return BCTL_EXIT_NOT_SUPPORTED;
	case ETIMEDOUT:
		return BCTL_EXIT_TIMEOUT;
	case EHOSTDOWN:
		return BCTL_EXIT_NO_DAEMON;
	default:
		return BCTL_EXIT_FAILURE;
	}
}

static const struct option_def *option_find(const char *name, size_t len, char short_name)
{
	for (size_t i = 0; i < ELEMENTSOF(options); i++) {
		if (short_name && options[i].short_name == short_name)
			return &options[i];
		if (!short_name && strlen(options[i].name) == len &&
		    !strncmp(options[i].name, name, len))
			return &options[i];
	}
	return NULL;
}

static const struct verb_def *verb_find(const char *name)
{
	for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
		if (!strcmp(verbs[i].name, name))
			return &verbs[i];
	return NULL;
}

static int option_value(const struct option_def *o, const char *v, struct bctl_args *a, char *err,
			size_t errsize)
{
	uint64_t n;
	int r;

	switch (o->bit) {
	case OPT_MODE:
		if (dmb_mode_from_string(v, &a->mode) < 0)
			return usage_error(err, errsize,
					   "--mode: unknown mode '%s' (flush, fua, drain, passthrough, none)",
					   v);
		a->have_mode = true;
		return 0;
	case OPT_FALLBACK:
		if (dmb_fallback_from_string(v, &a->fallback) < 0)
			return usage_error(err, errsize, "--fallback: '%s' is not none or drain", v);
		a->have_fallback = true;
		return 0;
	case OPT_HOLD:
		if (bctl_parse_u64(v, &n) < 0 || n > DMB_HOLD_MS_MAX)
			return usage_error(err, errsize,
					   "--hold-on-flush-error: '%s' is not 0 to %u milliseconds", v,
					   DMB_HOLD_MS_MAX);
		a->hold_ms = (uint32_t)n;
		a->have_hold = true;
		return 0;
	case OPT_OFFSET:
		if (bctl_parse_u64(v, &a->offset) < 0)
			return usage_error(err, errsize, "--offset: '%s' is not a number of sectors", v);
		a->have_offset = true;
		return 0;
	case OPT_LENGTH:
		if (bctl_parse_u64(v, &a->length) < 0 || a->length == 0)
			return usage_error(err, errsize,
					   "--length: '%s' is not a number of sectors (at least 1)", v);
		a->have_length = true;
		return 0;
	case OPT_TIMEOUT:
		r = bctl_parse_seconds(v, &a->timeout_ms);
		if (r < 0)
			return usage_error(err, errsize,
					   "--timeout: '%s' is not a number of seconds (e.g. 5 or 0.5, up to %d)",
					   v, INT_MAX / 1000);
		return 0;
	case OPT_EVENT_NR:
		if (bctl_parse_u64(v, &n) < 0 || n > UINT32_MAX)
			return usage_error(err, errsize, "--event-nr: '%s' is not 0 to %u", v,
					   UINT32_MAX);
		a->event_nr = (uint32_t)n;
		a->have_event_nr = true;
		return 0;
	}
	return usage_error(err, errsize, "internal error: option --%s", o->name);
}

/* A flag or valued option seen; duplicates (but -v) are errors. */
static int option_seen(const struct option_def *o, const char *value, struct bctl_args *a,
		       unsigned int *seen, char *err, size_t errsize)
{
	if ((*seen & o->bit) && o->bit != OPT_VERBOSE)
		return usage_error(err, errsize, "option --%s given twice", o->name);
	*seen |= o->bit;
	switch (o->bit) {
	case OPT_JSON:
		a->json = true;
		return 0;
	case OPT_BUS:
		a->bus = true;
		return 0;
	case OPT_NO_LEGEND:
		a->no_legend = true;
		return 0;
	case OPT_VERBOSE:
		a->verbose++;
		return 0;
	case OPT_PIN:
		a->pin = true;
		return 0;
	case OPT_HELP:
	case OPT_VERSION:
		return 0;
	}
	return option_value(o, value, a, err, errsize);
}

static int positionals(const struct verb_def *v, const char *const *pos, int npos,
		       struct bctl_args *a, char *err, size_t errsize)
{
	for (int i = 0; i < npos; i++) {
		if (!*pos[i])
			return usage_error(err, errsize, "%s: argument %d is empty", v->name, i + 1);
	}
	switch (v->verb) {
	case BCTL_CREATE:
		if (dmb_name_check(pos[0]) < 0)
			return usage_error(err, errsize,
					   "create: '%s' is not a valid name (1 to %zu of A-Z a-z 0-9 # + - . : = @ _)",
					   pos[0], DMB_NAME_MAX - 1 - strlen(DMB_UUID_PREFIX));
		a->name = pos[0];
		a->device = pos[1];
		break;
	case BCTL_RELOAD:
		a->name = pos[0];
		a->device = npos > 1 ? pos[1] : NULL;
		break;
	case BCTL_SET_MODE:
		a->name = pos[0];
		if (!strcmp(pos[1], "auto")) {
			/* barrierd's word for "unpinned, policy decides". */
			if (!a->bus || a->pin)
				return usage_error(err, errsize,
						   "set-mode: 'auto' hands the mapping to barrierd: only with --bus, without --pin");
			a->mode_auto = true;
			break;
		}
		if (dmb_mode_from_string(pos[1], &a->mode) < 0)
			return usage_error(err, errsize,
					   "set-mode: unknown mode '%s' (flush, fua, drain, passthrough, none%s)",
					   pos[1], a->bus ? ", auto" : "");
		a->have_mode = true;
		break;
	case BCTL_WRITE_CACHE:
		a->device = pos[0];
		if (npos == 2) {
			if (!strcmp(pos[1], "on"))
				a->write_cache = BCTL_WC_ON;
			else if (!strcmp(pos[1], "off"))
				a->write_cache = BCTL_WC_OFF;
			else
				return usage_error(err, errsize,
						   "write-cache: '%s' is neither on nor off", pos[1]);
		}
		break;
	default:
		if (npos > 0)
			a->name = pos[0];
		break;
	}
	if (a->name && strlen(a->name) >= DMB_NAME_MAX)
		return usage_error(err, errsize, "%s: the name is longer than %d characters",
				   v->name, DMB_NAME_MAX - 1);
	return 0;
}

int bctl_parse_args(int argc, char *const *argv, struct bctl_args *ret, char *err, size_t errsize)
{
	struct bctl_args a = { .verb = BCTL_NONE, .write_cache = BCTL_WC_QUERY, .timeout_ms = -1 };
	const char *pos[MAX_POSITIONAL];
	const struct verb_def *v = NULL;
	unsigned int seen = 0;
	bool dashdash = false;
	int npos = 0, r;

	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		const struct option_def *o;

		if (!dashdash && !strcmp(arg, "--")) {
			dashdash = true;
			continue;
		}
		if (!dashdash && !strncmp(arg, "--", 2)) {
			const char *eq = strchr(arg + 2, '=');
			size_t len = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
			const char *value = NULL;

			o = option_find(arg + 2, len, 0);
			if (!o)
				return usage_error(err, errsize, "unknown option '%.*s'", (int)len + 2,
						   arg);
			if (o->has_value) {
				if (eq)
					value = eq + 1;
				else if (i + 1 < argc)
					value = argv[++i];
				else
					return usage_error(err, errsize, "option --%s needs a value",
							   o->name);
			} else if (eq) {
				return usage_error(err, errsize, "option --%s takes no value", o->name);
			}
			r = option_seen(o, value, &a, &seen, err, errsize);
			if (r < 0)
				return r;
			continue;
		}
		if (!dashdash && arg[0] == '-' && arg[1]) {
			for (const char *c = arg + 1; *c; c++) {
				o = option_find(NULL, 0, *c);
				if (!o)
					return usage_error(err, errsize, "unknown option '-%c'", *c);
				r = option_seen(o, NULL, &a, &seen, err, errsize);
				if (r < 0)
					return r;
			}
			continue;
		}
		if (!v) {
			v = verb_find(arg);
			if (!v)
				return usage_error(err, errsize, "unknown command '%s' (see --help)", arg);
			continue;
		}
		if (npos >= v->max_args)
			return usage_error(err, errsize, "%s: unexpected argument '%s' (usage: %s)",
					   v->name, arg, v->synopsis);
		pos[npos++] = arg;
	}

	if ((seen & OPT_HELP) || (v && v->verb == BCTL_HELP)) {
		*ret = (struct bctl_args){ .verb = BCTL_HELP };
		return 0;
	}
	if (!v) {
		if (seen & OPT_VERSION) {
			*ret = (struct bctl_args){ .verb = BCTL_VERSION };
			return 0;
		}
		return usage_error(err, errsize, "no command given (see --help)");
	}
	if (seen & OPT_VERSION)
		return usage_error(err, errsize, "--version takes no command");
	if (npos < v->min_args)
		return usage_error(err, errsize, "%s: missing argument (usage: %s)", v->name,
				   v->synopsis);
	for (size_t i = 0; i < ELEMENTSOF(options); i++)
		if ((seen & options[i].bit) && !((OPT_GLOBAL | v->options) & options[i].bit))
			return usage_error(err, errsize, "option --%s does not apply to %s",
					   options[i].name, v->name);
	if ((seen & OPT_PIN) && !(seen & OPT_BUS))
		return usage_error(err, errsize, "--pin is barrierd's: only with --bus");
	if ((seen & OPT_PIN) && v->verb == BCTL_CREATE && !(seen & OPT_MODE))
		return usage_error(err, errsize, "create --pin needs --mode (the mode to pin)");
	if ((seen & OPT_BUS) && v->verb == BCTL_WAIT_EVENT)
		return usage_error(err, errsize,
				   "wait-event waits on device-mapper itself: it has no --bus form");
	if ((seen & OPT_BUS) && v->verb == BCTL_RELOAD)
		return usage_error(err, errsize, "reload has no --bus form (barrierd has no such call)");
	a.verb = v->verb;
	r = positionals(v, pos, npos, &a, err, errsize);
	if (r < 0)
		return r;
	*ret = a;
	return 0;
}
