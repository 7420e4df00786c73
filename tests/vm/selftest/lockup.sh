#!/bin/bash
# Harness self-test: hangs the guest's kernel (dmb_warn mode=spin: a CPU
# spinning with preemption off in dmb_warn_spin()).  The kernel's soft-lockup
# report must reach serial.log with every CPU's backtrace, the runner must
# dump the guest (qemu-dump.txt: each vCPU's registers and function; then
# an NMI, whose panic prints every CPU's backtrace) and fail this test by
# name, naming the function.  Its own machine (smp=2 is not a plain disk
# word), so the guest it takes down runs nothing else.
# vm: ide smp=2
# timeout: 60
source "$PROJECT/tests/vm/lib.sh"
sysctl -qw kernel.watchdog_thresh=1	# a soft lockup after 2 s
load_testmod dmb_warn mode=spin
