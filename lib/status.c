// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * status.c: pure parsers and formatters of the barrier target's text: the
 * INFO status line (fifteen fields, and whatever a newer 1.x target appends),
 * the TABLE line, device numbers, mode and fallback names, mapping names,
 * and the check of a loaded target's version against what this library
 * reads.  No I/O and no context, so the unit tests and the fuzzer drive
 * them directly.
 * Strict on purpose: the kernel prints exactly one form per version, and
 * anything else means a different target or a broken one, never something
 * to guess at.  The one allowance is the version rule: a target of the
 * same major version may append status fields (a newer minor), so fields
 * after the fifteenth are skipped, never read; fewer is an error.
 */
#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "libdmbarrier-private.h"

#define STATUS_FIELDS 15
#define TABLE_FIELDS_MAX (3 + 3)	/* dev offset n + three features */
/* The kernel's dev_t encoding limits (MINORBITS 20, 12-bit major). */
#define MAJOR_MAX 4095U
#define MINOR_MAX ((1U << 20) - 1)

static const char *const mode_names[_DMB_MODE_MAX] = {
	[DMB_MODE_FLUSH] = "flush",
	[DMB_MODE_FUA] = "fua",
	[DMB_MODE_DRAIN] = "drain",
	[DMB_MODE_PASSTHROUGH] = "passthrough",
	[DMB_MODE_NONE] = "none",
};

static const char *const fallback_names[_DMB_FALLBACK_MAX] = {
	[DMB_FALLBACK_NONE] = "none",
	[DMB_FALLBACK_DRAIN] = "drain",
};

struct token {
	const char *p;
	size_t len;
};

static const char *const status_names[STATUS_FIELDS] = {
	"mode",	    "cache",	 "fua",		 "barriers", "flushes",
	"fua_writes", "flush_errors", "fallbacks", "held",	 "max_drain_us",
	"shared",   "no_cache",	 "refused",	 "replayed", "cache_changes",
};

_printf_(3, 4) static int parse_error(char *err, size_t errsize, const char *format, ...)
{
	va_list args;

	if (err && errsize) {
		va_start(args, format);
		vsnprintf(err, errsize, format, args);
		va_end(args);
	}
	return -EBADMSG;
}

_public_ const char *dmb_mode_to_string(enum dmb_mode mode)
{
	if ((unsigned int)mode >= _DMB_MODE_MAX)
		return NULL;
	return mode_names[mode];
}

_public_ int dmb_mode_from_string(const char *s, enum dmb_mode *ret)
{
	for (unsigned int i = 0; s && i < _DMB_MODE_MAX; i++)
		if (!strcmp(s, mode_names[i])) {
			*ret = (enum dmb_mode)i;
			return 0;
		}
	return -EINVAL;
}

_public_ const char *dmb_fallback_to_string(enum dmb_fallback fallback)
{
	if ((unsigned int)fallback >= _DMB_FALLBACK_MAX)
		return NULL;
	return fallback_names[fallback];
}

_public_ int dmb_fallback_from_string(const char *s, enum dmb_fallback *ret)
{
	for (unsigned int i = 0; s && i < _DMB_FALLBACK_MAX; i++)
		if (!strcmp(s, fallback_names[i])) {
			*ret = (enum dmb_fallback)i;
			return 0;
		}
	return -EINVAL;
}

_public_ int dmb_name_check(const char *name)
{
	/* The UUID DMB_UUID_PREFIX + name must fit DM_UUID_LEN. */
	const size_t max = DMB_NAME_MAX - 1 - strlen(DMB_UUID_PREFIX);
	size_t len;

	if (!name)
		return -EINVAL;
	len = strlen(name);
	if (len == 0 || len > max || !strcmp(name, ".") || !strcmp(name, ".."))
		return -EINVAL;
	for (const char *p = name; *p; p++)
		if (!isascii((unsigned char)*p) ||
		    !(isalnum((unsigned char)*p) || strchr("#+-.:=@_", *p)))
			return -EINVAL;
	return 0;
}

/*
 * Split at single spaces into at most max tokens (one more is counted so a
 * surplus shows).  Returns the count, or -1 with *bad set to the offset of
 * a character no token may hold or a separator that is not exactly one
 * space.
 */
static int tokenize(const char *s, struct token *tok, int max, size_t *bad)
{
	int n = 0;
	const char *p = s;

	if (!*p)
		return 0;
	for (;;) {
		const char *start = p;

		while (*p > ' ' && *p < 0x7f)
			p++;
		if (p == start) {
			*bad = (size_t)(p - s);
			return -1;
		}
		if (n < max)
			tok[n] = (struct token){ start, (size_t)(p - start) };
		n++;
		if (!*p)
			return n;
		if (*p != ' ') {
			*bad = (size_t)(p - s);
			return -1;
		}
		p++;
	}
}

static bool token_is(const struct token *t, const char *word)
{
	return t->len == strlen(word) && !memcmp(t->p, word, t->len);
}

int u64_parse(const char *s, size_t len, uint64_t *ret)
{
	uint64_t v = 0;

	if (len == 0)
		return -EINVAL;
	for (size_t i = 0; i < len; i++)
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
	if (len > 1 && s[0] == '0')
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		unsigned int d = (unsigned int)(s[i] - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*ret = v;
	return 0;
}

/* A copy of a token for messages, cut short and NUL-terminated. */
static const char *tokstr(const struct token *t, char *buf, size_t size)
{
	size_t n = t->len < size - 1 ? t->len : size - 1;

	memcpy(buf, t->p, n);
	buf[n] = '\0';
	return buf;
}

static int number_field(const struct token *t, int idx, uint64_t max, uint64_t *ret, char *err,
			size_t errsize)
{
	char buf[32];
	uint64_t v;
	int r;

	r = u64_parse(t->p, t->len, &v);
	if (r == -ERANGE || (r == 0 && v > max))
		return parse_error(err, errsize, "field %d (%s): '%s' is out of range (max %llu)",
				   idx + 1, status_names[idx], tokstr(t, buf, sizeof(buf)),
				   (unsigned long long)max);
	if (r < 0)
		return parse_error(err, errsize,
				   "field %d (%s): '%s' is not a decimal number", idx + 1,
				   status_names[idx], tokstr(t, buf, sizeof(buf)));
	*ret = v;
	return 0;
}

_public_ int dmb_status_parse(const char *params, struct dmb_status *ret, char *err,
			      size_t errsize)
{
	struct token tok[STATUS_FIELDS];
	struct dmb_status st = {};
	uint64_t *counters[] = {
		&st.barriers, &st.flushes,  &st.fua_writes, &st.flush_errors,	&st.fallbacks,
		NULL /* held */, &st.max_drain_us, &st.shared, &st.no_cache, &st.refused,
		&st.replayed, &st.cache_changes,
	};
	char buf[32], mode[16];
	size_t bad = 0;
	int n, r;

	if (!params || !ret)
		return -EINVAL;
	n = tokenize(params, tok, STATUS_FIELDS, &bad);
	if (n < 0)
		return parse_error(err, errsize,
				   "status line: unexpected character 0x%02x at offset %zu",
				   (unsigned char)params[bad], bad);
	if (n < STATUS_FIELDS)
		return parse_error(err, errsize, "status line has %d fields, expected at least %d",
				   n, STATUS_FIELDS);

	tokstr(&tok[0], mode, sizeof(mode));
	if (tok[0].len >= sizeof(mode) || dmb_mode_from_string(mode, &st.mode) < 0)
		return parse_error(err, errsize, "field 1 (mode): unknown mode '%s'",
				   tokstr(&tok[0], buf, sizeof(buf)));
	if (token_is(&tok[1], "writeback"))
		st.cache_writeback = true;
	else if (!token_is(&tok[1], "writethrough"))
		return parse_error(err, errsize,
				   "field 2 (cache): '%s' is neither writeback nor writethrough",
				   tokstr(&tok[1], buf, sizeof(buf)));
	if (token_is(&tok[2], "fua"))
		st.fua = true;
	else if (!token_is(&tok[2], "nofua"))
		return parse_error(err, errsize, "field 3 (fua): '%s' is neither fua nor nofua",
				   tokstr(&tok[2], buf, sizeof(buf)));

	for (int i = 3; i < STATUS_FIELDS; i++) {
		uint64_t v;

		if (!counters[i - 3]) {
			r = number_field(&tok[i], i, UINT32_MAX, &v, err, errsize);
			if (r < 0)
				return r;
			st.held = (uint32_t)v;
			continue;
		}
		r = number_field(&tok[i], i, UINT64_MAX, counters[i - 3], err, errsize);
		if (r < 0)
			return r;
	}
	*ret = st;
	return 0;
}

int target_version_check(const unsigned int v[3], char *err, size_t errsize)
{
	/* A variable, not the literal: the minimum may well be 0. */
	const unsigned int minor_min = DMB_TARGET_MINOR_MIN;

	if (v[0] == DMB_TARGET_MAJOR && v[1] >= minor_min)
		return 0;
	(void)parse_error(err, errsize,
			  "the loaded barrier target is version %u.%u.%u, this libdmbarrier reads %u.%u or a newer %u.x: load a matching dm-barrier (remove every barrier mapping, then rmmod dm_barrier) or install a matching libdmbarrier",
			  v[0], v[1], v[2], DMB_TARGET_MAJOR, DMB_TARGET_MINOR_MIN, DMB_TARGET_MAJOR);
	return -EPROTONOSUPPORT;
}

/* "maj:min" from a token; 0 or -EINVAL. */
static int devnum_token(const char *p, size_t len, dev_t *ret)
{
	const char *colon = memchr(p, ':', len);
	uint64_t ma, mi;

	if (!colon)
		return -EINVAL;
	if (u64_parse(p, (size_t)(colon - p), &ma) < 0 ||
	    u64_parse(colon + 1, len - (size_t)(colon - p) - 1, &mi) < 0)
		return -EINVAL;
	if (ma > MAJOR_MAX || mi > MINOR_MAX)
		return -EINVAL;
	*ret = makedev((unsigned int)ma, (unsigned int)mi);
	return 0;
}

int devnum_parse(const char *s, dev_t *ret)
{
	if (!s)
		return -EINVAL;
	return devnum_token(s, strlen(s), ret);
}

static int feature_parse(const struct token *t, struct dmb_table *tab, unsigned int *seen,
			 char *err, size_t errsize)
{
	static const struct {
		const char *key;
		unsigned int bit;
	} keys[] = { { "mode:", 1 }, { "fallback:", 2 }, { "hold_on_flush_error:", 4 } };
	char buf[48], val[24];
	const char *v = NULL;
	size_t vlen = 0;
	unsigned int bit = 0;
	uint64_t ms;

	for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
		size_t klen = strlen(keys[i].key);

		if (t->len >= klen && !memcmp(t->p, keys[i].key, klen)) {
			bit = keys[i].bit;
			v = t->p + klen;
			vlen = t->len - klen;
			break;
		}
	}
	if (!bit)
		return parse_error(err, errsize, "table: unknown feature '%s'",
				   tokstr(t, buf, sizeof(buf)));
	if (*seen & bit)
		return parse_error(err, errsize, "table: duplicate feature '%s'",
				   tokstr(t, buf, sizeof(buf)));
	*seen |= bit;

	if (vlen >= sizeof(val))
		return parse_error(err, errsize, "table: bad feature value in '%s'",
				   tokstr(t, buf, sizeof(buf)));
	memcpy(val, v, vlen);
	val[vlen] = '\0';
	switch (bit) {
	case 1:
		if (dmb_mode_from_string(val, &tab->mode) < 0)
			return parse_error(err, errsize, "table: unknown mode '%s'", val);
		break;
	case 2:
		if (dmb_fallback_from_string(val, &tab->fallback) < 0)
			return parse_error(err, errsize, "table: unknown fallback '%s'", val);
		break;
	default:
		if (u64_parse(val, vlen, &ms) < 0 || ms > DMB_HOLD_MS_MAX)
			return parse_error(err, errsize,
					   "table: hold_on_flush_error '%s' is not 0 to %u", val,
					   DMB_HOLD_MS_MAX);
		tab->hold_ms = (uint32_t)ms;
		break;
	}
	return 0;
}

_public_ int dmb_table_parse(const char *params, struct dmb_table *ret, char *err,
			     size_t errsize)
{
	struct token tok[TABLE_FIELDS_MAX];
	struct dmb_table tab = { .mode = DMB_MODE_FLUSH, .fallback = DMB_FALLBACK_NONE };
	unsigned int seen = 0;
	char buf[32];
	uint64_t nfeat = 0;
	size_t bad = 0;
	int n, r;

	if (!params || !ret)
		return -EINVAL;
	n = tokenize(params, tok, TABLE_FIELDS_MAX, &bad);
	if (n < 0)
		return parse_error(err, errsize,
				   "table line: unexpected character 0x%02x at offset %zu",
				   (unsigned char)params[bad], bad);
	if (n < 2)
		return parse_error(err, errsize, "table line has %d fields, expected at least 2",
				   n);
	if (devnum_token(tok[0].p, tok[0].len, &tab.backing) < 0)
		return parse_error(err, errsize, "table: device '%s' is not major:minor",
				   tokstr(&tok[0], buf, sizeof(buf)));
	if (u64_parse(tok[1].p, tok[1].len, &tab.offset) < 0)
		return parse_error(err, errsize, "table: offset '%s' is not a decimal number",
				   tokstr(&tok[1], buf, sizeof(buf)));
	if (n == 2)
		goto done;
	/* The kernel prints the count only when there are features. */
	if (u64_parse(tok[2].p, tok[2].len, &nfeat) < 0 || nfeat < 1 || nfeat > 3)
		return parse_error(err, errsize, "table: feature count '%s' is not 1 to 3",
				   tokstr(&tok[2], buf, sizeof(buf)));
	if ((uint64_t)n != 3 + nfeat)
		return parse_error(err, errsize, "table: %llu features announced, %d given",
				   (unsigned long long)nfeat, n - 3);
	for (int i = 3; i < n; i++) {
		r = feature_parse(&tok[i], &tab, &seen, err, errsize);
		if (r < 0)
			return r;
	}
done:
	*ret = tab;
	return 0;
}

int table_format(const struct dmb_table *t, char *buf, size_t size)
{
	const char *mode = dmb_mode_to_string(t->mode);
	const char *fallback = dmb_fallback_to_string(t->fallback);
	unsigned int nfeat;
	char feat[96] = "";
	int n;

	if (!mode || !fallback || t->hold_ms > DMB_HOLD_MS_MAX)
		return -EINVAL;
	/* Defaults are left out, as the target prints its table. */
	nfeat = (t->mode != DMB_MODE_FLUSH) + (t->fallback != DMB_FALLBACK_NONE) + !!t->hold_ms;
	if (nfeat) {
		n = snprintf(feat, sizeof(feat), " %u", nfeat);
		if (t->mode != DMB_MODE_FLUSH)
			n += snprintf(feat + n, sizeof(feat) - (size_t)n, " mode:%s", mode);
		if (t->fallback != DMB_FALLBACK_NONE)
			n += snprintf(feat + n, sizeof(feat) - (size_t)n, " fallback:%s", fallback);
		if (t->hold_ms)
			snprintf(feat + n, sizeof(feat) - (size_t)n, " hold_on_flush_error:%u",
				 t->hold_ms);
	}
	n = snprintf(buf, size, "%u:%u %llu%s", major(t->backing), minor(t->backing),
		     (unsigned long long)t->offset, feat);
	if (n < 0 || (size_t)n >= size)
		return -ENOBUFS;
	return 0;
}
