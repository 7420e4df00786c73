#!/bin/bash
# barrierd rewrites no table it does not own (issue 14, item 3).  A mapping
# made by plain dmsetup and one made by barrierctl, both without a hold:
#  - a start with the default configuration adopts both (it manages their
#    mode: hdparm -W0 still makes drain) and reloads neither: the tables
#    stay byte for byte and nothing says "table reloaded";
#  - a mapping made while barrierd runs is left alone too;
#  - with AdoptHoldOnFlushErrorMSec=5000 (the opt-in), a start still
#    reloads none of the mappings it finds (a start may come from D-Bus or
#    udev activation, by anyone); only a mapping that appears while
#    barrierd runs gets the hold, which shows the option still works.
# Before the fix (shown on main's barrierd, DMB_BARRIERD): the default
# start reloaded both tables with hold_on_flush_error:10000 before READY=1.
# vm: ide ahci
# timeout: 180
source "$PROJECT/tests/vm/lib.sh"
source "$PROJECT/tests/guest/barrierd.lib"

mkdir -p "$WORK/conf.d"
printf '[Daemon]\nPollIntervalSec=1\n' >"$WORK/barrierd.conf"
ARGS=(-c "$WORK/barrierd.conf" -C "$WORK/conf.d" --state-dir "$WORK/run")
reloads() { grep -c 'table reloaded' "$BD_LOG" || true; }

bd_bus
bd_udev
modprobe dm-barrier
make_barrier plain "$DISK_AHCI"
"$B/barrierctl" create own "$DISK_IDE" || fail "barrierctl create failed"
t_plain=$(dmsetup table plain)
t_own=$(dmsetup table own)
log "plain: $t_plain; own: $t_own"
case "$t_plain$t_own" in *hold_on_flush_error*) fail "a mapping has a hold before the test" ;; esac

# --- the default: adopted, managed, not reloaded
bd_start "${ARGS[@]}"
expect_eq "default: plain adopted, Mode" "$(bd_prop plain Mode)" flush
expect_eq "default: plain State" "$(bd_prop plain State)" healthy
expect_eq "default: own State" "$(bd_prop own State)" healthy
expect_eq "default: plain HoldOnFlushErrorMSec" "$(bd_prop plain HoldOnFlushErrorMSec)" 0
expect_eq "default: plain table" "$(dmsetup table plain)" "$t_plain"
expect_eq "default: own table" "$(dmsetup table own)" "$t_own"
# barrierd still manages the mode of what it adopted: -W0 -> drain.
hdparm -W0 "$DISK_AHCI" >/dev/null
wait_until 3 'test "$(bstatus plain mode)" = drain' || fail "plain is $(bstatus plain mode) after -W0: not managed"
hdparm -W1 "$DISK_AHCI" >/dev/null
wait_until 10 'test "$(bd_prop plain State)" = healthy' || fail "plain not healthy after -W1"
# made while barrierd runs: adopted, not reloaded
make_barrier late "$DISK_AHCI"
t_late=$(dmsetup table late)
wait_until 5 'test "$(bd_prop late State)" = healthy' || fail "late was not adopted: $(bd_prop late State)"
sleep 1
expect_eq "default: late table" "$(dmsetup table late)" "$t_late"
expect_eq "default: reloads logged" "$(reloads)" 0
bd_stop
dmsetup remove late

# --- the opt-in: nothing a start finds is reloaded, a newcomer is
printf '[Daemon]\nPollIntervalSec=1\nAdoptHoldOnFlushErrorMSec=5000\n' >"$WORK/barrierd.conf"
: >"$BD_LOG"
bd_start "${ARGS[@]}"
expect_eq "opt-in start: plain table" "$(dmsetup table plain)" "$t_plain"
expect_eq "opt-in start: own table" "$(dmsetup table own)" "$t_own"
expect_eq "opt-in start: reloads logged" "$(reloads)" 0
make_barrier late "$DISK_AHCI"
wait_until 5 'test "$(bd_prop late HoldOnFlushErrorMSec)" = 5000' ||
	fail "opt-in: late has hold $(bd_prop late HoldOnFlushErrorMSec): $(dmsetup table late)"
case "$(dmsetup table late)" in
*"hold_on_flush_error:5000"*) ;;
*) fail "opt-in: late's table: $(dmsetup table late)" ;;
esac
expect_eq "opt-in: reloads logged" "$(reloads)" 1
expect_eq "opt-in: plain table still" "$(dmsetup table plain)" "$t_plain"
bd_stop
dmsetup remove late
dmsetup remove plain
"$B/barrierctl" remove own || fail "barrierctl remove failed"
