/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * config.h: barrierd.conf(5): /etc/barrierd.conf, then the drop-ins
 * /etc/barrierd.conf.d/NAME.conf in name order.  The parser is pure (text in,
 * struct out); config_load() only reads the files.  Either every file is
 * valid and the whole result is returned, or the first error comes back as
 * "FILE:LINE: reason" and the caller's config is untouched.
 */
#ifndef BARRIERD_CONFIG_H
#define BARRIERD_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "libdmbarrier.h"
#include "macro.h"
#include "policy.h"

#define CONFIG_FILE "/etc/barrierd.conf"
#define CONFIG_DROPIN_DIR "/etc/barrierd.conf.d"

/* Limits on what a configuration can make barrierd allocate. */
#define CONFIG_MAPPINGS_MAX 256
#define CONFIG_FILES_MAX 128
#define CONFIG_FILE_SIZE_MAX (1024 * 1024)
#define CONFIG_LINE_MAX 4096
#define CONFIG_ERROR_MAX 512

/* A [Mapping] section: a mapping barrierd creates if it is not there. */
struct config_mapping {
	char *name;
	char *device;
	uint64_t offset;
	uint64_t length;
	bool have_mode;
	enum dmb_mode mode;
	bool pin;
	bool have_fallback;
	enum dmb_fallback fallback;
	bool have_hold;
	uint32_t hold_ms;
	/* Where it was written, for errors found when it is applied. */
	char *file;
	unsigned int line;
};

struct config {
	/* [Daemon] */
	usec_t poll_interval_usec;	/* PollIntervalSec= */
	struct policy_config policy;	/* OnFlushError=, HoldDownSec=, HoldDownMaxSec= */
	enum dmb_fallback fallback;	/* Fallback= of mappings barrierd creates */
	uint32_t hold_ms;		/* HoldOnFlushErrorMSec= of mappings barrierd creates */
	uint32_t adopt_hold_ms;		/* AdoptHoldOnFlushErrorMSec= */
	/* [Mapping] sections, in the order read */
	struct config_mapping *mappings;
	size_t n_mappings;
};

/* The defaults (what an empty file gives). */
void config_init(struct config *c);
void config_done(struct config *c);

/*
 * Parse one file's text into c (which holds what earlier files gave).  On
 * error, err gets "FILE:LINE: reason" and c is left as it was.
 */
int config_parse(struct config *c, const char *file, const char *text, size_t size, char *err,
		 size_t errsize);

/*
 * Read path (missing is fine) and dir/NAME.conf (missing dir is fine) into a
 * fresh config; only on success is *ret replaced (the old one freed).
 */
int config_load(struct config *ret, const char *path, const char *dir, char *err, size_t errsize);

int config_parse_bool(const char *s, bool *ret);
/* Seconds with up to 6 decimals ("2", "0.5"), range [min, max] usec. */
int config_parse_sec(const char *s, usec_t min, usec_t max, usec_t *ret);
/* Strict decimal: digits only, no sign, fits the range. */
int config_parse_u64(const char *s, uint64_t max, uint64_t *ret);

#endif
