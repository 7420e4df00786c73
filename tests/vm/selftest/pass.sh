#!/bin/bash
# Harness self-test: a test that passes (the runner must count it).
# vm: ide
# timeout: 30
source "$PROJECT/tests/vm/lib.sh"
[ -b "$DISK_IDE" ] || fail "no IDE disk"
