#!/bin/bash
# dm-barrier: a write error stays a write error, with its status, on both
# paths; only a failed flush falls back (review finding 3).  A barrier write
# to a sector range the dmb_fault mapping fails with a medium error
# (ENODATA) or a full thin pool's BLK_STS_NOSPC (ENOSPC): the caller gets
# that errno, the mode stays, no fallback is counted.  Direct way: an idle
# clean mapping sends the barrier down itself; worker: dm_barrier.direct=N.
# Mode fua (a FUA write failed: the cache or the medium?) probes with a
# flush.  9a24aab: on the direct way (and in mode fua on both) it fell back
# to none and returned EIO.
# Negative control: the same barrier to a good sector succeeds, and a failed
# flush still falls back with EIO.
# vm: ide ahci
# timeout: 240
source "$PROJECT/tests/vm/lib.sh"

modprobe dm-barrier
trap 'echo Y >/sys/module/dm_barrier/parameters/direct 2>/dev/null || true' EXIT

# case NAME DIRECT FAULT-FEATURES BARRIER-FEATURES STATUS ERRNO-TEXT
case_write_error() {
	local name=$1 direct=$2 ffeat=$3 bfeat=$4 st=$5 want=$6 out mode
	echo "$direct" >/sys/module/dm_barrier/parameters/direct
	# shellcheck disable=SC2086
	make_fault "f$name" "$DISK_IDE" $ffeat
	# shellcheck disable=SC2086
	make_barrier "$name" "/dev/mapper/f$name" $bfeat
	mode=$(bstatus "$name" mode)
	dsync_write "/dev/mapper/$name" 1 >/dev/null || fail "$name: control barrier write failed"
	# Clean: the next barrier needs no pre-flush (so it may go direct).
	dd if=/dev/null of="/dev/mapper/$name" conv=fdatasync,notrunc status=none
	fault "f$name" fail_write 4096 8 all "$st"
	out=$(dsync_write "/dev/mapper/$name" 512) && fail "$name: a barrier write to a failing sector succeeded"
	case "$out" in
	*"$want"*) log "ok: $name: '$out'" ;;
	*) fail "$name: got '$out', want '$want' (the write's own status)" ;;
	esac
	expect_eq "$name: mode after a write error" "$(bstatus "$name" mode)" "$mode"
	expect_eq "$name: fallbacks" "$(bstatus "$name" fallbacks)" 0
	dsync_write "/dev/mapper/$name" 2 >/dev/null || fail "$name: a barrier write elsewhere failed"
	# Control: a failed flush still falls back.
	fault "f$name" fail_write off
	dd if=/dev/urandom of="/dev/mapper/$name" bs=4k count=1 seek=3 oflag=direct conv=notrunc status=none
	fault "f$name" fail_flush all
	out=$(dsync_write "/dev/mapper/$name" 4) && fail "$name: a barrier succeeded although flushes fail"
	expect_eq "$name: mode after a failed flush" "$(bstatus "$name" mode)" none
	fault "f$name" clear
	dmsetup remove "$name" "f$name"
}

case_write_error direct-medium Y "" "" MEDIUM "No data available"
case_write_error direct-nospc Y "" "" NOSPC "No space left on device"
case_write_error worker-medium N "" "" MEDIUM "No data available"
case_write_error worker-nospc N "" "" NOSPC "No space left on device"
case_write_error fua-direct Y flush_supported mode:fua NOSPC "No space left on device"
case_write_error fua-worker N flush_supported mode:fua MEDIUM "No data available"
