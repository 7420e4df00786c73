#!/bin/bash
# Ordering verifier on the IDE disk (ata_piix: no NCQ, no FUA): a barrier
# mapping under dmb-orderload keeps the barrier contract in modes flush and
# fua (drain, overtake, durability, pre-flush) and drain (ordering only),
# checked on one blktrace of the mapping and the disk.  Negative controls:
# the same workload and checker over dm-linear and mode passthrough must
# report violations, or the check proves nothing.
# vm: ide ahci scsi
# timeout: 240
source "$PROJECT/tests/vm/lib.sh"
source "$PROJECT/tests/tools/order-lib.sh"

modprobe dm-barrier
ord_mode_run oflush "$DISK_IDE" flush --durability
ord_mode_run ofua "$DISK_IDE" fua --durability
ord_mode_run odrain "$DISK_IDE" drain
ord_negative olinear "$DISK_IDE" "linear $DISK_IDE 0" 20
ord_negative opass "$DISK_IDE" "barrier $DISK_IDE 0 1 mode:passthrough" 20
