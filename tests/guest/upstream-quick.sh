#!/bin/bash
# The upstream suites' quick slice (check-long; not in make check yet,
# see docs/verification.md, "Upstream suites"): xfstests' dm-flakey
# fsync and power-fail tests on ext4 and blktests' "lots of flushes" over
# barrier mappings in modes flush, fua and drain, and over dm-linear on the
# same disks in the same boot.  Fails if a test passes over dm-linear and
# fails over a barrier mapping, or if a suite cannot run.  The whole lists
# are xfstests-long and blktests-long (tests/guest/upstream.lib).
# vm: ide ahci
# timeout: 420
source "$PROJECT/tests/vm/lib.sh"
source "$PROJECT/tests/guest/fs.lib"
source "$PROJECT/tests/guest/upstream.lib"

up_xfstests ext4 generic/034 generic/039 generic/056
BLK_TIMEOUT=5 up_blktests block/004
