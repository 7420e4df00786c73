#!/bin/bash
# make check-long: crash-ext4 at >= 500 flush points (DMB_LONG=1; skipped
# otherwise, crash-ext4 checks ~50 points in make check).  ext4 on a
# barrier mapping over dm-log-writes; every flush point of the replay must
# pass journal recovery + e2fsck -fn and keep the fsync()ed files, and the
# lose-previous mutation of the same log must fail e2fsck.
# vm: ide ahci
# timeout: 1800
# env: DMB_CRASH_FILES DMB_CRASH_MIN_POINTS DMB_CRASH_ROUNDS DMB_LONG
source "$PROJECT/tests/vm/lib.sh"
[ -n "${DMB_LONG:-}" ] || skip "long variant: make check-long (DMB_LONG=1)"
export DMB_CRASH_ROUNDS=${DMB_CRASH_ROUNDS:-16} DMB_CRASH_FILES=${DMB_CRASH_FILES:-12}
export DMB_CRASH_MIN_POINTS=${DMB_CRASH_MIN_POINTS:-500}
exec bash "$PROJECT/tests/guest/crash-ext4.sh"
