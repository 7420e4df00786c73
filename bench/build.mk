# bench/build.mk: the benchmark tools (docs/bench.md).  Programs go to
# $(BUILD)/bench; bench/run drives them in the guest.

BENCH_DIR := $(BUILD)/bench/bin
BENCH_JOURNAL := $(BENCH_DIR)/dmb-journal
BENCH_DRAINSTAT := $(BENCH_DIR)/dmb-drainstat

USERSPACE += $(BENCH_JOURNAL) $(BENCH_DRAINSTAT)

$(BENCH_JOURNAL): $(BUILD)/obj/bench/journal.o
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(shell pkg-config --libs liburing 2>/dev/null)

CPPFLAGS_bench_ := -I$(CURDIR)/tests/tools

$(BENCH_DRAINSTAT): $(BUILD)/obj/bench/drainstat.o $(TOOLS_TRACE_OBJS)
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ -lm
