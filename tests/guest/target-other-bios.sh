#!/bin/bash
# dm-barrier and the bios other than reads and writes that stacks send
# (issue 28, item 3): write-zeroes and discard change what the disk holds,
# so a barrier after one must flush it; and a barrier larger than the
# disk's max_sectors, which the disk splits, goes through the worker and
# costs one pre-flush and one post-flush, not a flush sequence per piece.
#
# A: a loop device over a file on ext4 (on the IDE disk): it takes
#    write-zeroes (fallocate ZERO_RANGE) and discard (PUNCH_HOLE) and has a
#    write-back cache (its flush is an fsync of the file).  From a clean
#    mapping (the `barrier` message), one write-zeroes or discard of a 4 KiB
#    block, then an empty flush (dmb_bio F PREFLUSH): the mapping must send
#    the disk a flush (flushes=1, the loop device counts one), and the block
#    reads back as zeros.
#    Control: the same empty flush after only a read: flushes=0 (shared),
#    the disk counts none; so the flush above is the write-zeroes' or the
#    discard's.
# B: the AHCI disk with max_sectors_kb 64; a plain write, then one 512 KiB
#    O_DIRECT|O_DSYNC write (a FUA bio the disk splits in 8, then an empty
#    flush): it must succeed, the mapping send 2 flushes (pre- and
#    post-flush; the empty flush after it is shared) and the disk count
#    exactly 2 (a direct way would send PREFLUSH|FUA down, and the disk
#    run a post-flush per piece).
# Negative controls: the mutant 15-write-only-dirty (only REQ_OP_WRITE makes
# the cache dirty) fails A's write-zeroes check; 16-direct-oversize (the
# direct way takes a barrier the disk splits) fails B (the disk counted 3).
# vm: ide ahci
# timeout: 180
source "$PROJECT/tests/vm/lib.sh"

modprobe dm-barrier
modprobe loop 2>/dev/null || true
# qlimit SYSFS-NAME LIMIT
qlimit() { cat "/sys/block/$1/queue/$2"; }

# ---------------------------------------------------------------- A
mkfs.ext4 -q -F "$DISK_IDE" || fail "mkfs on $DISK_IDE failed"
mkdir -p /mnt/lb
mount "$DISK_IDE" /mnt/lb || fail "mount of $DISK_IDE failed"
truncate -s 64M /mnt/lb/img
LOOP=$(losetup -f --show /mnt/lb/img) || fail "losetup failed"
trap 'dmsetup remove m 2>/dev/null; losetup -d "$LOOP" 2>/dev/null; umount /mnt/lb 2>/dev/null' EXIT
expect_eq "loop: write cache" "$(write_cache "$LOOP")" "write back"
make_barrier m "$LOOP"
for l in write_zeroes_max_bytes discard_max_bytes; do
	[ "$(qlimit "$(dm_kname m)" "$l")" -gt 0 ] ||
		fail "precondition: the mapping's $l is $(qlimit "$(dm_kname m)" "$l") (loop: $(qlimit "$(disk_name "$LOOP")" "$l")): the kernel would not send that bio"
done
bio_open /dev/mapper/m
id=0
# after TAG CMD...: from a clean mapping and zeroed counters, CMD, then an
# empty flush; sets GOT to "flushes disk" (the mapping's, the disk's).
after() {
	local tag=$1 b r
	shift
	dmsetup message m 0 barrier || fail "$tag: the barrier message failed"
	dmsetup message m 0 reset_stats
	b=$(disk_flushes "$LOOP")
	"$@" || fail "$tag: $* failed"
	id=$((id + 1))
	bio_submit $id F PREFLUSH 0 0
	bio_wait 20 $id
	r=$(bio_result $id)
	[ "$r" = 0 ] || fail "$tag: the empty flush completed with '$r'"
	log "$tag: $*; then an empty flush: $(dmsetup status m)"
	GOT="$(bstatus m flushes) $(($(disk_flushes "$LOOP") - b))"
}
zeros_at() { # zeros_at BLOCK: the 4 KiB block reads back as zeros
	cmp -s <(dd if=/dev/mapper/m bs=4k skip="$1" count=1 iflag=direct status=none) <(head -c 4096 /dev/zero)
}
fill() { dd if=/dev/urandom of=/dev/mapper/m bs=4k seek="$1" count=1 oflag=direct conv=notrunc status=none; }
readb() { dd if=/dev/mapper/m of=/dev/null bs=4k skip="$1" count=1 iflag=direct status=none; }

fill 10
after control readb 10
expect_eq "A control: an empty flush after a read: flushes, disk flushes" "$GOT" "0 0"
zeros_at 10 && fail "precondition: block 10 is zeros before the write-zeroes"
after write-zeroes blkdiscard -z -o $((10 * 4096)) -l 4096 /dev/mapper/m
expect_eq "A write-zeroes then an empty flush: flushes, disk flushes" "$GOT" "1 1"
zeros_at 10 || fail "A: block 10 is not zeros after the write-zeroes"
fill 20
after discard blkdiscard -o $((20 * 4096)) -l 4096 /dev/mapper/m
expect_eq "A discard then an empty flush: flushes, disk flushes" "$GOT" "1 1"
zeros_at 20 || fail "A: block 20 is not zeros after the discard (loop punches a hole)"
bio_close
dmsetup remove m
losetup -d "$LOOP"
umount /mnt/lb
trap - EXIT

# ---------------------------------------------------------------- B
S=/sys/block/$(disk_name "$DISK_AHCI")/queue/max_sectors_kb
old=$(cat "$S")
echo 64 >"$S"
trap 'echo "$old" >"$S"; dmsetup remove big 2>/dev/null' EXIT
make_barrier big "$DISK_AHCI"
dd if=/dev/urandom of=/dev/mapper/big bs=4k count=1 seek=7 oflag=direct conv=notrunc status=none
dmsetup message big 0 reset_stats
b=$(disk_flushes "$DISK_AHCI")
# One O_DIRECT|O_DSYNC write of 512 KiB: a FUA bio of 1024 sectors (above
# the disk's 128), then the empty flush O_DSYNC sends after it.
out=$(dd if=/dev/urandom of=/dev/mapper/big bs=512k count=1 seek=8 oflag=direct,dsync conv=notrunc status=none 2>&1) ||
	fail "B: the 512 KiB barrier write failed: $out"
log "B: a 512 KiB O_DSYNC write, max_sectors_kb 64: $(dmsetup status big)"
expect_eq "B: the mapping's flushes" "$(bstatus big flushes)" 2
expect_eq "B: flushes the disk completed" $(($(disk_flushes "$DISK_AHCI") - b)) 2
dmsetup remove big
echo "$old" >"$S"
trap - EXIT
