#!/bin/bash
# dm-barrier: suspend / resume / reload under I/O loses and hangs nothing.
# fio writes checksummed blocks through a barrier mapping (direct, QD16,
# with fdatasync and O_DSYNC writers so barriers flow) while the mapping is
# suspended and resumed with and without flush, and reloaded with another
# mode (a table swap) over and over; afterwards fio reads every block back
# and checks it.  Negative control: the verify pass is shown to catch a
# block changed behind fio's back.
# vm: ide ahci
# timeout: 420
source "$PROJECT/tests/vm/lib.sh"

modprobe dm-barrier
make_barrier sus "$DISK_AHCI" hold_on_flush_error:2000
dev=/dev/mapper/sus
S=$(sectors "$DISK_AHCI")

fio_write() {
	fio --name=writer --filename="$dev" --size=96M --offset=0 --rw=randwrite --bs=4k \
		--ioengine=io_uring --iodepth=16 --direct=1 --fdatasync=32 \
		--verify=crc32c --do_verify=0 --verify_state_save=0 --randseed=7 \
		--name=dsync --filename="$dev" --size=32M --offset=128M --rw=write --bs=4k \
		--ioengine=psync --direct=1 --sync=dsync --verify=crc32c --do_verify=0 \
		--verify_state_save=0 --randseed=8 --output="$WORK/fio-write.txt"
}
fio_verify() {
	fio --name=writer --filename="$dev" --size=96M --offset=0 --rw=randwrite --bs=4k \
		--ioengine=io_uring --iodepth=16 --direct=1 --verify=crc32c --verify_only=1 \
		--verify_state_save=0 --randseed=7 \
		--name=dsync --filename="$dev" --size=32M --offset=128M --rw=write --bs=4k \
		--ioengine=psync --direct=1 --verify=crc32c --verify_only=1 --verify_state_save=0 \
		--randseed=8 --output="$WORK/fio-verify.txt"
}

bg fio fio_write
cycles=0 barriers=0
modes=(drain fua flush)
while ! bg_done fio; do
	case $((cycles % 3)) in
	0) timeout 60 dmsetup suspend sus || fail "suspend hung or failed"
	   timeout 60 dmsetup resume sus || fail "resume failed" ;;
	1) timeout 60 dmsetup suspend --noflush sus || fail "noflush suspend hung or failed"
	   timeout 60 dmsetup resume sus || fail "resume failed" ;;
	2) m=${modes[$((cycles / 3 % 3))]}
	   barriers=$((barriers + $(bstatus sus barriers)))
	   dmsetup reload sus --table "0 $S barrier $DISK_AHCI 0 2 mode:$m hold_on_flush_error:2000"
	   timeout 60 dmsetup resume sus || fail "resume after reload failed"
	   expect_eq "mode after reload" "$(bstatus sus mode)" "$m" ;;
	esac
	cycles=$((cycles + 1))
	sleep 0.3
done
expect_eq "fio write phase" "$(bg_rc fio)" 0
barriers=$((barriers + $(bstatus sus barriers)))
log "$cycles suspend/resume/reload cycles under fio; $barriers barriers through the tables"
[ "$cycles" -ge 10 ] || fail "only $cycles cycles ran during the write phase"
[ "$barriers" -gt 100 ] || fail "only $barriers barriers went through the mapping"
fio_verify || fail "verify failed: $(grep -i -m3 'verify\|bad' "$WORK/fio-verify.txt")"
log "every block read back and checked"

# Negative control: one block changed behind fio's back is found.
dd if=/dev/urandom of="$dev" bs=4k count=1 seek=$((128 * 256 + 17)) oflag=direct conv=notrunc status=none
if fio_verify >/dev/null 2>&1; then
	fail "the verify pass did not notice a corrupted block"
fi
log "the verify pass catches a corrupted block"
dmsetup remove sus
