#!/bin/bash
# dm-barrier under LVM: a journal commit on an LV whose pre-flush failed
# must fail (review finding N3, issue 28).  The barrier mapping
# (fallback:drain) over a dmb_fault mapping is the PV of a VG; LV "lv" of
# 64 MiB, a second LV, then `lvextend -L +64M vgb/lv`: lv has two segments.
# A commit (dmb_bio W PREFLUSH,FUA, what jbd2 writes) on lv after a plain
# write, the disk's next flush failing: LVM's dm core splits the commit into
# an empty flush and the data part and drops the flush's error, so only the
# barrier mapping can fail the data part, by knowing it for the pre-flush's.
# At 767b561 the target knew it by the bio_vec and the dm-space sector of
# the flush: under LVM the flush carries the LV's sector (6.12's
# flush_bypasses_map sends it without linear_map) or went to the first
# segment's target only (6.1, a commit in the second segment), so the
# commit succeeded (6.12: both segments; 6.1: the second).
# Control: the same commit on the mapping itself fails on every kernel,
# and a commit without a fault succeeds.
# vm: ide ahci
# timeout: 240
source "$PROJECT/tests/vm/lib.sh"
source "$PROJECT/tests/guest/fs.lib"
source "$PROJECT/tests/guest/lvm.lib"

modprobe dm-barrier
echo N >/sys/module/dm_barrier/parameters/direct
trap 'echo Y >/sys/module/dm_barrier/parameters/direct 2>/dev/null || true' EXIT
make_fault flt "$DISK_IDE"
make_barrier pvb /dev/mapper/flt fallback:drain

# commit DEV ID SECTOR: after a plain write, a commit whose pre-flush fails;
# prints its result (errno).
commit() {
	dd if=/dev/urandom of="$1" bs=4k count=1 seek=$(($3 / 8 + 64)) oflag=direct conv=notrunc status=none
	fault flt fail_flush 1
	bio_open "$1"
	bio_submit "$2" W PREFLUSH,FUA "$3" 8
	bio_wait 30 "$2"
	bio_result "$2"
	bio_close
	fault flt fail_flush off
	dmsetup message pvb 0 mode flush
}

# --- control: on the mapping itself
r=$(commit /dev/mapper/pvb 1 800)
expect_eq "control: a commit on the mapping whose pre-flush failed" "$r" -5
log "mapping: $(dmsetup status pvb)"

lvm_setup noudev /dev/mapper/pvb
lvmx pvcreate -q -y -ff /dev/mapper/pvb
lvmx vgcreate -q vgb /dev/mapper/pvb
lvmx lvcreate -q -y -W y -n lv -L 64M vgb
lvmx lvcreate -q -y -W y -n other -L 64M vgb
lvmx lvextend -q -L +64M vgb/lv
lvmx vgmknodes -q vgb >/dev/null 2>&1 || true
LV=/dev/mapper/vgb-lv
[ -b "$LV" ] || fail "no $LV"
expect_eq "lv: segments" "$(dmsetup table vgb-lv | wc -l)" 2
log "lv: $(dmsetup table vgb-lv | tr '\n' ';')"

# --- control: no fault
bio_open "$LV"
bio_submit 2 W PREFLUSH,FUA 800 8
bio_wait 30 2
expect_eq "control: a commit on the LV without a fault" "$(bio_result 2)" 0
bio_close

# --- the commit on the LV, in its first and in its second segment
seg2=$((64 * 2048 + 800))
for s in 800 $seg2; do
	r=$(commit "$LV" 3 "$s")
	log "LV sector $s: commit -> $r; pvb: $(dmsetup status pvb)"
	[ "$r" != 0 ] || fail "a commit on the LV (sector $s) whose pre-flush failed reported success"
	expect_eq "LV sector $s: the commit" "$r" -5
done
# Nothing owed is left: the gate is open again.
expect_eq "debts left" "$(bstatus pvb debts)" 0
lvmx vgchange -q -an vgb
