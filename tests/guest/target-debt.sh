#!/bin/bash
# dm-barrier: a failed pre-flush is owed by the bio it came ahead of, and
# by nobody else (review finding 1; and 6, a REQ_PREFLUSH write without
# REQ_FUA).  dm core splits a write carrying REQ_PREFLUSH and data into an
# empty flush and, after it, the data part, and drops the flush's error.
# The bios are made with the dmb_bio test module (what jbd2's commit block
# is), the flush failures by a dmb_fault mapping under the barrier mapping.
#
# A  fallback:drain, a commit W (PREFLUSH|FUA) and a concurrent O_DSYNC-like
#    FUA write V queued behind its pre-flush, which fails: W must fail.
#    (9a24aab: V paid W's debt and failed, W ran as drain and succeeded.)
#    V, accepted before the failure, fails too (drain would not flush).
# B  default fallback (none): an fsync's empty flush fails, `mode drain`
#    (what barrierd does next), then a barrier write must succeed.
#    (9a24aab: it failed with EIO, the debt being global and unpaid.)
# C  the same with a commit whose data part is refused in mode none: after
#    `mode drain` a barrier write must succeed.
# A2 the same with V queued before W (review N2): V's pre-flush fails and
#    the mode falls back to drain; W's empty half, accepted before the
#    failure, is failed as owed, and W's data part must fail with it.
#    (767b561: the owed half left no debt; W's data ran as drain: W -> 0.)
# E  passthrough: a failed flush raises a dm event (finding 7; 9a24aab: none).
# F  a reload during a hold (review N4): W's pre-flush fails and is held;
#    a reload's presuspend ends the hold, the pre-flush fails and owes, and
#    dm core sends W's data part to the new table after the resume: it
#    must fail.  (767b561: the debt died with the old table: W -> 0.)  The
#    same across a plain suspend and resume of one table.
# G  a failed probe (`barrier` message) in mode drain fails itself, not the
#    drain barrier V queued behind it, which promised order, not
#    durability (review N9; 767b561: V -> -5).
# H  order across a hold and its replay (issue 27, item 4): a FUA write W
#    behind a stalled write, and a plain write X to the same sector queued
#    behind W; W's pre-flush fails and W is held; `mode flush` replays it.
#    W must reach the disk before X: the sector holds X's bytes.  (With
#    the held batch put back behind X, the mutant 9-hold-tail, X runs
#    first and W's bytes are left.)
# D  a REQ_PREFLUSH write without REQ_FUA whose pre-flush fails must fail
#    (9a24aab: its data part went down as a plain write: success).  With
#    the pre-flush working, its data part is a plain write, not ordered
#    after and not flushed: the documented limit, shown in the log.
# Negative control: W alone, its pre-flush failing, fails on both builds;
# W with no fault succeeds.
# vm: ide ahci
# timeout: 240
source "$PROJECT/tests/vm/lib.sh"

modprobe dm-barrier
# The worker's path: a barrier queued behind a stalled write.
echo N >/sys/module/dm_barrier/parameters/direct
trap 'echo Y >/sys/module/dm_barrier/parameters/direct 2>/dev/null || true' EXIT

make_fault flt "$DISK_IDE"
F=/dev/mapper/flt


# --- control: W with no fault succeeds
make_barrier a "$F" fallback:drain
bio_open /dev/mapper/a
bio_submit 1 W PREFLUSH,FUA 800 8
bio_wait 20 1
expect_eq "control: W without a fault" "$(bio_result 1)" 0

# --- control: W alone, its pre-flush failing, fails
dsync_write /dev/mapper/a 300 >/dev/null
fault flt fail_flush 1
bio_submit 2 W PREFLUSH,FUA 808 8
bio_wait 20 2
expect_eq "control: W alone whose pre-flush failed" "$(bio_result 2)" -5
expect_eq "control: mode after the failure" "$(bstatus a mode)" drain

# --- A: V queued behind W's pre-flush; the pre-flush fails
dmsetup message a 0 mode flush
dd if=/dev/urandom of=/dev/mapper/a bs=4k count=1 seek=301 oflag=direct conv=notrunc status=none
stalled_write a 302
bio_submit 3 W PREFLUSH,FUA 816 8	# W: jbd2's commit block
sleep 0.3
bio_submit 4 W FUA 1600 8		# V: a concurrent FUA write
sleep 0.3
fault flt fail_flush 1
fault flt stall off
bio_wait 30 3 4
wait_until 10 'bg_done sw302' || fail "A: the stalled write did not complete"
log "A: W -> $(bio_result 3), V -> $(bio_result 4); $(dmsetup status a)"
[ "$(bio_result 3)" != 0 ] ||
	fail "A: the commit whose pre-flush failed reported success (its debt was paid by another bio)"
expect_eq "A: W fails with EIO" "$(bio_result 3)" -5
# V was accepted before the failure, behind W's pre-flush: what was written
# before it is not on stable media, and drain does not flush.
expect_eq "A: V, accepted before the failure, fails with EIO" "$(bio_result 4)" -5
expect_eq "A: mode" "$(bstatus a mode)" drain
bio_close
dmsetup remove a

# --- A2: V queued before W, both behind a stalled write; V's pre-flush fails
make_barrier a2 "$F" fallback:drain
bio_open /dev/mapper/a2
dd if=/dev/urandom of=/dev/mapper/a2 bs=4k count=1 seek=303 oflag=direct conv=notrunc status=none
stalled_write a2 304
bio_submit 11 W FUA 1608 8		# V: a FUA write
sleep 0.3
bio_submit 12 W PREFLUSH,FUA 848 8	# W: a commit
sleep 0.3
fault flt fail_flush 1
fault flt stall off
bio_wait 30 11 12
wait_until 10 'bg_done sw304' || fail "A2: the stalled write did not complete"
log "A2: V -> $(bio_result 11), W -> $(bio_result 12); $(dmsetup status a2)"
[ "$(bio_result 12)" != 0 ] ||
	fail "A2: the commit whose pre-flush was failed as owed reported success (its half owed no debt)"
expect_eq "A2: W fails with EIO" "$(bio_result 12)" -5
expect_eq "A2: V fails with EIO" "$(bio_result 11)" -5
expect_eq "A2: mode" "$(bstatus a2 mode)" drain
bio_close
dmsetup remove a2

# --- B: default fallback none; an fsync's flush fails; mode drain; a barrier write
make_barrier b "$F"
dsync_write /dev/mapper/b 10 >/dev/null
dd if=/dev/urandom of=/dev/mapper/b bs=4k count=1 seek=11 oflag=direct conv=notrunc status=none
fault flt fail_flush 1
out=$(dd if=/dev/null of=/dev/mapper/b conv=fdatasync,notrunc status=none 2>&1) &&
	fail "B: fdatasync succeeded although its flush failed"
expect_eq "B: mode after the failed fsync" "$(bstatus b mode)" none
dmsetup message b 0 mode drain
out=$(dsync_write /dev/mapper/b 12) ||
	fail "B: a barrier write after 'mode drain' failed ($out): an unrelated writer paid the failed fsync's debt"
dmsetup message b 0 mode flush
dsync_write /dev/mapper/b 13 >/dev/null || fail "B: a barrier write in mode flush failed"
dmsetup remove b

# --- C: a commit's pre-flush fails, its data part is refused in mode none
make_barrier c "$F"
bio_open /dev/mapper/c
dd if=/dev/urandom of=/dev/mapper/c bs=4k count=1 seek=20 oflag=direct conv=notrunc status=none
fault flt fail_flush 1
bio_submit 5 W PREFLUSH,FUA 824 8
bio_wait 20 5
[ "$(bio_result 5)" != 0 ] || fail "C: the commit whose pre-flush failed reported success"
expect_eq "C: mode" "$(bstatus c mode)" none
dmsetup message c 0 mode drain
out=$(dsync_write /dev/mapper/c 21) ||
	fail "C: a barrier write after 'mode drain' failed ($out): the refused commit's debt outlived it"
bio_close
dmsetup remove c

# --- D: REQ_PREFLUSH without REQ_FUA
make_barrier d "$F"
bio_open /dev/mapper/d
dd if=/dev/urandom of=/dev/mapper/d bs=4k count=1 seek=30 oflag=direct conv=notrunc status=none
fault flt fail_flush 1
bio_submit 6 W PREFLUSH 832 8
bio_wait 20 6
[ "$(bio_result 6)" != 0 ] ||
	fail "D: a REQ_PREFLUSH write whose pre-flush failed reported success"
dmsetup message d 0 mode flush
fault flt log_clear
dd if=/dev/urandom of=/dev/mapper/d bs=4k count=1 seek=31 oflag=direct conv=notrunc status=none
bio_submit 7 W PREFLUSH 840 8
bio_wait 20 7
expect_eq "D: PREFLUSH write with a working flush" "$(bio_result 7)" 0
# The limit (docs/dm-barrier.rst): the data part reaches the disk as a
# plain write after the flush; nothing flushes it and nothing waits for it.
fault_log flt >"$WORK/d.log"
awk '$5 == "F" && $9 == 0 { f = 1 } $5 == "W" && $7 == 840 { print (f ? "after" : "before"), $6 }' \
	"$WORK/d.log" >"$WORK/d.seen"
expect_eq "D: the data part, as the disk sees it" "$(cat "$WORK/d.seen")" "after -"
bio_close
dmsetup remove d

# --- E: passthrough; a flush error raises a dm event (finding 7)
make_barrier e "$F" mode:passthrough
dd if=/dev/urandom of=/dev/mapper/e bs=4k count=1 seek=40 oflag=direct conv=notrunc status=none
ev=$(event_nr e)
fault flt fail_flush 1
dd if=/dev/null of=/dev/mapper/e conv=fdatasync,notrunc status=none 2>/dev/null &&
	fail "E: fdatasync succeeded although its flush failed"
timeout 10 dmsetup wait e "$ev" >/dev/null || fail "E: no dm event for a failed passthrough flush"
[ "$(bstatus e flush_errors)" -ge 1 ] || fail "E: the flush error is not counted"
expect_eq "E: mode (passthrough does not fall back)" "$(bstatus e mode)" passthrough
dmsetup remove e

# --- F: a reload (and a plain suspend) during a hold
# held_commit NAME ID SECTOR: a commit whose pre-flush fails and is held.
held_commit() {
	dd if=/dev/urandom of="/dev/mapper/$1" bs=4k count=1 seek=$(($3 / 8 + 1000)) oflag=direct conv=notrunc status=none
	fault flt fail_flush 1
	bio_submit "$2" W PREFLUSH,FUA "$3" 8
	wait_until 15 'test "$(bstatus '"$1"' held)" -ge 1' || fail "$1: the pre-flush was not held: $(dmsetup status "$1")"
	expect_eq "$1: commit $2 while held" "$(bio_result "$2")" pending
}
make_barrier f "$F" hold_on_flush_error:20000 fallback:drain
bio_open /dev/mapper/f
held_commit f 21 864
table=$(dmsetup table f)
dmsetup load f --table "$table"
dmsetup resume f
bio_wait 20 21
log "F: reload during a hold: commit -> $(bio_result 21); $(dmsetup status f)"
[ "$(bio_result 21)" != 0 ] ||
	fail "F: the commit whose pre-flush failed at the reload reported success (its debt died with the old table)"
expect_eq "F: reload: the commit fails with EIO" "$(bio_result 21)" -5
# The same across a suspend and resume without a reload.
dmsetup message f 0 mode flush
held_commit f 22 872
dmsetup suspend f
dmsetup resume f
bio_wait 20 22
expect_eq "F: suspend and resume: the commit fails with EIO" "$(bio_result 22)" -5
# Nothing owed is left behind: a commit afterwards succeeds.
dmsetup message f 0 mode flush
bio_submit 23 W PREFLUSH,FUA 880 8
bio_wait 20 23
expect_eq "F: a commit after both" "$(bio_result 23)" 0
bio_close
dmsetup remove f

# --- G: a failed probe in mode drain; V queued behind it
make_barrier g "$F" mode:drain
bio_open /dev/mapper/g
stalled_write g 400
bg probe dmsetup message g 0 barrier
sleep 0.3
bio_submit 31 W FUA 1616 8		# V: a drain barrier behind the probe
sleep 0.3
fault flt fail_flush 1
fault flt stall off
wait_until 30 'bg_done probe' || fail "G: the probe did not complete"
bio_wait 30 31
log "G: probe -> $(bg_rc probe) ($(bg_out probe)), V -> $(bio_result 31); $(dmsetup status g)"
[ "$(bg_rc probe)" != 0 ] || fail "G: the probe succeeded although its flush failed"
expect_eq "G: V, a drain barrier behind the failed probe" "$(bio_result 31)" 0
expect_eq "G: mode" "$(bstatus g mode)" drain
bio_close
dmsetup remove g

# --- H: order across a hold and its replay
make_barrier h "$F" hold_on_flush_error:20000
bio_open /dev/mapper/h
stalled_write h 500
bio_submit 41 W FUA 1632 8		# W: a barrier, its pre-flush to fail
sleep 0.3
bio_submit 42 W - 1632 8		# X: a plain write behind it, same sector
sleep 0.3
expect_eq "H: X queued behind W" "$(bio_result 42)" pending
fault flt fail_flush 1
fault flt stall off
wait_until 15 'test "$(bstatus h held)" -ge 1' || fail "H: W was not held: $(dmsetup status h)"
expect_eq "H: X while W is held" "$(bio_result 42)" pending
dmsetup message h 0 mode flush
bio_wait 20 41 42
wait_until 10 'bg_done sw500' || fail "H: the stalled write did not complete"
log "H: W -> $(bio_result 41), X -> $(bio_result 42); sector 1632: $(first_byte h 1632); $(dmsetup status h)"
expect_eq "H: W after the replay" "$(bio_result 41)" 0
expect_eq "H: X after the replay" "$(bio_result 42)" 0
[ "$(first_byte h 1632)" = 2a ] ||
	fail "H: the held barrier W reached the disk after X, queued behind it: sector 1632 holds $(first_byte h 1632), W wrote 29, X 2a"
bio_close
dmsetup remove h
dmsetup remove flt
