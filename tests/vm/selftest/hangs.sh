#!/bin/bash
# Harness self-test: outlives its timeout; the runner must fail it by name
# and go on.
# vm: ide
# timeout: 5
source "$PROJECT/tests/vm/lib.sh"
sleep 600
