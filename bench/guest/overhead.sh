#!/bin/bash
# Benchmark part 1, overhead: fio 4k random read/write (50/50), O_DIRECT,
# io_uring, 32 I/Os in flight in all, through a barrier mapping in every
# mode against dm-linear on the same disk.  No flushes or FUA in the load:
# this is what the target costs on ordinary I/O.
#
# Disks (DMB_BENCH_OVERHEAD_DISKS, default "nullb ahci"):
#  - nullb: null_blk, memory-backed with a volatile write cache, timer
#    completions after 10 us; its own spread is small, so the target's
#    cost shows.  1, 2 and 4 fio jobs (DMB_BENCH_OVERHEAD_JOBS), QD 32/jobs
#    each: the scaling of the fast path with submitting CPUs.
#    DMB_BENCH_OVERHEAD_REPS reps (default 5) of
#    DMB_BENCH_OVERHEAD_RUNTIME s (default 3, after a 1 s ramp).
#  - ahci: QEMU's AHCI disk (NCQ), 1 job, QD 32, $REPS reps of
#    $FIO_RUNTIME s; its spread is 10-40 %, shown for comparison.
# All mappings exist at once (over the same disk) and the runs of one rep
# and job count go back to back in a rotated order, so that drift hits
# every config alike; bench/report pairs each run with dm-linear's run of
# the same rep and job count.  The part name is $OV_PART (scaling.sh runs
# this on a 4-vCPU machine as part "scaling").
# vm: ide ahci scsi
# timeout: 1500
source "$PROJECT/tests/vm/lib.sh"
source "$PROJECT/bench/guest/lib.sh"

load_barrier
OV_PART=${OV_PART:-overhead}
CONFIGS=(linear flush fua drain passthrough none)

# overhead_disk WORD JOBS REPS RUNTIME RAMP SIZE
overhead_disk() {
	local disk=$1 jobs_list=$2 reps=$3 runtime=$4 ramp=$5 size=$6 dev config rep jobs i iops
	if [ "$disk" = nullb ]; then
		nullb_bench dmbnull0 $((size + 64)) $((size + 64)) 10000
		dev=$DISK_NULLB
	else
		dev=$(bench_disk "$disk") || exit 1
	fi
	BDISK=$disk
	# Allocate (write) the region once, so that no config pays for first writes.
	dd if=/dev/zero of="$dev" bs=1M count="$size" oflag=direct status=none
	for config in "${CONFIGS[@]}"; do mapping "ov-$config" "$config" "$dev"; done
	log "overhead on $disk ($dev), $(nproc) vCPUs, jobs $jobs_list, $reps reps of ${runtime}s"
	for rep in $(seq "$reps"); do
		for jobs in $jobs_list; do
			# Rotate the order each rep: no config always runs first.
			for i in "${!CONFIGS[@]}"; do
				config=${CONFIGS[$(((i + rep - 1) % ${#CONFIGS[@]}))]}
				fio_json "$WORK/ov.json" --name=ov --filename="/dev/mapper/ov-$config" \
					--direct=1 --ioengine=io_uring --rw=randrw --rwmixread=50 --bs=4k \
					--numjobs="$jobs" --iodepth=$((32 / jobs)) --size="${size}M" \
					--runtime="$runtime" --ramp_time="$ramp" --time_based --randrepeat=0
				iops=$(fio_iops "$WORK/ov.json")
				if [ "$config" = linear ]; then
					row "$OV_PART" dm-linear "iops ${jobs}j" "$rep" "$iops"
				else
					row "$OV_PART" "barrier/$config" "iops ${jobs}j" "$rep" "$iops" dm-linear "ratio>=0.98"
				fi
			done
		done
	done
	for config in "${CONFIGS[@]}"; do
		[ "$config" = linear ] || [ "$(bstatus "ov-$config" barriers)" = 0 ] ||
			fail "the overhead load sent barriers (ov-$config)"
		dmsetup remove "ov-$config"
	done
	[ "$disk" = nullb ] && nullb_remove dmbnull0
	return 0
}

for disk in ${DMB_BENCH_OVERHEAD_DISKS:-${DMB_BENCH_DISKS:-nullb ahci}}; do
	case "$disk" in
	nullb)
		overhead_disk nullb "${DMB_BENCH_OVERHEAD_JOBS:-1 2 4}" "${DMB_BENCH_OVERHEAD_REPS:-5}" \
			"${DMB_BENCH_OVERHEAD_RUNTIME:-3}" 1 128 ;;
	*)
		overhead_disk "$disk" 1 "$REPS" "$FIO_RUNTIME" "$FIO_RAMP" 256 ;;
	esac
done
