#!/bin/bash
# barrierctl-flushfail with the ASan/UBSan build of barrierctl and
# libdmbarrier: write-cache off while the drive aborts SET FEATURES.
# Skipped when build/asan/barrierctl has not been built.
# vm: ide ahci blkdebug=ahci:3
# timeout: 300
source "$PROJECT/tests/vm/lib.sh"

asan=$PROJECT/build/asan/barrierctl
[ -x "$asan" ] || skip "no $asan (make asan)"
DMB_BCTL=$asan bash "$PROJECT/tests/guest/barrierctl-flushfail.sh" ||
	fail "barrierctl-flushfail failed with the ASan barrierctl"
