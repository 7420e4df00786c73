#!/bin/bash
# barrierd on a real system bus (dbus-daemon with the shipped policy) and
# udevd with the shipped rules:
#  - start: loads no module (dm_barrier stays unloaded, barrierd says so;
#    the kernel loads it with the first barrier table), adopts a mapping
#    made by plain dmsetup and leaves its table alone (no hold added:
#    barrierd-adopt);
#  - the live API matches docs/dbus/org.dmbarrier1.xml member for member;
#  - reading is open to everyone; every mutating call from uid 65534 gets
#    AccessDenied and changes nothing (no polkitd on this bus: root only);
#    bad arguments, an options key included, get InvalidArgs (or the
#    documented error) and change nothing;
#  - CreateDevice/RemoveDevice with DeviceAdded/DeviceRemoved; the udev
#    rules' /dev/disk/by-barrier link and the tag on the backing disk;
#  - SetMode with pin, and "auto" handing the mapping back to the policy;
#  - kill -9 and restart: every mapping adopted with the same mode and pin.
# Negative controls: the very calls refused to uid 65534 succeed as root
# (so the refusal is the uid check, not a broken call); after the restart
# an unpinned mapping is compared with a pinned one (the pin is per
# mapping and really read back, not a default).
# vm: ide ahci
# timeout: 300
source "$PROJECT/tests/vm/lib.sh"
source "$PROJECT/tests/guest/barrierd.lib"

mkdir -p "$WORK/conf.d"
printf '[Daemon]\nPollIntervalSec=1\n' >"$WORK/barrierd.conf"
ARGS=(-c "$WORK/barrierd.conf" -C "$WORK/conf.d" --state-dir "$WORK/run")
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)

dsend() { # dsend PATH IFACE.METHOD ARGS...
	dbus-send --system --print-reply --dest="$BD_BUS" "$@"
}

# --- barrierd loads no module: that is the kernel's job, on a table load
grep -q '^dm_barrier ' /proc/modules && fail "dm_barrier is loaded before the test"
bd_bus
bd_udev
bd_start "${ARGS[@]}"
grep -q '^dm_barrier ' /proc/modules && fail "barrierd loaded dm_barrier at start"
grep -q 'dm-barrier: not loaded; the kernel loads it with the first barrier table' "$BD_LOG" ||
	fail "barrierd did not report dm-barrier as not loaded"
expect_eq "no devices" "$(busctl --system call $BD_BUS $BD_PATH $BD_MGR ListDevices)" "a(so) 0"
expect_eq "Version" "$(busctl --system get-property $BD_BUS $BD_PATH $BD_MGR Version)" 's "1.0.0"'
bd_stop

# --- adoption of a mapping made behind barrierd's back
make_barrier adopt "$DISK_AHCI"
bd_start "${ARGS[@]}"
bd_monitor
P_ADOPT=$(bd_path adopt)
expect_eq "adopt: path" "$P_ADOPT" "$BD_PATH/device/adopt"
expect_eq "adopt: Mode" "$(bd_prop adopt Mode)" flush
expect_eq "adopt: State" "$(bd_prop adopt State)" healthy
expect_eq "adopt: Pinned" "$(bd_prop adopt Pinned)" false
expect_eq "adopt: WriteCache" "$(bd_prop adopt WriteCache)" true
expect_eq "adopt: Backing" "$(bd_prop adopt Backing)" "$(disk_name "$DISK_AHCI")"
expect_eq "adopt: no hold added on adoption" "$(bd_prop adopt HoldOnFlushErrorMSec)" 0
case "$(dmsetup table adopt)" in
*"hold_on_flush_error"*) fail "adopt: the table was reloaded: $(dmsetup table adopt)" ;;
esac

# --- the live API is the documented one
members() { # normalized members of our interfaces, from introspection XML on stdin
	awk '
	function attr(a,   r) { if (match($0, a "=\"[^\"]*\"")) { r = substr($0, RSTART, RLENGTH); sub(/^[^"]*"/, "", r); sub(/"$/, "", r); return r } return "" }
	/<interface / { iface = attr("name"); ours = iface ~ /^org\.dmbarrier1\./; next }
	!ours { next }
	/<method / { kind = "method"; m = attr("name"); print iface, kind, m; next }
	/<signal / { kind = "signal"; m = attr("name"); print iface, kind, m; next }
	/<property / { m = attr("name"); print iface, "property", m, attr("type"), attr("access"); kind = "property"; next }
	/<arg / { print iface, kind, m, "arg", attr("name"), attr("type"), (kind == "signal" ? "" : attr("direction")); next }
	/EmitsChangedSignal/ { print iface, "property", m, "emits", attr("value"); next }
	' | sort
}
members <"$PROJECT/docs/dbus/org.dmbarrier1.xml" >"$WORK/doc.members"
{
	busctl --system introspect --xml-interface $BD_BUS $BD_PATH
	busctl --system introspect --xml-interface $BD_BUS "$P_ADOPT"
} | members >"$WORK/live.members"
[ "$(wc -l <"$WORK/doc.members")" -gt 40 ] || fail "the XML parser found too few members"
diff -u "$WORK/doc.members" "$WORK/live.members" || fail "the live API differs from docs/dbus/org.dmbarrier1.xml"
log "ok: $(wc -l <"$WORK/live.members") members match the reference XML"

# --- access control: reading is open, changing is root's
expect_eq "nobody reads Mode" "$("${NOBODY[@]}" busctl --system get-property $BD_BUS "$P_ADOPT" $BD_DEV Mode)" 's "flush"'
"${NOBODY[@]}" busctl --system call $BD_BUS $BD_PATH $BD_MGR ListDevices | has adopt ||
	fail "nobody cannot list devices"
ev_before=$(event_nr adopt)
expect_error org.freedesktop.DBus.Error.AccessDenied "${NOBODY[@]}" gdbus call --system --dest $BD_BUS \
	--object-path "$P_ADOPT" --method $BD_DEV.SetMode "'drain'" true '{}'
expect_error org.freedesktop.DBus.Error.AccessDenied "${NOBODY[@]}" gdbus call --system --dest $BD_BUS \
	--object-path "$P_ADOPT" --method $BD_DEV.SetWriteCache false '{}'
expect_error org.freedesktop.DBus.Error.AccessDenied "${NOBODY[@]}" gdbus call --system --dest $BD_BUS \
	--object-path "$P_ADOPT" --method $BD_DEV.ResetStats '{}'
expect_error org.freedesktop.DBus.Error.AccessDenied "${NOBODY[@]}" gdbus call --system --dest $BD_BUS \
	--object-path "$P_ADOPT" --method $BD_DEV.Barrier '{}'
expect_error org.freedesktop.DBus.Error.AccessDenied "${NOBODY[@]}" gdbus call --system --dest $BD_BUS \
	--object-path $BD_PATH --method $BD_MGR.RemoveDevice "'adopt'" '{}'
expect_error "Access denied" "${NOBODY[@]}" busctl --system call $BD_BUS $BD_PATH $BD_MGR CreateDevice \
	'ssa{sv}' evil "$DISK_IDE" 0
expect_eq "refused: mode" "$(bstatus adopt mode)" flush
expect_eq "refused: pin" "$(bd_prop adopt Pinned)" false
expect_eq "refused: drive cache" "$(drive_write_cache "$DISK_AHCI")" 1
expect_eq "refused: dm event counter" "$(event_nr adopt)" "$ev_before"
dmsetup info adopt >/dev/null || fail "refused RemoveDevice removed the mapping"
dmsetup info evil >/dev/null 2>&1 && fail "refused CreateDevice created a mapping"
[ -e "$WORK/run/pins/adopt" ] && fail "a refused SetMode left a pin"

# --- bad arguments change nothing
expect_error org.freedesktop.DBus.Error.InvalidArgs bd_gcall "$P_ADOPT" $BD_DEV.SetMode "'sideways'" false '{}'
expect_error org.freedesktop.DBus.Error.InvalidArgs bd_gcall "$P_ADOPT" $BD_DEV.SetMode "'auto'" true '{}'
expect_error org.freedesktop.DBus.Error.InvalidArgs bd_gcall "$P_ADOPT" $BD_DEV.SetMode "'FLUSH'" true '{}'
# Options: every key is unknown to these methods so far; the old
# signature (no options) is refused by sd-bus.
expect_error 'unknown option "Force"' bd_gcall "$P_ADOPT" $BD_DEV.SetMode "'drain'" true "{'Force': <true>}"
expect_error 'unknown option "Wait"' bd_gcall "$P_ADOPT" $BD_DEV.Barrier "{'Wait': <uint32 5>}"
expect_error 'unknown option "X"' bd_gcall "$P_ADOPT" $BD_DEV.ResetStats "{'X': <''>}"
expect_error 'unknown option "X"' bd_gcall "$P_ADOPT" $BD_DEV.SetWriteCache false "{'X': <1>}"
expect_error 'unknown option "X"' bd_gcall $BD_PATH $BD_MGR.RemoveDevice "'adopt'" "{'X': <1>}"
expect_error org.freedesktop.DBus.Error.InvalidArgs dsend "$P_ADOPT" $BD_DEV.SetMode string:drain boolean:true
expect_error org.dmbarrier1.Error.NoSuchDevice dsend $BD_PATH $BD_MGR.GetDevice string:nosuch
expect_error org.dmbarrier1.Error.NoSuchDevice bd_gcall $BD_PATH $BD_MGR.RemoveDevice "'nosuch'" '{}'
create() { busctl --system call $BD_BUS $BD_PATH $BD_MGR CreateDevice 'ssa{sv}' "$@"; }
expect_error "not a valid mapping name" create 'a/b' "$DISK_IDE" 0
expect_error "not a valid mapping name" create '' "$DISK_IDE" 0
expect_error 'unknown option "Colour"' create x "$DISK_IDE" 1 Colour s red
expect_error "must be of type 't'" create x "$DISK_IDE" 1 Offset s 0
expect_error 'unknown mode "fast"' create x "$DISK_IDE" 1 Mode s fast
expect_error '"Pin" needs "Mode"' create x "$DISK_IDE" 1 Pin b true
expect_error "is over 60000" create x "$DISK_IDE" 1 HoldOnFlushErrorMSec u 60001
expect_error 'given twice' create x "$DISK_IDE" 2 Mode s flush Mode s drain
expect_error "backing device" create x /dev/nonexistent 0
expect_error "not a block device" create x /etc/hostname 0
expect_error "already exists" create adopt "$DISK_IDE" 0
expect_eq "after bad calls: mappings" "$(dmsetup ls --target barrier | awk '{print $1}' | tr '\n' ' ')" "adopt "
expect_eq "after bad calls: mode" "$(bstatus adopt mode)" flush
expect_eq "after bad calls: pin" "$(bd_prop adopt Pinned)" false
expect_eq "after bad calls: drive cache" "$(drive_write_cache "$DISK_AHCI")" 1

# --- the refused calls, as root: they work (the control for the refusals)
bcall() { busctl --system call $BD_BUS "$@"; }
bcall "$P_ADOPT" $BD_DEV SetMode 'sba{sv}' drain true 0 >/dev/null || fail "root SetMode failed"
expect_eq "root: mode" "$(bstatus adopt mode)" drain
expect_eq "root: Pinned" "$(bd_prop adopt Pinned)" true
[ -e "$WORK/run/pins/adopt" ] || fail "no pin record for a pinned mapping"
bcall "$P_ADOPT" $BD_DEV ResetStats 'a{sv}' 0 >/dev/null || fail "root ResetStats failed"
bcall "$P_ADOPT" $BD_DEV Barrier 'a{sv}' 0 >/dev/null || fail "root Barrier failed"
expect_eq "root: the explicit barrier was counted" "$(bstatus adopt barriers)" 1

# --- CreateDevice: DeviceAdded, the table, udev's link and tag
out=$(create made "$DISK_IDE" 2 Mode s drain Pin b true) || fail "CreateDevice: $out"
P_MADE=$(bd_path made)
expect_eq "CreateDevice result" "$out" "o \"$P_MADE\""
wait_until 5 'bd_signals DeviceAdded | has "\"made\""' || fail "no DeviceAdded for made"
expect_eq "made: Mode" "$(bd_prop made Mode)" drain
expect_eq "made: Pinned" "$(bd_prop made Pinned)" true
expect_eq "made: Fallback" "$(bd_prop made Fallback)" drain
expect_eq "made: uuid" "$(dmsetup info -c --noheadings -o uuid made)" BARRIER-made
case "$(dmsetup table made)" in
*"fallback:drain"*"hold_on_flush_error:10000"*) ;;
*) fail "made: table: $(dmsetup table made)" ;;
esac
udevadm settle -t 10
[ "$(readlink -f /dev/disk/by-barrier/made)" = "/dev/$(dm_kname made)" ] ||
	fail "no /dev/disk/by-barrier/made -> $(dm_kname made): $(ls -l /dev/disk/by-barrier 2>&1)"
props=$(udevadm info --query=property --name=/dev/mapper/made)
echo "$props" | has -x 'SYSTEMD_WANTS=barrierd.service' || fail "made: no SYSTEMD_WANTS: $props"
echo "$props" | has '^TAGS=.*:systemd:' || fail "made: not tagged for systemd: $props"
echo "$props" | has '^TAGS=.*:dmbarrier:' || fail "made: not tagged dmbarrier: $props"
udevadm info --query=property --name="$DISK_IDE" | has -x 'DM_BARRIER_BACKING=1' ||
	fail "the backing disk was not tagged: $(udevadm info --query=property --name="$DISK_IDE" | grep -i barrier)"
udevadm info --query=property --name="$DISK_AHCI" | has 'DM_BARRIER_BACKING' &&
	fail "AHCI is under a mapping without the BARRIER- uuid; it must not be tagged"
[ -e /dev/disk/by-barrier/adopt ] && fail "a mapping without the BARRIER- uuid got a by-barrier link"

# --- "auto" hands a mapping back to the policy: cache on -> probe -> flush
bcall "$P_MADE" $BD_DEV SetMode 'sba{sv}' auto false 0 >/dev/null || fail "SetMode auto failed"
wait_until 10 'test "$(bd_prop made State)" = healthy' || fail "made did not become healthy: $(bd_prop made State)"
expect_eq "made: auto mode" "$(bstatus made mode)" flush
expect_eq "made: unpinned" "$(bd_prop made Pinned)" false
[ "$(bstatus made barriers)" -ge 1 ] || fail "made: no probe barrier was counted"
bd_mode_changes made | has -x flush || fail "made: no PropertiesChanged with Mode flush"
grep -q 'made: write cache on; probing the flush with an explicit barrier' "$BD_LOG" ||
	fail "made: the probe was not logged"

# --- kill -9 and restart: the kernel still has everything barrierd needs
bd_kill9
expect_eq "after kill: adopt mode" "$(bstatus adopt mode)" drain
bd_start "${ARGS[@]}"
expect_eq "restart: adopt Mode" "$(bd_prop adopt Mode)" drain
expect_eq "restart: adopt Pinned" "$(bd_prop adopt Pinned)" true
expect_eq "restart: adopt State" "$(bd_prop adopt State)" pinned
expect_eq "restart: made Mode" "$(bd_prop made Mode)" flush
expect_eq "restart: made Pinned" "$(bd_prop made Pinned)" false
expect_eq "restart: made State" "$(bd_prop made State)" healthy
sleep 3
expect_eq "pinned drain kept with the cache on" "$(bstatus adopt mode)" drain
expect_eq "tables reloaded on adoption" "$(grep -c 'table reloaded' "$BD_LOG" || true)" 0

# --- RemoveDevice
bd_monitor
bcall $BD_PATH $BD_MGR RemoveDevice 'sa{sv}' made 0 >/dev/null || fail "RemoveDevice failed"
dmsetup info made >/dev/null 2>&1 && fail "made still exists"
wait_until 5 'bd_signals DeviceRemoved | has "\"made\""' || fail "no DeviceRemoved for made"
expect_error org.dmbarrier1.Error.NoSuchDevice dsend $BD_PATH $BD_MGR.GetDevice string:made
udevadm settle -t 10
[ -e /dev/disk/by-barrier/made ] && fail "the by-barrier link outlived the mapping"

bd_stop
dmsetup remove adopt
