#!/bin/bash
# make check-long: the ordering verifier at 100k bios per run (DMB_LONG=1;
# skipped otherwise, order-ide/-ahci/-scsi/-fallback run 10k in make check).
# Modes flush (durability too) on the IDE and the AHCI disk and drain on
# AHCI must be clean; dm-linear on AHCI, the negative control, must not.
# vm: ahci ide mem=3072
# timeout: 2400
# env: DMB_LONG DMB_ORD_BIOS
source "$PROJECT/tests/vm/lib.sh"
[ -n "${DMB_LONG:-}" ] || skip "long variant: make check-long (DMB_LONG=1)"
ORD_BIOS=${DMB_ORD_BIOS:-100000}
source "$PROJECT/tests/tools/order-lib.sh"

modprobe dm-barrier
ord_mode_run lflush-ide "$DISK_IDE" flush --durability
ord_mode_run lflush-ahci "$DISK_AHCI" flush --durability
ord_mode_run ldrain-ahci "$DISK_AHCI" drain
ord_negative llinear "$DISK_AHCI" "linear $DISK_AHCI 0" 100
