#!/bin/bash
# One disk hangs while another mapping's flush fails (issue 14, item 1).
#
# The hang is real: QEMU serves the AHCI disk at 4 requests a second
# (throttle=ahci:4) and fio keeps 24 writes in flight on a barrier mapping
# over it ("sick", made with plain dmsetup and adopted by barrierd), so an
# ATA command barrierd sends it (IDENTIFY, SET FEATURES: libata runs them
# only once the NCQ queue has drained) waits some 6 s, and a cache switch
# (two or three commands) twice that.  (Deeper, and SG_IO's own 15 s
# timeout fires: libata's error handling resets the port under the
# throttled requests and the disk stops answering altogether.)  A client asks
# barrierd to switch that disk's cache (SetWriteCache) every 2 s, another
# pings barrierd every 0.5 s, and meanwhile ext4 on the IDE mapping "fs"
# meets a failed flush (blkdebug: flushes 61-66 fail) with barriers held
# for 10 s.
# Passes when: the slowest Ping answers within 3 s; fs's failure is handled
# within its hold (cache off, drain, the held commit replayed, ext4 still
# read-write, e2fsck clean); barrierd gave up on the sick disk after 4 s
# (so the hang overlapped the run) and fio was still running at the end.
# Negative control: DMB_BARRIERD= a barrierd that asks drives in its event
# loop (main before issue 14, item 1) fails: its Pings wait behind the
# sick disk's commands (measured 16.6 s).
# vm: ide ahci blkdebug=ide:60+6 throttle=ahci:4
# timeout: 420
source "$PROJECT/tests/vm/lib.sh"
source "$PROJECT/tests/guest/barrierd.lib"

N=60
HOLD=10000
PING_MAX_MS=3000
mkdir -p "$WORK/conf.d"
printf '[Daemon]\nPollIntervalSec=1\nHoldOnFlushErrorMSec=%s\nFallback=drain\n' $HOLD >"$WORK/barrierd.conf"

modprobe dm-barrier
# Made before udevd runs: udev's probe of it would crawl at 2 reads a second.
make_barrier sick "$DISK_AHCI" fallback:drain hold_on_flush_error:$HOLD
DMESG_MARK=$(dmesg | wc -l)
bd_bus
bd_udev
bd_start -c "$WORK/barrierd.conf" -C "$WORK/conf.d" --state-dir "$WORK/run"
wait_until 20 'test -n "$(bd_path sick)"' || fail "barrierd did not adopt sick"
SICK=$(bd_path sick)

fio --name=queue --filename=/dev/mapper/sick --rw=randwrite --bs=4k --direct=1 \
	--ioengine=libaio --iodepth=24 --size=256M --time_based --runtime=600 \
	--output="$WORK/fio.out" >/dev/null 2>&1 &
FIO=$!
sleep 3
kill -0 $FIO || fail "fio did not start: $(cat "$WORK/fio.out")"

# Pokes at the sick disk: each one a SET FEATURES it will not answer soon.
(
	while :; do
		s=$(date +%s%N)
		out=$(busctl --system --timeout=60 call "$BD_BUS" "$SICK" "$BD_DEV" SetWriteCache 'ba{sv}' true 0 2>&1) || true
		echo "$(( ($(date +%s%N) - s) / 1000000 )) ms: ${out:-ok}"
		sleep 2
	done
) >"$WORK/pokes" 2>&1 &
POKER=$!
# Pings: how long the loop is away, as a client sees it.
(
	while :; do
		s=$(date +%s%N)
		bd_ping >/dev/null 2>&1 || echo "ping failed"
		echo $(( ($(date +%s%N) - s) / 1000000 ))
		sleep 0.5
	done
) >"$WORK/pings" 2>&1 &
PINGER=$!
sleep 6

bd_monitor
bd_create fs "$DISK_IDE"
flushfail_setup_fs fs "$DISK_IDE" /mnt/fs
slowest_pings() { echo "slowest pings: $(sort -n "$WORK/pings" | tail -n 3 | tr '\n' ' ')"; }
flushfail_until_signal fs /mnt/fs slowest_pings
flushfail_keep_writing /mnt/fs 10
kill -0 $FIO || { rc=0; wait $FIO || rc=$?; fail "fio ended early (status $rc): the sick disk was not busy throughout: $(tail -n 20 "$WORK/fio.out" | tr '\n' ' ')"; }
kill -0 $POKER && kill -0 $PINGER || fail "a client loop died: $(tail -n 3 "$WORK/pokes" "$WORK/pings")"
kill $POKER $PINGER
wait $POKER $PINGER 2>/dev/null || true

log "pokes at sick: $(wc -l <"$WORK/pokes"), slowest $(sort -n "$WORK/pokes" | tail -n 1)"
log "last pokes: $(tail -n 3 "$WORK/pokes" | tr '\n' ';')"
grep -q "ping failed" "$WORK/pings" && fail "a Ping failed: $(grep -c 'ping failed' "$WORK/pings") of $(wc -l <"$WORK/pings")"
slowest=$(grep -v failed "$WORK/pings" | sort -n | tail -n 1)
log "measured: $(wc -l <"$WORK/pings") pings, slowest ${slowest} ms (bound $PING_MAX_MS)"
[ -n "$slowest" ] && [ "$slowest" -le $PING_MAX_MS ] ||
	fail "the bus stalled: slowest Ping ${slowest:-none} ms (> $PING_MAX_MS); slowest pokes: $(sort -n "$WORK/pokes" | tail -n 2 | tr '\n' ';')"
grep -q "sick: .*has not answered within" "$BD_LOG" ||
	fail "barrierd never waited on the sick disk: the hang did not happen ($(grep 'sick:' "$BD_LOG" | tail -n 3))"
log "$(grep -m1 'sick: .*has not answered within' "$BD_LOG")"

expect_eq "FlushFailed says mode and cache" "$(bd_signals FlushFailed | head -n 1 | jq -c '.payload.data[1:]')" '["drain",false]'
flushfail_survived fs "$DISK_IDE" /mnt/fs

kill $FIO
wait $FIO 2>/dev/null || true
log "fio: $(grep -m1 -E 'write: IOPS' "$WORK/fio.out")"
bd_stop
dmsetup remove fs
dmsetup remove sick
