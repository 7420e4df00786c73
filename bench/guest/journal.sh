#!/bin/bash
# Benchmark parts 3 and 4, the journal pipeline: dmb-journal commits
# transactions of K=8 blocks plus a commit block (a) the waiting way
# (write K, wait, fdatasync, commit, fdatasync) and (b) the barrier way
# (K writes, then the commit as an O_DIRECT RWF_DSYNC write, queued without
# waiting, 4 transactions in flight), on a disk given 1 ms write and flush
# latency by dm-delay under the mapping (read 0 ms, write 1 ms; HZ=250
# rounds that up to one tick, 1 to 4 ms).  Baseline: (a) over dm-linear.
# (b) over passthrough (no ordering: commits may overtake their blocks) is
# the unsafe upper bound, not a config to use.  Per barrier mode, the
# target's counters give device commands per barrier (part 4).
#
# Ordering: one (b) run per durable mode, without dm-delay (dmb-ordercheck
# follows one dm level over a request-based disk), is traced (the block
# tracepoints, through tracefs) and checked by dmb-ordercheck --durability
# with dmb-journal's --map; the same run over passthrough is the negative
# control (the checker must find violations).  dmb-drainstat gives drain-time percentiles from the same
# traces.  AHCI has no FUA (mode fua acts as flush); virtio-scsi has FUA.
#
# On null_blk (disk "nullb": memory-backed, a volatile write cache, FUA)
# the latency is the disk's own instead of dm-delay's: completions after
# 1 ms from a high-resolution timer (irqmode=2, completion_nsec), flushes
# and FUA writes included, so no jiffy rounds it.  The traced runs use
# the same disk.  Disks: DMB_BENCH_JOURNAL_DISKS (default "nullb ahci scsi").
# vm: ide ahci scsi
# timeout: 1200
source "$PROJECT/tests/vm/lib.sh"
source "$PROJECT/bench/guest/lib.sh"
source "$PROJECT/tests/tools/order-lib.sh"

load_barrier
modprobe dm-delay
K=8
SECS=${DMB_BENCH_JOURNAL_SECONDS:-5}
TRACE_TXN=${DMB_BENCH_TRACE_TXN:-300}
# config = WAY/TARGET: a-wait or b-barrier over dm-linear or a barrier mode
CONFIGS=(a-wait/dm-linear a-wait/flush b-barrier/flush b-barrier/fua b-barrier/drain b-barrier/passthrough)

# journal_disk DEV: the runs over DEV with 1 ms writes and flushes: through
# dm-delay, or null_blk's own latency (BDISK nullb).
journal_disk() {
	local dev=$1 rep i config way tgt out cps c goal lower=/dev/mapper/jd
	if [ "$BDISK" = nullb ]; then
		lower=$dev
	else
		dmsetup create jd --table "0 $(sectors "$dev") delay $dev 0 0 $dev 0 1"
		udev_nodes
	fi
	# Allocate the journal area of the image once.
	dd if=/dev/zero of="$lower" bs=1M count=64 oflag=direct status=none
	for rep in $(seq "$REPS"); do
		for i in "${!CONFIGS[@]}"; do
			config=${CONFIGS[$(((i + rep - 1) % ${#CONFIGS[@]}))]}
			way=${config%%/*} tgt=${config#*/}
			mapping jm "${tgt/dm-linear/linear}" "$lower"
			[ "$tgt" = dm-linear ] || dmsetup message jm 0 reset_stats
			out=$("$BJ/dmb-journal" --mode "${way#*-}" -k $K -d 4 -t "$SECS" -b 16384 /dev/mapper/jm) ||
				fail "dmb-journal $config failed"
			read -r _ _ _ _ _ c _ _ _ cps <<<"$out"
			goal=""
			case "$config" in
			a-wait/dm-linear) row journal "$config" "commits/s" "$rep" "$cps" ;;
			b-barrier/passthrough) row journal "$config (unordered)" "commits/s" "$rep" "$cps" a-wait/dm-linear ;;
			b-barrier/*) row journal "$config" "commits/s" "$rep" "$cps" a-wait/dm-linear "ratio>=1.5" ;;
			*) row journal "$config" "commits/s" "$rep" "$cps" a-wait/dm-linear ;;
			esac
			case "$config" in
			b-barrier/flush | b-barrier/fua | b-barrier/drain) REP_NO=$rep cost_rows "$config" "$c" ;;
			esac
			dmsetup remove jm
		done
	done
	[ "$BDISK" = nullb ] || dmsetup remove jd
}

# cost_rows CONFIG COMMITS: part 4 from the counters of a (b) run, where
# every barrier is one data write (the commit block, REQ_FUA).
cost_rows() {
	local config=$1 commits=$2 c barriers flushes fuaw shared maxdrain mode lim_f lim_c fua
	read -r barriers flushes fuaw shared maxdrain <<<"$(counters jm)"
	[ "$barriers" -gt 0 ] || fail "$config: no barriers counted"
	mode=${config#*/} fua=$(bstatus jm fua)
	# The limits per barrier write (docs/dm-barrier.rst, Modes):
	# flush 2 flushes + 1 write; fua 1 flush + 1 FUA write (as flush without FUA).
	case "$mode/$fua" in
	fua/fua) lim_f=1 lim_c=2 ;;
	drain/*) lim_f=0 lim_c=1 ;;
	*) lim_f=2 lim_c=3 ;;
	esac
	c="journal $config ($fua)"
	row cost "$c" "barriers/commit" "$REP_NO" "$(ratio "$barriers" "$commits")"
	row cost "$c" "flushes/barrier" "$REP_NO" "$(ratio "$flushes" "$barriers")" "" "value<=$lim_f"
	row cost "$c" "fua writes/barrier" "$REP_NO" "$(ratio "$fuaw" "$barriers")"
	# commands = flushes + the barrier's data write (FUA or not)
	row cost "$c" "commands/barrier" "$REP_NO" "$(ratio $((flushes + barriers)) "$barriers")" "" "value<=$lim_c"
	row cost "$c" "max drain us" "$REP_NO" "$maxdrain"
}

# trace_run DEV MODE: one traced (b) run over a barrier mapping in MODE
# straight on DEV; checks it (or, for passthrough, expects violations) and
# records drain percentiles.
trace_run() {
	local dev=$1 mode=$2 out=$WORK/jt-$BDISK-$2.trace ds
	make_barrier jt "$dev" "mode:$mode"
	ORD_BIOS=$((TRACE_TXN * (K + 1)))
	ord_tracefs_run "$out" jt "$dev" \
		"$BJ/dmb-journal" --mode barrier -k $K -d 4 -n "$TRACE_TXN" --map "$out.map" /dev/mapper/jt ||
		fail "dmb-journal (traced, $mode) failed"
	if [ "$mode" = passthrough ]; then
		ord_expect_violations "$out" 5 --durability
		row verify "$mode (negative control)" "violations found" 1 \
			"$(sed -n 's/.*control: \([0-9]*\) violations found.*/\1/p' "$out.check")"
		dmsetup remove jt
		return
	fi
	ord_check "$out" --durability
	row verify "journal b-barrier/$mode" "violations" 1 0 "" "value<=0"
	# The verifier's clock counts events: time a second run on a clock in ns.
	ORD_CLOCK=mono ord_tracefs_run "$out.mono" jt "$dev" \
		"$BJ/dmb-journal" --mode barrier -k $K -d 4 -n "$TRACE_TXN" /dev/mapper/jt ||
		fail "dmb-journal (timed, $mode) failed"
	ds=$("$BJ/dmb-drainstat" "$out.mono") || fail "dmb-drainstat: $ds"
	log "drainstat $mode: $ds"
	read -r _ _ _ _ _ p50 p90 p99 pmax _ t50 t90 t99 tmax <<<"$ds"
	c="journal b-barrier/$mode ($(bstatus jt fua); traced; no delay)"
	row cost "$c" "drain us p50" 1 "$p50"
	row cost "$c" "drain us p90" 1 "$p90"
	row cost "$c" "drain us p99" 1 "$p99"
	row cost "$c" "drain us max" 1 "$pmax"
	row cost "$c" "barrier us p50" 1 "$t50"
	row cost "$c" "barrier us p99" 1 "$t99"
	dmsetup remove jt
}

mount -t debugfs none /sys/kernel/debug 2>/dev/null || true
for BDISK in ${DMB_BENCH_JOURNAL_DISKS:-${DMB_BENCH_DISKS:-nullb ahci scsi}}; do
	if [ "$BDISK" = nullb ]; then
		nullb_bench dmbnull1 128 64 1000000
		dev=$DISK_NULLB
	else
		dev=$(bench_disk "$BDISK") || exit 1
	fi
	journal_disk "$dev"
	trace_run "$dev" flush
	trace_run "$dev" fua
	trace_run "$dev" passthrough
	[ "$BDISK" = nullb ] && nullb_remove dmbnull1
done
