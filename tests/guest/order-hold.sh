#!/bin/bash
# Ordering across a hold and its replay (issue 27, item 4): mode flush
# with hold_on_flush_error; the AHCI disk's 201st flush fails (blkdebug,
# as in order-fallback), mid-way through the load.  The barrier that
# needed it is held, and every bio behind it; once the hold is seen, an
# answer `mode flush` replays them.  The whole trace, the hold and the
# replay in it, must keep all four rules: drain, overtake, and (every
# barrier succeeds after the replay's flush) durability.  Held bios put
# back out of order (the mutant 9-hold-tail) overtake the barrier.
# Negative control: the same mapping switched to passthrough, same disk,
# same load: the checker must find violations.
# vm: ide ahci blkdebug=ahci:200+6
# timeout: 300
source "$PROJECT/tests/vm/lib.sh"
source "$PROJECT/tests/tools/order-lib.sh"

modprobe dm-barrier
make_barrier ofh "$DISK_AHCI" hold_on_flush_error:30000

# hold_answer: wait for the hold, let the load pile up behind it for a
# second, then answer with mode flush; what it saw goes to ofh.answer.
# It gives up when the load has ended (ofh.done).
hold_answer() {
	wait_until 250 'test -e "$WORK/ofh.done" || test "$(bstatus ofh held)" -ge 1' || true
	if [ "$(bstatus ofh held)" = 0 ]; then
		echo "no hold" >"$WORK/ofh.answer"
		return
	fi
	sleep 1
	echo "held $(bstatus ofh held), mode $(bstatus ofh mode)" >"$WORK/ofh.answer"
	dmsetup message ofh 0 mode flush || echo "the message failed" >>"$WORK/ofh.answer"
}
hold_answer &
answer=$!

out=$WORK/ofh.trace
log "ofh: mode flush, hold_on_flush_error:30000, the 201st flush fails; $ORD_BIOS bios"
ord_trace ofh "$DISK_AHCI" "$out" -n "$ORD_BIOS" -q 32
touch "$WORK/ofh.done"
wait "$answer"
log "ofh: at the answer: $(cat "$WORK/ofh.answer"); status $(dmsetup status ofh)"
case $(cat "$WORK/ofh.answer") in
held\ [1-9]*,\ mode\ *) ;;
*) fail "ofh: the hold was not seen or not answered: $(cat "$WORK/ofh.answer")" ;;
esac
expect_eq "mode after the replay" "$(bstatus ofh mode)" flush
expect_eq "fallbacks" "$(bstatus ofh fallbacks)" 1
expect_eq "held after the replay" "$(bstatus ofh held)" 0
[ "$(bstatus ofh replayed)" -ge 1 ] || fail "ofh: nothing replayed: $(dmsetup status ofh)"
[ "$(bstatus ofh flush_errors)" -ge 1 ] || fail "ofh: no flush error counted"
"$T/dmb-orderload" --verify-map "$out.map" /dev/mapper/ofh ||
	fail "ofh: blocks read back do not hold what was written"
ord_check "$out" --durability
after=$(sed -n 's/.*barriers after the first failure \([0-9]*\).*/\1/p' "$out.check")
log "barriers after the first flush failure: $after"
[ "${after:-0}" -ge 100 ] || fail "only ${after:-0} barriers ran after the flush failure; the test shows nothing"

# Negative control.
ord_passthrough_control ofh "$DISK_AHCI"
