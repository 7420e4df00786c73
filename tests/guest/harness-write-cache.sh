#!/bin/bash
# Harness: hdparm -W0 / -W1 on the IDE (ata_piix) and AHCI disks flips the
# kernel's queue/write_cache between "write through" and "write back", and
# the drive's own IDENTIFY state with it.
# vm: ide ahci
# timeout: 60
source "$PROJECT/tests/vm/lib.sh"

for d in "$DISK_IDE" "$DISK_AHCI"; do
	expect_eq "$d initial kernel cache" "$(write_cache "$d")" "write back"
	expect_eq "$d initial drive cache" "$(drive_write_cache "$d")" 1
	hdparm -W0 "$d" >/dev/null
	wait_until 5 'test "$(write_cache "$d")" = "write through"' ||
		fail "$d: queue/write_cache is '$(write_cache "$d")' after hdparm -W0"
	expect_eq "$d drive cache after -W0" "$(drive_write_cache "$d")" 0
	hdparm -W1 "$d" >/dev/null
	wait_until 5 'test "$(write_cache "$d")" = "write back"' ||
		fail "$d: queue/write_cache is '$(write_cache "$d")' after hdparm -W1"
	expect_eq "$d drive cache after -W1" "$(drive_write_cache "$d")" 1
done
