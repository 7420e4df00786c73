#!/bin/bash
# barrierd's log in the journal (a real systemd-journald, standalone): each
# line about a mapping carries DMB_DEVICE=<name> and its priority; one line
# per state change (hdparm -W0: "write cache off; mode drain" at notice;
# -W1: the probe and the return to healthy) and none per I/O or per timer
# tick.
# Negative controls: lines about another mapping carry its own name, the
# daemon's own lines carry no DMB_DEVICE; and barrierd's stderr stays empty
# when it logs to the journal (so the lines found came through the journal).
# vm: ide ahci
# timeout: 180
source "$PROJECT/tests/vm/lib.sh"
source "$PROJECT/tests/guest/barrierd.lib"

# journald wants a cgroup file system; everything here goes away after the test.
journal_cleanup() {
	bd_save_logs
	rm -rf /run/systemd/journal /run/log/journal
}
trap journal_cleanup EXIT
mkdir -p /run/systemd/journal /run/log/journal /sys/fs/cgroup
mountpoint -q /sys/fs/cgroup || mount -t cgroup2 none /sys/fs/cgroup
/lib/systemd/systemd-journald >"$WORK/journald.log" 2>&1 &
wait_until 10 'test -S /run/systemd/journal/socket' || fail "journald did not start: $(cat "$WORK/journald.log")"
# jq over barrierd's journal entries for one device (or none: "-").
entries() {
	journalctl --no-pager -o json SYSLOG_IDENTIFIER=barrierd |
		jq -r --arg d "$1" 'select(($d == "-" and .DMB_DEVICE == null) or .DMB_DEVICE == $d)
			| "\(.PRIORITY) \(.MESSAGE)"'
}

mkdir -p "$WORK/conf.d"
printf '[Daemon]\nPollIntervalSec=1\n' >"$WORK/barrierd.conf"
bd_bus
bd_start -c "$WORK/barrierd.conf" -C "$WORK/conf.d" --state-dir "$WORK/run" --log-target=journal --log-level=info
for n in jd jd2; do
	bd_create $n "$DISK_IDE"
done
hdparm -W0 "$DISK_IDE" >/dev/null
wait_until 3 'test "$(bstatus jd mode)" = drain' || fail "no drain after -W0"
hdparm -W1 "$DISK_IDE" >/dev/null
wait_until 5 'test "$(bd_prop jd State)" = healthy' || fail "not healthy after -W1"
wait_until 5 'test "$(bd_prop jd2 State)" = healthy' || fail "jd2 not healthy after -W1"
sleep 1
journalctl --no-pager -o json SYSLOG_IDENTIFIER=barrierd >"$WORK/barrierd.json"
entries jd >"$WORK/jd"
cat "$WORK/jd"
grep -qx "5 created over $DISK_IDE, mode flush, fallback drain, hold 10000 ms" "$WORK/jd" || fail "no 'created' line"
grep -qx "5 write cache off; mode drain \[mode flush -> drain\]" "$WORK/jd" || fail "no notice for the switch to drain"
grep -qx "5 write cache on; probing the flush with an explicit barrier \[mode drain -> flush\]" "$WORK/jd" ||
	fail "no notice for the probe"
grep -qx "5 the probe barrier flushed; write cache on and flushes work \[mode flush\]" "$WORK/jd" ||
	fail "no notice for the return to healthy"
expect_eq "lines about jd" "$(wc -l <"$WORK/jd")" 6
entries jd2 | has "write cache off; mode drain" || fail "jd2's lines do not carry DMB_DEVICE=jd2"
entries jd | has "jd2" && fail "a line about jd2 carries DMB_DEVICE=jd"
entries - | has "^6 ready: org.dmbarrier1 on the system bus" || fail "the daemon's own lines carry a DMB_DEVICE"

# One line per change, none per I/O or tick.
for i in $(seq 1 30); do dsync_write /dev/mapper/jd "$i" >/dev/null || fail "write $i failed"; done
sleep 3
expect_eq "lines about jd after 30 barriers and 3 ticks" "$(entries jd | wc -l)" 6
bd_stop
expect_eq "barrierd's stderr while logging to the journal" "$(cat "$BD_LOG")" ""
dmsetup remove jd
dmsetup remove jd2
