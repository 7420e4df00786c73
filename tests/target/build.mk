# tests/target/build.mk: test programs for the dm-barrier target itself.
TARGET_TEST_BINS := $(BUILD)/tests/dmb-tablefuzz
USERSPACE += $(TARGET_TEST_BINS)

$(BUILD)/tests/dmb-tablefuzz: $(BUILD)/obj/tests/target/dmb-tablefuzz.o
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(shell pkg-config --libs devmapper 2>/dev/null)
