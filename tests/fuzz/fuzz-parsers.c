// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fuzz-parsers.c: libFuzzer target over libdmbarrier's parsers of the
 * barrier target's text (lib/status.c).  Besides ASan/UBSan findings it
 * checks two properties: the status parser accepts only the canonical
 * line, so printing what it parsed must give the input back byte for
 * byte (up to the fields a newer 1.x target appends, which it skips); and a parsed table, formatted and parsed again, is the same table.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libdmbarrier-private.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void status_check(const char *line)
{
	struct dmb_status st;
	char err[128], again[512];
	size_t n;

	if (dmb_status_parse(line, &st, err, sizeof(err)) < 0)
		return;
	snprintf(again, sizeof(again),
		 "%s %s %s %llu %llu %llu %llu %llu %u %llu %llu %llu %llu %llu %llu",
		 dmb_mode_to_string(st.mode), st.cache_writeback ? "writeback" : "writethrough",
		 st.fua ? "fua" : "nofua", (unsigned long long)st.barriers,
		 (unsigned long long)st.flushes, (unsigned long long)st.fua_writes,
		 (unsigned long long)st.flush_errors, (unsigned long long)st.fallbacks, st.held,
		 (unsigned long long)st.max_drain_us, (unsigned long long)st.shared,
		 (unsigned long long)st.no_cache, (unsigned long long)st.refused,
		 (unsigned long long)st.replayed, (unsigned long long)st.cache_changes);
	/* Fields a newer 1.x target appends are skipped: the known ones must lead. */
	n = strlen(again);
	if (strncmp(line, again, n) || (line[n] && line[n] != ' ')) {
		fprintf(stderr, "status accepted a non-canonical line:\n'%s'\n'%s'\n", line, again);
		abort();
	}
}

static void table_check(const char *line)
{
	struct dmb_table t, t2;
	char err[128], again[256];

	if (dmb_table_parse(line, &t, err, sizeof(err)) < 0)
		return;
	if (table_format(&t, again, sizeof(again)) < 0 ||
	    dmb_table_parse(again, &t2, err, sizeof(err)) < 0 || memcmp(&t, &t2, sizeof(t))) {
		fprintf(stderr, "table does not survive format+parse: '%s' -> '%s'\n", line, again);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *line = malloc(size + 1);

	if (!line)
		return 0;
	memcpy(line, data, size);
	line[size] = '\0';
	status_check(line);
	table_check(line);
	free(line);
	return 0;
}
