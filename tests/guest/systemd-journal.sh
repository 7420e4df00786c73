#!/bin/bash
# journald records barrierd's lines with structured fields when systemd
# runs it (stderr is a journal stream, so barrierd uses the native
# protocol): a mode switch carries MESSAGE_ID=d2d1764a90cc4c94b19e2d5a6b51d099
# (BARRIERD_MESSAGE_MODE_CHANGED), DMB_DEVICE= (the mapping), DMB_DISK=,
# DMB_MODE_FROM=, DMB_MODE=, its PRIORITY, and journald's _SYSTEMD_UNIT;
# `journalctl -u barrierd -o verbose` shows them.  (The flush-failure
# MESSAGE_ID is checked in systemd-flushfail.)
# In-test controls: the entries about a second mapping carry its own name;
# lines that change no mode carry no MESSAGE_ID.
# Negative control (run once, results in docs/verification.md):
# barrierd without the MESSAGE_ID field fails this test.
# vm: ide ahci systemd
# timeout: 90
source "$PROJECT/tests/vm/lib.sh"
source "$PROJECT/tests/guest/barrierd.lib"
source "$PROJECT/tests/guest/systemd.lib"

ID=d2d1764a90cc4c94b19e2d5a6b51d099
stop_unit
systemctl start $UNIT || fail "systemctl start failed"
barrierctl --bus create jn "$DISK_IDE" >/dev/null || fail "create jn"
barrierctl --bus create jn2 "$DISK_AHCI" >/dev/null || fail "create jn2"
hdparm -W0 "$DISK_IDE" "$DISK_AHCI" >/dev/null
wait_until 5 'test "$(bstatus jn mode)" = drain && test "$(bstatus jn2 mode)" = drain' ||
	fail "no drain after -W0: $(bstatus jn mode) $(bstatus jn2 mode)"
sleep 1
journalctl --no-pager -u $UNIT -o verbose _SYSTEMD_INVOCATION_ID="$(uprop InvocationID)" MESSAGE_ID=$ID
# One entry per mapping and switch, with its fields.
fields() {
	junit MESSAGE_ID=$ID DMB_DEVICE="$1" |
		jq -r '[.PRIORITY, .DMB_DEVICE, .DMB_DISK, .DMB_MODE_FROM, .DMB_MODE, .MESSAGE] | join("|")'
}
expect_eq "jn: mode change entry" "$(fields jn)" \
	"5|jn|$(disk_name "$DISK_IDE")|flush|drain|write cache off; mode drain [mode flush -> drain]"
expect_eq "jn2: mode change entry" "$(fields jn2)" \
	"5|jn2|$(disk_name "$DISK_AHCI")|flush|drain|write cache off; mode drain [mode flush -> drain]"
expect_eq "the entries come from the unit" "$(junit MESSAGE_ID=$ID | jq -r ._SYSTEMD_UNIT | sort -u)" $UNIT
# Lines that change no mode (adoption, "created") carry none.
n_other=$(junit | jq -r 'select(.MESSAGE_ID == null and (.MESSAGE | test("created over|adopted:"))) | .MESSAGE' | wc -l)
[ "$n_other" -ge 2 ] || fail "expected the 'created' lines without MESSAGE_ID, found $n_other"
expect_eq "entries with the ID in this run of barrierd" \
	"$(junit MESSAGE_ID=$ID | jq -r .DMB_DEVICE | sort | tr '\n' ' ')" "jn jn2 "
hdparm -W1 "$DISK_IDE" "$DISK_AHCI" >/dev/null
wait_until 10 'test "$(bd_prop jn State)" = healthy && test "$(bd_prop jn2 State)" = healthy' || fail "not healthy after -W1"
barrierctl --bus remove jn && barrierctl --bus remove jn2 || fail "remove"
stop_unit
