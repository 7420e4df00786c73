/*
 * dmb-tablefuzz: feed malformed barrier table lines and messages to the
 * kernel through libdevmapper, one ioctl each, fast enough for thousands
 * in the TCG guest (a dmsetup process per case costs ~0.2 s there).
 *
 *   dmb-tablefuzz MAPPING SECTORS < CASES
 *
 * MAPPING is an existing barrier mapping of SECTORS sectors.  Each input
 * line is "table <params>" (loaded as the inactive table of a scratch device
 * that has none) or "message <text>" (sent to MAPPING).  Every case must be
 * rejected: a table load must fail, a message must fail with EINVAL.  The
 * scratch device must end up with no table and MAPPING's table and mode
 * must be what they were.  Prints one line per case that was accepted and
 * exits 1 if there was any; prints the number of cases on success.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libdevmapper.h>

#define SCRATCH "dmb-tablefuzz-scratch"

static int last_errno;

static void quiet_log(int level, const char *file, int line, int dm_errno, const char *f, ...)
{
}

static struct dm_task *task(int type, const char *name)
{
	struct dm_task *dmt = dm_task_create(type);

	if (!dmt || !dm_task_set_name(dmt, name)) {
		fprintf(stderr, "dmb-tablefuzz: cannot make a dm task for %s\n", name);
		exit(2);
	}
	return dmt;
}

static bool run(struct dm_task *dmt)
{
	bool ok;

	ok = dm_task_run(dmt);
	last_errno = ok ? 0 : dm_task_get_errno(dmt);
	dm_task_destroy(dmt);
	return ok;
}

/* TABLE (type STATUSTYPE_TABLE) or INFO line of the first target, or "". */
static void get_line(const char *name, int type, char *out, size_t len)
{
	struct dm_task *dmt = task(type, name);
	uint64_t start, length;
	char *ttype = NULL, *params = NULL;

	out[0] = '\0';
	if (dm_task_run(dmt)) {
		dm_get_next_target(dmt, NULL, &start, &length, &ttype, &params);
		if (ttype)
			snprintf(out, len, "%s %s", ttype, params ? params : "");
	}
	dm_task_destroy(dmt);
}

static bool scratch_has_table(void)
{
	struct dm_task *dmt = task(DM_DEVICE_INFO, SCRATCH);
	struct dm_info info;
	bool has = false;

	if (dm_task_run(dmt) && dm_task_get_info(dmt, &info))
		has = info.live_table || info.inactive_table;
	dm_task_destroy(dmt);
	return has;
}

int main(int argc, char **argv)
{
	char table_before[4096], table_after[4096], mode_before[4096], mode_after[4096];
	char *line = NULL, *p;
	size_t cap = 0;
	unsigned long long sectors;
	unsigned int cases = 0, accepted = 0;
	struct dm_task *dmt;
	ssize_t n;

	if (argc != 3 || sscanf(argv[2], "%llu", &sectors) != 1) {
		fprintf(stderr, "usage: dmb-tablefuzz MAPPING SECTORS < CASES\n");
		return 2;
	}
	dm_log_with_errno_init(quiet_log);

	dmt = task(DM_DEVICE_CREATE, SCRATCH);
	if (!run(dmt)) {
		fprintf(stderr, "dmb-tablefuzz: cannot create %s\n", SCRATCH);
		return 2;
	}
	get_line(argv[1], DM_DEVICE_TABLE, table_before, sizeof(table_before));
	get_line(argv[1], DM_DEVICE_STATUS, mode_before, sizeof(mode_before));
	if (strncmp(table_before, "barrier ", 8)) {
		fprintf(stderr, "dmb-tablefuzz: %s is not a barrier mapping\n", argv[1]);
		return 2;
	}

	while ((n = getline(&line, &cap, stdin)) > 0) {
		if (line[n - 1] == '\n')
			line[n - 1] = '\0';
		cases++;
		if (!strncmp(line, "table ", 6)) {
			dmt = task(DM_DEVICE_RELOAD, SCRATCH);
			if (!dm_task_add_target(dmt, 0, sectors, "barrier", line + 6)) {
				/* libdevmapper refused it before the kernel: rejected */
				dm_task_destroy(dmt);
				continue;
			}
			if (run(dmt)) {
				printf("ACCEPTED table: %s\n", line + 6);
				accepted++;
				dmt = task(DM_DEVICE_CLEAR, SCRATCH);
				run(dmt);
			}
		} else if (!strncmp(line, "message ", 8) || !strcmp(line, "message")) {
			p = line[7] ? line + 8 : line + 7;
			dmt = task(DM_DEVICE_TARGET_MSG, argv[1]);
			if (!dm_task_set_sector(dmt, 0) || !dm_task_set_message(dmt, p)) {
				dm_task_destroy(dmt);
				continue;
			}
			if (run(dmt)) {
				printf("ACCEPTED message: '%s'\n", p);
				accepted++;
			} else if (last_errno != EINVAL) {
				printf("WRONG ERROR for message '%s': errno %d, want EINVAL\n", p, last_errno);
				accepted++;
			}
		} else {
			fprintf(stderr, "dmb-tablefuzz: bad case line: %s\n", line);
			return 2;
		}
	}
	free(line);

	if (scratch_has_table()) {
		printf("the scratch device has a table after the run\n");
		accepted++;
	}
	dmt = task(DM_DEVICE_REMOVE, SCRATCH);
	run(dmt);
	get_line(argv[1], DM_DEVICE_TABLE, table_after, sizeof(table_after));
	get_line(argv[1], DM_DEVICE_STATUS, mode_after, sizeof(mode_after));
	if (strcmp(table_before, table_after)) {
		printf("table of %s changed: '%s' -> '%s'\n", argv[1], table_before, table_after);
		accepted++;
	}
	/* The mode is the first status word. */
	if (strncmp(mode_before, mode_after, strcspn(mode_before + 8, " ") + 8)) {
		printf("mode of %s changed: '%s' -> '%s'\n", argv[1], mode_before, mode_after);
		accepted++;
	}
	printf("%u cases, %u accepted\n", cases, accepted);
	dm_lib_release();
	return accepted ? 1 : 0;
}
