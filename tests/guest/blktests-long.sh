#!/bin/bash
# blktests over barrier mappings (modes flush, fua, drain) and, in the same
# boot on the same disks, over dm-linear, the baseline: TEST_DEVS the two
# mappings (the IDE and AHCI disks; tests/guest/upstream.lib), every block/
# test that takes a test device, and dm/ (whose tests make their own
# devices: they show what the kernel's device-mapper core does on this
# kernel).  Fails if a test passes over dm-linear and fails over a barrier
# mapping, or if the suite cannot run; prints passed/failed/not run per
# mode beside dm-linear's, with blktests' reason for every "not run".
# DMB_UP_KINDS and DMB_BLKTESTS_LIST narrow a run.
# vm: ide ahci
# timeout: 3600
source "$PROJECT/tests/vm/lib.sh"
source "$PROJECT/tests/guest/fs.lib"
source "$PROJECT/tests/guest/upstream.lib"

up_blktests block/003 block/004 block/005 block/007 block/008 block/011 block/012 \
	block/019 block/036 dm
