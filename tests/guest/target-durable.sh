#!/bin/bash
# dm-barrier: a barrier that reports success is durable, with two threads
# (review finding N1, "the absorbed write").  dmb-syncload's thread A
# writes a fresh block and fdatasync()s, again and again; thread B
# fdatasync()s in a loop, so most barriers find nothing written since the
# last flush and are answered without one.  The trace of the mapping and
# its disk, checked by `dmb-ordercheck --durability`, must show every A
# write on stable media before the fdatasync() after it returned.
# At 767b561 a barrier proved the drain with one pass over the per-CPU
# counts and read the write counts again afterwards: a write counted in
# between passed the gate once it reopened, its count already "flushed",
# and its own fdatasync() returned without a flush.
# Three runs on the AHCI disk (blk-mq, so barriers take the direct way):
#   1. the module as built, its windows absent;
#   2. the test-only build (scripts/variants: windows) with the race
#      windows widened: each write waits between counting itself and
#      reading the gate, each barrier between its snapshot and its decision;
#   3. negative control: the same with N1 put back (variant windows-n1,
#      tests/campaign/mutants/n1-reread.patch): durable violations.
# Under check-mutants a build of a mutant with windows (DMB_KO) is run 2.
# vm: ide ahci
# timeout: 600
# env: DMB_DURABLE_GATE_US DMB_DURABLE_SNAP_US DMB_DURABLE_WRITES
source "$PROJECT/tests/vm/lib.sh"
source "$PROJECT/tests/tools/order-lib.sh"

N=${DMB_DURABLE_WRITES:-1000}
# Window widths (us): a write's wait must outlast a barrier's flush, so
# that it reads the gate after the barrier reopened it.
GATE_US=${DMB_DURABLE_GATE_US:-4000}
SNAP_US=${DMB_DURABLE_SNAP_US:-1500}
# A's writes and fdatasync()s, and up to 16 of B's per A write (dmb-syncload
# -p): the trace buffer is sized for them all.
ORD_BIOS=$((N * 18))
P=/sys/module/dm_barrier/parameters

variant_ko() {
	local ko=${DMB_TESTMODS:-$B}/variants/$1/dm-barrier.ko
	[ -f "$ko" ] || fail "no $ko (make test-modules; make kernels)"
	echo "$ko"
}
# use_module KO: the module in place of the one loaded (no mapping left).
use_module() {
	rmmod dm_barrier
	insmod "$1" || fail "cannot load $1"
}
trap 'rmmod dm_barrier 2>/dev/null; modprobe dm-barrier 2>/dev/null || true' EXIT

# run NAME: a mapping over the AHCI disk under dmb-syncload, traced and
# checked; the checker's output is $WORK/NAME.trace.check, its exit status
# RUN_RC.
syncload() { "$B/tools/dmb-syncload" "$@" >"$WORK/load.out" 2>&1; }
run() {
	local name=$1 out=$WORK/$1.trace
	make_barrier "$name" "$DISK_AHCI"
	ord_tracefs_run "$out" "$name" "$DISK_AHCI" syncload -n "$N" --map "$out.map" "/dev/mapper/$name" ||
		fail "$name: dmb-syncload failed: $(cat "$WORK/load.out")"
	cp "$WORK/load.out" "$WORK/$name.load"
	log "$name: $(cat "$WORK/$name.load"); status $(dmsetup status "$name")"
	dmsetup remove "$name"
	RUN_RC=0
	"$T/dmb-ordercheck" --durability --min-bios $((N * 2)) --map "$out.map" "$out" \
		>"$out.check" 2>&1 || RUN_RC=$?
	sed 's/^/  /' "$out.check"
}
# durable_violations NAME: the checker's count for the durable rule.
durable_violations() {
	sed -n 's/^violations: .* durable \([0-9]*\) .*/\1/p' "$WORK/$1.trace.check"
}
clean_run() {
	run "$1"
	[ "$RUN_RC" = 0 ] || {
		ord_keep "$WORK/$1.trace"
		fail "$1: barrier contract violated: durable $(durable_violations "$1") (dmb-ordercheck exit $RUN_RC)"
	}
	log "ok: $1: no violation"
}
# windows MASK: widen the points in MASK (1 gate, 2 snapshot), each by its width.
windows() {
	echo "$GATE_US,$SNAP_US,0,0" >$P/window_us
	echo "$1" >$P/window_points
}

modprobe dm-barrier
# A module with windows of its own is a mutant under test (check-mutants).
if [ -e $P/window_us ]; then
	log "the module loaded has race windows: a test build (DMB_KO), run with them"
	windows 3
	clean_run dwin
	exit 0
fi

# 1. the module as built
clean_run dplain

# 2. the windows build, windows widened
use_module "$(variant_ko windows)"
[ -e $P/window_us ] || fail "the windows variant has no window_us parameter"
windows 3
clean_run dwin

# 3. negative control: N1 put back, the same windows
use_module "$(variant_ko windows-n1)"
windows 3
run dn1
v=$(durable_violations dn1)
log "control: N1 put back: dmb-ordercheck exit $RUN_RC, durable violations ${v:-none}"
[ "$RUN_RC" = 1 ] && [ "${v:-0}" -ge 1 ] ||
	fail "negative control: with N1 put back the checker found no durable violation (exit $RUN_RC)"
