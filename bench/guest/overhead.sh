#!/bin/bash
# Benchmark part 1, overhead: fio 4k random read/write (50/50) at QD 32,
# O_DIRECT, io_uring, on the AHCI disk (NCQ) through a barrier mapping in
# every mode against dm-linear on the same disk.  No flushes or FUA in the
# load: this is what the target costs on ordinary I/O.  Configs run
# interleaved per rep so that drift hits them alike.
# vm: ide ahci scsi
# timeout: 900
source "$PROJECT/tests/vm/lib.sh"
source "$PROJECT/bench/guest/lib.sh"

load_barrier
BDISK=$(set -- ${DMB_BENCH_DISKS:-ahci}; echo "$1")
DEV=$(bench_disk "$BDISK") || exit 1
SIZE=256M
# Allocate the image's blocks once, so that no config pays for first writes.
dd if=/dev/zero of="$DEV" bs=1M count=256 oflag=direct status=none

CONFIGS=(linear flush fua drain passthrough none)
for rep in $(seq "$REPS"); do
	# Rotate the order each rep: no config always runs first.
	for i in "${!CONFIGS[@]}"; do
		config=${CONFIGS[$(((i + rep - 1) % ${#CONFIGS[@]}))]}
		mapping ov "$config" "$DEV"
		fio_json "$WORK/ov.json" --name=ov --filename=/dev/mapper/ov --direct=1 \
			--ioengine=io_uring --rw=randrw --rwmixread=50 --bs=4k --iodepth=32 \
			--size=$SIZE --runtime="$FIO_RUNTIME" --ramp_time="$FIO_RAMP" --time_based \
			--randrepeat=0
		iops=$(fio_iops "$WORK/ov.json")
		if [ "$config" = linear ]; then
			row overhead dm-linear iops "$rep" "$iops"
		else
			row overhead "barrier/$config" iops "$rep" "$iops" dm-linear "ratio>=0.98"
			[ "$(bstatus ov barriers)" = 0 ] || fail "the overhead load sent barriers"
		fi
		dmsetup remove ov
	done
done
