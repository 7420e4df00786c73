#!/bin/bash
# barrierd follows the write cache of the disk under a mapping, although
# hdparm -W emits no uevent: -W0 -> Mode drain within 2 s (the re-read
# timer), announced by PropertiesChanged; -W1 -> an explicit probe barrier
# that really flushes, then flush again.  A mapping adopted while the cache
# is off starts in drain.  SetWriteCache switches the drive (and refuses
# with NotSupported, changing nothing, over a dm device).  Also measures the daemon idle: context switches
# over 10 s and VmRSS (plain build; the ASan one is used for the rest).
# Negative control: with barrierd stopped the same hdparm -W0 leaves the
# mapping in flush (nothing else changes the mode), and the udev monitor
# sees no event for it (so the timer, not udev, is what noticed).
# vm: ide ahci
# timeout: 240
source "$PROJECT/tests/vm/lib.sh"
source "$PROJECT/tests/guest/barrierd.lib"

mkdir -p "$WORK/conf.d"
printf '[Daemon]\nPollIntervalSec=1\n' >"$WORK/barrierd.conf"
ARGS=(-c "$WORK/barrierd.conf" -C "$WORK/conf.d" --state-dir "$WORK/run")
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }

bd_bus
bd_udev
bd_start "${ARGS[@]}"
bd_create wc "$DISK_IDE"
expect_eq "start: Mode" "$(bd_prop wc Mode)" flush
expect_eq "start: State" "$(bd_prop wc State)" healthy
expect_eq "start: WriteCache" "$(bd_prop wc WriteCache)" true

# --- -W0: drain within 2 s, no uevent involved
bd_monitor
udevadm monitor --udev --subsystem-match=block >"$WORK/uevents" 2>&1 &
sleep 0.5
start=$(date +%s%N)
hdparm -W0 "$DISK_IDE" >/dev/null
wait_until 2 'test "$(bstatus wc mode)" = drain' ||
	fail "mode is $(bstatus wc mode) 2 s after hdparm -W0"
log "measured: mode drain $(ms_since "$start") ms after hdparm -W0"
wait_until 2 'bd_mode_changes wc | has -x drain' || fail "no PropertiesChanged with Mode drain"
expect_eq "-W0: State" "$(bd_prop wc State)" write-through
expect_eq "-W0: WriteCache" "$(bd_prop wc WriteCache)" false
grep -q "/$(disk_name "$DISK_IDE") (block)" "$WORK/uevents" &&
	fail "a uevent for the disk was seen, the timer is not what noticed: $(cat "$WORK/uevents")"
grep -q "wc: write cache off; mode drain" "$BD_LOG" || fail "the switch to drain was not logged"

# --- -W1: probe (a real flush), then flush
flushes=$(bstatus wc flushes)
disk_before=$(disk_flushes "$DISK_IDE")
start=$(date +%s%N)
hdparm -W1 "$DISK_IDE" >/dev/null
wait_until 5 'test "$(bd_prop wc State)" = healthy' || fail "not healthy after -W1: $(bd_prop wc State)"
log "measured: healthy again $(ms_since "$start") ms after hdparm -W1"
expect_eq "-W1: mode" "$(bstatus wc mode)" flush
[ "$(bstatus wc flushes)" -gt "$flushes" ] || fail "the probe did not flush (target's count)"
[ "$(disk_flushes "$DISK_IDE")" -gt "$disk_before" ] || fail "the probe did not flush (disk's count)"
states=$(jq -r "select(.member == \"PropertiesChanged\" and .path == \"$(bd_path wc)\")
	| .payload.data[1].State.data // empty" "$WORK/monitor.json" | tr '\n' ' ')
expect_eq "State changes announced" "$states" "write-through probing healthy "
expect_eq "Mode changes announced" "$(bd_mode_changes wc | tr '\n' ' ')" "drain flush "

# --- SetWriteCache: barrierd switches the drive itself
bd_gcall "$(bd_path wc)" $BD_DEV.SetWriteCache false '{}' >/dev/null || fail "SetWriteCache(false) failed"
expect_eq "SetWriteCache(false): drive" "$(drive_write_cache "$DISK_IDE")" 0
expect_eq "SetWriteCache(false): Mode" "$(bd_prop wc Mode)" drain
bd_gcall "$(bd_path wc)" $BD_DEV.SetWriteCache true '{}' >/dev/null || fail "SetWriteCache(true) failed"
expect_eq "SetWriteCache(true): drive" "$(drive_write_cache "$DISK_IDE")" 1
wait_until 5 'test "$(bd_prop wc State)" = healthy' || fail "not healthy after SetWriteCache(true)"
# A mapping over a dm device: its cache cannot be switched, and nothing changes.
dmsetup create lin --table "0 $(sectors "$DISK_AHCI") linear $DISK_AHCI 0"
bd_create overlin /dev/mapper/lin
out=$(bd_gcall "$(bd_path overlin)" $BD_DEV.SetWriteCache false '{}' 2>&1) &&
	fail "SetWriteCache on a dm device succeeded: $out"
case "$out" in *org.dmbarrier1.Error.NotSupported*) ;; *) fail "SetWriteCache on a dm device: $out" ;; esac
log "ok: $out"
expect_eq "overlin: Mode" "$(bd_prop overlin Mode)" flush
expect_eq "AHCI drive cache untouched" "$(drive_write_cache "$DISK_AHCI")" 1
busctl --system call $BD_BUS $BD_PATH $BD_MGR RemoveDevice 'sa{sv}' overlin 0 >/dev/null
dmsetup remove lin

# --- the control: no barrierd, nothing follows the cache
bd_stop
hdparm -W0 "$DISK_IDE" >/dev/null
sleep 3
expect_eq "without barrierd: mode after -W0" "$(bstatus wc mode)" flush
# ... and a mapping adopted with the cache off starts in drain
bd_start "${ARGS[@]}"
expect_eq "adopted with the cache off: Mode" "$(bd_prop wc Mode)" drain
expect_eq "adopted with the cache off: State" "$(bd_prop wc State)" write-through
hdparm -W1 "$DISK_IDE" >/dev/null
wait_until 5 'test "$(bd_prop wc State)" = healthy' || fail "not healthy after -W1"
bd_stop

# --- idle cost, with the plain build (ASan inflates memory)
BARRIERD=$B/barrierd
bd_start "${ARGS[@]}" --log-level=info
sleep 3
s0=$(bd_switches)
sleep 10
s1=$(bd_switches)
log "measured: idle 10 s: $((s1 - s0)) context switches (1 mapping, PollIntervalSec=1); VmRSS $(bd_rss_kb) kB"
# A busy loop would be thousands; the timer alone is about 10.
[ $((s1 - s0)) -lt 100 ] || fail "barrierd is not idle: $((s1 - s0)) context switches in 10 s"
bd_stop
dmsetup remove wc
