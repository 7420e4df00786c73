#!/bin/bash
# The barrierctl guest tests again, with the ASan/UBSan build of barrierctl
# and libdmbarrier (build/asan, `make asan`): barrierctl-writecache,
# barrierctl-bus and barrierctl-mappings in one guest.  Each fails on a
# sanitizer report (exit code 99 or a report on stderr) as on any other
# failure.  Skipped when build/asan/barrierctl has not been built.
# vm: ide ahci scsi
# timeout: 900
source "$PROJECT/tests/vm/lib.sh"

asan=$PROJECT/build/asan/barrierctl
[ -x "$asan" ] || skip "no $asan (make asan)"
ldd "$asan" | grep -q "$PROJECT/build/asan/lib/libdmbarrier.so" ||
	fail "$asan does not use the ASan libdmbarrier: $(ldd "$asan" | grep dmbarrier)"
# mappings last: it leaves udevd running.
for t in barrierctl-writecache barrierctl-bus barrierctl-mappings; do
	log "=== $t with $asan"
	DMB_BCTL=$asan bash "$PROJECT/tests/guest/$t.sh" || fail "$t failed with the ASan barrierctl"
done
log "all barrierctl tests passed with ASan/UBSan"
