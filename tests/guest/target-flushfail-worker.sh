#!/bin/bash
# target-flushfail with dm_barrier.direct=N: the same flush failures,
# fallbacks, holds, replays and suspends, every barrier through the worker.
# vm: ide ahci blkdebug=ahci:0
# timeout: 420
DMB_DIRECT=N
source "$PROJECT/tests/guest/target-flushfail.sh"
