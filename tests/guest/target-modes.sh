#!/bin/bash
# dm-barrier: what every mode does with barriers, from the target's counters
# and, independently, from the disk's own count of completed flushes
# (diskstats): flush (pre-flush, write, post-flush; shared flushes), fua
# (FUA write where the disk has FUA - only virtio-scsi here - else as flush,
# and status says nofua), drain (no flushes), passthrough (flags passed on),
# none (barriers fail with EOPNOTSUPP, other bios pass), and flush over a
# write-through disk (acts as drain, counted in no_cache); the explicit
# barrier message flushes in every mode but none; a FUA and a PREFLUSH|FUA
# write made in the kernel (dmb_bio), direct and through the worker, cost
# the disk a pre-flush and a post-flush.
# Negative control: each mode's expected numbers differ from every other
# mode's, so a mode that behaved like another fails here.
# vm: ide ahci scsi
# timeout: 240
source "$PROJECT/tests/vm/lib.sh"

modprobe dm-barrier

# run_dsync NAME N: N O_DIRECT|O_DSYNC writes (each a FUA write + an empty
# flush = 2 barriers), starting from a clean cache and zeroed counters.
run_dsync() {
	local name=$1 n=$2 i
	dmsetup message "$name" 0 barrier 2>/dev/null || true
	dmsetup message "$name" 0 reset_stats
	for ((i = 0; i < n; i++)); do
		dsync_write "/dev/mapper/$name" $((100 + i)) >/dev/null || fail "$name: dsync write $i failed"
	done
}

# expect_counts NAME DISK FIELD=VALUE... plus disk=N: the disk's flushes
check_counts() {
	local name=$1 disk=$2 before=$3 kv k v
	shift 3
	for kv in "$@"; do
		k=${kv%%=*} v=${kv#*=}
		if [ "$k" = disk ]; then
			expect_eq "$name: flushes the disk completed" $(($(disk_flushes "$disk") - before)) "$v"
		else
			expect_eq "$name: $k" "$(bstatus "$name" "$k")" "$v"
		fi
	done
}

N=5
for disk in "$DISK_IDE" "$DISK_AHCI"; do
	tag=$(disk_name "$disk")
	make_barrier "f-$tag" "$disk"
	b=$(disk_flushes "$disk"); run_dsync "f-$tag" $N
	b=$((b + 1)) # the explicit barrier run_dsync starts with
	# Per dsync write: the FUA write shares the last flush (clean cache),
	# is written, then post-flushed; its empty flush is then shared too.
	check_counts "f-$tag" "$disk" "$b" mode=flush fua=nofua barriers=$((2 * N)) \
		flushes=$N fua_writes=0 shared=$((2 * N)) refused=0 disk=$N

	# A buffered write then fdatasync: one empty flush barrier, dirty: flushed.
	dmsetup message "f-$tag" 0 reset_stats
	b=$(disk_flushes "$disk")
	dd if=/dev/urandom of="/dev/mapper/f-$tag" bs=4k count=8 conv=fdatasync,notrunc status=none
	check_counts "f-$tag" "$disk" "$b" barriers=1 flushes=1 shared=0 disk=1

	# fua on a disk without FUA: as flush, and the status says nofua.
	dmsetup message "f-$tag" 0 mode fua
	b=$(disk_flushes "$disk"); run_dsync "f-$tag" $N; b=$((b + 1))
	check_counts "f-$tag" "$disk" "$b" mode=fua fua=nofua flushes=$N fua_writes=0 disk=$N

	# drain: no flush commands at all.
	dmsetup message "f-$tag" 0 mode drain
	b=$(disk_flushes "$disk"); run_dsync "f-$tag" $N; b=$((b + 1))
	check_counts "f-$tag" "$disk" "$b" mode=drain barriers=$((2 * N)) flushes=0 fua_writes=0 disk=0
	# ... but an explicit barrier (barrierd's probe) flushes in drain too.
	dmsetup message "f-$tag" 0 reset_stats
	b=$(disk_flushes "$disk")
	dmsetup message "f-$tag" 0 barrier
	check_counts "f-$tag" "$disk" "$b" mode=drain flushes=1 disk=1

	# passthrough: the flags go down as they came; the disk's flush
	# machinery turns each FUA write into write + flush.
	dmsetup message "f-$tag" 0 mode passthrough
	b=$(disk_flushes "$disk"); run_dsync "f-$tag" $N
	check_counts "f-$tag" "$disk" "$b" mode=passthrough barriers=$((2 * N)) flushes=$N fua_writes=$N
	[ $(($(disk_flushes "$disk") - b)) -ge $N ] || fail "passthrough sent fewer flushes than flush bios"

	# none: barriers fail with EOPNOTSUPP, plain writes and reads pass.
	dmsetup message "f-$tag" 0 mode none
	dmsetup message "f-$tag" 0 reset_stats
	out=$(dsync_write "/dev/mapper/f-$tag" 7) && fail "dsync write succeeded in mode none"
	case "$out" in *"Operation not supported"*) ;; *) fail "mode none: '$out', want EOPNOTSUPP" ;; esac
	# fsync() on a block device reports success here: blkdev_fsync()
	# (block/fops.c) drops -EOPNOTSUPP from its flush, a 2.6-era leftover.
	# The flush was still refused, and counted (refused=2 below).
	dd if=/dev/zero of="/dev/mapper/f-$tag" bs=4k count=1 conv=fsync,notrunc status=none ||
		fail "fsync on the block device failed in mode none"
	dd if=/dev/urandom of="/dev/mapper/f-$tag" bs=4k count=4 seek=20 oflag=direct conv=notrunc status=none ||
		fail "a plain write failed in mode none"
	dd if="/dev/mapper/f-$tag" of=/dev/null bs=4k count=4 iflag=direct status=none ||
		fail "a read failed in mode none"
	check_counts "f-$tag" "$disk" 0 refused=2 flushes=0 fua_writes=0
	must_fail dmsetup message "f-$tag" 0 barrier
	dmsetup remove "f-$tag"
done

# fua on the virtio-scsi disk, which has FUA: one FUA write per barrier
# write and no flush at all from a clean cache.
make_barrier fs "$DISK_SCSI" mode:fua
b=$(disk_flushes "$DISK_SCSI"); run_dsync fs $N; b=$((b + 1))
check_counts fs "$DISK_SCSI" "$b" mode=fua fua=fua barriers=$((2 * N)) flushes=0 fua_writes=$N \
	shared=$((2 * N)) disk=0
# flush mode on the same disk does not use FUA.
dmsetup message fs 0 mode flush
b=$(disk_flushes "$DISK_SCSI"); run_dsync fs $N; b=$((b + 1))
check_counts fs "$DISK_SCSI" "$b" flushes=$N fua_writes=0 disk=$N

# Write-through disk: flush acts as drain, counted in no_cache; the cache
# change was seen (and an event raised: target-events checks events).
make_barrier wt "$DISK_AHCI"
hdparm -W0 "$DISK_AHCI" >/dev/null
wait_until 5 'test "$(write_cache "$DISK_AHCI")" = "write through"' || fail "cache still on"
b=$(disk_flushes "$DISK_AHCI")
dmsetup message wt 0 reset_stats
for i in 1 2 3; do dsync_write /dev/mapper/wt "$i" >/dev/null || fail "dsync on write-through"; done
check_counts wt "$DISK_AHCI" "$b" mode=flush cache=writethrough barriers=6 flushes=0 no_cache=6 disk=0
[ "$(bstatus wt cache_changes)" -ge 1 ] || fail "the cache change was not counted"
hdparm -W1 "$DISK_AHCI" >/dev/null
dmsetup remove wt
dmsetup remove fs

# Barriers the kernel makes (a journal's commit block, by dmb_bio): a FUA
# write and a PREFLUSH|FUA write after a plain write, in mode flush, the
# direct way and through the worker: each costs the disk a pre-flush and a
# post-flush.  User space cannot make one alone: an O_DSYNC write on a
# block device is followed by a flush of its own, which would hide a
# missing post-flush (the mutants 10-no-postflush and 11-direct-nofua
# pass every O_DSYNC test).
P=/sys/module/dm_barrier/parameters/direct
trap 'echo Y >$P 2>/dev/null || true' EXIT
make_barrier kc "$DISK_AHCI"
bio_open /dev/mapper/kc
id=0
for direct in Y N; do
	echo $direct >$P
	for flags in FUA PREFLUSH,FUA; do
		id=$((id + 1))
		dd if=/dev/urandom of=/dev/mapper/kc bs=4k count=1 seek=$((300 + id)) oflag=direct conv=notrunc status=none
		dmsetup message kc 0 reset_stats
		b=$(disk_flushes "$DISK_AHCI")
		bio_submit $id W $flags $((2400 + 8 * id)) 8
		bio_wait 20 $id
		log "kc: direct=$direct, W $flags after a plain write: $(dmsetup status kc)"
		expect_eq "kc: direct=$direct W $flags" "$(bio_result $id)" 0
		check_counts kc "$DISK_AHCI" "$b" flushes=2 disk=2
	done
done
echo Y >$P
bio_close
dmsetup remove kc
