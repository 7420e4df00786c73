# shellcheck shell=bash
# Helpers for guest tests: source "$PROJECT/tests/vm/lib.sh".
# A test passes by exiting 0, skips with `skip REASON` (exit 77) and fails
# with `fail REASON` or any other non-zero exit.  The runner cleans up
# processes, mounts, dm devices and loop devices after every test.
set -euo pipefail

: "${PROJECT:?run this in the test guest (tests/vm/run)}"
B=$PROJECT/build

# The clock from bash itself ($EPOCHREALTIME): a date(1) per line or per
# poll is a process start, tens of milliseconds under TCG.
log() {
	local t=${EPOCHREALTIME/,/.}
	printf '%(%T)T.%s %s\n' "${t%.*}" "${t:${#t}-6:3}" "$*"
}
fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }

# expect_eq WHAT GOT WANT
expect_eq() {
	[ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"
	log "ok: $1 = '$2'"
}

# must_fail CMD...: the command must exit non-zero
must_fail() {
	if "$@"; then
		fail "expected failure: $*"
	fi
}

# wait_until SECONDS 'CONDITION': evaluate the shell CONDITION (10 Hz) until
# it holds.  Single-quote it, so that $(...) in it is run at every poll.
wait_until() {
	local t=${EPOCHREALTIME/[.,]/} end
	end=$((t + $1 * 1000000))
	[ $# -eq 2 ] || fail "wait_until: give the condition as one quoted string"
	until eval "$2"; do
		t=${EPOCHREALTIME/[.,]/}
		[ "$t" -lt "$end" ] || return 1
		sleep 0.1
	done
}

# The sysfs name (sda) of a /dev path.
disk_name() { basename "$(readlink -f "$1")"; }

# write_cache DEV: the kernel's view, "write back" or "write through".
write_cache() { cat "/sys/block/$(disk_name "$1")/queue/write_cache"; }

# drive_write_cache DEV: the drive's own view from IDENTIFY, 1 or 0.
drive_write_cache() {
	hdparm -W "$1" | sed -n 's/.*write-caching *= *\([01]\).*/\1/p'
}

# sectors DEV: size in 512-byte sectors.
sectors() { blockdev --getsz "$1"; }

# start_udev: run systemd-udevd for this test (the runner stops it).
start_udev() {
	unset DM_DISABLE_UDEV
	/lib/systemd/systemd-udevd --daemon --resolve-names=never
	udevadm trigger --action=add --subsystem-match=block
	udevadm settle -t 30
}

# ------------------------------------------------------------ dm-barrier
# bstatus NAME FIELD: one field of the target's status line, by the name
# docs/dm-barrier.rst gives it.
BSTATUS_FIELDS=(mode cache fua barriers flushes fua_writes flush_errors fallbacks held
	max_drain_us shared no_cache refused replayed cache_changes debts)
bstatus() { status_field "$1" "$2" "${BSTATUS_FIELDS[@]}"; }

# status_field NAME FIELD NAMES...: the field called FIELD of a one-target
# mapping's status line, whose fields are called NAMES.
status_field() {
	local name=$1 field=$2 line i
	shift 2
	read -r -a line <<<"$(dmsetup status "$name")"
	# start len target then the fields
	for ((i = 1; i <= $#; i++)); do
		if [ "${!i}" = "$field" ]; then
			echo "${line[$((i + 2))]}"
			return 0
		fi
	done
	fail "status of $name: no field '$field'"
}

# make_barrier NAME DEV [FEATURES...]: a barrier mapping over all of DEV.
make_barrier() {
	local name=$1 dev=$2 table
	shift 2
	table="0 $(sectors "$dev") barrier $dev 0"
	[ $# -gt 0 ] && table="$table $# $*"
	dmsetup create "$name" --table "$table"
	[ -b "/dev/mapper/$name" ] || fail "/dev/mapper/$name is not a block device"
}

# event_nr NAME: the mapping's dm event counter.
event_nr() { dmsetup info -c --noheadings -o events "$1" | tr -d ' '; }

# dsync_write DEV BLOCK: one O_DIRECT|O_DSYNC 4k write (a REQ_FUA barrier
# followed by an empty flush); prints dd's error and fails if it fails.
dsync_write() {
	dd if=/dev/urandom of="$1" bs=4k count=1 seek="$2" oflag=direct,dsync conv=notrunc status=none 2>&1
}

# dm_kname NAME: the kernel name (dm-N) of a mapping.
dm_kname() { dmsetup info -c --noheadings -o blkdevname "$1" | tr -d ' '; }

# disk_flushes DEV: flush requests the disk has completed (diskstats field 16).
disk_flushes() { awk '{print $16}' "/sys/block/$(disk_name "$1")/stat"; }

# bg TAG CMD...: run CMD in the background; its output goes to $WORK/TAG.out
# and, when it ends, its exit status to $WORK/TAG.rc.
bg() {
	local tag=$1
	shift
	rm -f "$WORK/$tag.rc" "$WORK/$tag.out"
	(
		set +e
		"$@" >"$WORK/$tag.out" 2>&1
		echo $? >"$WORK/$tag.rc"
	) &
}
# bg_done TAG...: have they all ended?
bg_done() {
	local t
	for t in "$@"; do [ -e "$WORK/$t.rc" ] || return 1; done
}
# bg_rc TAG / bg_out TAG
bg_rc() { cat "$WORK/$1.rc"; }
bg_out() { cat "$WORK/$1.out"; }

# kmsg_has PATTERN: does the kernel log contain PATTERN (grep -E)?  (Not
# `dmesg | grep -q`: with pipefail, grep's early exit fails the pipeline.)
kmsg_has() { grep -qE -- "$1" <(dmesg); }
# CMD | has [GREP-OPTIONS] PATTERN: grep -q that reads all of its input, so
# that the writer never dies of SIGPIPE (under pipefail, `CMD | grep -q`
# fails when CMD writes after the first match: ldd, dmesg, journalctl).
has() { grep "$@" >/dev/null; }

# ------------------------------------------------------- test modules
# load_testmod NAME [PARAM=VALUE...]: insmod the test-only module NAME.ko
# from tests/vm/*/ (make test-modules builds them), or on another kernel
# from its build/kernels/SERIES/testmods (DMB_TESTMODS, set by tests/vm/run;
# scripts/kernels builds them), once per boot.
load_testmod() {
	local name=$1 ko
	shift
	grep -q "^$name " /proc/modules && return 0
	ko=$(find "${DMB_TESTMODS:-$PROJECT/tests/vm}" -name "$name.ko" | head -n 1)
	[ -n "$ko" ] || fail "$name.ko is not built for $(uname -r) (make test-modules; make kernels)"
	insmod "$ko" "$@"
}

# make_fault NAME DEV [FEATURES...]: a dmb_fault mapping (tests/vm/faultmod)
# over all of DEV, whose faults `fault NAME ...` sets at run time.
make_fault() {
	local name=$1 dev=$2 table
	shift 2
	load_testmod dmb_fault
	table="0 $(sectors "$dev") dmb_fault $dev 0"
	[ $# -gt 0 ] && table="$table $# $*"
	dmsetup create "$name" --table "$table"
	[ -b "/dev/mapper/$name" ] || fail "/dev/mapper/$name is not a block device"
}
FSTATUS_FIELDS=(flushes fua_writes writes reads injected_flush injected_fua injected_write held dirty lost)
fstatus() { status_field "$1" "$2" "${FSTATUS_FIELDS[@]}"; }
fault() { local name=$1; shift; dmsetup message "$name" 0 "$@"; }
# fault_held [FAULT]: the dmb_fault mapping FAULT (default flt) holds a bio.
fault_held() { [ "$(fstatus "${1:-flt}" held)" -ge 1 ]; }
# stalled_write NAME SEEK: a plain 4k write at block SEEK of mapping NAME,
# in the background (bg "swSEEK"), held by the stall of the dmb_fault
# mapping flt under it, so what comes next on NAME queues behind it.
stalled_write() {
	fault flt stall on
	bg "sw$2" dd if=/dev/urandom of="/dev/mapper/$1" bs=4k count=1 seek="$2" oflag=direct conv=notrunc status=none
	wait_until 10 'fault_held' || fail "the stall holds nothing: $(dmsetup status flt)"
}
# first_byte NAME SECTOR: the first byte at SECTOR of mapping NAME, in hex
# (dmb_bio fills a write's page with its ID).
first_byte() {
	dd if="/dev/mapper/$1" bs=512 skip="$2" count=1 iflag=direct status=none | od -An -tx1 -N1 | tr -d ' '
}
# fault_log NAME: the dmb_fault log lines of mapping NAME.
fault_log() { grep "^$(dm_kname "$1") " /sys/kernel/debug/dmb_fault/log || true; }

# dmb_bio (tests/vm/biomod): bios with the flags a test names.
# bio_open DEV; bio_submit ID W|F FLAGS SECTOR SECTORS; bio_result ID
# (errno or "pending"); bio_wait SECONDS ID...; bio_close.
DMB_BIO=/sys/kernel/debug/dmb_bio
bio_open() { load_testmod dmb_bio; echo "open $(lsblk -dno MAJ:MIN "$1" | tr -d ' ')" >"$DMB_BIO/ctl"; }
bio_submit() { echo "submit $*" >"$DMB_BIO/ctl"; }
bio_result() { awk -v id="$1" '$1 == id { print $2 }' "$DMB_BIO/results"; }
bio_wait() {
	local secs=$1 id
	shift
	for id in "$@"; do
		wait_until "$secs" 'r=$(bio_result '"$id"'); [ -n "$r" ] && [ "$r" != pending ]' ||
			fail "bio $id did not complete in ${secs}s"
	done
}
bio_close() { echo close >"$DMB_BIO/ctl"; }
