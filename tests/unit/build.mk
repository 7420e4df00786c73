# tests/unit/build.mk: host unit tests (cmocka), one binary per
# tests/unit/test-*.c, run by `make check-unit` (plain and ASan/UBSan).
# Each component adds a section that says what its tests link with.

UNIT_DIR := $(BUILD)/tests/unit
UNIT_CMOCKA_LIBS := $(shell pkg-config --libs cmocka 2>/dev/null)
CPPFLAGS_tests_unit_ := $(shell pkg-config --cflags cmocka json-c 2>/dev/null)

# ----------------------------------------------------- lib (libdmbarrier)
# test-lib-*.c: the library's objects (internal functions included) and
# barrierctl's pure parts, no shared library.
UNIT_LIB_TESTS := $(patsubst tests/unit/%.c,$(UNIT_DIR)/%,$(wildcard tests/unit/test-lib-*.c))
UNIT_LIB_LINK := $(LIBDMB_OBJS) $(BUILD)/obj/lib/barrierctl-args.o \
	$(BUILD)/obj/lib/barrierctl-output.o
UNIT_TESTS += $(UNIT_LIB_TESTS)

$(UNIT_LIB_TESTS): $(UNIT_DIR)/%: $(BUILD)/obj/tests/unit/%.o $(UNIT_LIB_LINK)
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBDMB_DEPLIBS) $(shell pkg-config --libs json-c 2>/dev/null) \
		$(UNIT_CMOCKA_LIBS)

# ------------------------------------------------------ daemon (barrierd)
# test-daemon-*.c: barrierd's pure parts (daemon/policy.c, daemon/config.c)
# against libdmbarrier (names, modes) from the build tree.
UNIT_DAEMON_TESTS := $(patsubst tests/unit/%.c,$(UNIT_DIR)/%,$(wildcard tests/unit/test-daemon-*.c))
CPPFLAGS_tests_unit_ += -I$(CURDIR)/daemon
UNIT_TESTS += $(UNIT_DAEMON_TESTS)

$(UNIT_DAEMON_TESTS): $(UNIT_DIR)/%: $(BUILD)/obj/tests/unit/%.o $(BARRIERD_PURE_OBJS) $(LIBDMB_SO)
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(BARRIERD_PURE_OBJS) $(LIBDMB_LDLIBS) $(UNIT_CMOCKA_LIBS)

# ------------------------------------------- tools (ordering verifier)
# test-tools-order*.c: the blktrace parser and the checker, on recorded
# traces in tests/unit/data.
UNIT_ORDER_TESTS := $(patsubst tests/unit/%.c,$(UNIT_DIR)/%,$(wildcard tests/unit/test-tools-order*.c))
CPPFLAGS_tests_unit_ += -DDATA_DIR=\"$(CURDIR)/tests/unit/data\"
UNIT_TESTS += $(UNIT_ORDER_TESTS)

$(UNIT_ORDER_TESTS): $(UNIT_DIR)/%: $(BUILD)/obj/tests/unit/%.o \
		$(BUILD)/obj/tests/tools/trace.o $(BUILD)/obj/tests/tools/order.o
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(UNIT_CMOCKA_LIBS)

# ------------------------------------------ tools (crash-consistency replay)
# test-tools-replay.c: the dm-log-writes reader and replayer on synthetic logs.
UNIT_REPLAY_TESTS := $(UNIT_DIR)/test-tools-replay
UNIT_TESTS += $(UNIT_REPLAY_TESTS)

$(UNIT_REPLAY_TESTS): $(UNIT_DIR)/%: $(BUILD)/obj/tests/unit/%.o $(BUILD)/obj/tests/tools/replay.o
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(UNIT_CMOCKA_LIBS)

# ---------------------------------------------- tools (fault campaign oracle)
# test-tools-oracle.c: the oracle's rules on synthetic ops, bio and event logs.
UNIT_ORACLE_TESTS := $(UNIT_DIR)/test-tools-oracle
UNIT_TESTS += $(UNIT_ORACLE_TESTS)

$(UNIT_ORACLE_TESTS): $(UNIT_DIR)/%: $(BUILD)/obj/tests/unit/%.o $(BUILD)/obj/tests/tools/oracle.o
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(UNIT_CMOCKA_LIBS)
