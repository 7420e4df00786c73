#!/bin/bash
# A cache flush that fails with a medium error (a drive that cannot write
# its cache to the medium: SCSI's MEDIUM ERROR on SYNCHRONIZE CACHE) and
# loses what the cache held, inside a direct barrier's request on a
# request-based disk (dmb_disk): the request's one status does not say
# whether the pre-flush or the write failed, and the target's rerun in its
# worker works.  Found by the campaign (seed 117 over dmb_disk): the target
# took the -ENODATA for the write's media error, did not fall back, and the
# next fsync returned 0 while the plain write acknowledged before the
# failed flush read back as zeroes - a false success.  The barrier must
# fail and the mapping fall back (here to none: the next barrier is
# refused).
# Control: a write that fails with a medium error every time (a bad
# sector: the rerun fails at the write) stays a write error with no
# fallback (target-write-errors covers the bio-based side).
# vm: ide
# timeout: 120
source "$PROJECT/tests/vm/lib.sh"

D=/sys/kernel/debug/dmb_disk
ctl() { echo "${*:2}" >"$D/$1/ctl" || fail "ctl '${*:2}' to $1 refused"; }
blk() { dd if="$1" bs=4k skip="$2" count=1 iflag=direct status=none | od -An -tx1 -N1 | tr -d ' '; }
cleanup() {
	dmsetup remove bm 2>/dev/null || true
	rmmod dmb_disk 2>/dev/null || true
}
trap cleanup EXIT

load_testmod dmb_disk sectors=262144
modprobe dm-barrier
head -c 4096 /dev/urandom | tr '\000' '\001' >"$WORK/pat"
pwrite() { dd if="$WORK/pat" of="$1" bs=4k count=1 seek="$2" oflag=direct conv=notrunc status=none; }
dwrite() { dd if="$WORK/pat" of="$1" bs=4k count=1 seek="$2" oflag=direct,dsync conv=notrunc status=none 2>&1; }

# --- A: the flush fails with MEDIUM and loses the cache
make_barrier bm /dev/dmbd1
pwrite /dev/mapper/bm 1 || fail "A: a plain write failed"
ctl dmbd1 fail_flush 1 MEDIUM lose
if out=$(dwrite /dev/mapper/bm 2); then
	fail "A: the barrier whose pre-flush failed (medium error, cache lost) succeeded"
fi
log "A: the barrier: $out; $(dmsetup status bm)"
expect_eq "A: the plain write acknowledged before it, after the loss" "$(blk /dev/dmbd1 1)" 00
expect_eq "A: fallbacks" "$(bstatus bm fallbacks)" 1
expect_eq "A: mode" "$(bstatus bm mode)" none
# The next barrier (an O_DSYNC write; fsync(2) on a block device turns
# the refusal, -EOPNOTSUPP, into 0 itself) must not succeed.
if out=$(dwrite /dev/mapper/bm 3); then
	fail "A: a barrier after the lost cache succeeded: it promises the write the flush lost"
fi
case "$out" in
*"Operation not supported"*) log "ok: A: the next barrier: '$out'" ;;
*) fail "A: the next barrier: got '$out', want it refused (Operation not supported)" ;;
esac
dmsetup remove bm
ctl dmbd1 clear

# --- B (control): a bad sector, every write to it fails with MEDIUM
make_barrier bm /dev/dmbd1
pwrite /dev/mapper/bm 1 || fail "B: a plain write failed"
ctl dmbd1 fail_write 16 8 all MEDIUM
if out=$(dwrite /dev/mapper/bm 2); then
	fail "B: a barrier write to a bad sector succeeded"
fi
case "$out" in
*"No data available"*) log "ok: B: '$out'" ;;
*) fail "B: got '$out', want the write's own status (No data available)" ;;
esac
expect_eq "B: fallbacks" "$(bstatus bm fallbacks)" 0
expect_eq "B: mode" "$(bstatus bm mode)" flush
dd if=/dev/null of=/dev/mapper/bm conv=fdatasync,notrunc status=none || fail "B: an fsync after a write error failed"
ctl dmbd1 clear
dmsetup remove bm
