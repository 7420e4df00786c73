#!/bin/bash
# barrierctl write-cache while the AHCI disk's cache flushes fail.  Control:
# hdparm -W0 then turns the drive's cache off but the kernel keeps saying
# "write back" (../shared/GUEST-FACTS.md).  barrierctl write-cache off must
# leave both views at off, and still so a few seconds later (libata's own
# rescan runs after it returns); on brings both back.
# vm: ide ahci blkdebug=ahci:3
# timeout: 180
source "$PROJECT/tests/vm/lib.sh"
source "$PROJECT/tests/guest/barrierctl.lib"

D=$DISK_AHCI

# The first flushes of this boot pass (other tests may have used them):
# write and flush until one fails.
failing=
for i in $(seq 1 10); do
	if ! dd if=/dev/urandom of="$D" bs=4k count=1 seek=$((1000 + i)) conv=fdatasync,notrunc \
		status=none 2>/dev/null; then
		failing=$i
		break
	fi
done
[ -n "$failing" ] || fail "the AHCI disk's flushes do not fail (blkdebug)"
log "flushes fail from write $failing on"

# Control: the kernel and the drive disagree after hdparm -W0 now.
hdparm -W0 "$D" >/dev/null
expect_eq "control: drive after hdparm -W0" "$(drive_write_cache "$D")" 0
sleep 3
# Without the disagreement this test would not show that barrierctl ends it.
[ "$(write_cache "$D")" = "write back" ] ||
	fail "control did not reproduce: the kernel follows hdparm -W0 here ($(write_cache "$D")), so nothing below tests barrierctl against the disagreement"
log "control: the kernel still says 'write back' 3 s after hdparm -W0"
hdparm -W1 "$D" >/dev/null
expect_eq "drive after hdparm -W1" "$(drive_write_cache "$D")" 1

bctl 0 write-cache "$D" off --json
expect_eq "reported drive view" "$(jq -r .drive <<<"$OUT")" off
expect_eq "reported kernel view" "$(jq -r .kernel <<<"$OUT")" "write through"
expect_eq "hdparm -W after barrierctl off" "$(drive_write_cache "$D")" 0
expect_eq "queue/write_cache after barrierctl off" "$(write_cache "$D")" "write through"
sleep 3
expect_eq "hdparm -W 3 s later" "$(drive_write_cache "$D")" 0
expect_eq "queue/write_cache 3 s later" "$(write_cache "$D")" "write through"

bctl 0 write-cache "$D" on --json
expect_eq "reported views after on" "$(jq -r '.drive + "/" + .kernel' <<<"$OUT")" "on/write back"
expect_eq "hdparm -W after barrierctl on" "$(drive_write_cache "$D")" 1
expect_eq "queue/write_cache after barrierctl on" "$(write_cache "$D")" "write back"
log "barrierctl write-cache with failing flushes: all checks passed"
