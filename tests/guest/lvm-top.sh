#!/bin/bash
# A barrier mapping on an LV, without udevd: an LV on the AHCI disk (LVM
# configured for no udev, filter accepting only that disk), the mapping
# over the LV, ext4 on the mapping; the fsync()s are barriers, go through
# the LV and reach the disk; e2fsck clean.
# vm: ide ahci
# timeout: 240
source "$PROJECT/tests/vm/lib.sh"
source "$PROJECT/tests/guest/fs.lib"
source "$PROJECT/tests/guest/lvm.lib"

modprobe dm-barrier
lvm_setup noudev "$DISK_AHCI"
lvm_top_run "$DISK_AHCI"
