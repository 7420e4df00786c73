#!/bin/bash
# Harness self-test: a test that passes, but whose verdict never reaches
# the runner (selftest.sh garbles its RESULT line on the console and has
# the guest write no NAME.result): the runner must fail it, not drop it.
# vm: ide
# timeout: 30
source "$PROJECT/tests/vm/lib.sh"
[ -b "$DISK_IDE" ] || fail "no IDE disk"
