// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * config.c: the barrierd.conf parser and loader (config.h).  The syntax is
 * systemd's INI subset: "[Section]" headers, "Key=Value" lines, "#" and ";"
 * comments.  Strict on purpose: an unknown section or key, a repeated key,
 * an empty or malformed value is an error naming the file and line, so
 * that a typo never silently leaves a disk unprotected.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"

enum section {
	SECTION_NONE,
	SECTION_DAEMON,
	SECTION_MAPPING,
};

/* Keys of each section; a bit per key catches repeats within a section. */
enum {
	K_POLL_INTERVAL,
	K_ON_FLUSH_ERROR,
	K_HOLDDOWN,
	K_HOLDDOWN_MAX,
	K_FALLBACK,
	K_HOLD,
	K_ADOPT_HOLD,
	K_NAME,
	K_DEVICE,
	K_OFFSET,
	K_LENGTH,
	K_MODE,
	K_PIN,
};

struct key {
	const char *name;
	enum section section;
	int id;
};

static const struct key keys[] = {
	{ "PollIntervalSec", SECTION_DAEMON, K_POLL_INTERVAL },
	{ "OnFlushError", SECTION_DAEMON, K_ON_FLUSH_ERROR },
	{ "HoldDownSec", SECTION_DAEMON, K_HOLDDOWN },
	{ "HoldDownMaxSec", SECTION_DAEMON, K_HOLDDOWN_MAX },
	{ "Fallback", SECTION_DAEMON, K_FALLBACK },
	{ "HoldOnFlushErrorMSec", SECTION_DAEMON, K_HOLD },
	{ "AdoptHoldOnFlushErrorMSec", SECTION_DAEMON, K_ADOPT_HOLD },
	{ "Name", SECTION_MAPPING, K_NAME },
	{ "Device", SECTION_MAPPING, K_DEVICE },
	{ "Offset", SECTION_MAPPING, K_OFFSET },
	{ "Length", SECTION_MAPPING, K_LENGTH },
	{ "Mode", SECTION_MAPPING, K_MODE },
	{ "Pin", SECTION_MAPPING, K_PIN },
	{ "Fallback", SECTION_MAPPING, K_FALLBACK },
	{ "HoldOnFlushErrorMSec", SECTION_MAPPING, K_HOLD },
};

#define POLL_MIN_USEC (100 * USEC_PER_MSEC)
#define POLL_MAX_USEC (60 * USEC_PER_SEC)
#define HOLDDOWN_MAX_USEC (86400 * USEC_PER_SEC)

void config_init(struct config *c)
{
	*c = (struct config){
		.poll_interval_usec = 1 * USEC_PER_SEC,
		.fallback = DMB_FALLBACK_DRAIN,
		.hold_ms = 10000,
		.adopt_hold_ms = 0,	/* opt-in: it reloads tables barrierd did not make */
	};
	policy_config_init(&c->policy);
}

static void mapping_done(struct config_mapping *m)
{
	free(m->name);
	free(m->device);
	free(m->file);
	*m = (struct config_mapping){ 0 };
}

void config_done(struct config *c)
{
	for (size_t i = 0; i < c->n_mappings; i++)
		mapping_done(&c->mappings[i]);
	free(c->mappings);
	c->mappings = NULL;
	c->n_mappings = 0;
}

int config_parse_bool(const char *s, bool *ret)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };

	for (size_t i = 0; i < ELEMENTSOF(yes); i++) {
		if (!strcmp(s, yes[i])) {
			*ret = true;
			return 0;
		}
		if (!strcmp(s, no[i])) {
			*ret = false;
			return 0;
		}
	}
	return -EINVAL;
}

int config_parse_u64(const char *s, uint64_t max, uint64_t *ret)
{
	uint64_t v = 0;

	if (!*s)
		return -EINVAL;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (v > max)
		return -ERANGE;
	*ret = v;
	return 0;
}

int config_parse_sec(const char *s, usec_t min, usec_t max, usec_t *ret)
{
	const char *dot = strchr(s, '.');
	char whole[24];
	uint64_t sec, frac = 0;
	size_t n = dot ? (size_t)(dot - s) : strlen(s);
	int r;

	if (n == 0 || n >= sizeof(whole))
		return -EINVAL;
	memcpy(whole, s, n);
	whole[n] = '\0';
	r = config_parse_u64(whole, UINT64_MAX / USEC_PER_SEC - 1, &sec);
	if (r < 0)
		return r;
	if (dot) {
		size_t digits = strlen(dot + 1);

		if (digits == 0 || digits > 6)
			return -EINVAL;
		r = config_parse_u64(dot + 1, 999999, &frac);
		if (r < 0)
			return r;
		for (size_t i = digits; i < 6; i++)
			frac *= 10;
	}
	if (sec * USEC_PER_SEC + frac < min || sec * USEC_PER_SEC + frac > max)
		return -ERANGE;
	*ret = sec * USEC_PER_SEC + frac;
	return 0;
}

/* ------------------------------------------------------------ parser */

struct parser {
	const char *file;
	unsigned int line;
	char *err;
	size_t errsize;
	struct config next;		/* the scalars as they become */
	struct config_mapping *new;	/* mappings of this file */
	size_t n_new;
	enum section section;
	unsigned int section_line;
	uint32_t seen;			/* keys set in this section */
	const struct config *old;	/* mappings of earlier files */
};

_printf_(2, 3) static int parse_error(struct parser *p, const char *format, ...)
{
	int n = snprintf(p->err, p->errsize, "%s:%u: ", p->file, p->line);
	va_list ap;

	if (n >= 0 && (size_t)n < p->errsize) {
		va_start(ap, format);
		vsnprintf(p->err + n, p->errsize - (size_t)n, format, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static struct config_mapping *current_mapping(struct parser *p)
{
	return &p->new[p->n_new - 1];
}

static const struct config_mapping *find_mapping(const struct parser *p, const char *name,
						 const struct config_mapping *except)
{
	for (size_t i = 0; i < p->old->n_mappings; i++)
		if (!strcmp(p->old->mappings[i].name, name))
			return &p->old->mappings[i];
	for (size_t i = 0; i < p->n_new; i++)
		if (&p->new[i] != except && p->new[i].name && !strcmp(p->new[i].name, name))
			return &p->new[i];
	return NULL;
}

/* The end of a section: what it must contain. */
static int section_end(struct parser *p)
{
	struct config_mapping *m;
	unsigned int line = p->line;
	int r = 0;

	if (p->section != SECTION_MAPPING)
		return 0;
	m = current_mapping(p);
	p->line = p->section_line;
	if (!m->name)
		r = parse_error(p, "[Mapping] without Name=");
	else if (!m->device)
		r = parse_error(p, "[Mapping] '%s' without Device=", m->name);
	else if (m->pin && !m->have_mode)
		r = parse_error(p, "[Mapping] '%s': Pin=yes needs Mode=", m->name);
	p->line = line;
	return r;
}

static int section_begin(struct parser *p, const char *name)
{
	struct config_mapping *grown;
	int r;

	r = section_end(p);
	if (r < 0)
		return r;
	p->seen = 0;
	p->section_line = p->line;
	if (!strcmp(name, "Daemon")) {
		p->section = SECTION_DAEMON;
		return 0;
	}
	if (strcmp(name, "Mapping"))
		return parse_error(p, "unknown section [%s] (Daemon, Mapping)", name);
	if (p->old->n_mappings + p->n_new >= CONFIG_MAPPINGS_MAX)
		return parse_error(p, "more than %d [Mapping] sections", CONFIG_MAPPINGS_MAX);
	grown = realloc(p->new, (p->n_new + 1) * sizeof(*p->new));
	if (!grown)
		return parse_error(p, "out of memory");
	p->new = grown;
	p->new[p->n_new++] = (struct config_mapping){ .line = p->line };
	current_mapping(p)->file = strdup(p->file);
	if (!current_mapping(p)->file)
		return parse_error(p, "out of memory");
	p->section = SECTION_MAPPING;
	return 0;
}

static int set_string(struct parser *p, char **dst, const char *value)
{
	*dst = strdup(value);
	return *dst ? 0 : parse_error(p, "out of memory");
}

static int parse_ms(struct parser *p, const char *key, const char *value, uint32_t *ret)
{
	uint64_t v;

	if (config_parse_u64(value, DMB_HOLD_MS_MAX, &v) < 0)
		return parse_error(p, "%s=%s: milliseconds from 0 to %u expected", key, value,
				   DMB_HOLD_MS_MAX);
	*ret = (uint32_t)v;
	return 0;
}

static int parse_fallback(struct parser *p, const char *value, enum dmb_fallback *ret)
{
	if (dmb_fallback_from_string(value, ret) < 0)
		return parse_error(p, "Fallback=%s: none or drain expected", value);
	return 0;
}

static int daemon_key(struct parser *p, int id, const char *key, const char *value)
{
	struct config *c = &p->next;

	switch (id) {
	case K_POLL_INTERVAL:
		if (config_parse_sec(value, POLL_MIN_USEC, POLL_MAX_USEC, &c->poll_interval_usec) < 0)
			return parse_error(p, "%s=%s: seconds from 0.1 to 60 expected", key, value);
		return 0;
	case K_ON_FLUSH_ERROR:
		if (on_flush_error_from_string(value, &c->policy.on_flush_error) < 0)
			return parse_error(p, "%s=%s: disable-cache, drain or none expected", key, value);
		return 0;
	case K_HOLDDOWN:
		if (config_parse_sec(value, 0, HOLDDOWN_MAX_USEC, &c->policy.holddown_usec) < 0)
			return parse_error(p, "%s=%s: seconds from 0 to 86400 expected", key, value);
		return 0;
	case K_HOLDDOWN_MAX:
		if (config_parse_sec(value, 0, HOLDDOWN_MAX_USEC, &c->policy.holddown_max_usec) < 0)
			return parse_error(p, "%s=%s: seconds from 0 to 86400 expected", key, value);
		return 0;
	case K_FALLBACK:
		return parse_fallback(p, value, &c->fallback);
	case K_HOLD:
		return parse_ms(p, key, value, &c->hold_ms);
	case K_ADOPT_HOLD:
		return parse_ms(p, key, value, &c->adopt_hold_ms);
	}
	return parse_error(p, "internal error: key %s", key);
}

static int mapping_key(struct parser *p, int id, const char *key, const char *value)
{
	struct config_mapping *m = current_mapping(p);
	const struct config_mapping *other;
	int r;

	switch (id) {
	case K_NAME:
		if (dmb_name_check(value) < 0)
			return parse_error(p,
					   "Name=%s: not a valid mapping name (1 to %zu of A-Z a-z 0-9 # + - . : = @ _)",
					   value, (size_t)(DMB_NAME_MAX - 1 - strlen(DMB_UUID_PREFIX)));
		other = find_mapping(p, value, m);
		if (other)
			return parse_error(p, "Name=%s: already configured at %s:%u", value,
					   other->file, other->line);
		return set_string(p, &m->name, value);
	case K_DEVICE:
		if (value[0] != '/' && !strchr(value, ':'))
			return parse_error(p, "Device=%s: an absolute path or major:minor expected",
					   value);
		return set_string(p, &m->device, value);
	case K_OFFSET:
		if (config_parse_u64(value, UINT64_MAX, &m->offset) < 0)
			return parse_error(p, "Offset=%s: a sector number expected", value);
		return 0;
	case K_LENGTH:
		if (config_parse_u64(value, UINT64_MAX, &m->length) < 0)
			return parse_error(p, "Length=%s: a number of sectors expected (0: to the end)",
					   value);
		return 0;
	case K_MODE:
		if (dmb_mode_from_string(value, &m->mode) < 0)
			return parse_error(p, "Mode=%s: flush, fua, drain, passthrough or none expected",
					   value);
		m->have_mode = true;
		return 0;
	case K_PIN:
		if (config_parse_bool(value, &m->pin) < 0)
			return parse_error(p, "Pin=%s: yes or no expected", value);
		return 0;
	case K_FALLBACK:
		r = parse_fallback(p, value, &m->fallback);
		m->have_fallback = r == 0;
		return r;
	case K_HOLD:
		r = parse_ms(p, key, value, &m->hold_ms);
		m->have_hold = r == 0;
		return r;
	}
	return parse_error(p, "internal error: key %s", key);
}

static char *strip(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

static int parse_line(struct parser *p, char *line)
{
	const struct key *k = NULL;
	char *eq, *key, *value;

	line = strip(line);
	if (!*line || *line == '#' || *line == ';')
		return 0;
	if (*line == '[') {
		size_t n = strlen(line);

		if (n < 3 || line[n - 1] != ']')
			return parse_error(p, "malformed section header '%s'", line);
		line[n - 1] = '\0';
		return section_begin(p, line + 1);
	}
	eq = strchr(line, '=');
	if (!eq)
		return parse_error(p, "'%s' is neither Key=Value nor a [Section]", line);
	*eq = '\0';
	key = strip(line);
	value = strip(eq + 1);
	if (!*key)
		return parse_error(p, "a value without a key");
	if (p->section == SECTION_NONE)
		return parse_error(p, "%s= outside a section ([Daemon] or [Mapping] first)", key);
	for (size_t i = 0; i < ELEMENTSOF(keys); i++)
		if (keys[i].section == p->section && !strcmp(keys[i].name, key))
			k = &keys[i];
	if (!k)
		return parse_error(p, "unknown key '%s' in [%s]", key,
				   p->section == SECTION_DAEMON ? "Daemon" : "Mapping");
	if (p->seen & (1U << k->id))
		return parse_error(p, "%s= given twice in this section", key);
	p->seen |= 1U << k->id;
	if (!*value)
		return parse_error(p, "%s= has no value", key);
	return p->section == SECTION_DAEMON ? daemon_key(p, k->id, key, value)
					    : mapping_key(p, k->id, key, value);
}

int config_parse(struct config *c, const char *file, const char *text, size_t size, char *err,
		 size_t errsize)
{
	struct parser p = {
		.file = file, .err = err, .errsize = errsize, .next = *c, .old = c,
	};
	char buf[CONFIG_LINE_MAX + 1];
	size_t pos = 0;
	int r = 0;

	if (memchr(text, '\0', size)) {
		p.line = 1;
		for (size_t i = 0; text[i]; i++)
			p.line += text[i] == '\n';
		r = parse_error(&p, "NUL byte in the file");
		goto out;
	}
	while (pos < size) {
		const char *nl = memchr(text + pos, '\n', size - pos);
		size_t len = nl ? (size_t)(nl - (text + pos)) : size - pos;

		p.line++;
		if (len > CONFIG_LINE_MAX) {
			r = parse_error(&p, "line longer than %d bytes", CONFIG_LINE_MAX);
			goto out;
		}
		memcpy(buf, text + pos, len);
		buf[len] = '\0';
		pos += len + (nl ? 1 : 0);
		r = parse_line(&p, buf);
		if (r < 0)
			goto out;
	}
	r = section_end(&p);
	if (r < 0)
		goto out;

	/* All good: the new scalars and mappings become the config. */
	if (p.n_new) {
		struct config_mapping *all = realloc(c->mappings,
						     (c->n_mappings + p.n_new) * sizeof(*all));

		if (!all) {
			r = parse_error(&p, "out of memory");
			goto out;
		}
		memcpy(all + c->n_mappings, p.new, p.n_new * sizeof(*all));
		p.next.mappings = all;
		p.next.n_mappings = c->n_mappings + p.n_new;
		free(p.new);
		p.new = NULL;
		p.n_new = 0;
	}
	*c = p.next;
	if (c->policy.holddown_max_usec < c->policy.holddown_usec)
		c->policy.holddown_max_usec = c->policy.holddown_usec;
	return 0;
out:
	for (size_t i = 0; i < p.n_new; i++)
		mapping_done(&p.new[i]);
	free(p.new);
	return r;
}

/* ------------------------------------------------------------ loader */

static int load_error(char *err, size_t errsize, int r, const char *path, const char *what)
{
	snprintf(err, errsize, "%s: %s: %s", path, what, strerror(-r));
	return r;
}

static int load_file(struct config *c, const char *path, bool must_exist, char *err,
		     size_t errsize)
{
	_cleanup_(closep) int fd = -1;
	_cleanup_(freep) char *text = NULL;
	struct stat st;
	size_t size = 0;
	ssize_t n;

	/* As in systemd, /dev/null stands for an empty file. */
	if (!strcmp(path, "/dev/null"))
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		if (errno == ENOENT && !must_exist)
			return 0;
		return load_error(err, errsize, -errno, path, "cannot open");
	}
	if (fstat(fd, &st) < 0)
		return load_error(err, errsize, -errno, path, "cannot stat");
	if (!S_ISREG(st.st_mode))
		return load_error(err, errsize, -EINVAL, path, "not a regular file");
	text = malloc(CONFIG_FILE_SIZE_MAX + 1);
	if (!text)
		return load_error(err, errsize, -ENOMEM, path, "cannot read");
	while ((n = read(fd, text + size, CONFIG_FILE_SIZE_MAX + 1 - size)) > 0) {
		size += (size_t)n;
		if (size > CONFIG_FILE_SIZE_MAX)
			return load_error(err, errsize, -EFBIG, path, "larger than 1 MiB");
	}
	if (n < 0)
		return load_error(err, errsize, -errno, path, "cannot read");
	return config_parse(c, path, text, size, err, errsize);
}

static int conf_filter(const struct dirent *de)
{
	size_t n = strlen(de->d_name);

	return de->d_name[0] != '.' && n > 5 && !strcmp(de->d_name + n - 5, ".conf");
}

int config_load(struct config *ret, const char *path, const char *dir, char *err, size_t errsize)
{
	struct config c;
	struct dirent **names = NULL;
	int n = 0, r = 0;

	config_init(&c);
	if (path) {
		r = load_file(&c, path, false, err, errsize);
		if (r < 0)
			goto out;
	}
	if (dir) {
		n = scandir(dir, &names, conf_filter, alphasort);
		if (n < 0) {
			n = 0;
			if (errno != ENOENT) {
				r = load_error(err, errsize, -errno, dir, "cannot list");
				goto out;
			}
		}
		if (n > CONFIG_FILES_MAX) {
			r = load_error(err, errsize, -E2BIG, dir, "more than 128 drop-ins");
			goto out;
		}
		for (int i = 0; i < n; i++) {
			char file[4096];

			if ((size_t)snprintf(file, sizeof(file), "%s/%s", dir, names[i]->d_name) >=
			    sizeof(file)) {
				r = load_error(err, errsize, -ENAMETOOLONG, dir, "file name");
				goto out;
			}
			r = load_file(&c, file, true, err, errsize);
			if (r < 0)
				goto out;
		}
	}
out:
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
	if (r < 0) {
		config_done(&c);
		return r;
	}
	config_done(ret);
	*ret = c;
	return 0;
}
