#!/bin/bash
# Ordering survives a failed cache flush with fallback:drain: the AHCI
# disk's 201st flush fails (blkdebug passes 200 flushes, fails 6 - sd's
# SYNCHRONIZE CACHE and its 5 retries, one failure as the kernel sees it,
# measured in target-flush-transient - then passes again), mid-way through the load; the barrier whose flush failed
# fails, the mapping falls back to drain, and the barriers after it must
# still neither be overtaken nor overtake (drain and overtake rules;
# durability is not checked: the fallback gives it up).
# Negative control: the same mapping switched to passthrough, same disk,
# same load: the checker must find violations.
# vm: ide ahci blkdebug=ahci:200+6
# timeout: 240
source "$PROJECT/tests/vm/lib.sh"
source "$PROJECT/tests/tools/order-lib.sh"

modprobe dm-barrier
make_barrier ofb "$DISK_AHCI" fallback:drain
out=$WORK/ofb.trace
log "ofb: mode flush, fallback:drain, the 201st flush fails; $ORD_BIOS bios"
ord_trace ofb "$DISK_AHCI" "$out" -n "$ORD_BIOS" -q 32 -e 50
log "ofb: status $(dmsetup status ofb)"
expect_eq "mode after the failed flush" "$(bstatus ofb mode)" drain
expect_eq "fallbacks" "$(bstatus ofb fallbacks)" 1
[ "$(bstatus ofb flush_errors)" -ge 1 ] || fail "no flush error counted"
ord_check "$out"
after=$(sed -n 's/.*barriers after the first failure \([0-9]*\).*/\1/p' "$out.check")
log "barriers after the first flush failure: $after"
[ "${after:-0}" -ge 100 ] || fail "only ${after:-0} barriers ran after the flush failure; the test shows nothing"

# Negative control.
ord_passthrough_control ofb "$DISK_AHCI"
