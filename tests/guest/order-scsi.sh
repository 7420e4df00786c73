#!/bin/bash
# Ordering verifier on the virtio-scsi disk, the one with FUA: mode fua
# sends real FUA writes (the disk's D events carry FUA) and must keep the
# whole contract, durability included; passthrough must not.
# vm: ide ahci scsi
# timeout: 180
source "$PROJECT/tests/vm/lib.sh"
source "$PROJECT/tests/tools/order-lib.sh"

modprobe dm-barrier
[ "$(cat "/sys/block/$(disk_name "$DISK_SCSI")/queue/fua")" = 1 ] || fail "the virtio-scsi disk has no FUA"
ord_mode_run sfua "$DISK_SCSI" fua --durability
fua_writes=$(ord_fua_dispatches "$WORK/sfua.trace")
log "FUA writes dispatched to the disk in mode fua: $fua_writes"
[ "$fua_writes" -gt 100 ] || fail "mode fua sent only $fua_writes FUA writes to the disk"
ord_negative spass "$DISK_SCSI" "barrier $DISK_SCSI 0 1 mode:passthrough" 20
