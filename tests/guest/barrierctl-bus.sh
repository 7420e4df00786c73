#!/bin/bash
# barrierctl --bus through barrierd on a real system bus: list and status
# print the same as barrierctl without --bus (the same table, text for
# text; the same values in JSON, the write cache's kernel and drive views
# named alike even when they differ); create, set-mode (--pin, auto), barrier,
# reset-stats, write-cache and remove act on the mapping through the
# daemon; barrierd's errors come back as the documented exit codes (3 no
# such mapping, 4 not an ATA disk, 6 no barrierd).  Negative controls:
# before barrierd runs and after it stopped, --bus fails with 6 while the
# direct path works; a mutating call as uid 65534 is refused and changes
# nothing, the same call as root works.
# vm: ide ahci
# timeout: 300
source "$PROJECT/tests/vm/lib.sh"
source "$PROJECT/tests/guest/barrierctl.lib"
source "$PROJECT/tests/guest/barrierd.lib"

NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
mkdir -p "$WORK/conf.d"
printf '[Daemon]\nPollIntervalSec=1\n' >"$WORK/barrierd.conf"
ARGS=(-c "$WORK/barrierd.conf" -C "$WORK/conf.d" --state-dir "$WORK/run")

bd_bus
modprobe dm-barrier
# Control: no barrierd yet, so --bus cannot work; the direct path does.
bctl 6 --bus list
err_has "barrierd is not running"
bctl 0 list

bd_start "${ARGS[@]}"
bctl 0 --bus list
expect_eq "no mappings yet" "$OUT" ""

# ------------------------------------------------------------ create
bctl 0 --bus create viabus "$DISK_IDE" --mode drain --pin --hold-on-flush-error 2500
[ -b /dev/mapper/viabus ] || fail "no /dev/mapper/viabus after --bus create"
case "$(dmsetup table viabus)" in
*" mode:drain "*"hold_on_flush_error:2500") ;;
*) fail "table of viabus: $(dmsetup table viabus)" ;;
esac
expect_eq "Pinned after create --pin" "$(bd_prop viabus Pinned)" true
bctl 1 --bus create viabus "$DISK_AHCI"
err_has "viabus"
# A missing disk is NoSuchDevice on the bus, exit 3 as without --bus;
# refused, nothing made.
rc=0
"$BCTL" --bus create other /dev/nonexistent 2>"$WORK/err" || rc=$?
expect_eq "--bus create over a missing disk: exit ($(cat "$WORK/err"))" "$rc" 3
must_fail dmsetup info other >/dev/null 2>&1

# --------------------------------------------- the same output both ways
dsync_write /dev/mapper/viabus 1 >/dev/null
bctl 0 list
direct=$OUT
bctl 0 --bus list
expect_eq "list --bus is list" "$OUT" "$direct"
bctl 0 list --json
direct=$OUT
bctl 0 --bus list --json
# Every field both back ends know, compared in one go.
common='[.mappings[] | {name, backing, mode, fallback, hold_on_flush_error, cache, fua,
	barriers, flushes, flush_errors, fallbacks, held}]'
expect_eq "list --json, the fields both know" "$(jq -c "$common" <<<"$OUT")" \
	"$(jq -c "$common" <<<"$direct")"
# The write cache's two views, named the same both ways (issue 14 item 9:
# "cache" was the drive's view with --bus and the kernel's without).  Make
# them differ: the kernel's view to write through, the drive's left on.
# viabus is pinned, so barrierd changes nothing back; the target sees the
# change at its next status and raises a dm event, barrierd reads it.
wc_file=/sys/block/$(disk_name "$DISK_IDE")/queue/write_cache
echo "write through" >"$wc_file"
dmsetup status viabus >/dev/null
want='{"kernel":"write through","drive":"on"}'
bctl 0 status viabus --json
expect_eq "direct: cache" "$(jq -c .cache <<<"$OUT")" "$want"
wait_until 10 'test "$("$BCTL" --bus status viabus --json | jq -c .cache)" = "$want"' ||
	fail "--bus cache: $("$BCTL" --bus status viabus --json | jq -c .cache), direct: $want"
log "ok: --bus status: cache = $want"
bctl 0 --bus list --json
expect_eq "list --bus: cache" "$(jq -c '.mappings[0].cache' <<<"$OUT")" "$want"
expect_eq "WriteCache: barrierd's verdict, the drive's" "$(bd_prop viabus WriteCache)" true
expect_eq "KernelWriteCache" "$(bd_prop viabus KernelWriteCache)" false
expect_eq "DriveWriteCache" "$(bd_prop viabus DriveWriteCache)" on
bctl 0 --bus write-cache viabus --json
expect_eq "write-cache --bus: both views" "$(jq -c '{write_cache, kernel, drive}' <<<"$OUT")" \
	'{"write_cache":"on","kernel":"write through","drive":"on"}'
echo "write back" >"$wc_file"
dmsetup status viabus >/dev/null
wait_until 10 'test "$(bd_prop viabus KernelWriteCache)" = true' || fail "KernelWriteCache after write back"

bctl 0 --bus status viabus --json
expect_eq "status --bus: pinned" "$(jq .pinned <<<"$OUT")" true
expect_eq "status --bus: state" "$(jq -r .state <<<"$OUT")" pinned
expect_eq "status --bus: mode" "$(jq -r .mode <<<"$OUT")" drain
bctl 0 --bus status viabus
grep -qE '^ +mode: drain \(pinned\)$' <<<"$OUT" || fail "status --bus: $OUT"
bctl 3 --bus status nosuch
bctl 3 --bus remove nosuch

# ------------------------------------------------- refused to non-root

"${NOBODY[@]}" "$BCTL" --bus list >/dev/null || fail "uid 65534 cannot list"
if "${NOBODY[@]}" "$BCTL" --bus set-mode viabus flush --pin >"$WORK/out" 2>&1; then
	fail "uid 65534 changed the mode"
fi
log "uid 65534: $(cat "$WORK/out")"
expect_eq "mode after the refused set-mode" "$(bstatus viabus mode)" drain

# ------------------------------------------------ the mapping's methods
bctl 0 --bus set-mode viabus flush --pin
expect_eq "mode after set-mode --pin" "$(bstatus viabus mode)" flush
expect_eq "Pinned" "$(bd_prop viabus Pinned)" true
f=$(bstatus viabus flushes)
bctl 0 --bus barrier viabus
[ "$(bstatus viabus flushes)" -gt "$f" ] || fail "--bus barrier issued no flush"
bctl 0 --bus reset-stats viabus
expect_eq "barriers after --bus reset-stats" "$(bstatus viabus barriers)" 0

bctl 0 --bus write-cache viabus off --json
expect_eq "write-cache --bus off: reported" "$(jq -r .write_cache <<<"$OUT")" off
expect_eq "write-cache --bus off: device" "$(jq -r .device <<<"$OUT")" "$(disk_name "$DISK_IDE")"
expect_eq "hdparm -W after --bus off" "$(drive_write_cache "$DISK_IDE")" 0
bctl 0 --bus write-cache viabus on
expect_eq "hdparm -W after --bus on" "$(drive_write_cache "$DISK_IDE")" 1
bctl 0 --bus write-cache viabus
grep -qE '^ +write_cache: on$' <<<"$OUT" || fail "write-cache --bus query: $OUT"

bctl 0 --bus set-mode viabus auto
expect_eq "Pinned after auto" "$(bd_prop viabus Pinned)" false

# A mapping over something that is not an ATA disk: NotSupported -> 4.
dmsetup create lin --table "0 $(sectors "$DISK_AHCI") linear $DISK_AHCI 0"
bctl 0 --bus create overlin /dev/mapper/lin --mode drain --pin
bctl 4 --bus write-cache overlin off
expect_eq "AHCI disk untouched" "$(drive_write_cache "$DISK_AHCI")" 1

# ------------------------------------------------------------ remove
bctl 0 --bus remove overlin
bctl 0 --bus remove viabus
must_fail dmsetup info viabus >/dev/null 2>&1
dmsetup remove lin
bctl 0 --bus list
expect_eq "no mappings at the end" "$OUT" ""

bd_stop
# Control: without barrierd again.
bctl 6 --bus status viabus
log "barrierctl --bus: all checks passed"
