#!/bin/bash
# A cache flush fails under ext4 with an fsync workload.  With barrierd: the
# FlushFailed signal, the disk's write cache turned off (hdparm -W says 0,
# the kernel says write through), mode drain, the held journal commit
# replayed (replayed >= 1), ext4 still read-write with no journal abort,
# e2fsck clean afterwards.
# Negative control, same boot, same table, same failure on the other disk:
# without barrierd the hold expires, the commit fails and jbd2 aborts the
# journal (ext4 goes read-only), and the write cache stays on.
#
# The failure: QEMU's blkdebug passes the first N flushes that reach each
# disk image, fails the next 6 and passes all later ones.  6 = sd's
# SYNCHRONIZE CACHE and its 5 retries (each a FLUSH CACHE from libata;
# measured in target-flush-transient): one failed flush as the kernel sees it,
# from a drive that recovers (a permanent failure would fail every write
# once the cache is off, as QEMU then flushes after each write).  Only
# flushes that follow a write reach the image, so the guest's own count
# of completed flushes (diskstats) is an upper bound of blkdebug's count:
# setup must stay below N (checked), and the workload then runs until the
# failure comes.  N = 60 leaves room: setup (mkfs, mount, first commits)
# measured at about 10 flushes.
# A third disk shows the other end of the policy: on virtio-scsi every
# flush after a write fails (blkdebug=scsi:0), and its cache cannot be
# switched (not ATA), so barrierd goes to none, loudly, and the held
# barrier fails (EOPNOTSUPP) instead of succeeding falsely.
# vm: ide ahci scsi blkdebug=ide:60+6 blkdebug=ahci:60+6 blkdebug=scsi:0
# timeout: 360
source "$PROJECT/tests/vm/lib.sh"
source "$PROJECT/tests/guest/barrierd.lib"

N=60
HOLD=10000
mkdir -p "$WORK/conf.d"
printf '[Daemon]\nPollIntervalSec=1\nHoldOnFlushErrorMSec=%s\nFallback=drain\n' $HOLD >"$WORK/barrierd.conf"
ARGS=(-c "$WORK/barrierd.conf" -C "$WORK/conf.d" --state-dir "$WORK/run")

# ---------------------------------------------------- the control: no barrierd
modprobe dm-barrier
make_barrier ctl "$DISK_AHCI" fallback:drain hold_on_flush_error:$HOLD
flushfail_setup_fs ctl "$DISK_AHCI" /mnt/ctl
nfailed=0
for ((i = 0; i < 400; i++)); do
	out=$(flushfail_fsync /mnt/ctl "$i") || { nfailed=$((nfailed + 1)); [ $nfailed = 1 ] && log "control: fsync $i failed: $out"; }
	flushfail_aborted ctl && break
done
flushfail_aborted ctl || fail "control: no journal abort without barrierd after $i fsyncs, $nfailed failed (flush_errors $(bstatus ctl flush_errors), $(disk_flushes "$DISK_AHCI") flushes on the disk; $(dmsetup status ctl); write cache $(write_cache "$DISK_AHCI"))"
log "control: journal aborted after $i fsyncs; flush_errors $(bstatus ctl flush_errors), replayed $(bstatus ctl replayed)"
# ext4 sees the aborted journal at its next journal operation and stops
# all writes (6.1 sets EXT4_FLAGS_SHUTDOWN rather than SB_RDONLY, so
# /proc/mounts keeps saying rw: the kernel's message and the failing
# writes are the evidence).
flushfail_fsync /mnt/ctl 0 >/dev/null && fail "control: a write succeeded on an aborted journal"
flushfail_went_ro ctl || fail "control: ext4 did not stop writing after the abort"
expect_eq "control: drive write cache" "$(drive_write_cache "$DISK_AHCI")" 1
expect_eq "control: replayed" "$(bstatus ctl replayed)" 0
umount /mnt/ctl
dmsetup remove ctl

# ---------------------------------------------------- with barrierd
DMESG_MARK=$(dmesg | wc -l)
bd_bus
bd_udev
bd_start "${ARGS[@]}"
bd_create fs "$DISK_IDE"
case "$(dmsetup table fs)" in
*"fallback:drain hold_on_flush_error:$HOLD"*) ;;
*) fail "fs: unexpected table $(dmsetup table fs)" ;;
esac
bd_monitor
flushfail_setup_fs fs "$DISK_IDE" /mnt/fs
flushfail_until_signal fs /mnt/fs
# Keep writing through the recovery: nothing may fail.
flushfail_keep_writing /mnt/fs 20
expect_eq "FlushFailed says mode and cache" "$(bd_signals FlushFailed | head -n 1 | jq -c '.payload.data[1:]')" '["drain",false]'
expect_eq "WriteCache" "$(bd_prop fs WriteCache)" false
grep -q "fs: cache flush failed; turning the write cache off" "$BD_LOG" || fail "the failure was not logged"
flushfail_survived fs "$DISK_IDE" /mnt/fs

# ---------------------------------------------------- a cache that cannot be switched
bd_monitor
bd_create scsi "$DISK_SCSI"
expect_eq "scsi: Mode (the disk takes FUA)" "$(bd_prop scsi Mode)" fua
out=$(dsync_write /dev/mapper/scsi 1) && fail "scsi: a barrier succeeded although its flush failed"
log "scsi: the barrier failed: $out"
wait_until 10 '[ -n "$(bd_signals FlushFailed | grep scsi)" ]' || fail "scsi: no FlushFailed"
expect_eq "scsi: FlushFailed says" "$(bd_signals FlushFailed | grep scsi | head -n 1 | jq -c '.payload.data[1:]')" '["none",true]'
expect_eq "scsi: Mode" "$(bd_prop scsi Mode)" none
expect_eq "scsi: State" "$(bd_prop scsi State)" broken
grep -q "barrierd: crit: scsi: cache flush failed and the write cache could not be turned off; ordered writes disabled (mode none)" "$BD_LOG" ||
	fail "scsi: not said loudly: $(grep scsi: "$BD_LOG" | tail -n 5)"
case "$out" in *"Operation not supported"*) ;; *) fail "scsi: held barrier: '$out', want EOPNOTSUPP (replayed under none)" ;; esac
bd_stop
dmsetup remove fs
dmsetup remove scsi
