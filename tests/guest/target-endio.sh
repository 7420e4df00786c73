#!/bin/bash
# dm-barrier: a direct barrier's completion decides what follows in one
# critical section (review finding N5).  A direct empty flush D (the target
# idle, so map() sent it down itself) is held in dmb_fault while a write X
# queues behind it; D's flush fails with hold_on_flush_error set, so D must
# be held at the head of the queue and X must wait with it until a `mode`
# message replays D.  The test-only build (scripts/variants: windows) waits
# in barrier_direct_endio() and kicks the worker there, as a stray worker
# run can (a second kick while the worker runs leaves one): at 767b561 the
# completion cleared "direct" in one critical section and held D in
# another, so that run found the target idle and issued X before D was
# held.  Negative control: the mutant tests/campaign/mutants/n5-split-endio.patch
# (check-mutants) puts the two sections back and must be caught here;
# without the stray kick the same test passes on it (the window alone
# changes nothing), which the log shows.
# vm: ide ahci
# timeout: 240
source "$PROJECT/tests/vm/lib.sh"

P=/sys/module/dm_barrier/parameters
modprobe dm-barrier
if [ ! -e $P/window_us ]; then
	ko=${DMB_TESTMODS:-$B}/variants/windows/dm-barrier.ko
	[ -f "$ko" ] || fail "no $ko (make test-modules; make kernels)"
	rmmod dm_barrier
	insmod "$ko" || fail "cannot load $ko"
fi
trap 'rmmod dm_barrier 2>/dev/null; modprobe dm-barrier 2>/dev/null || true' EXIT

make_fault flt "$DISK_IDE"
F=/dev/mapper/flt

# round NAME POINTS: D held in dmb_fault, X queued behind it, D's flush
# fails; the windows in POINTS open at D's completion.
round() {
	local name=$1 seen
	echo "0,0,100000,0" >$P/window_us
	make_barrier "$name" "$F" hold_on_flush_error:20000 fallback:drain
	dd if=/dev/urandom of="/dev/mapper/$name" bs=4k count=1 seek=1 oflag=direct conv=notrunc status=none
	bio_open "/dev/mapper/$name"
	fault flt stall on
	fault flt log_clear
	bio_submit 1 F PREFLUSH 0 0		# D: goes direct (the target is idle)
	wait_until 10 'fault_held' || fail "$name: D did not reach dmb_fault: $(dmsetup status flt)"
	bio_submit 2 W - 4096 8			# X: queued behind D
	sleep 0.5
	expect_eq "$name: X before D completes" "$(bio_result 2)" pending
	fault flt fail_flush 1
	echo "$2" >$P/window_points
	fault flt stall off
	wait_until 15 'test "$(bstatus '"$name"' held)" -ge 1' ||
		fail "$name: D was not held: $(dmsetup status "$name")"
	sleep 1				# the window (0.1 s) and the stray run
	echo 0 >$P/window_points
	seen=$(fault_log flt | awk '$5 == "W" && $7 == 4096' | wc -l)
	log "$name: while D is held: X -> $(bio_result 2), X seen by the disk $seen time(s); $(dmsetup status "$name")"
	[ "$(bio_result 2)" = pending ] && [ "$seen" = 0 ] ||
		fail "$name: a write queued behind a held direct barrier reached the disk before it (X -> $(bio_result 2))"
	dmsetup message "$name" 0 mode drain
	bio_wait 20 1 2
	expect_eq "$name: D, replayed in mode drain" "$(bio_result 1)" 0
	expect_eq "$name: X" "$(bio_result 2)" 0
	bio_close
	dmsetup remove "$name"
}

echo Y >$P/direct
round ewin 4		# WIN_ENDIO: the wait alone
round ekick 12		# WIN_ENDIO | WIN_KICK: and a worker run there
dmsetup remove flt
