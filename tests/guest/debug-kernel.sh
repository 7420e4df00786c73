#!/bin/bash
# The debug kernel's negative control (KERNEL=debug, make check-debug):
# the bugs it is there to find are found.  The test module dmb_warn
# (tests/vm/warnmod) takes two mutexes in both orders, and leaks a buffer;
# lockdep must report the inversion and kmemleak the leak, and the runner's
# scan (kscan, tests/vm/kscan.sh, what guest-init fails a test on) must
# flag each report.  The test checks the scan itself, then clears the log
# and kmemleak's list, so that what it provoked on purpose does not fail
# it.  A kernel without lockdep and kmemleak (every other one) skips it:
# make check leaves it out.
# A boot of its own: lockdep turns itself off for the rest of the boot
# after its first report, which would leave the tests after this one
# unchecked.
# vm: ide fresh
# timeout: 300
source "$PROJECT/tests/vm/lib.sh"
source "$PROJECT/tests/vm/kscan.sh"

[ -r /proc/lockdep_stats ] || skip "not a lockdep kernel ($(uname -r)); run it with KERNEL=debug"
[ -w /sys/kernel/debug/kmemleak ] || skip "no kmemleak in $(uname -r); run it with KERNEL=debug"
grep -qE '^ *debug_locks: +1$' /proc/lockdep_stats || fail "lockdep is already off in this boot"

# The positive control: nothing to report before the bugs.
kmemleak_report >/dev/null
dmesg -C
sleep 6
kmemleak_report >"$WORK/clean.kmemleak"
dmesg >"$WORK/clean.log"
cat "$WORK/clean.kmemleak" >>"$WORK/clean.log"
if kscan "$WORK/clean.log"; then
	fail "the scan flags a clean kernel log"
fi
log "ok: a clean log passes the scan"

# lockdep: the AB-BA inversion, in one thread (no deadlock).
must_fail load_testmod dmb_warn mode=lockdep
dmesg >"$WORK/lockdep.log"
grep -q 'possible circular locking dependency detected' "$WORK/lockdep.log" ||
	fail "no lockdep report after the inversion: $(tail -n 5 "$WORK/lockdep.log")"
grep -qE 'dmb_warn_[ab]' "$WORK/lockdep.log" || fail "the lockdep report does not name dmb_warn's mutexes"
hit=$(kscan "$WORK/lockdep.log" | head -n 1)
[ -n "$hit" ] || fail "the scan does not flag the lockdep report"
log "ok: lockdep reports the inversion; the scan flags: $hit"
grep -qE '^ *debug_locks: +0$' /proc/lockdep_stats || fail "lockdep still on after its report"
dmesg -C

# kmemleak: a buffer whose only pointer was dropped, found by its contents
# in kmemleak's hex dump ("dmb_warn leak").  kmemleak reports an object
# once it is 5 s old; a stale copy of the pointer (on a stack) can hide it
# from a scan or two, so a few are allowed.
must_fail load_testmod dmb_warn mode=leak
found=0
for _ in 1 2 3 4 5 6; do
	sleep 6
	kmemleak_report >>"$WORK/leak.kmemleak"
	if grep -q 'dmb_warn leak' "$WORK/leak.kmemleak"; then
		found=1
		break
	fi
done
[ $found -eq 1 ] || fail "kmemleak did not report dmb_warn's leak: $(head -n 20 "$WORK/leak.kmemleak")"
dmesg >"$WORK/leak.log"
cat "$WORK/leak.kmemleak" >>"$WORK/leak.log"
grep -q 'suspected memory leak' "$WORK/leak.log" || fail "no 'suspected memory leak' in the kernel log"
grep -qE '^unreferenced object 0x[0-9a-f]+ \(size [0-9]+\)' "$WORK/leak.kmemleak" ||
	fail "kmemleak's list has no unreferenced object"
hit=$(kscan "$WORK/leak.log" | head -n 1)
[ -n "$hit" ] || fail "the scan does not flag the kmemleak report"
log "ok: kmemleak reports the leak; the scan flags: $hit"
sed 's/^/    /' "$WORK/leak.kmemleak"

# What this test provoked must not fail it: the runner's own scan after
# the test finds the log and kmemleak's list empty.
dmesg -C
