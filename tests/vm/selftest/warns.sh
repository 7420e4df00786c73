#!/bin/bash
# Harness self-test: exits 0 but makes the kernel WARN; only the dmesg scan
# can fail it.
# vm: ide
# timeout: 30
source "$PROJECT/tests/vm/lib.sh"
insmod "$PROJECT/tests/vm/warnmod/dmb_warn.ko" || true
exit 0
