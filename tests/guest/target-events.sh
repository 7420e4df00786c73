#!/bin/bash
# dm-barrier: `hdparm -W0/-W1` emits no uevent, so the target raises a dm
# event itself when it sees the backing write-cache flag change, on the next
# barrier or status call; a mode message that changes the mode raises one
# too.  Negative control: barriers and a same-mode message with nothing
# changed raise no event (`dmsetup wait` times out).
# vm: ide ahci
# timeout: 180
source "$PROJECT/tests/vm/lib.sh"

modprobe dm-barrier

# no_event NAME NR: no event after NR within 2 s.
no_event() {
	if timeout 2 dmsetup wait "$1" "$2" >/dev/null 2>&1; then
		fail "$1: an event was raised ($(event_nr "$1") > $2) with nothing changed"
	fi
}
# got_event NAME NR: an event after NR within 10 s.
got_event() {
	timeout 10 dmsetup wait "$1" "$2" >/dev/null || fail "$1: no event after $2 ($3)"
	log "$1: event $(event_nr "$1") ($3)"
}

for disk in "$DISK_IDE" "$DISK_AHCI"; do
	m=ev-$(disk_name "$disk")
	make_barrier "$m" "$disk"
	e=$(event_nr "$m")
	dsync_write "/dev/mapper/$m" 1 >/dev/null
	dmsetup status "$m" >/dev/null
	no_event "$m" "$e"
	dmsetup message "$m" 0 mode flush
	no_event "$m" "$e"

	# The cache goes off behind the kernel's back; a barrier notices.
	hdparm -W0 "$disk" >/dev/null
	dsync_write "/dev/mapper/$m" 2 >/dev/null || fail "$m: barrier on a write-through disk"
	got_event "$m" "$e" "hdparm -W0, then a barrier"
	expect_eq "$m: cache" "$(bstatus "$m" cache)" writethrough
	expect_eq "$m: cache_changes" "$(bstatus "$m" cache_changes)" 1

	# Back on; a status call notices, without any I/O.
	e=$(event_nr "$m")
	hdparm -W1 "$disk" >/dev/null
	dmsetup status "$m" >/dev/null
	got_event "$m" "$e" "hdparm -W1, then a status call"
	expect_eq "$m: cache" "$(bstatus "$m" cache)" writeback
	expect_eq "$m: cache_changes" "$(bstatus "$m" cache_changes)" 2

	# A mode change by message.
	e=$(event_nr "$m")
	dmsetup message "$m" 0 mode drain
	got_event "$m" "$e" "mode message"
	dmsetup remove "$m"
done
