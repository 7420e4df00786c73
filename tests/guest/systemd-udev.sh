#!/bin/bash
# udev starts barrierd: 11-dm-barrier.rules (installed by make install as
# 56-dm-barrier.rules, after Debian's 55-dm.rules) gives an active barrier
# mapping with a BARRIER- DM UUID the systemd tag and
# SYSTEMD_WANTS=barrierd.service; the mapping's device unit then pulls the
# stopped unit in.  `dmsetup create` with such a table -> barrierd active,
# and it manages the new mapping, without reloading its table (issue 14,
# item 3: a start reloads nothing; before the fix ud got
# hold_on_flush_error:10000 from the start udev caused).
# In-test control: a barrier mapping made without that UUID (the rules
# leave it alone) does not start barrierd.
# Negative control (run once, results in docs/verification.md):
# without the SYSTEMD_WANTS assignment in the rules the unit stays inactive.
# vm: ide ahci systemd
# timeout: 90
source "$PROJECT/tests/vm/lib.sh"
source "$PROJECT/tests/guest/barrierd.lib"
source "$PROJECT/tests/guest/systemd.lib"

stop_unit
modprobe dm-barrier
table() { echo "0 $(sectors "$1") barrier $1 0"; }

# --- without the UUID: the rules do nothing, nothing starts barrierd
dmsetup create plain --table "$(table "$DISK_AHCI")"
udevadm settle -t 10
sleep 2
expect_eq "after a mapping without BARRIER- uuid" "$(ustate)" inactive/dead
dmsetup remove plain
udevadm settle -t 10

# --- with it: the device unit wants barrierd.service
start=$(date +%s%N)
dmsetup create ud --uuid BARRIER-ud --table "$(table "$DISK_IDE")"
t_ud=$(dmsetup table ud)
wait_active 20
log "measured: $UNIT active $((($(date +%s%N) - start) / 1000000)) ms after dmsetup create"
props=$(udevadm info --query=property --name=/dev/mapper/ud)
grep -qx 'SYSTEMD_WANTS=barrierd.service' <<<"$props" || fail "ud: no SYSTEMD_WANTS: $props"
sysdev=/sys/devices/virtual/block/$(dm_kname ud)
wants=$(systemctl show -p Wants --value "$sysdev")
log "$(systemctl show -p Id --value "$sysdev"): Wants=$wants"
case " $wants " in *" $UNIT "*) ;; *) fail "the device unit of ud does not want $UNIT: '$wants'" ;; esac
wait_until 10 '[ "$(bd_prop ud Mode 2>/dev/null)" = flush ]' || fail "barrierd does not manage ud: $(bd_prop ud Mode)"
expect_eq "ud's table after the start udev caused" "$(dmsetup table ud)" "$t_ud"
dmsetup remove ud
stop_unit
