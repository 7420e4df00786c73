#!/bin/bash
# barrierctl (and so libdmbarrier) against the real target: create loads
# no module itself (no CAP_SYS_MODULE needed): with the kernel's module
# autoload switched off it fails with a clear error and dm_barrier stays
# unloaded, with autoload on the kernel loads dm_barrier for the table;
# --version reports the module's state (libkmod) and the target's version;
# list/status agree field by field with dmsetup; set-mode, barrier,
# reset-stats do what the target documents; wait-event returns on a real dm
# event (a mode message, hdparm -W0 + status, removal) and times out with
# exit 5 otherwise; every bad request fails with its documented exit code
# and changes nothing; with udevd running, create/remove return with the
# udev links already made/gone (cookies).
# vm: ide ahci smp=1
# timeout: 300
source "$PROJECT/tests/vm/lib.sh"
source "$PROJECT/tests/guest/barrierctl.lib"

dm_names() { dmsetup info -c --noheadings -o name 2>/dev/null | sort | tr '\n' ' '; }

S_IDE=$(sectors "$DISK_IDE")
S_AHCI=$(sectors "$DISK_AHCI")

# ------------------------------- the kernel loads the target, not barrierctl
if grep -q '^dm_barrier ' /proc/modules; then rmmod dm_barrier; fi
bctl 0 --version
grep -qx 'dm-barrier: not loaded (the kernel loads it with the first barrier table)' <<<"$OUT" ||
	fail "--version with dm_barrier unloaded: $OUT"
old_modprobe=$(cat /proc/sys/kernel/modprobe)
trap 'echo "$old_modprobe" >/proc/sys/kernel/modprobe' EXIT
echo /bin/false >/proc/sys/kernel/modprobe
# With the kernel's autoload off, barrierctl must not load the module itself
# (it did with libkmod before): create fails, says why, and leaves nothing.
bctl 3 -v create safe "$DISK_IDE"
err_has "did not load dm-barrier"
! grep -q '^dm_barrier ' /proc/modules || fail "barrierctl loaded dm_barrier itself"
[ -z "$(dmsetup info -c --noheadings -o name safe 2>/dev/null)" ] || fail "a failed create left 'safe'"
echo "$old_modprobe" >/proc/sys/kernel/modprobe
# With autoload on, the table load makes the kernel ask for "dm-barrier"
# (dm core's request_module("dm-%s")), and modprobe finds dm_barrier by name.
bctl 0 -v create safe "$DISK_IDE"
err_has "the kernel loaded dm-barrier for 'safe'"
grep -q '^dm_barrier ' /proc/modules || fail "dm_barrier is not loaded after create"
bctl 0 --version
grep -qE '^dm-barrier: loaded, target version 1\.[0-9]+\.[0-9]+$' <<<"$OUT" ||
	fail "--version with dm_barrier loaded: $OUT"
[ -b /dev/mapper/safe ] || fail "/dev/mapper/safe is not a block device when create returned"
expect_eq "uuid" "$(dmsetup info -c --noheadings -o uuid safe)" "BARRIER-safe"
expect_eq "table" "$(dmsetup table safe)" "0 $S_IDE barrier $(devno "$DISK_IDE") 0"

# ------------------------------------------------------------------- list
dmsetup create plain --table "0 2048 barrier $DISK_AHCI 0"
dmsetup create lin --table "0 2048 linear $DISK_AHCI 4096"
bctl 0 list
expect_eq "list header" "$(head -n 1 <<<"$OUT" | awk '{print $1, $2, $3}')" "NAME BACKING MODE"
expect_eq "list names" "$(tail -n +2 <<<"$OUT" | awk '{print $1}' | tr '\n' ' ')" "plain safe "
expect_eq "list backing of safe" "$(awk '$1 == "safe" {print $2}' <<<"$OUT")" "$(disk_name "$DISK_IDE")"
bctl 0 list -n
expect_eq "list -n lines" "$(wc -l <<<"$OUT")" 2
bctl 0 list --json
expect_eq "json names" "$(jq -r '[.mappings[].name] | join(",")' <<<"$OUT")" "plain,safe"
expect_eq "json uuid of plain (made by dmsetup)" "$(jq -r '.mappings[0].uuid' <<<"$OUT")" ""
expect_eq "json mode" "$(jq -r '.mappings[1].mode' <<<"$OUT")" "flush"

# ----------------------------------------------------------------- status
dsync_write /dev/mapper/safe 1 >/dev/null
dsync_write /dev/mapper/safe 2 >/dev/null
bctl 0 status safe --json
echo "$OUT" >"$WORK/status.json"
# The fifteen fields of target 1.0, in the target's order, against
# dmsetup's line (libdmbarrier skips what a newer 1.x appends: 1.1's debts).
fields=$(printf '.%s,' "${BSTATUS_FIELDS[@]:0:15}")
# "cache" is {kernel, drive}: the kernel's view is the status field.
fields=${fields/.cache,/(.cache.kernel | gsub(\" \"; \"\")),}
got=$(jq -r "[${fields%,}] | map(tostring) | join(\" \")" "$WORK/status.json" |
	sed 's/^\([a-z]* [a-z]*\) true /\1 fua /; s/^\([a-z]* [a-z]*\) false /\1 nofua /')
expect_eq "status fields" "$got" "$(dmsetup status safe | cut -d' ' -f4-18)"
[ "$(jq .barriers "$WORK/status.json")" -gt 0 ] || fail "two dsync writes counted no barrier"
expect_eq "json table: 0 length barrier backing offset" \
	"$(jq -r '"0 \(.length) barrier \(.backing_devnum) \(.offset)"' "$WORK/status.json")" \
	"$(dmsetup table safe)"
expect_eq "json devnum, event_nr" "$(jq -r '"\(.devnum) \(.event_nr)"' "$WORK/status.json")" \
	"$(dmsetup info -c --noheadings -o major,minor --separator : safe | tr -d ' ') $(event_nr safe)"
bctl 0 status safe
grep -q '^safe$' <<<"$OUT" || fail "status has no 'safe' heading: $OUT"
grep -qE '^ +mode: flush$' <<<"$OUT" || fail "status lacks 'mode: flush': $OUT"
grep -qE "^ +barriers: $(bstatus safe barriers)\$" <<<"$OUT" || fail "status barriers: $OUT"
bctl 0 status
expect_eq "status of all: headings" "$(grep -E '^[a-z]' <<<"$OUT" | tr '\n' ' ')" "plain safe "
bctl 0 status --json
expect_eq "status --json of all" "$(jq -r '[.mappings[].name] | join(",")' <<<"$OUT")" "plain,safe"

# --------------------------------------------------- set-mode, barrier, reset
n=$(event_nr safe)
bctl 0 set-mode safe drain
expect_eq "mode after set-mode" "$(bstatus safe mode)" drain
expect_eq "table keeps the mode" "$(dmsetup table safe)" \
	"0 $S_IDE barrier $(devno "$DISK_IDE") 0 1 mode:drain"
wait_until 5 '[ "$(event_nr safe)" -gt "$n" ]' || fail "set-mode raised no dm event"
bctl 2 set-mode safe bogus
expect_eq "mode after a bad set-mode" "$(bstatus safe mode)" drain

# The explicit barrier flushes even when nothing was written since the
# last flush.  (In mode drain the target issues no flush for it, against
# docs/dm-barrier.rst: reported, so this is checked in mode flush.)
bctl 0 set-mode safe flush
bctl 0 barrier safe
f=$(bstatus safe flushes)
bctl 0 barrier safe
[ "$(bstatus safe flushes)" -gt "$f" ] || fail "barrier issued no flush"
bctl 0 set-mode safe none
bctl 4 barrier safe
err_has "mode none"
[ "$(bstatus safe refused)" -gt 0 ] || fail "the refused barrier was not counted"
bctl 0 set-mode safe flush

[ "$(bstatus safe barriers)" -gt 0 ] || fail "no barriers to reset"
bctl 0 reset-stats safe
expect_eq "barriers after reset-stats" "$(bstatus safe barriers)" 0
expect_eq "mode after reset-stats" "$(bstatus safe mode)" flush

# ------------------------------------------------------------- wait-event
# Control: nothing happens, so it must time out (exit 5).
bctl 5 wait-event safe --timeout 1
err_has "no event"

# A mode message raises an event; --event-nr makes the wait race-free.
n=$(event_nr safe)
bg_bctl "$WORK/w1" wait-event safe --event-nr "$n" --timeout 60 --json
w1=$BG
sleep 0.5
dmsetup message safe 0 mode fua
wait "$w1"
expect_eq "wait-event after a message: exit" "$(cat "$WORK/w1.rc")" 0
[ "$(jq .event_nr "$WORK/w1")" -gt "$n" ] || fail "wait-event returned event $(cat "$WORK/w1"), not after $n"

# Without --event-nr it waits for the next one after it started.
(sleep 2 && dmsetup message safe 0 mode flush) &
bctl 0 wait-event safe --timeout 60
wait

# hdparm -W0 raises no uevent and no dm event by itself; the next status
# call makes the target notice the cache change and raise one.  The waiter
# starts first: its own table query is a status call too.
n=$(event_nr safe)
bg_bctl "$WORK/w2" wait-event safe --event-nr "$n" --timeout 60
w2=$BG
sleep 1
hdparm -W0 "$DISK_IDE" >/dev/null
wait_until 5 '[ "$(write_cache "$DISK_IDE")" = "write through" ]' || fail "hdparm -W0 did not take"
sleep 1
kill -0 "$w2" 2>/dev/null || fail "wait-event returned before anything looked at the cache: $(cat "$WORK/w2")"
dmsetup status safe >/dev/null
wait "$w2"
expect_eq "wait-event after hdparm -W0 + status" "$(cat "$WORK/w2.rc")" 0
[ "$(bstatus safe cache_changes)" -ge 1 ] || fail "the target counted no cache change"
expect_eq "status cache after -W0" "$(bstatus safe cache)" writethrough
hdparm -W1 "$DISK_IDE" >/dev/null

# A mapping removed while waited on: exit 3.
bg_bctl "$WORK/w3" wait-event plain --timeout 60
w3=$BG
sleep 0.5
dmsetup remove plain
wait "$w3"
expect_eq "wait-event on a removed mapping" "$(cat "$WORK/w3.rc")" 3
bctl 3 wait-event nosuch --timeout 1
bctl 3 wait-event lin --timeout 1

# ---------------------------------------------- bad requests change nothing
before=$(dm_names)
bctl 1 create safe "$DISK_AHCI"
err_has "already exists"
expect_eq "table of safe after a second create" "$(dmsetup table safe)" "0 $S_IDE barrier $(devno "$DISK_IDE") 0"
bctl 3 create x /dev/nonexistent
bctl 1 create x /dev/null
err_has "not a block device"
bctl 1 create x "$DISK_AHCI" --offset "$S_AHCI"
err_has "not inside"
bctl 1 create x "$DISK_AHCI" --length $((S_AHCI + 1))
err_has "do not fit"
bctl 1 create x "$DISK_AHCI" --offset 8 --length $((S_AHCI - 7))
bctl 2 create x "$DISK_AHCI" --mode bogus
bctl 2 create a/b "$DISK_AHCI"
bctl 2 create x
bctl 2 frobnicate
expect_eq "dm devices after bad creates" "$(dm_names)" "$before"

bctl 3 status lin
err_has "not a barrier mapping"
bctl 3 remove lin
bctl 3 set-mode lin drain
bctl 3 barrier lin
bctl 3 reset-stats lin
expect_eq "lin untouched" "$(dmsetup table lin)" "0 2048 linear $(devno "$DISK_AHCI") 4096"
bctl 3 status nosuch
bctl 3 remove nosuch
expect_eq "dm devices after bad requests" "$(dm_names)" "$before"

# ----------------------------------------------- every option of create
bctl 0 create opt "$DISK_AHCI" --mode fua --fallback drain --hold-on-flush-error 2500 \
	--offset 8 --length 1000
expect_eq "table with every option" "$(dmsetup table opt)" \
	"0 1000 barrier $(devno "$DISK_AHCI") 8 3 mode:fua fallback:drain hold_on_flush_error:2500"
bctl 0 status opt --json
expect_eq "json of opt" "$(jq -r '[.mode, .fallback, .hold_on_flush_error, .offset, .length] | join(" ")' <<<"$OUT")" \
	"fua drain 2500 8 1000"

# ------------------------------------------------------------------ reload
# Only what is given changes; the rest is read back from the live table.
bctl 0 reload opt --hold-on-flush-error 100
expect_eq "table after reload --hold" "$(dmsetup table opt)" \
	"0 1000 barrier $(devno "$DISK_AHCI") 8 3 mode:fua fallback:drain hold_on_flush_error:100"
bctl 0 reload opt --mode drain --fallback none
expect_eq "table after reload --mode --fallback" "$(dmsetup table opt)" \
	"0 1000 barrier $(devno "$DISK_AHCI") 8 2 mode:drain hold_on_flush_error:100"
bctl 1 reload opt --offset "$S_AHCI"
err_has "not inside"
bctl 3 reload nosuch
bctl 3 reload lin --mode drain
expect_eq "lin after a refused reload" "$(dmsetup table lin)" "0 2048 linear $(devno "$DISK_AHCI") 4096"
expect_eq "table after refused reloads" "$(dmsetup table opt)" \
	"0 1000 barrier $(devno "$DISK_AHCI") 8 2 mode:drain hold_on_flush_error:100"
# Another device, kept open across the reload: the swap happens under it.
exec 3</dev/mapper/opt
bctl 0 reload opt "$DISK_IDE"
expect_eq "table after reload onto another disk" "$(dmsetup table opt)" \
	"0 $S_IDE barrier $(devno "$DISK_IDE") 0 2 mode:drain hold_on_flush_error:100"
expect_eq "tables after the reload" "$(dmsetup info opt | sed -n 's/^Tables present: *//p')" "LIVE"
# Open, so remove must refuse (after libdevmapper's retries) and keep it.
bctl 1 remove opt
err_has "in use"
exec 3<&-

# ------------------------------------------------------------------ remove
bctl 0 remove opt
bctl 0 remove safe
[ ! -e /dev/mapper/safe ] || fail "/dev/mapper/safe is still there after remove"
must_fail dmsetup info safe >/dev/null 2>&1
expect_eq "dm devices at the end" "$(dm_names)" "lin "
bctl 0 list
expect_eq "empty list" "$OUT" ""
bctl 0 list --json
expect_eq "empty json list" "$(jq -c . <<<"$OUT")" '{"mappings":[]}'

# --------------------------------------------------------- with udev
# udev cookies: when create returns, udev has made the links; when remove
# returns, they are gone.  No settle in between.
start_udev
bctl 0 create u "$DISK_IDE"
[ -L /dev/disk/by-id/dm-uuid-BARRIER-u ] || fail "no /dev/disk/by-id/dm-uuid-BARRIER-u when create returned"
[ -b /dev/mapper/u ] || fail "no /dev/mapper/u when create returned"
bctl 0 remove u
[ ! -e /dev/mapper/u ] || fail "/dev/mapper/u is still there when remove returned"
[ ! -e /dev/disk/by-id/dm-uuid-BARRIER-u ] || fail "the by-id link is still there when remove returned"
dmsetup remove lin
log "barrierctl mappings: all checks passed"
