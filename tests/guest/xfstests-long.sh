#!/bin/bash
# xfstests over barrier mappings (modes flush, fua, drain) and, in the same
# boot on the same disks, over dm-linear, the baseline: ext4 and xfs,
# TEST_DEV on the IDE disk, SCRATCH_DEV on the AHCI disk, LOGWRITES_DEV
# beside TEST_DEV (tests/guest/upstream.lib).  Fails if a test passes over
# dm-linear and fails over a barrier mapping, or if the suite cannot run;
# prints per file system and mode passed/failed/not run beside dm-linear's,
# and the reason for every "not run" and every test failing on both.
# The list, chosen for what stresses a block target:
#   power failure and fsync recovery through dm-flakey (the "log" group),
#   log-writes replays (455, 457, 482), freeze, direct and async I/O,
#   zeroing, punching and FITRIM, shutdown, large and mixed I/O (fsx with
#   O_DIRECT, fio), and a sample of the quick group.
# DMB_UP_FS, DMB_UP_KINDS and DMB_XFSTESTS_LIST narrow a run.
# vm: ide=12G ahci=6G mem=2048
# timeout: 21600
source "$PROJECT/tests/vm/lib.sh"
source "$PROJECT/tests/guest/fs.lib"
source "$PROJECT/tests/guest/upstream.lib"

LIST=(
	# a sample of the quick group
	generic/001 generic/005 generic/011 generic/013 generic/020 generic/023
	# power failure and fsync recovery (dm-flakey drops what was not flushed;
	# not 040 and 041: each starts 3000 ln(1)s, 8 minutes under TCG)
	generic/034 generic/039 generic/056 generic/057
	generic/059 generic/065 generic/066 generic/073 generic/090 generic/101
	generic/104 generic/106 generic/107 generic/311 generic/321 generic/322
	generic/325 generic/335 generic/336 generic/341 generic/342 generic/343
	generic/348 generic/376
	# dm-log-writes: every flush point replayed and checked
	generic/455 generic/457 generic/482
	# freeze
	generic/068 generic/085 generic/390
	# direct and async I/O
	generic/113 generic/198 generic/207 generic/210 generic/211 generic/323 generic/465
	# zeroing, punching, FITRIM
	generic/008 generic/009 generic/012 generic/016 generic/260 generic/288
	# shutdown
	generic/042 generic/044 generic/045 generic/046 generic/049 generic/050
	generic/392 generic/468
	# large and mixed I/O
	generic/091 generic/095 generic/129 generic/263
)
up_xfstests "ext4 xfs" "${LIST[@]}"
