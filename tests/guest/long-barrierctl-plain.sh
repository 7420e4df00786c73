#!/bin/bash
# make check runs the barrierctl guest tests with the ASan/UBSan build of
# barrierctl and libdmbarrier (DMB_BCTL, set by the Makefile); this long
# variant runs them again with the plain build, the one `make install`
# ships: barrierctl-writecache, barrierctl-bus and barrierctl-mappings in
# one guest (barrierctl-flushfail needs a blkdebug machine of its own and
# runs with the plain build as `tests/vm/run barrierctl-flushfail`).
# vm: ide ahci scsi
# timeout: 900
source "$PROJECT/tests/vm/lib.sh"

# mappings last: it leaves udevd running.
for t in barrierctl-writecache barrierctl-bus barrierctl-mappings; do
	log "=== $t with $B/barrierctl"
	DMB_BCTL='' bash "$PROJECT/tests/guest/$t.sh" || fail "$t failed with the plain barrierctl"
done
log "all barrierctl tests passed with the plain build"
