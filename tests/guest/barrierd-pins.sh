#!/bin/bash
# A pin belongs to one mapping, not to a name (issue 14, item 4).  The pin
# record keys on the mapping's diskseq: UUID (BARRIER-<name>) and device
# number repeat when a mapping is removed and made again, the diskseq does
# not.
#  - control: a pinned mapping that is not recreated keeps its pin across
#    a restart of barrierd;
#  - recreated while barrierd is stopped (same name, same UUID, same
#    device number, checked): the start drops the stale pin, the new
#    mapping is managed (healthy, flush);
#  - recreated while barrierd is frozen (SIGSTOP, so it sees only the
#    result): the mapping is adopted afresh, the pin is dropped.
# Before the fix (shown on main's barrierd, DMB_BARRIERD): the old pin
# matched the new mapping, which stayed pinned in both cases.
# vm: ide ahci
# timeout: 180
source "$PROJECT/tests/vm/lib.sh"
source "$PROJECT/tests/guest/barrierd.lib"

mkdir -p "$WORK/conf.d"
printf '[Daemon]\nPollIntervalSec=1\n' >"$WORK/barrierd.conf"
ARGS=(-c "$WORK/barrierd.conf" -C "$WORK/conf.d" --state-dir "$WORK/run")
devnum() { dmsetup info -c --noheadings -o major,minor "$1" | tr -d ' '; }
diskseq() { cat "/sys/block/$(dm_kname "$1")/diskseq"; }
pin() { bd_gcall "$(bd_path "$1")" $BD_DEV.SetMode "'drain'" true '{}' >/dev/null || fail "SetMode drain pin on $1 failed"; }

bd_bus
bd_udev
bd_start "${ARGS[@]}"
bd_create p "$DISK_IDE"
bd_create q "$DISK_AHCI"
[ -e "/sys/block/$(dm_kname p)/diskseq" ] || skip "this kernel has no diskseq"
pin p
pin q
expect_eq "p: Pinned" "$(bd_prop p Pinned)" true
[ -e "$WORK/run/pins/p" ] || fail "no pin record for p"
log "pin record: $(tr '\n' ' ' <"$WORK/run/pins/p")"
uuid=$(dmsetup info -c --noheadings -o uuid p)
dev=$(devnum p)
seq=$(diskseq p)

# --- recreated while barrierd is stopped
bd_stop
dmsetup remove p
"$B/barrierctl" create p "$DISK_IDE" || fail "barrierctl create failed"
expect_eq "recreated: same UUID" "$(dmsetup info -c --noheadings -o uuid p)" "$uuid"
expect_eq "recreated: same device number" "$(devnum p)" "$dev"
[ "$(diskseq p)" != "$seq" ] || fail "recreated: the diskseq repeats ($seq)"
log "diskseq $seq -> $(diskseq p)"
bd_start "${ARGS[@]}"
expect_eq "control: q Pinned after the restart" "$(bd_prop q Pinned)" true
expect_eq "control: q Mode" "$(bd_prop q Mode)" drain
expect_eq "recreated: p Pinned" "$(bd_prop p Pinned)" false
wait_until 10 'test "$(bd_prop p State)" = healthy' || fail "recreated p is $(bd_prop p State), not managed"
expect_eq "recreated: p Mode" "$(bd_prop p Mode)" flush
[ -e "$WORK/run/pins/p" ] && fail "the stale pin record is still there"
grep -q "p: dropping a stale pin" "$BD_LOG" || fail "the stale pin was not logged"

# --- recreated while barrierd looks away
pin p
seq=$(diskseq p)
dev=$(devnum p)
kill -STOP "$BD_PID"
dmsetup remove p
"$B/barrierctl" create p "$DISK_IDE" --mode drain || { kill -CONT "$BD_PID"; fail "barrierctl create failed"; }
kill -CONT "$BD_PID"
expect_eq "recreated again: same device number" "$(devnum p)" "$dev"
[ "$(diskseq p)" != "$seq" ] || fail "recreated again: the diskseq repeats ($seq)"
wait_until 10 'test "$(bd_prop p Pinned)" = false' || fail "the pin outlived its mapping while barrierd ran"
wait_until 10 'test "$(bd_prop p State)" = healthy' || fail "recreated p is $(bd_prop p State), not managed"
expect_eq "recreated again: p Mode" "$(bd_prop p Mode)" flush
[ -e "$WORK/run/pins/p" ] && fail "the stale pin record is still there"
grep -q "p: the mapping was recreated; adopting it afresh" "$BD_LOG" || fail "the re-adoption was not logged"
expect_eq "control: q still Pinned" "$(bd_prop q Pinned)" true

bd_stop
"$B/barrierctl" remove p || fail "remove p"
"$B/barrierctl" remove q || fail "remove q"
