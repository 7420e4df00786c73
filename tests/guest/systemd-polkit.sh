#!/bin/bash
# barrierd's mutating methods authorized by polkit (issue 14, item 8), on a
# systemd machine: the real polkitd (polkit.service, D-Bus activated), make
# install's actions
# (org.dmbarrier1.policy), and a user dmbuser who is not root and has no
# session (so the defaults, allow_any=no, give it nothing):
#  - a rule in /etc/polkit-1/rules.d/ grants dmbuser exactly
#    org.dmbarrier1.set-mode: its SetMode() is allowed and takes effect
#    (dmsetup status shows the new mode); ResetStats, Barrier,
#    SetWriteCache, RemoveDevice and CreateDevice are AccessDenied naming
#    their action, and change nothing (counters, drive cache, mappings,
#    dm event counter); barrierctl --bus says so with exit status 1;
#  - the rule removed (polkitd re-reads rules.d by itself), dmbuser's
#    SetMode() is AccessDenied too and changes nothing;
#  - root may, through polkit (not the fallback: barrierd never logged that
#    polkit could not be asked);
#  - a bad options dict (an unknown key, a value of the wrong type, the
#    signature without options) is InvalidArgs naming the key, for root and
#    for dmbuser alike (arguments are checked before authorization), and
#    changes nothing.
# Negative control: DMB_BARRIERD=/work/main/build/asan/barrierd (barrierd
# before polkit: root only, signatures without options) fails this test at
# "dmbuser: SetMode granted by the rule".
# vm: ide ahci systemd
# timeout: 240
source "$PROJECT/tests/vm/lib.sh"
source "$PROJECT/tests/guest/barrierd.lib"
source "$PROJECT/tests/guest/systemd.lib"

U=dmbuser
RULE=/etc/polkit-1/rules.d/50-dmb-test.rules
# The user's calls: no session, no home of its own.
AS_U=(setpriv "--reuid=$U" "--regid=$U" --init-groups env HOME=/)

# The root is an overlay kept for the whole boot: the user and the rule go
# with the test.
polkit_cleanup() {
	rm -f "$RULE"
	userdel "$U" 2>/dev/null
	sd_save_journal
}
trap polkit_cleanup EXIT

# ucall / rcall PATH IFACE.METHOD ARGS...: gdbus as dmbuser / as root.
ucall() { "${AS_U[@]}" gdbus call --system --dest $BD_BUS --object-path "$1" --method "$2" "${@:3}"; }
rcall() { bd_gcall "$@"; }
# polkit_loads: how often polkitd (re)loaded its rules this boot.
polkit_loads() { journalctl -b -u polkit.service --no-pager -o cat | grep -c 'Finished loading, compiling and executing' || true; }
# rules_changed: wait until polkitd has read rules.d again after a change
# (it watches the directory); restarting it is the fallback, and said.
rules_changed() {
	local before=$1
	if ! wait_until 15 "[ \"\$(polkit_loads)\" -gt $before ]"; then
		log "polkitd did not re-read $RULE's directory in 15 s; restarting it"
		systemctl restart polkit.service || fail "cannot restart polkit.service"
	fi
	log "polkitd: $(journalctl -b -u polkit.service --no-pager -o cat | grep 'Finished loading' | tail -n 1)"
}

[ -x /usr/lib/polkit-1/polkitd ] || fail "polkitd is not installed (scripts/deps installs polkitd)"
[ -f /usr/share/polkit-1/actions/org.dmbarrier1.policy ] ||
	fail "make install did not install org.dmbarrier1.policy"
useradd -M -s /usr/sbin/nologin $U || fail "useradd $U failed"
rm -f "$RULE"

stop_unit
systemctl start --no-block $UNIT
wait_active 30
P_ACTIONS=$(pkaction | grep -c '^org\.dmbarrier1\.' || true)
expect_eq "polkit knows the five actions" "$P_ACTIONS" 5
pkaction --verbose --action-id org.dmbarrier1.set-mode | sed 's/^/pkaction: /'

expect_eq "polkit.service (activated by pkaction)" "$(systemctl show -p ActiveState --value polkit.service)" active

# --- root, through polkit
bd_create pk "$DISK_IDE"
P=$(bd_path pk)
[ -n "$P" ] || fail "no object for pk"
expect_eq "pk: Mode" "$(bstatus pk mode)" flush
# The granted call fits the live signature, so that a barrierd without
# options (the negative control) fails on the authorization, not on the
# arguments.
opts=('{}')
sig=$(busctl --system introspect $BD_BUS "$P" $BD_DEV | awk '$1 == ".SetMode" {print $3}')
[ "$sig" = sb ] && opts=()

# --- the rule: dmbuser may set the mode, nothing else
loads=$(polkit_loads)
cat >"$RULE" <<EOF
polkit.addRule(function(action, subject) {
    if (action.id == "org.dmbarrier1.set-mode" && subject.user == "$U")
        return polkit.Result.YES;
});
EOF
rules_changed "$loads"

out=$(ucall "$P" $BD_DEV.SetMode "'drain'" true "${opts[@]}" 2>&1) ||
	fail "dmbuser: SetMode granted by the rule was refused: $out"
log "ok: dmbuser SetMode(drain, pin): $out"
expect_eq "dmbuser's SetMode: target mode" "$(bstatus pk mode)" drain
expect_eq "dmbuser's SetMode: Pinned" "$(bd_prop pk Pinned)" true
log "dmsetup status pk: $(dmsetup status pk)"

ev_before=$(event_nr pk)
barriers_before=$(bstatus pk barriers)
expect_error "AccessDenied: ResetStats() refused: not authorized for org.dmbarrier1.reset-stats" \
	ucall "$P" $BD_DEV.ResetStats '{}'
expect_error "AccessDenied: Barrier() refused: not authorized for org.dmbarrier1.barrier" \
	ucall "$P" $BD_DEV.Barrier '{}'
expect_error "AccessDenied: SetWriteCache() refused: not authorized for org.dmbarrier1.set-write-cache" \
	ucall "$P" $BD_DEV.SetWriteCache false '{}'
expect_error "AccessDenied: RemoveDevice() refused: not authorized for org.dmbarrier1.manage-devices" \
	ucall $BD_PATH $BD_MGR.RemoveDevice "'pk'" '{}'
expect_error "AccessDenied: CreateDevice() refused: not authorized for org.dmbarrier1.manage-devices" \
	ucall $BD_PATH $BD_MGR.CreateDevice "'evil'" "'$DISK_AHCI'" '{}'
rc=0
out=$("${AS_U[@]}" barrierctl --bus reset-stats pk 2>&1) || rc=$?
expect_eq "barrierctl --bus reset-stats as dmbuser: exit" "$rc" 1
case "$out" in *"not authorized for org.dmbarrier1.reset-stats"*) ;; *) fail "barrierctl: $out" ;; esac
log "ok: barrierctl: $out"
expect_eq "denied: mode" "$(bstatus pk mode)" drain
expect_eq "denied: barriers" "$(bstatus pk barriers)" "$barriers_before"
expect_eq "denied: drive cache" "$(drive_write_cache "$DISK_IDE")" 1
expect_eq "denied: dm event counter" "$(event_nr pk)" "$ev_before"
expect_eq "denied: mappings" "$(dmsetup ls --target barrier | awk '{print $1}' | tr '\n' ' ')" "pk "

# --- bad options: InvalidArgs naming the key, before any authorization
expect_error "InvalidArgs: unknown option \"Force\"" ucall "$P" $BD_DEV.SetMode "'flush'" true "{'Force': <true>}"
expect_error "InvalidArgs: unknown option \"Force\"" rcall "$P" $BD_DEV.SetMode "'flush'" true "{'Force': <true>}"
expect_error "InvalidArgs: unknown option \"Wait\"" rcall "$P" $BD_DEV.Barrier "{'Wait': <uint32 1>}"
expect_error "InvalidArgs: option \"Offset\" must be of type 't'" \
	rcall $BD_PATH $BD_MGR.CreateDevice "'x'" "'$DISK_AHCI'" "{'Offset': <'0'>}"
expect_error "InvalidArgs: option \"Mode\" must be of type 's'" \
	ucall $BD_PATH $BD_MGR.CreateDevice "'x'" "'$DISK_AHCI'" "{'Mode': <1>}"
out=$(busctl --system call $BD_BUS "$P" $BD_DEV SetMode sb flush true 2>&1) &&
	fail "SetMode without options succeeded: $out"
log "ok: refused: SetMode(sb): $out"
expect_eq "bad options: mode" "$(bstatus pk mode)" drain
expect_eq "bad options: Pinned" "$(bd_prop pk Pinned)" true
expect_eq "bad options: barriers" "$(bstatus pk barriers)" "$barriers_before"
expect_eq "bad options: mappings" "$(dmsetup ls --target barrier | awk '{print $1}' | tr '\n' ' ')" "pk "

# --- the rule removed: SetMode is refused too
loads=$(polkit_loads)
rm -f "$RULE"
rules_changed "$loads"
expect_error "AccessDenied: SetMode() refused: not authorized for org.dmbarrier1.set-mode" \
	ucall "$P" $BD_DEV.SetMode "'flush'" true '{}'
expect_eq "rule removed: mode" "$(bstatus pk mode)" drain

# --- root may, through polkit
out=$(busctl --system call $BD_BUS "$P" $BD_DEV SetMode 'sba{sv}' flush true 0 2>&1) ||
	fail "root SetMode refused: $out"
expect_eq "root's SetMode: mode" "$(bstatus pk mode)" flush
busctl --system call $BD_BUS "$P" $BD_DEV ResetStats 'a{sv}' 0 >/dev/null || fail "root ResetStats refused"
busctl --system call $BD_BUS "$P" $BD_DEV Barrier 'a{sv}' 0 >/dev/null || fail "root Barrier refused"
expect_eq "root's Barrier counted after ResetStats" "$(bstatus pk barriers)" 1

# --- what barrierd logged: polkit's refusals, never the root-only fallback
refusals=$(junit -o cat | grep -c 'polkit does not authorize' || true)
log "measured: barrierd logged $refusals polkit refusals"
[ "$refusals" -ge 6 ] || fail "barrierd logged $refusals polkit refusals, expected at least 6"
junit -o cat | grep 'Cannot ask polkit' && fail "barrierd fell back to root only: polkit was not asked"

busctl --system call $BD_BUS $BD_PATH $BD_MGR RemoveDevice 'sa{sv}' pk 0 >/dev/null || fail "root RemoveDevice refused"
dmsetup info pk >/dev/null 2>&1 && fail "pk still exists after RemoveDevice"
stop_unit
