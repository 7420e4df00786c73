#!/bin/bash
# Harness self-test: exits 0 leaving a dm mapping behind; the runner's
# cleanup must remove it (and then the test passes), so the next test
# starts clean.
# vm: ide
# timeout: 30
source "$PROJECT/tests/vm/lib.sh"
dmsetup create selftest-left --table "0 $(sectors "$DISK_IDE") linear $DISK_IDE 0"
