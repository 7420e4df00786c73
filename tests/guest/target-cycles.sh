#!/bin/bash
# dm-barrier: 30 cycles (100 in make check-long, DMB_LONG=1) of load module /
# create a mapping / barrier I/O / remove / unload, alternating disks and
# modes; the module must unload every time (nothing left holding it) and the
# kernel must not complain.
# Negative control: a cycle that leaves the mapping in place makes rmmod
# fail, and the test checks that it does.
# vm: ide ahci smp=1
# timeout: 400
# env: DMB_LONG
source "$PROJECT/tests/vm/lib.sh"

modes=(flush fua drain passthrough none)
disks=("$DISK_IDE" "$DISK_AHCI")
ko=$(modinfo -n dm-barrier)
n=30
[ -n "${DMB_LONG:-}" ] && n=100
start=$(date +%s)
for ((i = 0; i < n; i++)); do
	insmod "$ko" || fail "cycle $i: insmod"
	d=${disks[$((i % 2))]}
	mode=${modes[$((i % 5))]}
	dmsetup create "cyc$i" --table "0 $(sectors "$d") barrier $d 0 1 mode:$mode"
	if [ "$mode" != none ]; then
		dsync_write "/dev/mapper/cyc$i" "$i" >/dev/null || fail "cycle $i: barrier in mode $mode"
	fi
	if [ $i -eq $((n / 2)) ]; then
		must_fail rmmod dm_barrier # the negative control: still in use
	fi
	dmsetup remove "cyc$i"
	rmmod dm_barrier || fail "cycle $i: rmmod"
done
log "$n cycles in $(($(date +%s) - start)) s"
grep -q '^dm_barrier ' /proc/modules && fail "module still loaded"
true
