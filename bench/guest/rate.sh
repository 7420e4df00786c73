#!/bin/bash
# Benchmark part 4b, barriers at the disk's limit: on null_blk with 1 ms
# completions (flushes and FUA writes too; a volatile write cache, FUA),
# a load of nothing but barriers: 4k O_DIRECT|O_DSYNC writes, 1 and 4 jobs,
# QD 1 each.  Each write is two barriers to the target: the REQ_FUA write,
# then the empty flush of the generic_write_sync() after it (blkdev_fsync).
# Baseline: the raw disk's flush rate, empty flushes (fsync(2) on the block
# device) back to back.  Also the raw disk and dm-linear with the same
# O_DSYNC writes (no ordering), and per barrier mode the device commands
# per write from the target's counters: mode fua uses FUA (the FUA write
# alone, its empty flush shared: 1 command), mode flush does not (write,
# then a post-flush, the empty flush shared: 2), drain neither (1, not
# durable).  6.1's null_blk has no switch to hide FUA; mode flush is the
# without-FUA case.
# vm: ide ahci
# timeout: 900
source "$PROJECT/tests/vm/lib.sh"
source "$PROJECT/bench/guest/lib.sh"

load_barrier
BDISK=nullb
RUNTIME=${DMB_BENCH_RATE_RUNTIME:-3}
nullb_bench dmbnull2 128 64 1000000
DEV=$DISK_NULLB
dd if=/dev/zero of="$DEV" bs=1M count=64 oflag=direct status=none

# flush_rate DEV JOBS SECS: empty flushes per second, JOBS processes each
# calling fsync(2) on DEV in a loop (blkdev_fsync: one empty flush).
flush_rate() {
	python3 - "$@" <<'PY'
import os, sys, time
dev, jobs, secs = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
r, w = os.pipe()
pids = []
start = time.monotonic()
for _ in range(jobs):
    pid = os.fork()
    if pid == 0:
        fd = os.open(dev, os.O_WRONLY)
        n, end = 0, start + secs
        while time.monotonic() < end:
            os.fsync(fd)
            n += 1
        os.write(w, b"%d\n" % n)
        os._exit(0)
    pids.append(pid)
for pid in pids:
    os.waitpid(pid, 0)
os.close(w)
total = sum(int(x) for x in os.read(r, 4096).split())
print("%.1f" % (total / (time.monotonic() - start)))
PY
}

CONFIGS=(raw-flush raw-fua linear flush fua drain)
for rep in $(seq "$REPS"); do
	for jobs in 1 4; do
		for i in "${!CONFIGS[@]}"; do
			config=${CONFIGS[$(((i + rep - 1) % ${#CONFIGS[@]}))]}
			case "$config" in
			raw-flush)
				ops=$(flush_rate "$DEV" "$jobs" "$RUNTIME") || fail "flush loop failed"
				row rate "raw disk: empty flushes" "ops/s ${jobs}j" "$rep" "$ops"
				continue ;;
			raw-fua) target=$DEV name="raw disk: O_DSYNC writes" ;;
			linear) mapping rt linear "$DEV"; target=/dev/mapper/rt name="dm-linear: O_DSYNC writes" ;;
			*) mapping rt "$config" "$DEV"; target=/dev/mapper/rt name="barrier/$config: O_DSYNC writes" ;;
			esac
			fio_json "$WORK/rt.json" --name=rt --filename="$target" --direct=1 --sync=dsync \
				--ioengine=psync --rw=write --bs=4k --size=64M --numjobs="$jobs" \
				--offset_increment=16M --runtime="$RUNTIME" --time_based
			ops=$(fio_iops "$WORK/rt.json")
			row rate "$name" "ops/s ${jobs}j" "$rep" "$ops" "raw disk: empty flushes"
			case "$config" in
			flush | fua | drain)
				read -r barriers flushes fuaw _ _ <<<"$(counters rt)"
				writes=$(fio_writes "$WORK/rt.json")
				[ "$barriers" -gt 0 ] || fail "$config: no barriers counted"
				row rate "$name" "barriers/write ${jobs}j" "$rep" "$(ratio "$barriers" "$writes")"
				# Commands: the flushes and the data write, per write.
				row rate "$name" "commands/write ${jobs}j" "$rep" \
					"$(ratio $((flushes + writes)) "$writes")"
				row rate "$name" "fua writes/write ${jobs}j" "$rep" "$(ratio "$fuaw" "$writes")"
				;;
			esac
			[ "$config" = raw-fua ] || dmsetup remove rt
		done
	done
done
nullb_remove dmbnull2
