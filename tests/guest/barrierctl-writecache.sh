#!/bin/bash
# barrierctl write-cache on real emulated disks: on the IDE (ata_piix) and
# AHCI disks "off" makes hdparm -W report 0 and the kernel say "write
# through", "on" brings both back; a partition or major:minor acts on its
# whole disk.  Devices that are not ATA disks are refused with exit 4 and
# left as they were: a dm-linear mapping (whose SG_IO would reach the disk
# under it: the control shows hdparm does exactly that), a loop device, and
# the virtio-scsi disk (a real SCSI disk that rejects ATA PASS-THROUGH).
# vm: ide ahci scsi
# timeout: 240
source "$PROJECT/tests/vm/lib.sh"
source "$PROJECT/tests/guest/barrierctl.lib"

jget() { jq -r "$1" <<<"$OUT"; }

# ------------------------------------------------------------ ATA disks
for d in "$DISK_IDE" "$DISK_AHCI"; do
	name=$(disk_name "$d")
	bctl 0 write-cache "$d" --json
	expect_eq "$name: device" "$(jget .device)" "$name"
	expect_eq "$name: devnum" "$(jget .devnum)" "$(devno "$d")"
	expect_eq "$name: kernel view" "$(jget .kernel)" "write back"
	expect_eq "$name: drive view" "$(jget .drive)" "on"

	bctl 0 write-cache "$d" off --json
	expect_eq "$name: hdparm -W after off" "$(drive_write_cache "$d")" 0
	expect_eq "$name: queue/write_cache after off" "$(write_cache "$d")" "write through"
	expect_eq "$name: reported kernel view after off" "$(jget .kernel)" "write through"
	expect_eq "$name: reported drive view after off" "$(jget .drive)" "off"
	bctl 0 write-cache "$d"
	grep -qE '^ +drive: off$' <<<"$OUT" || fail "$name: human output lacks 'drive: off': $OUT"
	grep -qE '^ +kernel: write through' <<<"$OUT" || fail "$name: human output lacks the kernel view: $OUT"

	bctl 0 write-cache "$d" on
	expect_eq "$name: hdparm -W after on" "$(drive_write_cache "$d")" 1
	expect_eq "$name: queue/write_cache after on" "$(write_cache "$d")" "write back"
	# Twice the same is fine and changes nothing.
	bctl 0 write-cache "$d" on
	expect_eq "$name: hdparm -W after on again" "$(drive_write_cache "$d")" 1
done

# A partition and a major:minor act on the whole disk.
printf '00000000830000000008000000200300' | xxd -r -p |
	dd of="$DISK_AHCI" bs=1 seek=446 conv=notrunc status=none
printf '55aa' | xxd -r -p | dd of="$DISK_AHCI" bs=1 seek=510 conv=notrunc status=none
blockdev --rereadpt "$DISK_AHCI"
part=${DISK_AHCI}1
wait_until 5 '[ -b "$part" ]' || fail "no partition $part"
bctl 0 write-cache "$part" off --json
expect_eq "partition: acts on" "$(jget .device)" "$(disk_name "$DISK_AHCI")"
expect_eq "partition: hdparm -W of the disk" "$(drive_write_cache "$DISK_AHCI")" 0
bctl 0 write-cache "$(devno "$part")" on
expect_eq "major:minor of the partition: hdparm -W of the disk" "$(drive_write_cache "$DISK_AHCI")" 1
bctl 0 write-cache "$(devno "$DISK_IDE")" --json
expect_eq "major:minor: device" "$(jget .device)" "$(disk_name "$DISK_IDE")"

# ------------------------------------------------------- not ATA disks
dmsetup create lin --table "0 $(sectors "$DISK_IDE") linear $DISK_IDE 0"
# Control: SG_IO on a whole-disk dm-linear reaches the disk under it, so a
# library that only sent SG_IO would switch the IDE disk through it.
hdparm -W /dev/mapper/lin 2>/dev/null | has 'write-caching *= *1' ||
	fail "control did not reproduce: hdparm -W cannot reach the IDE disk through dm-linear here, so the refusal below proves nothing"
log "control: hdparm -W through /dev/mapper/lin reads the IDE disk's cache"
bctl 4 write-cache /dev/mapper/lin off
err_has "device-mapper device, not an ATA disk"
expect_eq "IDE disk after refused off via dm" "$(drive_write_cache "$DISK_IDE")" 1
expect_eq "IDE kernel view after refused off via dm" "$(write_cache "$DISK_IDE")" "write back"
bctl 4 write-cache /dev/mapper/lin on
bctl 0 write-cache /dev/mapper/lin --json
expect_eq "dm query: drive" "$(jget .drive)" "null"
expect_eq "dm query: reason" "$(jget .drive_error)" "not an ATA disk"
expect_eq "dm query: device" "$(jget .device)" "$(dm_kname lin)"

modprobe loop
truncate -s 16M "$WORK/loop.img"
loop=$(losetup -f --show "$WORK/loop.img")
lwc=$(write_cache "$loop")
bctl 4 write-cache "$loop" off
err_has "not an ATA disk"
expect_eq "loop queue/write_cache untouched" "$(write_cache "$loop")" "$lwc"
losetup -d "$loop"

# The virtio-scsi disk answers SG_IO but refuses ATA PASS-THROUGH.
swc=$(write_cache "$DISK_SCSI")
bctl 4 write-cache "$DISK_SCSI" off
err_has "not an ATA disk"
expect_eq "SCSI queue/write_cache untouched" "$(write_cache "$DISK_SCSI")" "$swc"
bctl 0 write-cache "$DISK_SCSI" --json
expect_eq "SCSI query: drive" "$(jget .drive)" "null"
expect_eq "SCSI query: kernel view" "$(jget .kernel)" "$swc"

bctl 3 write-cache /dev/nonexistent
bctl 3 write-cache 4095:1048575
bctl 1 write-cache /dev/null
err_has "not a block device"
bctl 2 write-cache "$DISK_IDE" maybe
expect_eq "IDE after the bad requests" "$(drive_write_cache "$DISK_IDE")" 1
dmsetup remove lin
log "barrierctl write-cache: all checks passed"
