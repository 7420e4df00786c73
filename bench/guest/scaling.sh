#!/bin/bash
# Benchmark part 1b, scaling: part 1 on null_blk (1, 2 and 4 fio jobs) on
# a 4-vCPU guest (QEMU TCG, one host thread per vCPU: on a 2-core host
# the vCPUs share the cores, so this shows contention between submitting
# CPUs, not a 4-core machine's throughput).  Not in the default parts:
# bench/run --parts scaling.
# vm: ide ahci smp=4
# timeout: 1500
export OV_PART=scaling DMB_BENCH_OVERHEAD_DISKS=nullb
source "$PROJECT/bench/guest/overhead.sh"
