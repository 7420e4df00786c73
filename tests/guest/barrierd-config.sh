#!/bin/bash
# barrierd.conf against real devices: the mappings a configuration asks
# for are created on start (pinned mode, hold, fallback as written); a bad
# configuration - a syntax error in a drop-in, a missing device, a name
# taken by another mapping, a mapping the kernel refuses half way - stops
# barrierd with exit status 78 and a FILE:LINE message, and leaves nothing
# created (the refused one's predecessors are rolled back); --check-config
# says the same without starting; SIGHUP applies a new drop-in and keeps
# the old configuration when the new one is bad.
# Negative control: the good configuration, started the same way, does
# create its mappings (so "nothing created" is the error handling, not a
# daemon that creates nothing).
# vm: ide ahci
# timeout: 240
source "$PROJECT/tests/vm/lib.sh"
source "$PROJECT/tests/guest/barrierd.lib"

CONF=$WORK/barrierd.conf
DROP=$WORK/conf.d
mkdir -p "$DROP"
ARGS=(-c "$CONF" -C "$DROP" --state-dir "$WORK/run")
barrier_maps() { dmsetup ls --target barrier 2>/dev/null | awk '$1 != "No" {print $1}' | sort | tr '\n' ' '; }

# expect_config_error WHERE WHAT [MAPPINGS]: barrierd exits 78 saying
# WHERE: ...WHAT on stderr, and the barrier mappings afterwards are
# MAPPINGS (default none: the ones there before).
expect_config_error() {
	local rc=0
	"$BARRIERD" "${ARGS[@]}" >"$WORK/err" 2>&1 || rc=$?
	expect_eq "exit status ($2)" "$rc" 78
	grep -qF -- "$1" "$WORK/err" && grep -qF -- "$2" "$WORK/err" ||
		fail "expected '$1 ... $2' in: $(cat "$WORK/err")"
	log "ok: $(grep -F -- "$1" "$WORK/err" | head -n 1)"
	expect_eq "mappings after the error" "$(barrier_maps)" "${3:-}"
	bd_check_sanitizers
}

cat >"$CONF" <<EOF
# barrierd test configuration
[Daemon]
PollIntervalSec=1

[Mapping]
Name=a
Device=$DISK_IDE
Mode=drain
Pin=yes
EOF
cat >"$DROP/20-b.conf" <<EOF
[Mapping]
Name=b
Device=$DISK_AHCI
Fallback=none
HoldOnFlushErrorMSec=2500
EOF

bd_bus

# --- a syntax error in a drop-in: nothing is created
printf '[Mapping]\nName=c\nDevice=%s\nMode=fastest\n' "$DISK_AHCI" >"$DROP/30-bad.conf"
expect_config_error "$DROP/30-bad.conf:4:" "Mode=fastest: flush, fua, drain, passthrough or none expected"
rc=0
"$BARRIERD" "${ARGS[@]}" --check-config >"$WORK/check" 2>&1 || rc=$?
expect_eq "--check-config on the bad file" "$rc" 78
grep -q "30-bad.conf:4:" "$WORK/check" || fail "--check-config: $(cat "$WORK/check")"

# --- a device that is not there, in the second mapping: the first is not created
printf '[Mapping]\nName=c\nDevice=/dev/disk/by-id/nonexistent\n' >"$DROP/30-bad.conf"
expect_config_error "$DROP/30-bad.conf:1: [Mapping] 'c': Device=/dev/disk/by-id/nonexistent" \
	"No such file or directory"

# --- the name is taken by another dm device
rm "$DROP/30-bad.conf"
dmsetup create b --table "0 8 zero"
expect_config_error "$DROP/20-b.conf:1: [Mapping] 'b'" "not a barrier mapping"
dmsetup remove b
# ... or by a barrier mapping over another disk
make_barrier b "$DISK_IDE"
table=$(dmsetup table b)
expect_config_error "$DROP/20-b.conf:1: [Mapping] 'b'" "exists over" "b "
expect_eq "b untouched (not adopted before the check)" "$(dmsetup table b)" "$table"
dmsetup remove b

# --- the kernel refuses the second mapping (longer than its disk): the first is rolled back
printf '[Mapping]\nName=c\nDevice=%s\nLength=%s\n' "$DISK_AHCI" $(($(sectors "$DISK_AHCI") + 8)) \
	>"$DROP/30-bad.conf"
expect_config_error "$DROP/30-bad.conf:1: [Mapping] 'c': cannot create it" "nothing created"
rm "$DROP/30-bad.conf"

# --- the good configuration (the control): created as written
rc=0
"$BARRIERD" "${ARGS[@]}" --check-config >"$WORK/check" 2>&1 || rc=$?
expect_eq "--check-config on the good files" "$rc" 0
grep -q "configuration OK: 2 mappings" "$WORK/check" || fail "--check-config: $(cat "$WORK/check")"
bd_start "${ARGS[@]}"
expect_eq "created" "$(barrier_maps)" "a b "
expect_eq "a: Mode" "$(bd_prop a Mode)" drain
expect_eq "a: Pinned" "$(bd_prop a Pinned)" true
expect_eq "a: uuid" "$(dmsetup info -c --noheadings -o uuid a)" BARRIER-a
case "$(dmsetup table a)" in
*" 3 mode:drain fallback:drain hold_on_flush_error:10000") ;;
*) fail "a: table $(dmsetup table a)" ;;
esac
expect_eq "b: Mode" "$(bd_prop b Mode)" flush
expect_eq "b: Pinned" "$(bd_prop b Pinned)" false
case "$(dmsetup table b)" in
*" 1 hold_on_flush_error:2500") ;;
*) fail "b: table $(dmsetup table b)" ;;
esac
sleep 2
expect_eq "a: pinned drain stays with the cache on" "$(bstatus a mode)" drain

# --- SIGHUP: a new drop-in is applied; a bad one changes nothing
printf '[Mapping]\nName=c\nDevice=%s\nOffset=8\nLength=1024\n' "$DISK_AHCI" >"$DROP/40-c.conf"
printf '[Mapping]\nName=c2\nDevice=%s\nOffset=2048\nLength=1024\n' "$DISK_AHCI" >>"$DROP/40-c.conf"
printf '[Daemon]\nPollIntervalSec=2\n' >>"$DROP/40-c.conf"
dmsetup remove b
kill -HUP "$BD_PID"
wait_until 10 'test "$(barrier_maps)" = "a b c c2 "' || fail "after SIGHUP: $(barrier_maps)"
grep -q "Reload: configuration applied" "$BD_LOG" || fail "the reload was not logged"
expect_eq "PollIntervalUSec after the reload" \
	"$(busctl --system get-property $BD_BUS $BD_PATH $BD_MGR PollIntervalUSec)" "t 2000000"
printf '[Daemon]\nPollIntervalSec=forever\n' >"$DROP/50-bad.conf"
printf '[Mapping]\nName=d\nDevice=%s\nOffset=4096\nLength=8\n' "$DISK_AHCI" >"$DROP/45-d.conf"
kill -HUP "$BD_PID"
wait_until 10 'grep -q "50-bad.conf:2: PollIntervalSec=forever" "$BD_LOG"' || fail "the bad reload was not logged"
sleep 1
expect_eq "after a bad SIGHUP" "$(barrier_maps)" "a b c c2 "
bd_ping >/dev/null || fail "barrierd died on a bad reload"
bd_stop
for m in a b c c2; do dmsetup remove "$m"; done
