# shellcheck shell=bash
# What in the kernel's log fails a guest test, in one place: tests/vm/run
# quotes these lines when a test fails, tests/vm/guest-init fails a test
# whose log has one, and tests/guest/debug-kernel checks that the debug
# kernel's reports (KERNEL=debug) match.  The same on every kernel: the
# debug kernel's reports never appear on the others.
#   WARN/BUG/Oops, hung tasks, stalls and lockups (any kernel);
#   KASAN ("BUG: KASAN: slab-use-after-free ..."); lockdep (circular or
#   recursive locking, inconsistent lock state, and lockdep switching itself
#   off after its first report or when its tables fill); sleeping in atomic
#   context (DEBUG_ATOMIC_SLEEP); debugobjects ("ODEBUG: free active ...");
#   kmemleak (its "N new suspected memory leaks" after a scan, the objects
#   kmemleak_report appends, and kmemleak switching itself off, out of
#   memory for its metadata).
# shellcheck disable=SC2034 # used by the files that source this
KSCAN_RE='WARNING:|BUG:|Oops|general protection|INFO: task .* blocked|kernel BUG|UBSAN:|KASAN|'\
'possible circular locking|possible recursive locking|inconsistent lock state|'\
'sleeping function called from invalid context|turning off the locking correctness validator|'\
'ODEBUG:|unreferenced object|suspected memory leak|memory leak detector disabled|'\
'Call Trace:|rcu.*stall|soft lockup|hung_task'

# kscan FILE: the lines of FILE, a kernel log, that fail a test.
kscan() { grep -E -- "$KSCAN_RE" "$1"; }

# kmemleak_report: on a kernel with kmemleak (the debug kernel), scan for
# unreferenced objects now and print them, then forget them (clear), so
# each is reported once.  kmemleak reports an object only once it is 5 s
# old: the caller waits that long after what it checks.  Two scans: an
# object whose only pointer was in flight during the first one (a list
# being spliced) is referenced again in the second, and not shown.  The
# scan also puts "kmemleak: N new suspected memory leaks" in the kernel log.
# Elsewhere it prints nothing.
kmemleak_report() {
	local k=/sys/kernel/debug/kmemleak
	[ -w "$k" ] || return 0
	echo scan >"$k" && echo scan >"$k" && cat "$k" && echo clear >"$k"
}
