#!/bin/bash
# dm-barrier: REQ_NOWAIT bios meeting a hold, and BLK_STS_AGAIN from below
# (issue 28, item 3).  The bios are dmb_bio's (io_uring sets REQ_NOWAIT on
# what it submits inline; here each one is placed exactly), over dmb_fault
# (1.1 takes REQ_NOWAIT) on the AHCI disk, every barrier through the worker
# (direct=N: a barrier queues behind a write the fault target stalls).
#
# N1 A barrier W1 behind a stalled write; its pre-flush fails and it is
#    held (hold_on_flush_error, fallback:drain).  Then W2, a FUA write with
#    REQ_NOWAIT to W1's sector, and X, a plain REQ_NOWAIT write.  map() does
#    not block them: they queue behind the hold, so neither may complete
#    while it lasts (not with -EAGAIN either: they did not block), and
#    `mode drain` replays the three in order: all succeed, and the sector
#    holds W2's bytes (W2 after W1; the other order leaves W1's).
# N2 The same, the hold left to expire (2 s, fallback none): W1 fails with
#    EIO, then W2 runs under none and is refused (-EOPNOTSUPP), X is
#    written.
# A  A flush that fails with BLK_STS_AGAIN (dmb_fault fail_flush 1 AGAIN):
#    the target sent it without REQ_NOWAIT, so "would block" means it did
#    not run: the barrier whose pre-flush it was (a FUA write after a plain
#    one) and an empty flush each fail with it (-EAGAIN), counted as a
#    failed flush, and the mode falls back.  Never 0.
# Negative control: C, dm-linear over the same fault target: the REQ_NOWAIT
# bios reach it (0, not -EOPNOTSUPP: the stack takes the flag, so N1 and N2
# test the hold, not a refusal), and its fdatasync-like empty flush passes
# the AGAIN up (-11), as the barrier target must not hide it.
# vm: ide ahci
# timeout: 180
source "$PROJECT/tests/vm/lib.sh"

modprobe dm-barrier
P=/sys/module/dm_barrier/parameters/direct
echo N >$P
trap 'echo Y >$P 2>/dev/null || true' EXIT

make_fault flt "$DISK_AHCI"
F=/dev/mapper/flt

plain() { dd if=/dev/urandom of="/dev/mapper/$1" bs=4k count=1 seek="$2" oflag=direct conv=notrunc status=none; }

# --- C: the control, dm-linear over the fault target
dmsetup create lin --table "0 $(sectors "$F") linear $F 0"
bio_open /dev/mapper/lin
bio_submit 1 W NOWAIT 3000 8
bio_submit 2 W FUA,NOWAIT 3008 8
bio_wait 20 1 2
expect_eq "C: a REQ_NOWAIT write through dm-linear and dmb_fault" "$(bio_result 1)" 0
expect_eq "C: a REQ_NOWAIT FUA write through dm-linear and dmb_fault" "$(bio_result 2)" 0
plain lin 380
fault flt fail_flush 1 AGAIN
bio_submit 3 F PREFLUSH 0 0
bio_wait 20 3
expect_eq "C: dm-linear passes the flush's -EAGAIN up" "$(bio_result 3)" -11
fault flt clear
bio_close
dmsetup remove lin

# --- N1: NOWAIT bios behind a hold, replayed by a mode message
make_barrier n1 "$F" fallback:drain hold_on_flush_error:20000
bio_open /dev/mapper/n1
bio_submit 10 W NOWAIT 2000 8
bio_wait 20 10
expect_eq "N1: a REQ_NOWAIT write on an idle mapping" "$(bio_result 10)" 0
plain n1 400
stalled_write n1 401
bio_submit 11 W FUA 2008 8		# W1: a barrier, its pre-flush to fail
sleep 0.3
fault flt fail_flush 1
fault flt stall off
wait_until 15 'test "$(bstatus n1 held)" -ge 1' || fail "N1: W1 was not held: $(dmsetup status n1)"
bio_submit 12 W FUA,NOWAIT 2008 8	# W2: a REQ_NOWAIT barrier, W1's sector
bio_submit 13 W NOWAIT 2016 8		# X: a plain REQ_NOWAIT write
sleep 0.5
log "N1 during the hold: W1 $(bio_result 11), W2 $(bio_result 12), X $(bio_result 13); $(dmsetup status n1)"
expect_eq "N1: W1 while held" "$(bio_result 11)" pending
expect_eq "N1: W2 (REQ_NOWAIT barrier) behind the hold" "$(bio_result 12)" pending
expect_eq "N1: X (REQ_NOWAIT write) behind the hold" "$(bio_result 13)" pending
dmsetup message n1 0 mode drain
bio_wait 20 11 12 13
wait_until 10 'bg_done sw401' || fail "N1: the stalled write did not complete"
log "N1 after 'mode drain': W1 $(bio_result 11), W2 $(bio_result 12), X $(bio_result 13); sector 2008: $(first_byte n1 2008); $(dmsetup status n1)"
expect_eq "N1: W1 replayed" "$(bio_result 11)" 0
expect_eq "N1: W2 replayed" "$(bio_result 12)" 0
expect_eq "N1: X replayed" "$(bio_result 13)" 0
[ "$(first_byte n1 2008)" = 0c ] ||
	fail "N1: sector 2008 holds $(first_byte n1 2008), W1 wrote 0b, W2 (after it) 0c: the REQ_NOWAIT barrier overtook the held one"
bio_close
dmsetup remove n1

# --- N2: the same, the hold expiring
make_barrier n2 "$F" hold_on_flush_error:2000
bio_open /dev/mapper/n2
plain n2 410
stalled_write n2 411
bio_submit 21 W FUA 2100 8
sleep 0.3
fault flt fail_flush 1
fault flt stall off
wait_until 15 'test "$(bstatus n2 held)" -ge 1' || fail "N2: W1 was not held: $(dmsetup status n2)"
bio_submit 22 W FUA,NOWAIT 2108 8
bio_submit 23 W NOWAIT 2116 8
sleep 0.3
expect_eq "N2: W2 behind the hold" "$(bio_result 22)" pending
expect_eq "N2: X behind the hold" "$(bio_result 23)" pending
bio_wait 20 21 22 23
wait_until 10 'bg_done sw411' || fail "N2: the stalled write did not complete"
log "N2 after the hold expired: W1 $(bio_result 21), W2 $(bio_result 22), X $(bio_result 23); $(dmsetup status n2)"
expect_eq "N2: W1 fails when its hold expires" "$(bio_result 21)" -5
expect_eq "N2: W2, a barrier under none" "$(bio_result 22)" -95
expect_eq "N2: X, a plain write under none" "$(bio_result 23)" 0
expect_eq "N2: X's bytes" "$(first_byte n2 2116)" 17
bio_close
dmsetup remove n2

# --- A: BLK_STS_AGAIN from below on the target's own flushes
for what in data empty; do
	make_barrier a "$F"
	bio_open /dev/mapper/a
	plain a 420
	fault flt fail_flush 1 AGAIN
	if [ $what = data ]; then
		bio_submit 31 W FUA 2200 8
	else
		bio_submit 31 F PREFLUSH 0 0
	fi
	bio_wait 20 31
	log "A ($what): $(bio_result 31); $(dmsetup status a)"
	[ "$(bio_result 31)" != 0 ] || fail "A ($what): the barrier whose flush was not run (-EAGAIN) reported success"
	expect_eq "A ($what): the barrier fails with the flush's error" "$(bio_result 31)" -11
	expect_eq "A ($what): flush_errors" "$(bstatus a flush_errors)" 1
	expect_eq "A ($what): mode (fallen back)" "$(bstatus a mode)" none
	fault flt clear
	bio_close
	dmsetup remove a
done
dmsetup remove flt
