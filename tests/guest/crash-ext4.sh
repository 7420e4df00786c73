#!/bin/bash
# Crash consistency of ext4 (data=ordered) on a barrier mapping (mode
# flush): the workload's writes are logged by dm-log-writes below the
# mapping, in the order they became durable; dmb-replay-log replays the
# log onto a RAM disk and at every flush point e2fsck (journal recovery,
# then -fn) must be clean and the files fsync()ed before the last mark
# must exist.  Negative control: the same log replayed as a disk whose
# cache loses every other write it should have made durable at the flush
# before last (--mutate lose-previous, or -even if that misses) must fail
# e2fsck, or the check proves nothing.
# vm: ide ahci
# timeout: 300
# env: DMB_CRASH_FILES DMB_CRASH_MAX_FAILURES DMB_CRASH_MIN_POINTS DMB_CRASH_MUTATE DMB_CRASH_ROUNDS
source "$PROJECT/tests/vm/lib.sh"
source "$PROJECT/tests/guest/crash.lib"

ROUNDS=${DMB_CRASH_ROUNDS:-2}
export CR_FILES=${DMB_CRASH_FILES:-8}
MIN_POINTS=${DMB_CRASH_MIN_POINTS:-50}

crash_setup mode:flush
log "workload: $ROUNDS rounds of $CR_FILES files"
crash_workload "$ROUNDS" "$CR_FILES"
crash_finish
crash_write_check

log "replay, exact"
start=$(date +%s)
rc=0
crash_replay "$WORK/exact.out" --min-points "$MIN_POINTS" || rc=$?
if [ "$rc" != 0 ]; then
	head -n 60 "$WORK/exact.out"
	fail "the exact replay is not clean (dmb-replay-log status $rc)"
fi
points=$(sed -n 's/^replay: \([0-9]*\) points checked.*/\1/p' "$WORK/exact.out")
log "ok: $points flush points clean in $(($(date +%s) - start)) s"

log "replay, mutated (negative control)"
# Which of a transaction's journal blocks the lost writes are depends on
# the order the writes completed in, and losing its descriptor block hides
# the whole transaction (an older file system, consistent): on one vCPU a
# lose-previous replay once dropped 105 writes and failed no e2fsck.  So
# the odd positions are lost first and, if no point failed e2fsck, the
# even ones.
fsck_failed=0
for mutation in ${DMB_CRASH_MUTATE:-lose-previous lose-previous-even}; do
	rc=0
	crash_replay "$WORK/mutated-$mutation.out" --mutate "$mutation" \
		--max-failures "${DMB_CRASH_MAX_FAILURES:-2}" || rc=$?
	case $rc in 0 | 1) ;; *) fail "dmb-replay-log status $rc with --mutate $mutation" ;; esac
	crash_failure_kinds "$WORK/mutated-$mutation.out"
	n=$(grep -cE '^--- point .*check status (4|8|1[0-9])$' "$WORK/mutated-$mutation.out" || true)
	log "$mutation: status $rc, $n points fail e2fsck"
	fsck_failed=$n
	[ "$n" -gt 0 ] && break
done
[ "$fsck_failed" -gt 0 ] || fail "the mutated replays failed no fsck: the check would not see a broken barrier"
log "ok: $fsck_failed points of the mutated replay fail e2fsck"
rmmod brd
