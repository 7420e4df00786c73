#!/bin/bash
# dm-barrier: create / table / status / remove round trip.  The table line
# printed recreates the device exactly (a second device made from it prints
# the same line), the status line has the documented 15 fields, and the
# mapping advertises a write-back cache with FUA over a disk without FUA.
# vm: ide ahci smp=1
# timeout: 120
source "$PROJECT/tests/vm/lib.sh"

modprobe dm-barrier
S=$(sectors "$DISK_IDE")
devno=$(lsblk -dno MAJ:MIN "$DISK_IDE" | tr -d ' ')

# Defaults: the table shows no features.
make_barrier plain "$DISK_IDE"
expect_eq "default table" "$(dmsetup table plain)" "0 $S barrier $devno 0"
read -r -a st <<<"$(dmsetup status plain)"
expect_eq "status field count (target 1.1: debts appended)" "${#st[@]}" 19
expect_eq "status prefix" "${st[*]:0:6}" "0 $S barrier flush writeback nofua"
for f in "${st[@]:6}"; do
	[[ "$f" =~ ^[0-9]+$ ]] || fail "status counter '$f' is not a number"
done
dm=$(dm_kname plain)
expect_eq "dm write cache" "$(cat "/sys/block/$dm/queue/write_cache")" "write back"
expect_eq "dm fua" "$(cat "/sys/block/$dm/queue/fua")" 1
expect_eq "disk fua" "$(cat "/sys/block/$(disk_name "$DISK_IDE")/queue/fua")" 0

# Every feature, with an offset and partial length: the line printed makes an
# identical device.
half=$((S / 2))
dmsetup create feat --table "0 $((half - 8)) barrier $DISK_AHCI 8 3 hold_on_flush_error:2500 fallback:drain mode:fua"
t1=$(dmsetup table feat)
dmsetup create feat2 --table "$t1"
expect_eq "recreated table" "$(dmsetup table feat2)" "$t1"
case "$t1" in
*" 8 3 mode:fua fallback:drain hold_on_flush_error:2500") ;;
*) fail "table line '$t1' does not carry the features" ;;
esac
expect_eq "status mode" "$(bstatus feat mode)" fua

# The table follows a mode set by message, so a reload keeps it.
dmsetup message feat 0 mode drain
expect_eq "table after message" "$(dmsetup table feat)" \
	"0 $((half - 8)) barrier $(lsblk -dno MAJ:MIN "$DISK_AHCI" | tr -d ' ') 8 3 mode:drain fallback:drain hold_on_flush_error:2500"
dmsetup table feat | dmsetup reload feat
dmsetup resume feat
expect_eq "mode after reload" "$(bstatus feat mode)" drain
dmsetup message feat 0 mode flush
expect_eq "default mode leaves the table" "$(dmsetup table feat)" \
	"0 $((half - 8)) barrier $(lsblk -dno MAJ:MIN "$DISK_AHCI" | tr -d ' ') 8 2 fallback:drain hold_on_flush_error:2500"

# Data written through the mapping lands at the offset on the disk.
# conv=sync pads the sector with zeros: earlier tests in this boot may have
# left random data on the disk.
printf 'dm-barrier-%s' offset-check | dd of=/dev/mapper/feat bs=512 seek=3 conv=sync,fsync,notrunc status=none
got=$(dd if="$DISK_AHCI" bs=512 skip=11 count=1 status=none | tr -d '\0')
expect_eq "data at offset 8+3" "$got" "dm-barrier-offset-check"

# reset_stats zeroes the counters but not the mode.
dsync_write /dev/mapper/plain 1 >/dev/null
[ "$(bstatus plain barriers)" -gt 0 ] || fail "a dsync write counted no barrier"
dmsetup message plain 0 reset_stats
expect_eq "barriers after reset_stats" "$(bstatus plain barriers)" 0
expect_eq "mode after reset_stats" "$(bstatus plain mode)" flush

# IMA: with ima_policy=critical_data (the runner's command line), a table
# load is measured with the target's IMA status line.
ima=/sys/kernel/security/ima/ascii_runtime_measurements
[ -r "$ima" ] || fail "IMA measurements not available ($ima)"
measured=$(grep dm_table_load "$ima" | awk '{print $NF}' | while read -r hex; do
	echo "$hex" | xxd -r -p 2>/dev/null | tr ';' '\n'
done | grep -a 'target_name=barrier')
log "IMA measurements of barrier tables:"
echo "$measured"
for want in "start=8,mode=fua,fallback=drain,hold_on_flush_error=2500" \
	"start=8,mode=drain,fallback=drain,hold_on_flush_error=2500" \
	"start=0,mode=flush,fallback=none,hold_on_flush_error=0"; do
	echo "$measured" | has "target_name=barrier,target_version=1.1.0,device_name=[0-9]*:[0-9]*,$want\$" ||
		fail "no IMA measurement ending '$want'"
done

for d in plain feat feat2; do
	dmsetup remove "$d"
done
[ -z "$(dmsetup ls --target barrier | grep -v 'No devices')" ] || fail "mappings left"
rmmod dm_barrier
