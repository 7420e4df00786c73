# tests/tools/build.mk: the ordering verifier and the crash-consistency
# checker (tests/tools/README.md).  Programs go to $(BUILD)/tools; the
# checkers' logic lives in small objects the host unit tests link too.

TOOLS_DIR := $(BUILD)/tools
TOOLS_ORDERLOAD := $(TOOLS_DIR)/dmb-orderload
TOOLS_ORDERCHECK := $(TOOLS_DIR)/dmb-ordercheck

# Pure logic, shared with tests/unit/test-tools-*.c.
TOOLS_TRACE_OBJS := $(BUILD)/obj/tests/tools/trace.o $(BUILD)/obj/tests/tools/order.o

USERSPACE += $(TOOLS_ORDERLOAD) $(TOOLS_ORDERCHECK)

$(TOOLS_ORDERLOAD): $(BUILD)/obj/tests/tools/orderload.o
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(shell pkg-config --libs liburing 2>/dev/null)

$(TOOLS_ORDERCHECK): $(BUILD)/obj/tests/tools/ordercheck.o $(TOOLS_TRACE_OBJS)
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $^

# Crash-consistency checker: dm-log-writes replay (replay.c, shared with
# tests/unit/test-tools-replay.c).
TOOLS_REPLAY := $(TOOLS_DIR)/dmb-replay-log
TOOLS_REPLAY_OBJS := $(BUILD)/obj/tests/tools/replay.o
USERSPACE += $(TOOLS_REPLAY)

$(TOOLS_REPLAY): $(BUILD)/obj/tests/tools/dmb-replay-log.o $(TOOLS_REPLAY_OBJS)
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $^

# Fault campaign: the workload (faultload.c) and the oracle (oracle.c,
# shared with tests/unit/test-tools-oracle.c) over its three logs.
TOOLS_FAULTLOAD := $(TOOLS_DIR)/dmb-faultload
TOOLS_ORACLE := $(TOOLS_DIR)/dmb-oracle
TOOLS_ORACLE_OBJS := $(BUILD)/obj/tests/tools/oracle.o
USERSPACE += $(TOOLS_FAULTLOAD) $(TOOLS_ORACLE)

$(TOOLS_FAULTLOAD): $(BUILD)/obj/tests/tools/faultload.o
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ -pthread

$(TOOLS_ORACLE): $(BUILD)/obj/tests/tools/dmb-oracle.o $(TOOLS_ORACLE_OBJS)
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $^

# The two-thread durability stress (review finding N1; target-durable).
TOOLS_SYNCLOAD := $(TOOLS_DIR)/dmb-syncload
USERSPACE += $(TOOLS_SYNCLOAD)

$(TOOLS_SYNCLOAD): $(BUILD)/obj/tests/tools/syncload.o
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ -pthread

# A polled read nobody reaps (review finding N6; target-polled).
TOOLS_POLLHOLD := $(TOOLS_DIR)/dmb-pollhold
USERSPACE += $(TOOLS_POLLHOLD)

$(TOOLS_POLLHOLD): $(BUILD)/obj/tests/tools/pollhold.o
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(shell pkg-config --libs liburing 2>/dev/null)
