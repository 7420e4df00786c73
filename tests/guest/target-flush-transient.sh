#!/bin/bash
# dm-barrier: a cache flush that fails once and then works again (the drive
# recovers).  A barrier whose flush failed must not report success, whichever
# way it took: the direct way (one request with pre-flush, write and
# post-flush, which the worker runs again step by step when it fails) or the
# worker.  The rerun's flushes work, but the failed one may have lost what
# the cache held: the barrier fails with EIO, the failure is counted and the
# mode falls back, as when the worker's own flush fails.
#
# The failure: QEMU's blkdebug fails a window of flushes that reach the
# image, then passes every later one.  6 failures are one failed flush as
# the kernel sees it (sd's SYNCHRONIZE CACHE and its 5 retries, each one
# FLUSH CACHE from libata; measured, on IDE and AHCI), so each scenario
# below takes 6 of the window, checked from the kernel's "failed command:
# FLUSH" lines: a scenario that does not see exactly its 6 fails as a
# broken precondition, not as a verdict on the target.
#   IDE  (0+12): L, the control: dm-linear, a plain write, a FUA write: the
#        post-flush fails and dm-linear returns EIO.  Then D1: dm-barrier,
#        direct, a plain write (the cache dirty), a FUA write: sent down as
#        PREFLUSH|FUA; its pre-flush fails.
#   AHCI (0+24): W: the same as D1 through the worker (direct=N).  E2: an
#        empty flush after a plain write, through the worker (an
#        fdatasync(): no data part for a debt to fail; the mutant
#        17-own-flush-ok).  E: an
#        empty flush after a plain write, direct.  D2: dm-barrier, direct,
#        a FUA write on a clean cache: sent down as FUA; its post-flush
#        fails.
# Negative control: L shows dm-linear reporting the disk's failure; at
# bc5c524 D1 and D2 reported success (the rerun's flushes worked).
# vm: ide ahci blkdebug=ide:0+12 blkdebug=ahci:0+24
# timeout: 240
source "$PROJECT/tests/vm/lib.sh"

modprobe dm-barrier
P=/sys/module/dm_barrier/parameters/direct
trap 'echo Y >$P 2>/dev/null || true' EXIT

failed_flushes() { dmesg | grep -c "failed command: FLUSH" || true; }
# plain NAME BLOCK: a plain 4k write (O_DIRECT, no flush): QEMU has data to
# flush again, and the mapping's cache is dirty.
plain() { dd if=/dev/urandom of="/dev/mapper/$1" bs=4k count=1 seek="$2" oflag=direct conv=notrunc status=none; }

# scenario TAG NAME DISK DIRECT PRIME OP FLAGS WANT: on NAME (freshly made
# over DISK), with direct=DIRECT, PRIME=yes a plain write first, then one
# dmb_bio OP FLAGS bio; it must complete with WANT, and the disk must have
# failed exactly 6 flush commands meanwhile.
id=0
scenario() {
	local tag=$1 name=$2 disk=$3 direct=$4 prime=$5 op=$6 flags=$7 want=$8 before got n sectors=8
	echo "$direct" >$P
	before=$(failed_flushes)
	[ "$prime" = yes ] && plain "$name" 40
	id=$((id + 1))
	[ "$op" = F ] && sectors=0
	bio_open "/dev/mapper/$name"
	bio_submit $id "$op" "$flags" $((1000 + 8 * id)) $sectors
	bio_wait 60 $id
	got=$(bio_result $id)
	bio_close
	n=$(($(failed_flushes) - before))
	log "$tag: $op $flags (direct=$direct, plain write first: $prime): $got; $n failed flush commands; $(dmsetup status "$name" 2>/dev/null)"
	[ "$n" = 6 ] || fail "$tag: precondition: the disk failed $n flush commands, not 6 (one failed flush with its retries); the window arithmetic is off"
	[ "$got" = "$want" ] || fail "$tag: the $op $flags bio completed with '$got', want '$want'$9"
}

# barrier_scenario TAG DISK DIRECT PRIME OP FLAGS WANT WHY: scenario on a
# barrier mapping made for it over DISK (named TAG in lower case, left for
# more checks), which must count its one failed flush; $ev is its event
# number from before.
barrier_scenario() {
	local name=${1,,}
	make_barrier "$name" "$2"
	ev=$(event_nr "$name")
	scenario "$1" "$name" "${@:2}"
	expect_eq "$1: flush_errors" "$(bstatus "$name" flush_errors)" 1
}

# ---------------------------------------------------------------- IDE
dmsetup create lin --table "0 $(sectors "$DISK_IDE") linear $DISK_IDE 0"
scenario L lin "$DISK_IDE" Y yes W FUA -5 " (dm-linear: the disk's failed flush must reach the submitter)"
dmsetup remove lin

barrier_scenario D1 "$DISK_IDE" Y yes W FUA -5 ": a direct barrier whose pre-flush failed reported success"
expect_eq "D1: mode (fallen back)" "$(bstatus d1 mode)" none
expect_eq "D1: fallbacks" "$(bstatus d1 fallbacks)" 1
timeout 10 dmsetup wait d1 "$ev" >/dev/null || fail "D1: no dm event after the failed flush"
dmsetup remove d1

# ---------------------------------------------------------------- AHCI
barrier_scenario W "$DISK_AHCI" N yes W FUA -5 ": the worker's barrier whose pre-flush failed reported success"
dmsetup remove w
barrier_scenario E2 "$DISK_AHCI" N yes F PREFLUSH -5 ": the worker's empty flush that failed reported success"
dmsetup remove e2
barrier_scenario E "$DISK_AHCI" Y yes F PREFLUSH -5 ": a direct empty flush that failed reported success"
dmsetup remove e

# Last, so that its rerun's pre-flush (the failed request left the cache
# dirty) finds the window used up.
barrier_scenario D2 "$DISK_AHCI" Y no W FUA -5 ": a direct barrier whose post-flush failed reported success"
expect_eq "D2: mode (fallen back)" "$(bstatus d2 mode)" none
dmsetup remove d2

# ---------------------------------------------------------------- after
# Both windows are used up: barriers work again, and no flush fails.
echo Y >$P
for disk in "$DISK_IDE" "$DISK_AHCI"; do
	make_barrier ok "$disk"
	before=$(failed_flushes)
	plain ok 50
	dsync_write /dev/mapper/ok 51 >/dev/null || fail "a barrier after the window failed on $disk"
	expect_eq "after the window on $disk: flush_errors" "$(bstatus ok flush_errors)" 0
	expect_eq "after the window on $disk: failed flush commands" $(($(failed_flushes) - before)) 0
	dmsetup remove ok
done
