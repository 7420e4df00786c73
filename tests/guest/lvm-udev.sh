#!/bin/bash
# LVM and dm-barrier with udevd running (DM_DISABLE_UDEV unset, Debian's
# lvm.conf, udev_sync on): the barrier mapping as a PV on the AHCI disk
# (ext4 on an LV, vgchange -an/-ay, lvextend + resize2fs), then a
# barrier mapping over an LV on the IDE disk.  --devices restricts each
# LVM command to the one PV.
# vm: ide ahci
# timeout: 300
source "$PROJECT/tests/vm/lib.sh"
source "$PROJECT/tests/guest/fs.lib"
source "$PROJECT/tests/guest/lvm.lib"

modprobe dm-barrier
lvm_setup udev /dev/mapper/pvb
lvm_pv_run "$DISK_AHCI"
udevadm settle -t 30
lvm_setup udev "$DISK_IDE"
lvm_top_run "$DISK_IDE"
