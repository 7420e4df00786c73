#!/bin/bash
# Harness self-test: a test that fails; the run must fail and name it.
# vm: ide
# timeout: 30
source "$PROJECT/tests/vm/lib.sh"
fail "deliberate failure"
