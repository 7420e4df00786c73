# shellcheck shell=bash
# Helpers for guest tests: source "$PROJECT/tests/vm/lib.sh".
# A test passes by exiting 0, skips with `skip REASON` (exit 77) and fails
# with `fail REASON` or any other non-zero exit.  The runner cleans up
# processes, mounts, dm devices and loop devices after every test.
set -euo pipefail

: "${PROJECT:?run this in the test guest (tests/vm/run)}"
B=$PROJECT/build

log() { printf '%s %s\n' "$(date +%T.%3N)" "$*"; }
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

# wait_until SECONDS CMD...: poll CMD (10 Hz) until it succeeds
wait_until() {
	local t=$1 end
	shift
	end=$(($(date +%s%N) + t * 1000000000))
	until "$@"; do
		[ "$(date +%s%N)" -lt "$end" ] || return 1
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
