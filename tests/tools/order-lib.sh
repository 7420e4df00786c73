# shellcheck shell=bash
# Guest helpers for the ordering tests (tests/guest/order-*.sh,
# long-order*.sh): trace a mapping and its disk while dmb-orderload runs,
# then check the trace with dmb-ordercheck.  Source after tests/vm/lib.sh.

T=$B/tools
ORD_BIOS=${ORD_BIOS:-10000}

# ord_stop_blktrace PID OUT: blktrace ends on SIGINT, writing its totals.
ord_stop_blktrace() {
	local bt=$1 out=$2
	kill -INT "$bt"
	# kill -0 succeeds on a zombie: look at the state instead.
	if ! wait_until 60 "case \$(ps -o stat= -p $bt) in ''|Z*) true ;; *) false ;; esac"; then
		ps -o pid,stat,wchan:30,cmd -p "$bt" || true
		kill -KILL "$bt"
		fail "blktrace did not stop on SIGINT: $(cat "$out")"
	fi
	wait "$bt" || fail "blktrace failed: $(cat "$out")"
}

# ord_tracing DEV...: blktrace has set up tracing of every DEV (its output
# files stay empty until it exits, so they cannot tell).
ord_tracing() {
	local d
	for d in "$@"; do
		[ "$(cat "/sys/block/$d/trace/enable" 2>/dev/null)" = 1 ] || return 1
	done
}

# ord_kdev DEV: the kernel's dev_t of /dev/DEV, as tracepoint filters
# compare it (MAJOR << 20 | MINOR).
ord_kdev() {
	local mm
	mm=$(cat "/sys/class/block/$1/dev") || fail "no /sys/class/block/$1"
	echo $(((${mm%%:*} << 20) | ${mm#*:}))
}

ORD_EVENTS="block_bio_queue block_bio_remap block_rq_issue block_rq_requeue block_rq_complete block_bio_complete"

# ord_trace_tracefs NAME DISK OUT [dmb-orderload args...]: as
# ord_trace_blktrace, from the block layer's tracepoints (the same ones
# blktrace hooks) in a tracefs instance of our own, filtered to the two
# devices; its "trace" text goes to OUT (dmb-ordercheck reads either form).
# The "counter" clock orders events across CPUs as they happened: tracefs
# prints the ns clocks in microseconds, and with "global" a barrier's Q
# and the writes queued on the other CPU shared one microsecond, so the
# checker saw an order that did not happen (order-scsi, 2 of 1004
# barriers).  Fails the test if the ring buffer lost or overwrote events.
ord_trace_tracefs() {
	local name=$1 disk=$2 out=$3
	shift 3
	ord_tracefs_run "$out" "$name" "$disk" "$T/dmb-orderload" --map "$out.map" "$@" "/dev/mapper/$name" ||
		fail "dmb-orderload failed on $name"
}

# ord_tracefs_run OUT NAME DISK CMD...: CMD's status, with mapping NAME and
# DISK traced while it runs (ord_tracefs_start, ORD_CLOCK included); the
# trace goes to OUT whether CMD failed or not.
ord_tracefs_run() {
	local out=$1 name=$2 disk=$3 rc=0
	shift 3
	ord_tracefs_start "$(dm_kname "$name")" "$(disk_name "$disk")"
	"$@" || rc=$?
	ord_tracefs_stop "$out"
	return "$rc"
}

# ord_tracefs_start DEV...: trace the block devices DEV (kernel names) in
# a tracefs instance of our own, sized for $ORD_BIOS bios, with the
# "counter" clock (above), or ORD_CLOCK (e.g. "mono" to time the bios).
ORD_TRACEFS=/sys/kernel/tracing/instances/dmb-order
ord_tracefs_start() {
	local tr=/sys/kernel/tracing inst=$ORD_TRACEFS e d filt=""
	[ -d "$tr/instances" ] || mount -t tracefs tracefs "$tr" || fail "cannot mount tracefs"
	[ ! -d "$inst" ] || rmdir "$inst" || fail "a tracefs instance $inst is left over and busy"
	mkdir "$inst" || fail "cannot make the tracefs instance $inst"
	echo "${ORD_CLOCK:-counter}" >"$inst/trace_clock" || fail "tracefs: no ${ORD_CLOCK:-counter} clock"
	# About 1 KiB per bio on one CPU holds every event of it.
	echo $((ORD_BIOS + 8192)) >"$inst/buffer_size_kb" || fail "cannot size the trace buffer"
	echo 0 >"$inst/options/overwrite"
	for d in "$@"; do
		filt="${filt:+$filt || }dev == $(ord_kdev "$d")"
	done
	for e in $ORD_EVENTS; do
		echo "$filt" >"$inst/events/block/$e/filter" || fail "tracefs: cannot filter $e"
		echo 1 >"$inst/events/block/$e/enable" || fail "tracefs: no event block/$e"
	done
	echo 1 >"$inst/tracing_on"
}

# ord_tracefs_stop OUT: stop tracing, the trace text to OUT; fails the
# test if the ring buffer lost or overwrote events.
ord_tracefs_stop() {
	local inst=$ORD_TRACEFS e lost
	echo 0 >"$inst/tracing_on"
	cat "$inst/trace" >"$1"
	lost=$(awk '/^(overrun|dropped events):/ { n += $NF } END { print n + 0 }' "$inst"/per_cpu/cpu*/stats)
	log "  tracefs: $(grep -c ': block_' "$1") events, $lost lost"
	for e in $ORD_EVENTS; do
		echo 0 >"$inst/events/block/$e/enable"
	done
	rmdir "$inst"
	[ "$lost" = 0 ] || fail "tracefs lost $lost events; the trace $1 cannot be checked"
}

# ord_trace NAME DISK OUT [dmb-orderload args...]: trace NAME and DISK
# while dmb-orderload writes to NAME.  ORD_TRACER=tracefs (the default,
# every kernel) or blktrace (bookworm's blktrace; not 7.x).
ord_trace() {
	case ${ORD_TRACER:-tracefs} in
	tracefs) ord_trace_tracefs "$@" ;;
	blktrace) ord_trace_blktrace "$@" ;;
	*) fail "ORD_TRACER=$ORD_TRACER: tracefs or blktrace" ;;
	esac
}

# ord_trace_blktrace NAME DISK OUT [dmb-orderload args...]: one blktrace
# run over the mapping NAME and DISK while dmb-orderload writes to NAME;
# blkparse's default output goes to OUT.  Fails the test if blktrace lost
# events.  Not on 7.x: bookworm's blktrace sets up the v1 format, and 7.x
# drops v1 events whose action does not fit it (every FUA write).
ord_trace_blktrace() {
	local name=$1 disk=$2 out=$3 dm dk dir bt
	shift 3
	dm=$(dm_kname "$name")
	dk=$(disk_name "$disk")
	dir=$WORK/bt-$name
	rm -rf "$dir"
	mkdir -p "$dir"
	# Per-CPU buffers of 32 MiB: TCG is slow to drain them.
	blktrace -d "/dev/$dm" -d "/dev/$dk" -D "$dir" -b 1024 -n 32 >"$dir/blktrace.out" 2>&1 &
	bt=$!
	# Set up (BLKTRACESETUP) comes just before BLKTRACESTART; the second
	# after it covers the start.  I/O completing before the first traced
	# Q is ignored by the checker, none of the load is lost.
	wait_until 60 "ord_tracing $dm $dk" ||
		{ ord_stop_blktrace "$bt" "$dir/blktrace.out"; fail "blktrace did not start tracing"; }
	sleep 1
	"$T/dmb-orderload" --map "$out.map" "$@" "/dev/mapper/$name" ||
		{ ord_stop_blktrace "$bt" "$dir/blktrace.out"; fail "dmb-orderload failed on $name"; }
	ord_stop_blktrace "$bt" "$dir/blktrace.out"
	grep 'Total:' "$dir/blktrace.out" | sed 's/^/  blktrace /'
	if grep -E 'dropped [1-9]' "$dir/blktrace.out"; then
		fail "blktrace dropped events; the trace of $name cannot be checked"
	fi
	blkparse -D "$dir" -i "$dm" -i "$dk" -o "$out" >"$dir/blkparse.out" 2>&1 ||
		fail "blkparse failed: $(tail -n 3 "$dir/blkparse.out")"
	rm -f "$dir"/*.blktrace.*
}

# ord_fua_dispatches OUT: FUA writes dispatched to a disk in trace OUT
# (blkparse's " D WFS ", tracefs's "block_rq_issue: 8,32 WFS ").
ord_fua_dispatches() {
	grep -cE ' D +WFS |block_rq_issue: [0-9]+,[0-9]+ WFS ' "$1" || true
}

# ord_check OUT [dmb-ordercheck args...]: the trace must hold no violation.
ord_check() {
	local out=$1 rc=0
	shift
	"$T/dmb-ordercheck" --min-bios "$ORD_BIOS" --map "$out.map" "$@" "$out" \
		>"$out.check" 2>&1 || rc=$?
	cat "$out.check"
	case $rc in
	0) ;;
	1) ord_keep "$out"; fail "$out: barrier contract violated" ;;
	*) ord_show_bad_line "$out"; ord_keep "$out"; fail "$out: trace unusable (dmb-ordercheck exit $rc)" ;;
	esac
}

# ord_keep OUT: keep a trace the checker could not handle, for the host.
ord_keep() {
	gzip -c "$1" >"$DMB_RESULTS/$TEST_NAME-$(basename "$1").gz" &&
		cp "$1.map" "$DMB_RESULTS/$TEST_NAME-$(basename "$1").map" 2>/dev/null
	log "trace kept: $DMB_RESULTS/$TEST_NAME-$(basename "$1").gz"
}

# ord_show_bad_line OUT: the trace line dmb-ordercheck could not read.
ord_show_bad_line() {
	local n
	n=$(sed -n 's/.*line \([0-9]*\) is not.*/\1/p' "$1.check" | head -n 1)
	[ -n "$n" ] && sed -n "$((n > 2 ? n - 2 : 1)),$((n + 2))p" "$1" | sed 's/^/  trace: /'
	return 0
}

# ord_expect_violations OUT MIN [dmb-ordercheck args...]: negative control,
# the same checker must find at least MIN violations.
ord_expect_violations() {
	local out=$1 min=$2 rc=0
	shift 2
	"$T/dmb-ordercheck" --min-bios "$ORD_BIOS" --max-report 5 --min-violations "$min" "$@" "$out" \
		>"$out.check" 2>&1 || rc=$?
	cat "$out.check"
	[ "$rc" -le 2 ] || ord_keep "$out"
	[ "$rc" = 0 ] || fail "$out: negative control: the checker did not find $min violations (exit $rc)"
}

# ord_mode_run NAME DISK MODE [check args...]: a barrier mapping in MODE
# over DISK under ORD_BIOS bios; the trace must be clean.
ord_mode_run() {
	local name=$1 disk=$2 mode=$3 out
	shift 3
	out=$WORK/$name.trace
	make_barrier "$name" "$disk" "mode:$mode"
	log "$name: barrier mode $mode over $disk, $ORD_BIOS bios"
	ord_trace "$name" "$disk" "$out" -n "$ORD_BIOS" -q 32
	log "$name: status $(dmsetup status "$name")"
	"$T/dmb-orderload" --verify-map "$out.map" "/dev/mapper/$name" ||
		fail "$name: blocks read back do not hold what was written"
	ord_check "$out" "$@"
	dmsetup remove "$name"
}

# ord_negative NAME DISK TABLE-TARGET-ARGS MIN: a mapping without ordering
# (linear, or barrier passthrough); the checker must report >= MIN.
ord_negative() {
	local name=$1 disk=$2 target=$3 min=$4 out
	out=$WORK/$name.trace
	dmsetup create "$name" --table "0 $(sectors "$disk") $target"
	log "$name: negative control ($target), $ORD_BIOS bios"
	ord_trace "$name" "$disk" "$out" -n "$ORD_BIOS" -q 32
	ord_expect_violations "$out" "$min" --durability
	dmsetup remove "$name"
}

# ord_passthrough_control NAME DISK: the negative control of a test whose
# mapping NAME ran a load: the same mapping switched to passthrough, the
# same load on DISK; the checker must find violations.  Removes NAME.
ord_passthrough_control() {
	local name=$1 disk=$2 out=$WORK/$1-pass.trace
	dmsetup message "$name" 0 mode passthrough
	ord_trace "$name" "$disk" "$out" -n "$ORD_BIOS" -q 32 -e "$ORD_BIOS"
	ord_expect_violations "$out" 20
	dmsetup remove "$name"
}
