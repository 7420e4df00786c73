#!/bin/bash
# barrierd's real work under the sandbox of the shipped unit (capability
# bounding set, seccomp filter, DevicePolicy=closed, ProtectSystem=strict,
# NoNewPrivileges): the hardening permits the job, not only a good score.
#  - no module loading: with dm_barrier not loaded, barrierd starts and
#    leaves it unloaded; `barrierctl --bus create` makes the mapping (dm
#    ioctls) and the kernel loads dm_barrier for the table by itself
#    (request_module("dm-barrier"), outside the sandbox), although the
#    unit has neither CAP_SYS_MODULE nor the module system calls;
#  - SG_IO: `hdparm -W0` on the disk (no uevent) -> barrierd reads the
#    drive, switches the mapping to drain; -W1 -> its probe barrier, flush;
#  - SG_IO ATA SET FEATURES: `barrierctl --bus write-cache NAME off|on`
#    switches the drive's cache (hdparm -W and queue/write_cache agree);
#  - and the sandbox was in force for all of it: the process has
#    NoNewPrivs, a seccomp filter, exactly CAP_SYS_ADMIN CAP_SYS_RAWIO in
#    its bounding set (no CAP_SYS_MODULE), a read-only /usr.
# Negative controls (run once, results in docs/verification.md):
# the unit with PrivateDevices=yes (no /dev/mapper/control, no disks), or
# without CAP_SYS_RAWIO in CapabilityBoundingSet (no ATA pass-through),
# fails this test.
# vm: ide ahci systemd
# timeout: 120
source "$PROJECT/tests/vm/lib.sh"
source "$PROJECT/tests/guest/barrierd.lib"
source "$PROJECT/tests/guest/systemd.lib"

stop_unit
if grep -q '^dm_barrier ' /proc/modules; then rmmod dm_barrier; fi
systemctl start $UNIT || fail "systemctl start failed: $(ustate)"
pid=$(uprop MainPID)

# --- no module loading by barrierd; the kernel loads the target for the table
grep -q '^dm_barrier ' /proc/modules && fail "barrierd loaded dm_barrier at start"
log "ok: barrierd started and dm_barrier is still not loaded"
journalctl -b -u $UNIT --no-pager -o cat | has 'dm-barrier: not loaded; the kernel loads it' ||
	fail "barrierd did not report dm-barrier as not loaded"
barrierctl --bus create sb "$DISK_IDE" || fail "barrierctl --bus create failed"
grep -q '^dm_barrier ' /proc/modules || fail "dm_barrier is not loaded after the create"
log "ok: the kernel loaded dm_barrier for the table barrierd loaded"
case "$(dmsetup table sb)" in
"0 $(sectors "$DISK_IDE") barrier $(lsblk -dno MAJ:MIN "$DISK_IDE" | tr -d ' ') 0 "*) ;;
*) fail "sb: table $(dmsetup table sb)" ;;
esac
expect_eq "Mode" "$(bd_prop sb Mode)" flush

# --- hdparm -W0 (no uevent): barrierd asks the drive (SG_IO IDENTIFY)
start=$(date +%s%N)
hdparm -W0 "$DISK_IDE" >/dev/null
wait_until 5 'test "$(bstatus sb mode)" = drain' || fail "mode $(bstatus sb mode) 5 s after hdparm -W0"
log "measured: drain $((($(date +%s%N) - start) / 1000000)) ms after hdparm -W0"
expect_eq "-W0: State" "$(bd_prop sb State)" write-through
hdparm -W1 "$DISK_IDE" >/dev/null
wait_until 10 'test "$(bd_prop sb State)" = healthy' || fail "not healthy after -W1: $(bd_prop sb State)"
expect_eq "-W1: mode" "$(bstatus sb mode)" flush
[ "$(bstatus sb barriers)" -ge 1 ] || fail "no probe barrier: $(dmsetup status sb)"

# --- barrierd switches the drive's cache itself (SG_IO SET FEATURES)
barrierctl --bus write-cache sb off || fail "barrierctl --bus write-cache sb off failed"
expect_eq "write-cache off: drive" "$(drive_write_cache "$DISK_IDE")" 0
expect_eq "write-cache off: kernel" "$(write_cache "$DISK_IDE")" "write through"
expect_eq "write-cache off: Mode" "$(bd_prop sb Mode)" drain
barrierctl --bus write-cache sb on || fail "barrierctl --bus write-cache sb on failed"
expect_eq "write-cache on: drive" "$(drive_write_cache "$DISK_IDE")" 1
wait_until 10 'test "$(bd_prop sb State)" = healthy' || fail "not healthy after write-cache on"
log "barrierd's journal:"
journalctl -b -u $UNIT --no-pager -o cat | tail -n 12
journalctl -b -u $UNIT --no-pager -o cat | has "write cache of $(disk_name "$DISK_IDE") turned off by request" ||
	fail "the switch was not logged by the unit"
expect_eq "MainPID unchanged (no crash, no restart)" "$(uprop MainPID)" "$pid"
# --- and all of that from inside the sandbox, still in force
st=/proc/$pid/status
expect_eq "NoNewPrivs" "$(awk '/^NoNewPrivs:/ {print $2}' "$st")" 1
expect_eq "Seccomp (2: filter)" "$(awk '/^Seccomp:/ {print $2}' "$st")" 2
# CAP_SYS_RAWIO 17, CAP_SYS_ADMIN 21 (and not CAP_SYS_MODULE 16)
expect_eq "CapBnd" "$(awk '/^CapBnd:/ {print $2}' "$st")" 0000000000220000
nsenter -t "$pid" -m sh -c 'touch /usr/dmb-probe' 2>/dev/null &&
	fail "/usr is writable in barrierd's mount namespace (ProtectSystem=strict)"
log "ok: /usr is read-only in barrierd's mount namespace"

barrierctl --bus remove sb || fail "barrierctl --bus remove failed"
stop_unit
