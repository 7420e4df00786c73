#!/bin/bash
# The fault campaign, long: 2000 schedules from seed 100001 (make
# check-long); see campaign.sh.
# vm: ide ahci
# timeout: 10800
# env: DMB_CAMPAIGN_N DMB_CAMPAIGN_BASE DMB_CAMPAIGN_SEEDS
source "$PROJECT/tests/vm/lib.sh"
source "$PROJECT/tests/campaign/campaign.lib"

campaign_run "${DMB_CAMPAIGN_N:-2000}" "${DMB_CAMPAIGN_BASE:-100001}"
