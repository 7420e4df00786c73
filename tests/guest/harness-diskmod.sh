#!/bin/bash
# Harness: dmb_disk, the test-only blk-mq disk (tests/vm/diskmod) that
# gives the fault campaign a request-based disk, so that dm-barrier's
# direct way meets faults (issue 27, item 5).  Each fault beside its
# negative control (the same operation without it succeeds); bad commands
# are refused and change nothing; the volatile cache loses exactly what no
# flush covered; reorder executes out of arrival order and reorder 1 does
# not; and a barrier mapping over it takes the direct way (the worker never
# runs), where the block layer's flush sequence fails a data barrier whose
# pre-flush failed.
# vm: ide
# timeout: 180
source "$PROJECT/tests/vm/lib.sh"

D=/sys/kernel/debug/dmb_disk
LOG=$D/log
ctl() { echo "${*:2}" >"$D/$1/ctl" || fail "ctl '${*:2}' to $1 refused"; }
# refused DISK WORDS...: refused, with a warning, and the status unchanged.
refused() {
	local before n
	before=$(cat "$D/$1/status")
	n=$(grep -c "dmbd" <(dmesg) || true)
	if echo "${*:2}" >"$D/$1/ctl" 2>/dev/null; then
		fail "'${*:2}' to $1 was accepted"
	fi
	[ "$(grep -c "dmbd" <(dmesg) || true)" -gt "$n" ] || fail "no warning for '${*:2}'"
	expect_eq "status after '${*:2}'" "$(cat "$D/$1/status")" "$before"
}
# dstat DISK N: field N (1-based) of the status: flushes fua_writes writes
# reads injected_flush injected_fua injected_write held dirty lost.
dstat() { awk -v n="$2" '{ print $n }' "$D/$1/status"; }
# blk DEV BLOCK: sha of 4k block BLOCK of DEV.
blk() { dd if="$1" bs=4k skip="$2" count=1 iflag=direct status=none | sha1sum | cut -c1-12; }
ZERO=$(head -c 4096 /dev/zero | sha1sum | cut -c1-12)
pwrite() { dd if="$WORK/pat$3" of="$1" bs=4k count=1 seek="$2" oflag=direct conv=notrunc status=none 2>&1; }
# One write, then an fsync (an empty flush).
swrite() { dd if="$WORK/pat$3" of="$1" bs=4k count=1 seek="$2" oflag=direct conv=fsync,notrunc status=none 2>&1; }
# One O_DSYNC write: REQ_FUA (dmbd0), or a write and a post-flush (dmbd1).
dwrite() { dd if="$WORK/pat$3" of="$1" bs=4k count=1 seek="$2" oflag=direct,dsync conv=notrunc status=none 2>&1; }
for i in 1 2 3 4 5 6 7 8; do head -c 4096 /dev/urandom >"$WORK/pat$i"; done
pat() { sha1sum <"$WORK/pat$1" | cut -c1-12; }

cleanup() {
	dmsetup remove bd 2>/dev/null || true
	echo Y 2>/dev/null >/sys/module/dm_barrier/parameters/direct || true
	echo 2>/dev/null >/sys/kernel/tracing/kprobe_events || true
	rmmod dmb_disk 2>/dev/null || true
}
trap cleanup EXIT

load_testmod dmb_disk sectors=262144
[ -b /dev/dmbd0 ] && [ -b /dev/dmbd1 ] || fail "no /dev/dmbd0 and /dev/dmbd1"
expect_eq "dmbd0 size" "$(sectors /dev/dmbd0)" 262144
expect_eq "dmbd0 cache" "$(cat /sys/block/dmbd0/queue/write_cache)" "write back"
expect_eq "dmbd1 cache" "$(cat /sys/block/dmbd1/queue/write_cache)" "write back"
expect_eq "dmbd0 FUA" "$(cat /sys/block/dmbd0/queue/fua)" 1
expect_eq "dmbd1 FUA" "$(cat /sys/block/dmbd1/queue/fua)" 0

# --- data, and bad commands
expect_eq "never written: zeroes" "$(blk /dev/dmbd0 7)" "$ZERO"
pwrite /dev/dmbd0 7 1 || fail "a plain write failed"
expect_eq "read back" "$(blk /dev/dmbd0 7)" "$(pat 1)"
for c in "fail_flush" "fail_flush x" "fail_flush 1 EBADF" "fail_flush 1 EIO lose extra" \
	"fail_write 0 8" "fail_write 262144 8 1" "fail_write 0 0 1" "delay 60001" \
	"reorder 0" "reorder 65" "stall maybe" "clear now" "powercut now" "explode" \
	"a b c d e f g h i"; do
	# shellcheck disable=SC2086
	refused dmbd0 $c
done

# --- a failed flush, and its control
out=$(swrite /dev/dmbd0 8 2) || fail "control: write + fsync failed: $out"
ctl dmbd0 fail_flush 1
if out=$(swrite /dev/dmbd0 9 2); then fail "fsync with fail_flush 1 succeeded"; fi
log "ok: fsync with a failed flush: $out"
out=$(swrite /dev/dmbd0 10 2) || fail "the next fsync failed: $out"
expect_eq "injected flush failures" "$(dstat dmbd0 5)" 1
expect_eq "the failed flush in the log" \
	"$(awk '$1 == "dmbd0" && $5 == "F" && $9 == -5 && $10 == 1' $LOG | wc -l)" 1

# --- a failed FUA write (dmbd0), and its control
out=$(dwrite /dev/dmbd0 11 3) || fail "control: O_DSYNC write failed: $out"
expect_eq "the O_DSYNC write went as FUA" \
	"$(awk '$1 == "dmbd0" && $5 == "W" && $6 ~ /FUA/ && $7 == 88' $LOG | wc -l)" 1
ctl dmbd0 fail_fua 1 MEDIUM
if out=$(dwrite /dev/dmbd0 12 3); then fail "O_DSYNC write with fail_fua 1 succeeded"; fi
expect_eq "injected FUA failures" "$(dstat dmbd0 6)" 1
# An O_DSYNC write on a block device is a REQ_FUA write, then the fsync
# of generic_write_sync(): on dmbd0 a FUA write and a flush; dmbd1 has no
# FUA, and the block layer sends the write and a post-flush instead.
wfops() { awk -v d="$1" '$1 == d && ($5 == "W" || $5 == "F") { printf "%s%s ", $5, ($6 ~ /FUA/ ? "+FUA" : "") }' $LOG; }
ctl dmbd0 log_clear
out=$(dwrite /dev/dmbd0 13 3) || fail "O_DSYNC write on dmbd0 failed: $out"
expect_eq "dmbd0: an O_DSYNC write" "$(wfops dmbd0)" "W+FUA F "
ctl dmbd1 log_clear
out=$(dwrite /dev/dmbd1 11 3) || fail "O_DSYNC write on dmbd1 failed: $out"
expect_eq "dmbd1: an O_DSYNC write" "$(wfops dmbd1)" "W F F "

# --- a failed write range
ctl dmbd0 fail_write 160 8 1
if pwrite /dev/dmbd0 20 4 >/dev/null; then fail "a write to a failing range succeeded"; fi
pwrite /dev/dmbd0 20 4 || fail "the range failed more than once"
pwrite /dev/dmbd0 21 4 || fail "a write beside the range failed"
expect_eq "injected write failures" "$(dstat dmbd0 7)" 1

# --- the volatile cache: a lossy flush failure
ctl dmbd0 cache_reset
swrite /dev/dmbd0 30 5 >/dev/null || fail "write + fsync of block 30 failed"
pwrite /dev/dmbd0 31 6 || fail "a plain write of block 31 failed"
# A FUA write and nothing else (an O_DSYNC write adds an fsync): dmb_bio
# fills its block with its id.
bio_open /dev/dmbd0
bio_submit 11 W FUA 256 8
bio_wait 10 11
expect_eq "a FUA write of block 32" "$(bio_result 11)" 0
bio_close
expect_eq "dirty writes" "$(dstat dmbd0 9)" 1
ctl dmbd0 fail_flush 1 EIO lose
if swrite /dev/dmbd0 33 8 >/dev/null; then fail "a lossy flush failure succeeded"; fi
expect_eq "block 30 (flushed) after the loss" "$(blk /dev/dmbd0 30)" "$(pat 5)"
expect_eq "block 31 (in the cache) after the loss" "$(blk /dev/dmbd0 31)" "$ZERO"
expect_eq "block 32 (FUA) after the loss" \
	"$(dd if=/dev/dmbd0 bs=4k skip=32 count=1 iflag=direct status=none | od -An -tx1 -N1 | tr -d ' ')" 0b
expect_eq "block 33 (written before the lossy flush) after the loss" "$(blk /dev/dmbd0 33)" "$ZERO"
expect_eq "lost" "$(dstat dmbd0 10)" 2
# Control: the same without "lose" keeps the cache.
pwrite /dev/dmbd0 34 6 || fail "a plain write of block 34 failed"
ctl dmbd0 fail_flush 1 EIO
if swrite /dev/dmbd0 35 8 >/dev/null; then fail "a flush failure succeeded"; fi
expect_eq "block 34 after a flush failure without loss" "$(blk /dev/dmbd0 34)" "$(pat 6)"
# A power cut.
ctl dmbd0 cache_reset
pwrite /dev/dmbd0 36 6 || fail "a plain write of block 36 failed"
ctl dmbd0 powercut
expect_eq "block 36 after a power cut" "$(blk /dev/dmbd0 36)" "$ZERO"
expect_eq "block 30 after a power cut" "$(blk /dev/dmbd0 30)" "$(pat 5)"

# --- stall and delay
ctl dmbd0 stall on
bg st pwrite /dev/dmbd0 40 1
wait_until 10 'test "$(dstat dmbd0 8)" -ge 1' || fail "the stall holds nothing"
sleep 0.5
bg_done st && fail "a write completed during the stall"
ctl dmbd0 stall off
wait_until 10 'bg_done st' || fail "the stalled write did not complete"
expect_eq "the stalled write" "$(bg_rc st)" 0
ctl dmbd0 delay 300
t0=$(date +%s%N)
pwrite /dev/dmbd0 41 1 || fail "a delayed write failed"
ms=$((($(date +%s%N) - t0) / 1000000))
[ "$ms" -ge 300 ] || fail "a write with delay 300 took ${ms} ms"
ctl dmbd0 clear

# --- reorder: 16 writes queued at once, executed in a random order
# (reorder 16) or in arrival order (reorder 1, the control).
inversions() {
	local first=$1
	awk -v f="$first" '$1 == "dmbd0" && $5 == "W" && $2 >= f { s[n++] = $2 }
		END { for (i = 1; i < n; i++) if (s[i] < s[i - 1]) k++; print k + 0 }' $LOG
}
queue16() {
	local i
	ctl dmbd0 stall on
	for i in $(seq 0 15); do bg "q$i" pwrite /dev/dmbd0 $((100 + i)) 1; done
	wait_until 20 'test "$(dstat dmbd0 8)" -ge 16' || fail "16 writes were not queued: $(cat $D/dmbd0/status)"
	ctl dmbd0 stall off
	wait_until 20 'bg_done q0 q1 q2 q3 q4 q5 q6 q7 q8 q9 q10 q11 q12 q13 q14 q15' || fail "the queued writes did not complete"
}
ctl dmbd0 log_clear
ctl dmbd0 reorder 1
queue16
expect_eq "reorder 1: completions out of arrival order" "$(inversions 0)" 0
ctl dmbd0 log_clear
ctl dmbd0 reorder 16
queue16
n=$(inversions 0)
log "reorder 16: $n completions before an earlier arrival"
[ "$n" -ge 1 ] || fail "reorder 16 executed 16 writes in arrival order"
ctl dmbd0 clear

# --- the direct way over it: the worker does not run for a barrier that
# finds the target idle, and a direct data barrier whose pre-flush fails
# fails (the block layer's flush sequence; the target reruns it in its
# worker and still fails it).
modprobe dm-barrier
T=/sys/kernel/tracing
[ -e $T/kprobe_events ] || mount -t tracefs nodev $T
echo 'p:dmb/dmb_barrier_work dm_barrier:barrier_work' >$T/kprobe_events || skip "no kprobe on barrier_work"
echo 1 >$T/events/dmb/dmb_barrier_work/enable
worker_runs() { awk '$1 == "dmb_barrier_work" { print $2 }' $T/kprobe_profile; }
make_barrier bd /dev/dmbd0 mode:fua
ctl dmbd0 log_clear
bio_open /dev/mapper/bd
w0=$(worker_runs)
bio_submit 1 W - 512 8
bio_wait 10 1
bio_submit 2 W PREFLUSH,FUA 520 8
bio_wait 10 2
expect_eq "a direct data barrier" "$(bio_result 2)" 0
expect_eq "worker runs for a direct barrier" "$(worker_runs)" "$w0"
expect_eq "its pre-flush and FUA write on the disk" \
	"$(awk '$1 == "dmbd0" && ($5 == "F" || ($5 == "W" && $7 == 520)) { printf "%s%s ", $5, ($6 ~ /FUA/ ? "+FUA" : "") }' $LOG)" \
	"F W+FUA "
bio_submit 3 W - 528 8
bio_wait 10 3
ctl dmbd0 fail_flush 1
bio_submit 4 W PREFLUSH,FUA 536 8
bio_wait 10 4
expect_eq "a direct data barrier whose pre-flush failed" "$(bio_result 4)" -5
[ "$(bstatus bd flush_errors)" -ge 1 ] || fail "no flush error counted: $(dmsetup status bd)"
expect_eq "the failed pre-flush in the log" \
	"$(awk '$1 == "dmbd0" && $5 == "F" && $9 == -5 && $10 == 1' $LOG | wc -l)" 1
bio_close
dmsetup remove bd
echo 0 >$T/events/dmb/dmb_barrier_work/enable
