#!/bin/bash
# D-Bus activation as installed (org.dmbarrier1.service in
# /usr/share/dbus-1/system-services, SystemdService=barrierd.service): with
# the unit stopped, the first call to org.dmbarrier1 makes dbus-daemon ask
# systemd to start it, and the call is answered by the started barrierd —
# from busctl, and from `barrierctl --bus`.
# Activation rewrites no table (issue 14, item 3): with a mapping made by
# plain dmsetup without a hold, an activation from an unprivileged user
# (uid 65534) starts barrierd, which adopts the mapping and leaves its
# table as it was (before the fix it was reloaded, suspend and all, with
# hold_on_flush_error:10000 before READY=1).
# In-test control: a name with no activation file is not started
# (ServiceUnknown), so a call does not succeed just by being made.
# Negative control (run once, results in docs/verification.md):
# without SystemdService= in the activation file the calls fail and the
# unit stays inactive.
# vm: ide ahci systemd
# timeout: 90
source "$PROJECT/tests/vm/lib.sh"
source "$PROJECT/tests/guest/barrierd.lib"
source "$PROJECT/tests/guest/systemd.lib"

# activated CMD...: from stopped, CMD must succeed and leave the unit active.
activated() {
	local out c
	stop_unit
	c=$(jcursor)
	out=$("$@" 2>&1) || fail "$* with the unit stopped: $out"
	log "$*: $(head -n 1 <<<"$out")"
	expect_eq "after $1" "$(ustate)" active/running
	journalctl --no-pager --after-cursor="$c" -o cat | grep -F "Activating via systemd: service name='$BD_BUS' unit='$UNIT'" ||
		fail "dbus-daemon did not activate $UNIT through systemd: $(journalctl --no-pager --after-cursor="$c" -o cat | tail -n 5)"
}

activated busctl --system call $BD_BUS $BD_PATH $BD_MGR ListDevices
activated barrierctl --bus list

make_barrier plain "$DISK_AHCI"
t_plain=$(dmsetup table plain)
activated setpriv --reuid=65534 --regid=65534 --clear-groups busctl --system call $BD_BUS $BD_PATH $BD_MGR ListDevices
msgs=$(junit -o cat)
grep -q '^adopted: .* mode flush' <<<"$msgs" || fail "plain was not adopted: $(tail -n 5 <<<"$msgs")"
expect_eq "activated by uid 65534: plain's table" "$(dmsetup table plain)" "$t_plain"
grep 'table reloaded' <<<"$msgs" && fail "activation reloaded a table"
stop_unit
dmsetup remove plain

out=$(busctl --system call org.dmbarrier1.NoSuchName /org/dmbarrier1 org.freedesktop.DBus.Peer Ping 2>&1) &&
	fail "a call to a name without an activation file succeeded: $out"
log "ok: no activation file -> $out"
expect_eq "still stopped" "$(ustate)" inactive/dead
