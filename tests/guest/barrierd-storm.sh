#!/bin/bash
# barrierd under event storms and on a marginal disk (issue 14, item 7),
# each cost counted in barrierd's own ioctls (strace -p):
#  1. a storm: 60 dm devices that are not barrier mappings made, then two
#     rounds of change uevents on every dm device.  barrierd rescans (a
#     DM_LIST_DEVICES and a table read per dm device) at most twice a
#     second while events come, not once per event: its DM_LIST_DEVICES
#     count must be under a quarter of the uevents it got and under
#     2 per second of the storm (+ 3).  And it still adopts a barrier
#     mapping made at the end of the storm.
#  2. 40 reads of a counter property at once: at most one status ioctl per
#     250 ms they take and one per tick.
#  3. a disk whose flush failed (state failed: its cache turned off) is
#     asked about its cache (SG_IO) after 1, 2, 4, 8 ... poll intervals,
#     not at every one: at most 6 in 24 s with PollIntervalSec=1, where
#     asking at every tick makes 20 or more, and at least 2.
# Each count has a floor too: a trace that saw nothing passes a ceiling.
# Negative control: DMB_BARRIERD pointing at the barrierd before this
# change (which rescanned per event, read the status per property read and
# asked a failed disk at every tick) fails all three (DMB_STORM_PARTS="2 3"
# and "3" run the later parts alone).
# vm: ide ahci blkdebug=ide:20+6
# timeout: 420
# env: DMB_STORM_PARTS
source "$PROJECT/tests/vm/lib.sh"
source "$PROJECT/tests/guest/barrierd.lib"

command -v strace >/dev/null || fail "strace is not installed (scripts/deps)"
modprobe dm-barrier
bd_bus
bd_udev
printf '[Daemon]\nPollIntervalSec=1\nHoldOnFlushErrorMSec=10000\nFallback=drain\n' >"$WORK/barrierd.conf"
mkdir -p "$WORK/conf.d"
bd_start -c "$WORK/barrierd.conf" -C "$WORK/conf.d" --state-dir "$WORK/run"

# trace_start NAME / trace_stop: barrierd's ioctls into $WORK/NAME.strace.
trace_start() {
	TRACE=$WORK/$1.strace
	strace -qq -f -e trace=ioctl -e signal=none -o "$TRACE" -p "$BD_PID" 2>"$WORK/strace.err" &
	TRACE_PID=$!
	wait_until 10 'awk "/^TracerPid:/ { exit \$2 == 0 }" /proc/$BD_PID/status' ||
		fail "strace did not attach: $(cat "$WORK/strace.err")"
}
trace_stop() {
	kill -INT "$TRACE_PID" 2>/dev/null
	wait "$TRACE_PID" 2>/dev/null || true
}
count() { grep -c "$1" "$TRACE" || true; }

PARTS=" ${DMB_STORM_PARTS:-1 2 3} "
part() { [[ $PARTS == *" $1 "* ]]; }

# ---------------------------------------------------------------- 1. storm
if part 1; then
udevadm monitor --udev --subsystem-match=block >"$WORK/uevents" 2>/dev/null &
MON_PID=$!
sleep 0.5
trace_start storm
t0=$(date +%s%N)
for i in $(seq 60); do
	dmsetup create "z$i" --table "0 8 zero" || fail "cannot make z$i"
done
for round in 1 2; do
	udevadm trigger --action=change --subsystem-match=block --sysname-match='dm-*'
done
udevadm settle -t 60
bd_create late "$DISK_AHCI"
sleep 2
t1=$(date +%s%N)
trace_stop
kill "$MON_PID" 2>/dev/null; wait "$MON_PID" 2>/dev/null || true
events=$(grep -c '^UDEV ' "$WORK/uevents" || true)
lists=$(count DM_LIST_DEVICES)
secs=$(((t1 - t0) / 1000000000 + 1))
log "storm: $events uevents over $secs s; barrierd: $lists DM_LIST_DEVICES," \
	"$(count DM_TABLE_STATUS) DM_TABLE_STATUS"
[ "$events" -ge 150 ] || fail "the storm made only $events uevents"
[ $((lists * 4)) -lt "$events" ] ||
	fail "storm: $lists rescans for $events uevents (one per event is what coalescing must prevent)"
[ "$lists" -le $((2 * secs + 3)) ] || fail "storm: $lists rescans in $secs s, over 2 a second"
# Floors: a trace that saw nothing passes every ceiling above.
[ "$lists" -ge 1 ] || fail "storm: no rescan at all in $secs s (barrierd ignored the storm, or strace saw nothing)"
expect_eq "the mapping made at the end of the storm is adopted" "$(bd_prop late Name)" late
for i in $(seq 60); do dmsetup remove "z$i"; done
fi

# ---------------------------------------------------------------- 2. property reads
if part 2; then
part 1 || bd_create late "$DISK_AHCI"
p=$(bd_path late)
trace_start props
t0=$(date +%s%N)
readers=()
for i in $(seq 40); do
	busctl --system get-property "$BD_BUS" "$p" "$BD_DEV" Barriers >/dev/null &
	readers+=($!)
done
wait "${readers[@]}" || fail "a property read failed"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
trace_stop
st=$(count DM_TABLE_STATUS)
# What the cache allows in that time: one status per 250 ms of reads, one
# per tick (PollIntervalSec=1), and the edges of both.  Not a fixed number:
# on a loaded machine 40 busctl processes take seconds to start.
limit=$(( (ms + 249) / 250 + (ms + 999) / 1000 + 2 ))
log "40 reads of Barriers over $ms ms: $st DM_TABLE_STATUS (limit $limit)"
[ "$limit" -lt 40 ] || fail "the 40 reads took $ms ms: too slow to tell a cache from none"
[ "$st" -le "$limit" ] || fail "40 property reads cost $st status ioctls in $ms ms (limit $limit)"
# Floor: the tick reads the status once a second, so over 2 s of reads
# the trace must hold one.
[ "$ms" -lt 2000 ] || [ "$st" -ge 1 ] ||
	fail "40 property reads over $ms ms: no status ioctl at all (no tick, or strace saw nothing)"
fi

# ---------------------------------------------------------------- 3. a marginal disk
part 3 || { bd_stop; exit 0; }
bd_create fail "$DISK_IDE"
for i in $(seq 200); do
	dd if=/dev/urandom of=/dev/mapper/fail bs=4k count=1 seek="$i" oflag=direct conv=fsync status=none ||
		fail "write $i failed"
	[ "$(bd_prop fail State)" = failed ] && break
done
expect_eq "state after the failed flush" "$(bd_prop fail State)" failed
expect_eq "the drive's cache" "$(bd_prop fail DriveWriteCache)" off
trace_start marginal
sleep 24
trace_stop
sg=$(count SG_IO)
log "state failed, 24 s at PollIntervalSec=1: $sg SG_IO"
[ "$sg" -le 6 ] || fail "a failed disk was asked $sg times in 24 s"
# Floor: after 1, 2, 4 and 8 s it is asked again (recovery is noticed).
[ "$sg" -ge 2 ] || fail "a failed disk was asked only $sg times in 24 s: barrierd stopped asking"
expect_eq "still failed, drain" "$(bd_prop fail State) $(bd_prop fail Mode)" "failed drain"

bd_stop
