#!/bin/bash
# The fault campaign (tests/campaign/campaign.lib, docs/verification.md):
# DMB_CAMPAIGN_N seeded random schedules (default 200, seeds from
# DMB_CAMPAIGN_BASE, default 1) of workload, faults, mode messages,
# suspends and reloads on a barrier mapping over a dmb_fault mapping (or,
# every third seed, over a dmb_disk blk-mq disk), each checked by
# dmb-oracle, the kernel log and the counters.
# DMB_CAMPAIGN_SEEDS="S..." replays those seeds.  long-campaign runs 2000.
# Negative controls: tests/campaign/mutants (make check-mutants) reintroduce
# each review finding; the campaign catches the ones its schedules reach.
# vm: ide ahci
# timeout: 1500
# env: DMB_CAMPAIGN_N DMB_CAMPAIGN_BASE DMB_CAMPAIGN_SEEDS
source "$PROJECT/tests/vm/lib.sh"
source "$PROJECT/tests/campaign/campaign.lib"

campaign_run "${DMB_CAMPAIGN_N:-200}" "${DMB_CAMPAIGN_BASE:-1}"
