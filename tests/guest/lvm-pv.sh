#!/bin/bash
# LVM on a barrier mapping, without udevd: the mapping over the IDE disk is
# the PV (LVM configured with udev_sync = 0, udev_rules = 0,
# obtain_device_list_from_udev = 0 and a filter accepting only the
# mapping); ext4 on an LV, an fsync-heavy workload whose flushes must be
# barriers on the mapping and reach the disk, e2fsck clean; vgchange
# -an/-ay, lvextend and online resize2fs keep working.
# vm: ide ahci
# timeout: 240
source "$PROJECT/tests/vm/lib.sh"
source "$PROJECT/tests/guest/fs.lib"
source "$PROJECT/tests/guest/lvm.lib"

modprobe dm-barrier
lvm_setup noudev /dev/mapper/pvb
lvm_pv_run "$DISK_IDE"
