#!/bin/bash
# Self-test of the guest harness, run by `make check` on the host: runs the
# deliberately broken tests in tests/vm/selftest and checks that the runner
# fails the run and reports each one for the right reason.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# pass: its RESULT line garbled (the verdict must come from pass.result);
# lost-result: garbled and no file (it must fail).  Negative control: the
# runner before 2e3fbbc dropped both, and four of the checks below failed.
res=${1:-$here/../../build/vm-selftest}
DMB_SELFTEST_GARBLE="pass lost-result" DMB_SELFTEST_NOFILE=lost-result \
	"$here/run" -o "$res" "$here"/selftest/*.sh >"$out" 2>&1
rc=$?
sed 's/^/  | /' "$out"
bad=0
check() { # check DESCRIPTION REGEX
	if grep -qE "$2" "$out"; then
		echo "selftest ok: $1"
	else
		echo "selftest FAILED: $1 (no line matching /$2/)"
		bad=1
	fi
}
[ $rc -ne 0 ] && echo "selftest ok: the run exits non-zero ($rc)" ||
	{ echo "selftest FAILED: the run exited 0 with failing tests"; bad=1; }
check "a passing test passes" '^PASS pass '
check "a garbled RESULT line: the verdict from NAME.result" '^run: pass: no RESULT line on the console'
check "no RESULT line and no file: the test fails" '^FAIL lost-result .*no result from the guest'
check "a failing test fails with its reason" '^FAIL fails .*deliberate failure'
check "a kernel WARNING fails a test that exited 0" '^FAIL warns .*dmesg: .*WARNING'
check "a test past its timeout fails by name" '^FAIL hangs .*timed out after 5s'
check "a mapping left behind is cleaned up" '^PASS leaves-mapping '
# lockup: the guest's kernel hangs (issue 29).  Negative control: the
# runner before this check waited out the deadline and said only "guest
# hung or died in this test", with no backtrace, dump or function.
check "a hung kernel fails the test by name, with the report and the function" \
	'^FAIL lockup .*hung or died in this test: .*soft lockup.*stuck in dmb_warn_spin'
check "the runner dumped the hung guest's vCPUs" '^run: guest state in .*qemu-dump.txt: vCPU 0: RIP=.*vCPU 1: RIP='
dump=$(ls "$res"/g*/qemu-dump.txt 2>/dev/null | head -n 1)
serial=${dump%/*}/serial.log
# The dump's registers; after the runner's NMI, the panic's backtrace of
# each CPU, both spinning in dmb_warn_spin (console: the module's symbols).
if [ -n "$dump" ] && grep -q '^vCPU 1: RIP=' "$dump" && grep -q '^RIP=' "$dump" &&
	grep -q 'Kernel panic - not syncing: NMI' "$serial" &&
	[ "$(sed -n '/Kernel panic - not syncing: NMI/,$p' "$serial" | grep -cE 'NMI backtrace for cpu [01]')" -ge 2 ] &&
	awk '/Kernel panic - not syncing: NMI/ { p = 1 } p && /dmb_warn_spin/ { f = 1 } END { exit !f }' "$serial"; then
	echo "selftest ok: qemu-dump.txt has each vCPU's registers; after the NMI, serial.log has both CPUs' backtraces in dmb_warn_spin"
else
	echo "selftest FAILED: the hung guest's dump ($dump) or its backtraces in $serial are missing"
	bad=1
fi
check "the summary counts them" '^2 passed, 5 failed$'
exit $bad
