# shellcheck shell=bash
# Helpers for the benchmark's guest scripts (bench/guest/*.sh), sourced
# after tests/vm/lib.sh.  Every measurement is one CSV row in
# $DMB_RESULTS/$TEST_NAME.csv:
#
#   part,disk,config,metric,rep,value,baseline,goal
#
# baseline names the config of the same part, disk and metric this one is
# divided by (bench/report takes medians over the reps first); goal is
# "ratio>=X", "value<=X", ... or empty.  bench/report turns the rows into
# the tables.

BENCH_CSV=$DMB_RESULTS/$TEST_NAME.csv
BJ=$B/bench/bin
REPS=${DMB_BENCH_REPS:-3}
# Short fio runs: absolute numbers under TCG mean little, ratios do.
FIO_RUNTIME=${DMB_BENCH_FIO_RUNTIME:-6}
FIO_RAMP=${DMB_BENCH_FIO_RAMP:-2}
: >"$BENCH_CSV"

# row PART CONFIG METRIC REP VALUE [BASELINE [GOAL]]   (uses $BDISK)
row() {
	printf '%s,%s,%s,%s,%s,%s,%s,%s\n' "$1" "${BDISK:-}" "$2" "$3" "$4" "$5" "${6:-}" "${7:-}" >>"$BENCH_CSV"
	log "row: $1 ${BDISK:-} $2 $3 rep $4 = $5"
}

# mapping NAME CONFIG DEV: CONFIG is linear, or a barrier mode.
# Config flush-worker: mode flush with dm_barrier.direct=N, every barrier
# through the target's worker (the direct way's baseline).
mapping() {
	local name=$1 config=$2 dev=$3 p=/sys/module/dm_barrier/parameters/direct
	if [ -w $p ]; then
		if [ "$config" = flush-worker ]; then echo N; else echo Y; fi >$p
	fi
	case "$config" in
	linear) dmsetup create "$name" --table "0 $(sectors "$dev") linear $dev 0" ;;
	flush-worker) make_barrier "$name" "$dev" mode:flush ;;
	*) make_barrier "$name" "$dev" "mode:$config" ;;
	esac
	udev_nodes
}

# Without udevd dmsetup leaves /dev/mapper to us.
udev_nodes() { dmsetup mknodes >/dev/null 2>&1 || true; }

# fio_json OUT ARGS...: one fio run, JSON into OUT; fails the script on error.
fio_json() {
	local out=$1
	shift
	fio --output-format=json --output="$out" "$@" >/dev/null 2>"$out.err" ||
		fail "fio $* failed: $(tail -n 5 "$out.err")"
}

# jq over a fio JSON: iops of reads+writes, and the count of fsyncs.
fio_iops() { jq '[.jobs[] | .read.iops + .write.iops] | add' "$1"; }
fio_fsyncs() { jq '[.jobs[] | .sync.total_ios] | add' "$1"; }
fio_writes() { jq '[.jobs[] | .write.total_ios] | add' "$1"; }

# ratio A B: A / B with 3 decimals (awk; 0 when B is 0).
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print 0; else printf "%.3f\n", a / b }'; }

# counters NAME: "barriers flushes fua_writes shared max_drain_us" of a
# barrier mapping (zeros for anything else).
counters() {
	local f out=""
	if [ "$(dmsetup table "$1" | awk '{print $3}')" != barrier ]; then
		echo "0 0 0 0 0"
		return 0
	fi
	for f in barriers flushes fua_writes shared max_drain_us; do
		out="$out $(bstatus "$1" "$f")"
	done
	echo "${out# }"
}

# bench_disk WORD: the device of ahci, scsi, ide (the guest's disks) or
# host (bench/run --disk on a real machine).
bench_disk() {
	local v="DISK_${1^^}"
	[ -b "${!v:-}" ] || fail "no disk for '$1' (\$$v)"
	echo "${!v}"
}

# load_barrier: the installed module (the guest has it), else the build's.
load_barrier() {
	modprobe dm-barrier 2>/dev/null || grep -q '^dm_barrier ' /proc/modules ||
		insmod "$PROJECT/dm-target/dm-barrier.ko" || fail "cannot load dm-barrier"
}

# nullb_make NAME ATTR=VALUE...: a null_blk disk /dev/NAME made through
# configfs (in 6.1 the module parameters apply to every device alike;
# configfs sets each one's own, e.g. completion_nsec).  Sets DISK_NULLB.
nullb_make() {
	local name=$1 kv d=/sys/kernel/config/nullb/$1
	shift
	grep -q '^null_blk ' /proc/modules || modprobe null_blk nr_devices=0 ||
		fail "cannot load null_blk"
	# configfs is a module in Debian's kernel: null_blk loaded it just now.
	grep -q ' /sys/kernel/config configfs ' /proc/mounts ||
		mount -t configfs configfs /sys/kernel/config || fail "cannot mount configfs"
	[ -d /sys/kernel/config/nullb ] || fail "no null_blk configfs (/sys/kernel/config/nullb)"
	mkdir "$d" || fail "cannot make null_blk $name"
	for kv in "$@"; do
		echo "${kv#*=}" >"$d/${kv%%=*}" || fail "null_blk $name: cannot set $kv"
	done
	echo 1 >"$d/power" || fail "null_blk $name: cannot power it on"
	wait_until 10 "[ -b /dev/$name ]" || fail "no /dev/$name"
	DISK_NULLB=/dev/$name
}

nullb_remove() {
	echo 0 >"/sys/kernel/config/nullb/$1/power"
	rmdir "/sys/kernel/config/nullb/$1"
}

# The bench's null_blk: memory-backed (reads return what was written), a
# volatile write cache of CACHE MiB (so a flush moves data and FUA
# exists), completions from a timer after NSEC ns (irqmode=2), one
# submission queue per vCPU.  nullb_bench NAME SIZE_MB CACHE_MB NSEC
nullb_bench() {
	nullb_make "$1" size="$2" memory_backed=1 cache_size="$3" irqmode=2 \
		completion_nsec="$4" hw_queue_depth=64 submit_queues="$(nproc)"
}
