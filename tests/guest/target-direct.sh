#!/bin/bash
# dm-barrier's direct way (barrier_map_direct()): a barrier that finds the
# target idle goes down as it is, with the flags of its mode, and the disk
# queue's own flush sequence runs it - without waking the target's worker.
# Serial barriers (dd: one O_DSYNC write at a time, so each finds the target
# idle) on the AHCI disk (write cache, no FUA), mode flush: the worker never
# runs (a kprobe on barrier_work counts its runs), the first write costs a
# pre-flush and a post-flush and every later one a post-flush only (nothing
# was written between them), the flush after each write costs none, the
# target's flush counter equals the flushes the disk completed, an fsync
# after a plain write costs one flush and an fsync after nothing none, and
# the data reads back.  Mode drain: no flush,
# no worker.
# Negative control: dm_barrier.direct=N - the same barriers through the
# worker, which the probe must see run once per barrier at least (or it
# proves nothing), with the same flush counts.
# vm: ide ahci
# timeout: 180
source "$PROJECT/tests/vm/lib.sh"

modprobe dm-barrier
P=/sys/module/dm_barrier/parameters/direct
expect_eq "direct by default" "$(cat $P)" Y
T=/sys/kernel/tracing
[ -e $T/kprobe_events ] || mount -t tracefs nodev $T
echo 'p:dmb/dmb_barrier_work dm_barrier:barrier_work' >$T/kprobe_events || skip "no kprobe on barrier_work"
echo 1 >$T/events/dmb/dmb_barrier_work/enable
cleanup() {
	echo Y >$P
	echo 0 >$T/events/dmb/dmb_barrier_work/enable
	echo >$T/kprobe_events
} 2>/dev/null
trap cleanup EXIT
# kprobe_profile: "<event> <hits> <misses>".
worker_runs() {
	awk '$1 == "dmb_barrier_work" { print $2; found = 1 } END { exit !found }' $T/kprobe_profile ||
		fail "no dmb_barrier_work in kprobe_profile"
}

# barriers NAME N: N serial O_DSYNC 4 KiB writes of pattern files; prints
# "worker_runs target_flushes disk_flushes" for them.
barriers() {
	local w0 d0
	dmsetup message "$1" 0 reset_stats
	w0=$(worker_runs) d0=$(disk_flushes "$DISK_AHCI")
	dd if="$WORK/pattern" of="/dev/mapper/$1" bs=4k count="$2" oflag=direct,dsync conv=notrunc status=none ||
		fail "$1: serial barriers failed"
	echo "$(($(worker_runs) - w0)) $(bstatus "$1" flushes) $(($(disk_flushes "$DISK_AHCI") - d0))"
}
head -c $((4096 * 20)) /dev/urandom >"$WORK/pattern"
readback() {
	cmp <(dd if="/dev/mapper/$1" bs=4k count=20 iflag=direct status=none) "$WORK/pattern" ||
		fail "$1: the data does not read back"
}

# --- direct, mode flush: a fresh table flushes before its first barrier.
make_barrier d "$DISK_AHCI"
read -r w t d <<<"$(barriers d 20)"
log "direct, flush: 20 barriers: worker runs $w, target flushes $t, disk flushes $d"
expect_eq "direct: worker runs" "$w" 0
expect_eq "direct: target flushes (1 pre-flush + 20 post-flushes)" "$t" 21
expect_eq "direct: disk flushes" "$d" 21
# Each O_DSYNC write is two barriers: the FUA write, then the flush of
# generic_write_sync().  Shared (no pre-flush of their own): every flush,
# and every write but the first.
expect_eq "direct: barriers" "$(bstatus d barriers)" 40
expect_eq "direct: shared" "$(bstatus d shared)" 39
expect_eq "direct: fua_writes" "$(bstatus d fua_writes)" 0
readback d

# An fsync (an empty flush barrier) after a plain write flushes once; after
# nothing it is answered without a flush (shared).
w0=$(worker_runs) d0=$(disk_flushes "$DISK_AHCI")
dmsetup message d 0 reset_stats
dd if=/dev/zero of=/dev/mapper/d bs=4k count=1 seek=100 oflag=direct conv=fsync,notrunc status=none
dd if=/dev/null of=/dev/mapper/d conv=fsync,notrunc status=none
expect_eq "direct: fsyncs: barriers" "$(bstatus d barriers)" 2
expect_eq "direct: fsyncs: target flushes" "$(bstatus d flushes)" 1
expect_eq "direct: fsyncs: shared" "$(bstatus d shared)" 1
expect_eq "direct: fsyncs: disk flushes" "$(($(disk_flushes "$DISK_AHCI") - d0))" 1
expect_eq "direct: fsyncs: worker runs" "$(($(worker_runs) - w0))" 0

# --- direct, mode drain: ordered, never flushed.
dmsetup message d 0 mode drain
read -r w t d <<<"$(barriers d 20)"
log "direct, drain: 20 barriers: worker runs $w, target flushes $t, disk flushes $d"
expect_eq "direct drain: worker runs" "$w" 0
expect_eq "direct drain: flushes" "$t/$d" 0/0
readback d
dmsetup remove d

# --- the control: every barrier through the worker.
echo N >$P
make_barrier wk "$DISK_AHCI"
read -r w t d <<<"$(barriers wk 20)"
log "worker, flush: 20 barriers: worker runs $w, target flushes $t, disk flushes $d"
# Each write waits for the one before it, so each costs the worker at least
# one run; its two barriers (pre-flush, data) usually take one run each,
# but on a slow kernel (the debug kernel: 39) the data part can arrive
# while the worker still runs for the pre-flush and share its run.
[ "$w" -ge 20 ] || fail "control: the probe saw $w worker runs for 20 writes (40 barriers) through the worker"
expect_eq "worker: target flushes" "$t" 21
expect_eq "worker: disk flushes" "$d" 21
readback wk
dmsetup remove wk
