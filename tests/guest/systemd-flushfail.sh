#!/bin/bash
# A cache flush fails under ext4 while systemd runs barrierd with the
# shipped unit and the default configuration (hold 10000 ms, fallback
# drain): the held journal commit is replayed (replayed >= 1), barrierd
# turns the disk's write cache off through SG_IO from inside its sandbox
# (hdparm -W says 0, the kernel says write through), the mapping goes to
# drain, ext4 stays read-write with no journal abort, e2fsck is clean; and
# the journal has the flush failure with MESSAGE_ID=f43d44cac08543faaa4ac0155ab0f108
# (BARRIERD_MESSAGE_FLUSH_FAILED) and DMB_DEVICE=, DMB_DISK=, DMB_MODE=,
# DMB_WRITE_CACHE= fields.  The failure is blkdebug's, as in
# barrierd-flushfail (which also has the control without barrierd: the
# journal aborts): flushes 61-66 that reach the image fail, then all pass.
# Negative control (run once, results in docs/verification.md): the
# unit without CAP_SYS_RAWIO cannot switch the cache; barrierd goes to
# mode none and this test fails.
# vm: ide ahci systemd blkdebug=ide:60+6
# timeout: 240
source "$PROJECT/tests/vm/lib.sh"
source "$PROJECT/tests/guest/barrierd.lib"
source "$PROJECT/tests/guest/systemd.lib"

N=60
ID=f43d44cac08543faaa4ac0155ab0f108
stop_unit
systemctl start $UNIT || fail "systemctl start failed"
pid=$(uprop MainPID)
barrierctl --bus create fs "$DISK_IDE" || fail "barrierctl --bus create failed"
case "$(dmsetup table fs)" in
*"fallback:drain hold_on_flush_error:10000"*) ;;
*) fail "fs: unexpected table $(dmsetup table fs)" ;;
esac
DMESG_MARK=$(dmesg | wc -l)
flushfail_setup_fs fs "$DISK_IDE" /mnt/fs
for ((i = 0; i < 400; i++)); do
	out=$(flushfail_fsync /mnt/fs "$i") || fail "fsync $i failed under barrierd: $out"
	junit MESSAGE_ID=$ID | has . && break
done
junit MESSAGE_ID=$ID | has . || fail "no flush failure in the journal after $i fsyncs (flush_errors $(bstatus fs flush_errors))"
log "flush failure after $i fsyncs"
flushfail_keep_writing /mnt/fs 20
journalctl --no-pager -u $UNIT -o verbose MESSAGE_ID=$ID
expect_eq "journal: the flush failure's fields" \
	"$(junit MESSAGE_ID=$ID | jq -r '[.PRIORITY, .DMB_DEVICE, .DMB_DISK, .DMB_MODE, .DMB_WRITE_CACHE] | join("|")')" \
	"6|fs|$(disk_name "$DISK_IDE")|drain|0"
junit -o cat | grep -E "cache flush failed|turned off" || fail "the cache switch is not in the journal"
expect_eq "MainPID unchanged" "$(uprop MainPID)" "$pid"
flushfail_survived fs "$DISK_IDE" /mnt/fs
barrierctl --bus remove fs || fail "remove"
stop_unit
