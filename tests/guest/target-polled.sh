#!/bin/bash
# dm-barrier: polled I/O (io_uring IOPOLL) with O_DSYNC over a disk with
# poll queues (null_blk poll_queues=1, standing in for NVMe).  The worker
# waits for the barrier's data write itself, so the write must not be
# polled: nobody polls it (review finding 4; 9a24aab: REQ_POLLED kept, the
# worker waited for ever, the mapping stalled).  Both ways: direct and
# through the worker (dm_barrier.direct=N).
# Negative control: the same fio job on the null_blk device itself.
# vm: ide ahci
# timeout: 240
source "$PROJECT/tests/vm/lib.sh"

modprobe null_blk nr_devices=1 queue_mode=2 submit_queues=1 poll_queues=1 \
	memory_backed=1 cache_size=64 gb=1 || skip "null_blk with poll_queues"
trap 'echo Y >/sys/module/dm_barrier/parameters/direct 2>/dev/null || true; dmsetup remove pol 2>/dev/null; rmmod null_blk 2>/dev/null' EXIT
expect_eq "null_blk: polling" "$(cat /sys/block/nullb0/queue/io_poll)" 1
expect_eq "null_blk: write cache" "$(cat /sys/block/nullb0/queue/write_cache)" "write back"
modprobe dm-barrier

job() { # job DEV: polled O_DSYNC writes, a few in flight
	timeout -k 5 60 fio --name=polled --filename="$1" --ioengine=io_uring --hipri=1 \
		--direct=1 --sync=dsync --rw=randwrite --bs=4k --size=8m --iodepth=4 \
		--numjobs=2 --group_reporting --output-format=terse >"$WORK/fio.out" 2>&1
}
job /dev/nullb0 || fail "control: fio on null_blk itself failed: $(tail -3 "$WORK/fio.out")"

make_barrier pol /dev/nullb0
expect_eq "mapping: polling" "$(cat "/sys/block/$(dm_kname pol)/queue/io_poll")" 1
for direct in Y N; do
	echo "$direct" >/sys/module/dm_barrier/parameters/direct
	dmsetup message pol 0 reset_stats
	job /dev/mapper/pol || fail "direct=$direct: polled O_DSYNC writes stalled or failed: $(tail -3 "$WORK/fio.out")"
	[ "$(bstatus pol barriers)" -ge 2048 ] || fail "direct=$direct: too few barriers: $(dmsetup status pol)"
	log "direct=$direct: $(dmsetup status pol)"
done
