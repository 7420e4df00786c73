#!/bin/bash
# make demo: dm-barrier end to end in the guest, on a real emulated ATA disk.
# A barrier mapping on the IDE disk, ext4 on it, writes with fsync, and
# the target's counters before and after; then the write cache turned off
# with hdparm, which the target notices, and barriers carried on by drain.
# vm: ide ahci
# timeout: 300
source "$PROJECT/tests/vm/lib.sh"

step() { printf '\n=== %s\n' "$*"; }
show() { printf '$ %s\n' "$*"; "$@"; }
ctl=$B/barrierctl

step "The disks: ata_piix (IDE) and AHCI, as the guest kernel sees them"
show lsblk -o NAME,SIZE,MODEL,SERIAL,TRAN "$DISK_IDE" "$DISK_AHCI"
show hdparm -W "$DISK_IDE"
echo "kernel view: $(write_cache "$DISK_IDE"); FUA: $(cat "/sys/block/$(disk_name "$DISK_IDE")/queue/fua")"

step "A barrier mapping over the whole IDE disk (mode flush)"
show modprobe dm-barrier
S=$(sectors "$DISK_IDE")
show dmsetup create safe --table "0 $S barrier $DISK_IDE 0 1 hold_on_flush_error:5000"
show dmsetup table safe
show dmsetup status safe
echo "(fields: mode cache fua barriers flushes fua_writes flush_errors fallbacks held"
echo " max_drain_us shared no_cache refused replayed cache_changes - docs/dm-barrier.rst)"

step "ext4 on it; 200 small files, each written and fsync'ed"
show mkfs.ext4 -q /dev/mapper/safe
mkdir -p "$WORK/mnt"
show mount /dev/mapper/safe "$WORK/mnt"
dmsetup message safe 0 reset_stats
disk_before=$(disk_flushes "$DISK_IDE")
start=$(date +%s%N)
for i in $(seq 200); do
	echo "record $i" >"$WORK/mnt/f$i"
	sync -f "$WORK/mnt/f$i"
done
ms=$((($(date +%s%N) - start) / 1000000))
echo "200 fsyncs in $ms ms"
show dmsetup status safe
echo "barriers: $(bstatus safe barriers) (jbd2 commits arrive as an empty flush + a FUA write)"
echo "flushes issued: $(bstatus safe flushes); shared (no flush of their own): $(bstatus safe shared)"
echo "flushes the disk completed meanwhile (diskstats): $(($(disk_flushes "$DISK_IDE") - disk_before))"
echo "longest drain before a barrier: $(bstatus safe max_drain_us) us"
if [ -x "$ctl" ]; then
	show "$ctl" status safe
fi

step "The write cache goes off behind the kernel's back (hdparm -W0 emits no uevent)"
e=$(event_nr safe)
show hdparm -W0 "$DISK_IDE"
echo more >"$WORK/mnt/after" && sync -f "$WORK/mnt/after"
timeout 10 dmsetup wait safe "$e" >/dev/null && echo "dm event raised: $(event_nr safe) > $e"
show dmsetup status safe
echo "cache: $(bstatus safe cache); barriers run as drain (no flush needed): $(bstatus safe no_cache)"
show hdparm -W1 "$DISK_IDE"

step "Unmount and check"
show umount "$WORK/mnt"
show e2fsck -fn /dev/mapper/safe
show dmsetup remove safe
echo
echo "Done. Reference: docs/dm-barrier.rst; tests: tests/vm/run --list"
