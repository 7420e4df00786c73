# tests/fuzz/build.mk: libFuzzer targets (clang), run by `make check-fuzz`
# for FUZZ_SECONDS each with the seed corpus in tests/fuzz/corpus/<name>/.

FUZZ_CC ?= clang
FUZZ_FLAGS := -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -g -O1

# ---------------------------------------------- lib: the target's text parsers
FUZZERS += $(BUILD)/fuzz/fuzz-parsers
$(BUILD)/fuzz/fuzz-parsers: tests/fuzz/fuzz-parsers.c lib/status.c lib/libdmbarrier-private.h \
		lib/libdmbarrier.h lib/macro.h
	@mkdir -p $(@D)
	$(FUZZ_CC) $(WFLAGS) $(FUZZ_FLAGS) -Ilib -o $@ tests/fuzz/fuzz-parsers.c lib/status.c
