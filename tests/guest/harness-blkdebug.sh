#!/bin/bash
# Harness: QEMU's blkdebug under the AHCI disk makes FLUSH CACHE fail after
# the first 3 flushes: fdatasync on the raw disk returns EIO from then on,
# while the IDE disk's flushes keep working.  Writes themselves succeed.
# vm: ide ahci blkdebug=ahci:3
# timeout: 120
source "$PROJECT/tests/vm/lib.sh"

# Each dd writes (so QEMU has something to flush) and ends with fdatasync.
sync_write() { dd if=/dev/urandom of="$1" bs=4k count=1 seek="$2" conv=fdatasync,notrunc status=none 2>&1; }

for i in 1 2 3; do
	out=$(sync_write "$DISK_AHCI" "$i") || fail "flush $i failed too early: $out"
	log "AHCI flush $i passed"
done
out=$(sync_write "$DISK_AHCI" 4) && fail "flush 4 succeeded on the failing disk"
log "AHCI flush 4: $out"
case "$out" in *"Input/output error"*) ;; *) fail "flush 4 failed without EIO: $out" ;; esac
kmsg_has 'FLUSH CACHE' || fail "libata did not report the failed FLUSH CACHE"
dd if=/dev/urandom of="$DISK_AHCI" bs=4k count=1 seek=9 oflag=direct conv=notrunc status=none ||
	fail "plain writes fail too; blkdebug must fail only flushes"
sync_write "$DISK_IDE" 1 >/dev/null || fail "the IDE disk's flush failed"
