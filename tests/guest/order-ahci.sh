#!/bin/bash
# Ordering verifier on the AHCI disk (NCQ, 32 tags, no FUA): as order-ide,
# with a disk that reorders queued commands itself.  Modes flush and drain
# must be clean; dm-linear and passthrough must show violations.
# vm: ide ahci scsi
# timeout: 240
source "$PROJECT/tests/vm/lib.sh"
source "$PROJECT/tests/tools/order-lib.sh"

modprobe dm-barrier
ord_mode_run aflush "$DISK_AHCI" flush --durability
ord_mode_run adrain "$DISK_AHCI" drain
ord_negative alinear "$DISK_AHCI" "linear $DISK_AHCI 0" 20
ord_negative apass "$DISK_AHCI" "barrier $DISK_AHCI 0 1 mode:passthrough" 20
