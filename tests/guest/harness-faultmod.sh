#!/bin/bash
# Harness: dmb_fault, the test-only target (tests/vm/faultmod) that sits
# under a barrier mapping and fails flushes, FUA writes or chosen sectors,
# delays or stalls bios, all switched at run time by dmsetup message.  Each
# fault is shown real beside its negative control (the same operation
# without the fault succeeds); bad messages are refused and change nothing;
# the debugfs log shows every bio and agrees with the status counters.
# vm: ide ahci
# timeout: 120
source "$PROJECT/tests/vm/lib.sh"

LOG=/sys/kernel/debug/dmb_fault/log
# One 4k O_DIRECT write at 4k block BLOCK, then one fsync (an empty flush).
# Not conv=fdatasync: when fdatasync fails, dd tries fsync as well, which
# sends a second flush.
sync_write() { dd if=/dev/urandom of="$1" bs=4k count=1 seek="$2" oflag=direct conv=fsync,notrunc status=none 2>&1; }
# One 4k O_DIRECT write, nothing else.
plain_write() { dd if=/dev/urandom of="$1" bs=4k count=1 seek="$2" oflag=direct conv=notrunc status=none 2>&1; }
# msg NAME WORDS...: a message that must be accepted ("--": words like -1
# are the message's, not options of dmsetup).
msg() { dmsetup message "$1" 0 -- "${@:2}" || fail "message '${*:2}' to $1 refused"; }
# refused NAME WORDS...: a message that must be refused, with a warning.
refused() {
	local pat n
	pat="dmb_fault: $(dm_kname "$1"): message $2 rejected"
	n=$(grep -c "$pat" <(dmesg) || true)
	if dmsetup message "$1" 0 -- "${@:2}" 2>/dev/null; then
		fail "message '${*:2}' to $1 was accepted"
	fi
	[ "$(grep -c "$pat" <(dmesg) || true)" -gt "$n" ] || fail "no warning for '${*:2}'"
	log "ok: '${*:2}' refused"
}
expect_err() { # WHAT OUTPUT TEXT
	case "$2" in *"$3"*) log "ok: $1: $3" ;; *) fail "$1: '$2', want '$3'" ;; esac
}
# loglines NAME AWK-CONDITION: count the log lines of mapping NAME matching.
loglines() { awk -v k="$(dm_kname "$1")" "\$1 == k && ($2)" "$LOG" | wc -l; }
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }

cleanup() {
	local n
	umount "$WORK/mnt" 2>/dev/null || true
	dmsetup remove top 2>/dev/null || true
	for n in fa fb; do
		dmsetup message "$n" 0 clear 2>/dev/null || true
		dmsetup remove "$n" 2>/dev/null || true
	done
	rmmod dmb_fault 2>/dev/null || true
}
trap cleanup EXIT

load_testmod dmb_fault
[ -r "$LOG" ] || fail "no $LOG"

# --- table, and what the mapping advertises
must_fail dmsetup create bad --table "0 8 dmb_fault $DISK_IDE 0 1 no_such_feature" 2>/dev/null
must_fail dmsetup create bad --table "0 8 dmb_fault $DISK_IDE x" 2>/dev/null
make_fault fa "$DISK_IDE"
make_fault fb "$DISK_AHCI" flush_supported
devno() { printf '%d:%d' "0x$(stat -L -c %t "$1")" "0x$(stat -L -c %T "$1")"; }
expect_eq "fa table" "$(dmsetup table fa)" "0 $(sectors "$DISK_IDE") dmb_fault $(devno "$DISK_IDE") 0"
expect_eq "fb table" "$(dmsetup table fb)" "0 $(sectors "$DISK_AHCI") dmb_fault $(devno "$DISK_AHCI") 0 1 flush_supported"
qa=/sys/block/$(dm_kname fa)/queue qb=/sys/block/$(dm_kname fb)/queue
expect_eq "fa write cache (inherited)" "$(cat "$qa/write_cache")" "write back"
expect_eq "fa fua (inherited: ATA has none)" "$(cat "$qa/fua")" 0
expect_eq "fb write cache (flush_supported)" "$(cat "$qb/write_cache")" "write back"
expect_eq "fb fua (flush_supported)" "$(cat "$qb/fua")" 1
expect_eq "fa status" "$(dmsetup status fa | cut -d' ' -f3-)" "dmb_fault 0 0 0 0 0 0 0 0 0 0"
A=/dev/mapper/fa B=/dev/mapper/fb

# --- fail_flush: fdatasync fails, without reaching the disk; then works
sync_write $A 1 >/dev/null || fail "control: fdatasync on fa failed"
msg fa fail_flush 1
t0=$(cut -d' ' -f1 /proc/uptime)
disk_before=$(disk_flushes "$DISK_IDE")
out=$(sync_write $A 2) && fail "fdatasync succeeded under fail_flush 1"
t1=$(cut -d' ' -f1 /proc/uptime)
expect_err "fail_flush 1" "$out" "Input/output error"
expect_eq "disk flush count across the failed fsync (unchanged)" "$(disk_flushes "$DISK_IDE")" "$disk_before"
sync_write $A 3 >/dev/null || fail "fdatasync after the one failed flush failed"
expect_eq "F lines -5 injected" "$(loglines fa '$5 == "F" && $9 == -5 && $10 == 1')" 1
expect_eq "injected_flush" "$(fstatus fa injected_flush)" 1
# Its times are CLOCK_MONOTONIC (/proc/uptime here: no suspend in a guest).
awk -v k="$(dm_kname fa)" -v t0="$t0" -v t1="$t1" \
	'$1 == k && $5 == "F" && $10 == 1 { ok = $3 >= (t0 - 0.01) * 1e9 && $4 >= $3 && $4 <= (t1 + 0.01) * 1e9 }
	 END { exit !ok }' "$LOG" || fail "the failed flush's times are not within [$t0, $t1] s"
log "ok: the failed flush's times lie within [$t0, $t1] s of CLOCK_MONOTONIC"

msg fa fail_flush 1 NOSPC
out=$(sync_write $A 4) && fail "fdatasync succeeded under fail_flush 1 NOSPC"
expect_err "fail_flush NOSPC" "$out" "No space left on device"
sync_write $A 5 >/dev/null || fail "fdatasync after the NOSPC flush failed"
msg fa fail_flush all
for i in 6 7; do
	out=$(sync_write $A $i) && fail "fdatasync $i succeeded under fail_flush all"
done
msg fa fail_flush off
sync_write $A 8 >/dev/null || fail "fdatasync after fail_flush off failed"

# --- fail_write: writes over sectors [1000, 1008) fail, others do not
msg fa fail_write 1000 8 1 MEDIUM
plain_write $A 200 >/dev/null || fail "a write outside the range failed"
out=$(plain_write $A 125) && fail "a write over the failing range succeeded"
expect_err "fail_write MEDIUM" "$out" "No data available"
plain_write $A 125 >/dev/null || fail "the range failed twice under count 1"
msg fa fail_write 1000 8 all
out=$(dd if=/dev/zero of=$A bs=512 count=8 seek=996 oflag=direct conv=notrunc status=none 2>&1) &&
	fail "a write overlapping the range's start succeeded"
expect_err "fail_write overlap" "$out" "Input/output error"
dd if=$A of=/dev/null bs=4k count=1 skip=125 iflag=direct status=none || fail "a read of the range failed"
plain_write $A 124 >/dev/null || fail "the write just below the range failed"
plain_write $A 126 >/dev/null || fail "the write just above the range failed"
for r in 0 16 32; do msg fa fail_write "$r" 8 1; done
refused fa fail_write 48 8 1
msg fa fail_write off
plain_write $A 125 >/dev/null || fail "a write to the range failed after fail_write off"
plain_write $A 0 >/dev/null || fail "a write to sector 0 failed after fail_write off"
expect_eq "injected_write" "$(fstatus fa injected_write)" 2

# --- fail_fua on a mapping with FUA (flush_supported)
dsync_write $B 1 >/dev/null || fail "control: O_DSYNC write on fb failed"
msg fb fail_fua 1
out=$(dsync_write $B 2) && fail "an O_DSYNC write succeeded under fail_fua 1"
expect_err "fail_fua" "$out" "Input/output error"
dsync_write $B 3 >/dev/null || fail "O_DSYNC write after the failed FUA write failed"
expect_eq "FUA W lines injected" "$(loglines fb '$5 == "W" && $6 ~ /FUA/ && $9 == -5 && $10 == 1')" 1
expect_eq "FUA W lines ok" "$(loglines fb '$5 == "W" && $6 ~ /FUA/ && $9 == 0')" 2
expect_eq "injected_fua" "$(fstatus fb injected_fua)" 1
# Without FUA on the mapping, the block layer still hands FUA writes to dm
# (it drops FUA only where there is no write cache); below, sd turns them
# into write + flush.
dsync_write $A 9 >/dev/null || fail "O_DSYNC write on fa failed"
log "fa (no FUA) saw $(loglines fa '$5 == "W" && $6 ~ /FUA/') FUA writes"

# --- delay: bios wait, and leave in arrival order
msg fa delay 200
start=$(date +%s%N)
plain_write $A 300 >/dev/null || fail "a delayed write failed"
took=$(ms_since "$start")
[ "$took" -ge 200 ] || fail "a write under delay 200 took ${took} ms"
log "ok: write under delay 200 took ${took} ms"
# Long enough for the next write to reach it while it is still held on a
# slow kernel (the debug kernel took over 2 s from here to d2's arrival).
msg fa delay 6000
bg d1 plain_write $A 301
wait_until 5 'test "$(fstatus fa held)" = 1' || fail "the write under delay 6000 was not held"
msg fa delay 0
bg d2 plain_write $A 302
wait_until 5 'test "$(fstatus fa held)" = 2' || fail "the write under delay 0 did not queue behind the held one"
wait_until 20 'bg_done d1 d2' || fail "delayed writes did not finish"
expect_eq "delayed write 1" "$(bg_rc d1)" 0
expect_eq "delayed write 2" "$(bg_rc d2)" 0
d2wait=$(awk -v k="$(dm_kname fa)" '$1 == k && $5 == "W" && $7 == 302 * 8 { print int(($4 - $3) / 1e6) }' "$LOG")
[ "$d2wait" -ge 300 ] || fail "the undelayed write overtook the delayed one (${d2wait} ms)"
log "ok: the undelayed write waited ${d2wait} ms behind the delayed one"
start=$(date +%s%N)
plain_write $A 303 >/dev/null || fail "write after delay 0 failed"
log "write after delay 0 took $(ms_since "$start") ms"

# --- stall: a write hangs until stall off; a suspend releases it too
msg fa stall on
bg s1 plain_write $A 400
wait_until 5 'test "$(fstatus fa held)" = 1' || fail "the write was not held"
sleep 1
bg_done s1 && fail "a write completed during a stall: $(bg_out s1)"
expect_eq "held during stall, 1 s later" "$(fstatus fa held)" 1
msg fa stall off
wait_until 5 'bg_done s1' || fail "the stalled write did not complete after stall off"
expect_eq "stalled write" "$(bg_rc s1)" 0
expect_eq "held after stall off" "$(fstatus fa held)" 0
msg fa stall on
bg s2 plain_write $A 401
wait_until 5 'test "$(fstatus fa held)" = 1' || fail "the write was not held"
timeout 10 dmsetup suspend fa || fail "suspend of a stalled mapping failed or hung"
wait_until 5 'bg_done s2' || fail "the held write did not complete at suspend"
expect_eq "write released by suspend" "$(bg_rc s2)" 0
dmsetup resume fa
bg s3 plain_write $A 402
wait_until 5 'test "$(fstatus fa held)" = 1' || fail "stall did not hold after resume"
msg fa clear
wait_until 5 'bg_done s3' || fail "clear did not release the held write"
expect_eq "write released by clear" "$(bg_rc s3)" 0

# --- bad messages are refused and change nothing
msg fa fail_flush 2
refused fa fail_flush x
refused fa fail_flush 1 EWHAT
refused fa fail_flush
for i in 1 2; do
	sync_write $A 10 >/dev/null && fail "fail_flush 2 lost after a refused message (flush $i passed)"
done
sync_write $A 10 >/dev/null || fail "fail_flush 2 failed a third flush"
msg fa delay 200
refused fa delay -1
refused fa delay 60001
start=$(date +%s%N)
plain_write $A 11 >/dev/null || fail "delayed write failed"
took=$(ms_since "$start")
[ "$took" -ge 200 ] || fail "delay 200 lost after 'delay -1' (${took} ms)"
msg fa delay 0
msg fa fail_write 1000 8 1
refused fa fail_write 1
refused fa fail_write 0 0 1
refused fa fail_write 1000 8 -2
refused fa stall maybe
refused fa no_such_message
plain_write $A 125 >/dev/null && fail "fail_write lost after a refused message"
plain_write $A 125 >/dev/null || fail "fail_write 1 failed twice"

# --- under a barrier mapping: the stack the target is for
modprobe dm-barrier
make_barrier top $A
msg fa log_clear
expect_eq "log after log_clear" "$(wc -l <"$LOG")" 0
dsync_write /dev/mapper/top 20 >/dev/null || fail "barrier over dmb_fault: O_DSYNC write failed"
# Written since the last flush, so the barrier needs a pre-flush (on a clean
# disk it sends none, and fail_flush has nothing to fail).
plain_write /dev/mapper/top 22 >/dev/null || fail "plain write on the barrier mapping failed"
msg fa fail_flush 1
out=$(dsync_write /dev/mapper/top 21) && fail "barrier over dmb_fault: succeeded although its pre-flush failed"
expect_err "barrier over a failing flush" "$out" "Input/output error"
expect_eq "the barrier's flush, failed below it" "$(loglines fa '$5 == "F" && $9 == -5 && $10 == 1')" 1
dmsetup remove top

# --- the log: well formed, non-destructive, and it agrees with the counters
[ "$(head -n 1 "$LOG")" != "# overflow" ] || fail "overflow reported"
awk 'NF != 10 || $5 !~ /^[WFRDZO]$/ || $6 !~ /^(-|[A-Z]+(,[A-Z]+)*)$/ || $4 < $3 || $10 !~ /^[01]$/ { bad++; print }
     END { exit bad > 0 }' "$LOG" || fail "malformed log lines"
expect_eq "log read twice" "$(md5sum <"$LOG")" "$(md5sum <"$LOG")"
[ "$(loglines fa '$5 == "W" && $6 ~ /PREFLUSH/')" -eq 0 ] || fail "a write with data carried PREFLUSH"
# --- ext4 on fb: a journal commit is REQ_PREFLUSH|REQ_FUA with data; dm
# core hands it to the target as an empty flush, then the data without
# PREFLUSH.
msg fb log_clear
mkfs.ext4 -q -F -E nodiscard $B
mkdir -p "$WORK/mnt"
mount $B "$WORK/mnt"
dd if=/dev/urandom of="$WORK/mnt/f" bs=4k count=4 conv=fsync status=none
# Not asserted (dm core's, not the target's): 6.1 drops the error of the
# commit's flush, so this fsync reports success although every flush fails.
msg fb fail_flush all
rc=0
dd if=/dev/urandom of="$WORK/mnt/g" bs=4k count=1 conv=fsync status=none 2>/dev/null || rc=$?
log "ext4 fsync with every flush failing: exit $rc; injected flushes: $(loglines fb '$5 == "F" && $10 == 1'), with FUA: $(loglines fb '$5 == "F" && $6 ~ /FUA/ && $10 == 1')"
msg fb fail_flush off
umount "$WORK/mnt"
[ "$(loglines fb '$5 == "W" && $6 ~ /PREFLUSH/')" -eq 0 ] || fail "ext4: a write with data carried PREFLUSH"
[ "$(loglines fb '$5 == "F"')" -gt 0 ] || fail "ext4: no empty flush"
[ "$(loglines fb '$5 == "W" && $6 ~ /FUA/')" -gt 0 ] || fail "ext4: no FUA write"
log "ext4 on fb: $(loglines fb '$5 == "F" && $10 == 0') F, $(loglines fb '$5 == "W" && $6 ~ /FUA/') W with FUA, $(loglines fb '$5 == "W"') W, $(loglines fb '$5 == "D"') D, $(loglines fb '$5 == "Z"') Z"

msg fa log_clear
# Counters count since create and the log since log_clear: compare what
# comes now, on both mappings.
declare -A base
for n in fa fb; do
	for f in "${FSTATUS_FIELDS[@]}"; do base[$n.$f]=$(fstatus $n "$f"); done
done
msg fa fail_flush 1
msg fb fail_fua 1
sync_write $A 30 >/dev/null && fail "fail_flush 1 did not fail"
dsync_write $B 30 >/dev/null && fail "fail_fua 1 did not fail"
dd if=$A of=/dev/null bs=4k count=4 iflag=direct status=none
dsync_write $A 31 >/dev/null
msg fa fail_write 0 8 1 AGAIN
out=$(plain_write $A 0) && fail "fail_write AGAIN did not fail"
expect_err "fail_write AGAIN" "$out" "Resource temporarily unavailable"
for n in fa fb; do
	got="$(($(fstatus $n flushes) - ${base[$n.flushes]})) $(($(fstatus $n writes) - ${base[$n.writes]}))"
	got="$got $(($(fstatus $n fua_writes) - ${base[$n.fua_writes]})) $(($(fstatus $n reads) - ${base[$n.reads]}))"
	got="$got $(($(fstatus $n injected_flush) - ${base[$n.injected_flush]}))"
	got="$got $(($(fstatus $n injected_fua) - ${base[$n.injected_fua]}))"
	got="$got $(($(fstatus $n injected_write) - ${base[$n.injected_write]}))"
	want="$(loglines $n '$5 == "F"') $(loglines $n '$5 == "W"') $(loglines $n '$5 == "W" && $6 ~ /FUA/')"
	want="$want $(loglines $n '$5 == "R"') $(loglines $n '$5 == "F" && $10 == 1')"
	want="$want $(loglines $n '$5 == "W" && $6 ~ /FUA/ && $10 == 1')"
	want="$want $(loglines $n '$5 == "W" && $6 !~ /FUA/ && $10 == 1')"
	expect_eq "$n: counters (flushes writes fua reads inj_flush inj_fua inj_write) against the log" "$got" "$want"
done
expect_eq "fa status statuses" "$(loglines fa '$10 == 1 && ($9 == -5 || $9 == -11)')" 2
expect_eq "fa held at the end" "$(fstatus fa held)" 0

# --- the volatile cache: what a lossy flush failure and a power cut lose
# block_is NAME BLOCK FILE: the 4k block holds FILE's bytes; block_zero.
block_is() { cmp -s <(dd if="/dev/mapper/$1" bs=4k skip="$2" count=1 iflag=direct status=none) "$3"; }
block_zero() { cmp -s <(dd if="/dev/mapper/$1" bs=4k skip="$2" count=1 iflag=direct status=none) <(head -c 4096 /dev/zero); }
# put NAME BLOCK [FLAGS]: write a random block (O_DIRECT; FLAGS dsync for
# a FUA write), keep its bytes in $WORK/b.NAME.BLOCK.
put() {
	head -c 4096 /dev/urandom >"$WORK/b.$1.$2"
	dd if="$WORK/b.$1.$2" of="/dev/mapper/$1" bs=4k seek="$2" oflag=direct${3:+,$3} conv=notrunc status=none ||
		fail "write of block $2 on $1 failed"
}
msg fa cache_reset
msg fb cache_reset
expect_eq "fa dirty after cache_reset" "$(fstatus fa dirty)" 0
# Control: a failed flush that does not lose (no "lose") keeps the write.
put fa 40
msg fa fail_flush 1
sync_write $A 41 >/dev/null && fail "fail_flush 1 did not fail"
block_is fa 40 "$WORK/b.fa.40" || fail "control: a flush failure without 'lose' lost block 40"
expect_eq "control: lost" "$(fstatus fa lost)" 0
# A flush that works covers what completed before it: not lost later.
msg fa cache_reset
put fa 42
sync_write $A 43 >/dev/null || fail "fsync after block 42 failed"
expect_eq "fa dirty after a good flush" "$(fstatus fa dirty)" 0
# Lossy: the blocks written since are zeroes once the flush has failed.
put fa 44
put fa 45
expect_eq "fa dirty: two writes" "$(fstatus fa dirty)" 2
msg fa fail_flush 1 EIO lose
out=$(sync_write $A 46) && fail "fail_flush 1 EIO lose did not fail"
block_zero fa 44 || fail "block 44 was written after the last good flush, and a lossy failure kept it"
block_zero fa 45 || fail "block 45 survived the lossy failure"
block_zero fa 46 || fail "block 46 (sync_write's own) survived the lossy failure"
block_is fa 42 "$WORK/b.fa.42" || fail "block 42, covered by a good flush, was lost"
block_is fa 40 "$WORK/b.fa.40" || fail "block 40 was lost by a later failure"
expect_eq "fa lost" "$(fstatus fa lost)" 3
line=$(awk -v k="$(dm_kname fa)" '$1 == k && $5 == "F" && $10 == 1 && $11 == "lost"' "$LOG" | tail -n 1)
[[ $line =~ \ lost\ [0-9]+\ 3$ ]] || fail "the lossy flush's log line does not say what it lost: '$line'"
log "lossy flush: $line"
# A power cut: FUA writes and flushed writes stay, the rest is zeroes.
put fb 50
sync_write $B 51 >/dev/null || fail "fsync on fb failed"
put fb 52 dsync
put fb 53
msg fb powercut
block_is fb 50 "$WORK/b.fb.50" || fail "power cut: block 50, flushed, was lost"
block_is fb 52 "$WORK/b.fb.52" || fail "power cut: block 52, a FUA write, was lost"
block_zero fb 53 || fail "power cut: block 53, never flushed, survived"
expect_eq "fb lost" "$(fstatus fb lost)" 1
expect_eq "fb dirty after the cut" "$(fstatus fb dirty)" 0
refused fa powercut now
refused fa fail_flush lose
refused fa fail_fua 1 EIO lose

dmsetup remove fa
dmsetup remove fb
rmmod dmb_fault || fail "rmmod dmb_fault"
[ ! -e /sys/kernel/debug/dmb_fault ] || fail "debugfs directory left behind"
trap - EXIT
log "done"
