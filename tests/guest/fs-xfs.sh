#!/bin/bash
# xfs on a barrier mapping over the IDE disk
# and over the AHCI disk: fio with an fsync after every write and small
# files created, fsync()ed, renamed and unlinked; after unmounting,
# xfs_repair -n must be clean, and every fsync() must have been a barrier on
# the mapping with flushes reaching the disk.
# vm: ide ahci
# timeout: 240
source "$PROJECT/tests/vm/lib.sh"
source "$PROJECT/tests/guest/fs.lib"

modprobe dm-barrier
fs_on_barrier xfs "$DISK_IDE" 40
fs_on_barrier xfs "$DISK_AHCI" 40
