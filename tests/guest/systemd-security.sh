#!/bin/bash
# The installed unit's hardening score: `systemd-analyze security
# barrierd.service` on the running system, the whole table in the log, and
# the overall exposure must not rise above 2.6 (what the unit was written
# to).  A change that weakens the sandbox fails here; one that breaks the
# job under it fails systemd-sandbox and systemd-flushfail.
# Negative control (run once, results in docs/verification.md): the
# unit without CapabilityBoundingSet= and NoNewPrivileges= scores above 2.6
# and fails this test.
# vm: ide ahci systemd
# timeout: 60
source "$PROJECT/tests/vm/lib.sh"
source "$PROJECT/tests/guest/barrierd.lib"
source "$PROJECT/tests/guest/systemd.lib"

MAX=2.6
systemd-analyze security --no-pager $UNIT >"$WORK/security" 2>&1 || true
cat "$WORK/security"
score=$(sed -n "s/^→ Overall exposure level for $UNIT: \([0-9.]*\) .*/\1/p" "$WORK/security")
[ -n "$score" ] || fail "no overall exposure level in systemd-analyze's output"
log "measured: systemd-analyze security $UNIT: exposure $score (at most $MAX)"
awk -v s="$score" -v m="$MAX" 'BEGIN { exit !(s <= m) }' || fail "exposure $score is above $MAX"
