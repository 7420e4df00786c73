#!/bin/bash
# barrierd.service as shipped, started by systemd as PID 1 (make install's
# unit, D-Bus policy and udev rules):
#  - Type=notify: `systemctl start` returns once barrierd said READY=1, which
#    it says only after owning org.dmbarrier1, so the bus answers at once;
#    active/running, MainPID is barrierd, StatusText is its sd_notify STATUS;
#  - `systemctl reload` (ExecReload, SIGHUP) applies a new configuration
#    (PollIntervalUSec changes on the bus) with the same MainPID;
#  - kill -9 of MainPID: Restart=on-failure brings it back with a new
#    MainPID (NRestarts 1), and it adopts the mapping it had.
# Negative controls (run once, results in docs/verification.md): a
# barrierd that never says READY=1 leaves the unit activating and this
# test fails at the first wait.
# vm: ide ahci systemd
# timeout: 120
source "$PROJECT/tests/vm/lib.sh"
source "$PROJECT/tests/guest/barrierd.lib"
source "$PROJECT/tests/guest/systemd.lib"

stop_unit
# --no-block and a bounded wait: a unit that never becomes ready fails here
# in 30 s, not after systemd's 90 s start timeout.
start=$(date +%s%N)
systemctl start --no-block $UNIT
wait_active 30
log "measured: active/running $((($(date +%s%N) - start) / 1000000)) ms after systemctl start"
bd_ping >/dev/null || fail "active, but org.dmbarrier1 does not answer: READY=1 came before the bus name"
pid=$(uprop MainPID)
expect_eq "MainPID is barrierd" "$(readlink "/proc/$pid/exe")" /usr/local/sbin/barrierd
expect_eq "Type" "$(uprop Type)" notify
expect_eq "StatusText (sd_notify STATUS=)" "$(uprop StatusText)" "Managing 0 barrier mappings"
systemctl status --no-pager $UNIT | head -n 12

# A mapping for barrierd to keep across the restart.
barrierctl --bus create keep "$DISK_IDE" >/dev/null || fail "barrierctl --bus create failed"
expect_eq "keep: Mode" "$(bd_prop keep Mode)" flush

# --- reload: SIGHUP, the configuration read again, same process
expect_eq "PollIntervalUSec before" "$(busctl get-property $BD_BUS $BD_PATH $BD_MGR PollIntervalUSec)" "t 1000000"
mkdir -p /etc/barrierd.conf.d
printf '[Daemon]\nPollIntervalSec=5\n' >/etc/barrierd.conf.d/50-test.conf
systemctl reload $UNIT || fail "systemctl reload failed"
wait_until 10 'junit | has "Reload: configuration applied"' ||
	fail "no 'Reload: configuration applied' in the journal after systemctl reload"
expect_eq "PollIntervalUSec after reload" "$(busctl get-property $BD_BUS $BD_PATH $BD_MGR PollIntervalUSec)" "t 5000000"
expect_eq "MainPID after reload" "$(uprop MainPID)" "$pid"
expect_eq "state after reload" "$(ustate)" active/running

# --- kill -9: Restart=on-failure, a new process, the mapping adopted again
expect_eq "NRestarts before" "$(uprop NRestarts)" 0
kill -9 "$pid"
wait_until 15 '[ "$(uprop NRestarts)" = 1 ] && [ "$(ustate)" = active/running ]' ||
	fail "not restarted after kill -9: $(ustate), NRestarts $(uprop NRestarts)"
npid=$(uprop MainPID)
[ "$npid" != "$pid" ] && [ "$npid" -gt 0 ] || fail "MainPID after the restart: $npid (was $pid)"
log "ok: kill -9 $pid -> restarted as $npid"
expect_eq "Result of the killed run" "$(journalctl -b -u $UNIT --no-pager -o cat | grep -c 'Main process exited, code=killed, status=9/KILL')" 1
bd_ping >/dev/null || fail "the restarted barrierd does not answer"
expect_eq "keep: Mode after the restart" "$(bd_prop keep Mode)" flush
expect_eq "StatusText after the restart" "$(uprop StatusText)" "Managing 1 barrier mapping"
barrierctl --bus remove keep || fail "barrierctl --bus remove failed"
stop_unit
