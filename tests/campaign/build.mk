# tests/campaign/build.mk: the fault campaign's own tools (docs/verification.md).
CAMPAIGN_STAMP := $(BUILD)/tools/dmb-stamp
USERSPACE += $(CAMPAIGN_STAMP)

$(CAMPAIGN_STAMP): $(BUILD)/obj/tests/campaign/stamp.o
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $^
