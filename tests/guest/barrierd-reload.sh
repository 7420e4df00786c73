#!/bin/bash
# barrierd follows a reload onto another disk (issue 14, item 2).  A mapping
# barrierd made over the IDE disk is reloaded behind its back with
# `barrierctl reload NAME AHCI`; at the dm device's change uevent barrierd
# re-reads the table, and from then on it reads and switches the AHCI
# disk's write cache, never the IDE disk's:
#  - the IDE cache was off (mode drain) before the reload; the AHCI cache is
#    on, so the mapping is probed and becomes healthy in flush, and Backing
#    changes to the AHCI disk (announced by PropertiesChanged);
#  - hdparm -W1 on the old disk changes nothing for the mapping;
#  - SetWriteCache(false/true) switches the AHCI drive, the IDE drive stays;
#  - hdparm -W0 on the AHCI disk: drain with WriteCache false (both views
#    of the new disk say off).
# Before the fix (shown on main's barrierd, DMB_BARRIERD): Backing stays
# the IDE disk, the mapping stays in drain after the reload (the drive
# asked is the IDE one, cache off), and SetWriteCache switches the IDE
# drive.
# vm: ide ahci
# timeout: 180
source "$PROJECT/tests/vm/lib.sh"
source "$PROJECT/tests/guest/barrierd.lib"

mkdir -p "$WORK/conf.d"
printf '[Daemon]\nPollIntervalSec=1\n' >"$WORK/barrierd.conf"
ARGS=(-c "$WORK/barrierd.conf" -C "$WORK/conf.d" --state-dir "$WORK/run")
IDE=$(disk_name "$DISK_IDE")
AHCI=$(disk_name "$DISK_AHCI")
restore_caches() { hdparm -W1 "$DISK_IDE" >/dev/null 2>&1 || true; hdparm -W1 "$DISK_AHCI" >/dev/null 2>&1 || true; }
trap 'restore_caches; bd_save_logs' EXIT

bd_bus
bd_udev
bd_start "${ARGS[@]}"
bd_create mv "$DISK_IDE"
expect_eq "start: Backing" "$(bd_prop mv Backing)" "$IDE"
expect_eq "start: State" "$(bd_prop mv State)" healthy

# --- the IDE cache off: drain, as barrierd-cache shows
hdparm -W0 "$DISK_IDE" >/dev/null
wait_until 3 'test "$(bd_prop mv State)" = write-through' || fail "not write-through after -W0 on IDE: $(bd_prop mv State)"
expect_eq "IDE -W0: Mode" "$(bd_prop mv Mode)" drain

# --- reload onto the AHCI disk behind barrierd's back
bd_monitor
"$B/barrierctl" reload mv "$DISK_AHCI" || fail "barrierctl reload failed"
case "$(dmsetup table mv)" in
*" barrier $(lsblk -dno MAJ:MIN "$DISK_AHCI" | tr -d ' ') 0 "*) ;;
*) fail "mv is not over the AHCI disk: $(dmsetup table mv)" ;;
esac
wait_until 5 'test "$(bd_prop mv Backing)" = "$AHCI"' || fail "Backing is $(bd_prop mv Backing) after the reload onto $AHCI"
log "ok: Backing = $AHCI"
backings=$(jq -r "select(.member == \"PropertiesChanged\" and .path == \"$(bd_path mv)\") | .payload.data[1].Backing.data // empty" "$WORK/monitor.json")
grep -qx "$AHCI" <<<"$backings" || fail "no PropertiesChanged with Backing $AHCI (got: $backings)"
wait_until 10 'test "$(bd_prop mv State)" = healthy' ||
	fail "the AHCI cache is on but the mapping is $(bd_prop mv State), mode $(bd_prop mv Mode)"
expect_eq "after the reload: Mode" "$(bd_prop mv Mode)" flush
expect_eq "after the reload: WriteCache" "$(bd_prop mv WriteCache)" true
grep -q "mv: the table now maps $AHCI (was $IDE)" "$BD_LOG" || fail "the new disk was not logged"

# --- the old disk no longer counts
hdparm -W1 "$DISK_IDE" >/dev/null
hdparm -W0 "$DISK_IDE" >/dev/null
sleep 2.5
expect_eq "IDE -W0 again: Mode" "$(bd_prop mv Mode)" flush
expect_eq "IDE -W0 again: State" "$(bd_prop mv State)" healthy
hdparm -W1 "$DISK_IDE" >/dev/null

# --- SetWriteCache switches the disk under the mapping now
bd_gcall "$(bd_path mv)" $BD_DEV.SetWriteCache false '{}' >/dev/null || fail "SetWriteCache(false) failed"
expect_eq "SetWriteCache(false): AHCI drive" "$(drive_write_cache "$DISK_AHCI")" 0
expect_eq "SetWriteCache(false): IDE drive untouched" "$(drive_write_cache "$DISK_IDE")" 1
expect_eq "SetWriteCache(false): Mode" "$(bd_prop mv Mode)" drain
bd_gcall "$(bd_path mv)" $BD_DEV.SetWriteCache true '{}' >/dev/null || fail "SetWriteCache(true) failed"
expect_eq "SetWriteCache(true): AHCI drive" "$(drive_write_cache "$DISK_AHCI")" 1
wait_until 10 'test "$(bd_prop mv State)" = healthy' || fail "not healthy after SetWriteCache(true): $(bd_prop mv State)"

# --- hdparm -W0 on the new disk: both of its views say off
hdparm -W0 "$DISK_AHCI" >/dev/null
wait_until 3 'test "$(bd_prop mv Mode)" = drain' || fail "mode is $(bd_prop mv Mode) 3 s after -W0 on AHCI"
expect_eq "AHCI -W0: WriteCache" "$(bd_prop mv WriteCache)" false
expect_eq "AHCI -W0: State" "$(bd_prop mv State)" write-through
hdparm -W1 "$DISK_AHCI" >/dev/null
wait_until 10 'test "$(bd_prop mv State)" = healthy' || fail "not healthy after -W1 on AHCI"

bd_stop
dmsetup remove mv
