#!/bin/bash
# Benchmark part 5, barrierd: how long from a write-cache change to the
# mapping's mode switched, (i) out of band (hdparm -W0, no I/O: only
# barrierd's PollIntervalSec timer can notice; baseline: the poll interval)
# and (ii) seen by the target (hdparm -W0 then one barrier write: the
# target sees the flag change and raises a dm event); both timed to the
# PropertiesChanged signal announcing Mode "drain", from busctl monitor's
# timestamps (nothing polls the target meanwhile: a status call would make
# the target notice the change).  Then, idle with one mapping: VmRSS and
# context switches per second (wakeups).  Plain build, default config but
# the state directory.  The approach of tests/guest/barrierd-cache.sh.
# vm: ide ahci scsi
# timeout: 600
source "$PROJECT/tests/vm/lib.sh"
BD_PLAIN=1
source "$PROJECT/tests/guest/barrierd.lib"
source "$PROJECT/bench/guest/lib.sh"

BDISK=ide
POLL_MS=1000
mkdir -p "$WORK/conf.d"
printf '[Daemon]\nPollIntervalSec=%s\n' $((POLL_MS / 1000)) >"$WORK/barrierd.conf"
ARGS=(-c "$WORK/barrierd.conf" -C "$WORK/conf.d" --state-dir "$WORK/run" --log-level=info)

bd_bus
bd_udev
bd_start "${ARGS[@]}"
bd_create wc "$DISK_IDE"
expect_eq "start: Mode" "$(bd_prop wc Mode)" flush
bd_monitor

# drain_signals: how many PropertiesChanged with Mode drain so far.
drain_signals() { bd_mode_changes wc | grep -cx drain || true; }

# time_to_drain START_US N: wait for the N-th Mode=drain signal; print its
# delay after START_US (realtime, microseconds) in ms.
time_to_drain() {
	local start=$1 n=$2 p ts
	p=$(bd_path wc)
	wait_until 10 "[ \$(drain_signals) -ge $n ]" || fail "no Mode drain announced within 10 s"
	ts=$(jq -r "select(.type == \"signal\" and .member == \"PropertiesChanged\" and .path == \"$p\"
		and .payload.data[1].Mode.data == \"drain\") | .[\"timestamp-realtime\"]" "$WORK/monitor.json" |
		sed -n "${n}p")
	[ -n "$ts" ] && [ "$ts" != null ] || fail "busctl monitor gives no timestamp: $(tail -n 1 "$WORK/monitor.json")"
	awk -v a="$ts" -v b="$start" 'BEGIN { printf "%.1f\n", (a - b) / 1000 }'
}

# back_to_flush: cache on, wait until barrierd has probed and switched back.
back_to_flush() {
	hdparm -W1 "$DISK_IDE" >/dev/null
	wait_until 10 'test "$(bd_prop wc State)" = healthy' || fail "not healthy after -W1"
	expect_eq "after -W1: Mode" "$(bd_prop wc Mode)" flush
	sleep 1
}

n=0
for rep in $(seq "$REPS"); do
	# (i) out of band
	start=$(($(date +%s%N) / 1000))
	hdparm -W0 "$DISK_IDE" >/dev/null
	n=$((n + 1))
	row barrierd "hdparm -W0 out of band" "ms to mode drain" "$rep" "$(time_to_drain "$start" $n)" \
		"poll interval" "ratio<=1.0"
	row barrierd "poll interval" "ms to mode drain" "$rep" "$POLL_MS"
	back_to_flush
	# (ii) seen by the target: one barrier write right after the change
	start=$(($(date +%s%N) / 1000))
	hdparm -W0 "$DISK_IDE" >/dev/null
	dsync_write /dev/mapper/wc 100 || fail "barrier write failed"
	n=$((n + 1))
	row barrierd "hdparm -W0 + a barrier write" "ms to mode drain" "$rep" "$(time_to_drain "$start" $n)" \
		"poll interval"
	back_to_flush
done

# Idle, one mapping: resident memory and wakeups.
sleep 2
for rep in $(seq "$REPS"); do
	s0=$(bd_switches)
	sleep 5
	s1=$(bd_switches)
	row barrierd "idle 1 mapping" "wakeups/s" "$rep" "$(ratio $((s1 - s0)) 5)" "" "value<=2"
	row barrierd "idle 1 mapping" "VmRSS kB" "$rep" "$(bd_rss_kb)"
done
busctl --system call $BD_BUS $BD_PATH $BD_MGR RemoveDevice 'sa{sv}' wc 0 >/dev/null
bd_stop
dmsetup remove wc 2>/dev/null || true
