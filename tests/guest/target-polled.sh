#!/bin/bash
# dm-barrier: polled I/O (io_uring IOPOLL) with O_DSYNC over a disk with
# poll queues (null_blk poll_queues=1, standing in for NVMe).  The worker
# waits for the barrier's data write itself, so the write must not be
# polled: nobody polls it (review finding 4; 9a24aab: REQ_POLLED kept, the
# worker waited for ever, the mapping stalled).  Both ways: direct and
# through the worker (dm_barrier.direct=N).
# Negative control: the same fio job on the null_blk device itself.
# And a polled read its submitter does not reap (review N6): dmb-pollhold
# submits it and sleeps; a barrier on the mapping must not wait for it.
# (767b561 passed fast-path bios down polled: the drain waited until the
# read was reaped, 30 s on NVMe, for ever here.)  dm-linear, which has no
# drain, is the control: the same barrier completes there.
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

# --- N6: an unreaped polled read must not stall a barrier
echo Y >/sys/module/dm_barrier/parameters/direct
# unreaped NAME: dmb-pollhold's read in flight on NAME; then an fdatasync
# after a write must finish while the read is still unreaped.
unreaped() {
	bg ph "$B/tools/dmb-pollhold" "/dev/mapper/$1" 120
	wait_until 20 'grep -q submitted "$WORK/ph.out"' || fail "$1: dmb-pollhold did not submit: $(bg_out ph)"
	bg fs dd if=/dev/urandom of="/dev/mapper/$1" bs=4k count=1 seek=7 oflag=direct conv=fdatasync,notrunc status=none
	if ! wait_until 60 'bg_done fs'; then
		pkill -TERM -f dmb-pollhold || true
		wait_until 30 'bg_done fs ph' || true
		fail "$1: a barrier waited for a polled read nobody reaped ($(dmsetup status "$1"))"
	fi
	bg_done ph && fail "$1: the polled read was reaped before the barrier finished: $(bg_out ph)"
	expect_eq "$1: the barrier behind the unreaped read" "$(bg_rc fs)" 0
	pkill -TERM -f dmb-pollhold
	wait_until 30 'bg_done ph' || fail "$1: dmb-pollhold did not reap its read"
	# A read that failed timed out below (null_blk's timeout): the
	# barrier waited for that (767b561: 5 s here, 30 s on NVMe).
	[ "$(bg_rc ph)" = 0 ] ||
		fail "$1: the unreaped polled read timed out while a barrier waited for it: $(bg_out ph | tr '\n' ' ')"
	log "ok: $1: the barrier completed, the polled read was still unreaped, then reaped whole"
}
dmsetup create lin --table "0 $(sectors /dev/nullb0) linear /dev/nullb0 0"
unreaped lin
dmsetup remove lin
unreaped pol

