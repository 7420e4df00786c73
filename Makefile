# dm-barrier: top-level build.  `make help` lists the targets.
#
# The kernel module is built against Debian's headers for the kernel the
# test guest boots (scripts/kver picks the newest installed Debian kernel;
# override with KVER=... or KDIR=...), never against `uname -r`.
# Userspace is C11 with -Wall -Wextra -Werror; SANITIZE=1 (or `make asan`)
# builds it with ASan and UBSan into build/asan.

.DEFAULT_GOAL := all
SHELL := /bin/bash

KVER ?= $(shell scripts/kver 2>/dev/null)
KDIR ?= /lib/modules/$(KVER)/build
BUILD ?= build
SANITIZE ?= 0
PREFIX ?= /usr/local
DESTDIR ?=

CC ?= cc
CFLAGS ?= -O2 -g
WFLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wshadow -Wformat=2 \
	-Wmissing-prototypes -Wstrict-prototypes -Wno-unused-parameter
ifeq ($(SANITIZE),1)
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
endif
ALL_CFLAGS = $(WFLAGS) $(CFLAGS) $(SANFLAGS) -fPIC -I$(CURDIR)/lib
ALL_LDFLAGS = $(LDFLAGS) $(SANFLAGS)

# Component fragments add to these.
USERSPACE :=      # everything `make all` builds in userspace
UNIT_TESTS :=     # host unit test binaries, run by check-unit
FUZZERS :=        # libFuzzer binaries (clang), run by check-fuzz / fuzz

-include lib/build.mk
-include daemon/build.mk
-include tests/unit/build.mk
-include tests/fuzz/build.mk
-include tests/tools/build.mk
-include tests/target/build.mk
-include tests/campaign/build.mk
-include bench/build.mk

.PHONY: all module userspace test-modules deps kernels check check-host check-unit check-model \
	check-mutants check-mutants-apply check-fuzz check-guest check-guest-kernels guest-kernels-run check-long-kernels check-harness check-long \
	check-debug debug-kernel upstream-suites check-xfstests \
	checkpatch asan fuzz demo bench install uninstall clean help

all: module userspace test-modules

help:
	@echo "make             build the module ($(KVER)), library, CLI, daemon and tools"
	@echo "make demo        boot a guest and show dm-barrier under ext4, end to end"
	@echo "make check       every test: host unit/fuzz/style tests, then guest tests"
	@echo "make check-long  the long variants (100k-bio ordering, 500-point crash replay,"
	@echo "                 2000-schedule fault campaign), the failure-path tests and"
	@echo "                 the 200-schedule campaign on 6.12 and 7.3, check-debug and"
	@echo "                 check-mutants"
	@echo "make check-debug the target, flush-failure and campaign tests on a debug kernel"
	@echo "                 (KASAN, lockdep, kmemleak; built once per machine: an hour)"
	@echo "make check-mutants  the negative controls: each review finding reintroduced, caught"
	@echo "make check-xfstests  xfstests and blktests over barrier mappings in modes flush,"
	@echo "                 fua and drain, dm-linear the baseline, on 6.1, 6.12 and 7.3"
	@echo "make check-model the gate protocol, model-checked by spin over every interleaving,"
	@echo "                 and N1's re-read caught (dm-target/model; seconds, host only)"
	@echo "make bench       benchmarks in the guest (results in build/bench)"
	@echo "make asan        userspace with ASan/UBSan into build/asan"
	@echo "make fuzz        run the parser fuzzers for longer (FUZZ_SECONDS=600)"
	@echo "make install     install (DESTDIR, PREFIX); make uninstall removes it"
	@echo "make kernels     fetch $(KERNELS) (build/kernels) and build the module for them"
	@echo "One guest test:  tests/vm/run NAME  (tests/vm/run --list, --help)"
	@echo "On 6.12 or 7.3:  KERNEL=6.12 tests/vm/run NAME"

deps:
	@scripts/deps

# ----------------------------------------------------------------- kernel
module:
	$(MAKE) -C $(KDIR) M=$(CURDIR)/dm-target W=1 modules

# The newer Debian kernels (scripts/kernels): 6.12 from bookworm-backports
# and 7.3 from trixie-backports, unpacked under build/kernels/SERIES with
# their own dm-barrier.ko (7.x built in a trixie build root: gcc-14).  The
# downloads and the build root are made once per machine.
KERNELS ?= 6.12 7.3
kernels:
	scripts/kernels module $(KERNELS)

# Test-only modules the guest tests load (tests/vm/*mod/).
TEST_MODULE_DIRS := tests/vm/warnmod tests/vm/faultmod tests/vm/diskmod tests/vm/biomod tests/vm/kdelaymod
# And the test-only variants of the target (scripts/variants: its race
# windows widenable, and the N1 negative control), in build/variants.
test-modules:
	@set -e; for d in $(TEST_MODULE_DIRS); do $(MAKE) -C $(KDIR) M=$(CURDIR)/$$d W=1 modules; done
	@set -e; for d in $$(scripts/variants $(BUILD)/variants); do \
		$(MAKE) -C $(KDIR) M=$(CURDIR)/$$d W=1 DMB_TEST_WINDOWS=y modules; done

CHECKPATCH_DIR := $(BUILD)/checkpatch
$(CHECKPATCH_DIR)/scripts/checkpatch.pl:
	@mkdir -p $(CHECKPATCH_DIR)
	tar -C $(CHECKPATCH_DIR) --strip-components=1 -xf /usr/src/linux-source-6.1.tar.xz \
		linux-source-6.1/scripts/checkpatch.pl linux-source-6.1/scripts/spelling.txt \
		linux-source-6.1/scripts/const_structs.checkpatch
	@touch $@

checkpatch: $(CHECKPATCH_DIR)/scripts/checkpatch.pl
	$(CHECKPATCH_DIR)/scripts/checkpatch.pl --no-tree --strict -f \
		dm-target/dm-barrier.c dm-target/dm-barrier-compat.h \
		$(filter-out %.mod.c,$(wildcard $(addsuffix /*.[ch],$(TEST_MODULE_DIRS))))

# -------------------------------------------------------------- userspace
userspace: $(USERSPACE)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(CPPFLAGS_$(subst /,_,$(dir $<))) -MMD -MP -c -o $@ $<

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)

asan:
	$(MAKE) BUILD=build/asan SANITIZE=1 userspace $(UNIT_TESTS:$(BUILD)/%=build/asan/%)

# ---------------------------------------------------------------- install
# make install [DESTDIR=...] [PREFIX=...]: the module into the kernel's
# updates/ (depmod when that is a real module tree: not for a bare DESTDIR
# staging tree, whose depmod the installing system runs), plus what
# lib/build.mk and daemon/build.mk install (library, header, .pc,
# barrierctl, barrierd, unit, D-Bus and udev files, their man pages), plus
# the target's and the D-Bus API's man pages.  `make uninstall` with the same
# variables removes exactly those files.  The Debian packages install the
# same files but the module, which dm-barrier-dkms builds (dkms.conf).
MODDIR ?= /lib/modules/$(KVER)/updates
DEPMOD ?= depmod
DMB_MODULE_TREE = $(DESTDIR)/lib/modules/$(KVER)
define dmb_depmod
	@if [ -e $(DMB_MODULE_TREE)/modules.order ]; then \
		echo "$(DEPMOD) $(if $(DESTDIR),-b $(DESTDIR) )$(KVER)"; \
		$(DEPMOD) $(if $(DESTDIR),-b $(DESTDIR)) $(KVER); \
	else \
		echo "no kernel module tree in $(DMB_MODULE_TREE): depmod left to the system it is for"; \
	fi
endef

.PHONY: install-module uninstall-module install-man uninstall-man check-install
install: install-module install-man
uninstall: uninstall-module uninstall-man

install-module:
	@test -f dm-target/dm-barrier.ko || { echo "install: no dm-target/dm-barrier.ko: run make first" >&2; exit 1; }
	install -D -m 0644 dm-target/dm-barrier.ko $(DESTDIR)$(MODDIR)/dm-barrier.ko
	$(dmb_depmod)

uninstall-module:
	rm -f $(DESTDIR)$(MODDIR)/dm-barrier.ko
	$(dmb_depmod)

install-man:
	install -D -m 0644 docs/man/dm-barrier.7 $(DESTDIR)$(MANDIR)/man7/dm-barrier.7
	install -D -m 0644 docs/man/org.dmbarrier1.5 $(DESTDIR)$(MANDIR)/man5/org.dmbarrier1.5

uninstall-man:
	rm -f $(DESTDIR)$(MANDIR)/man7/dm-barrier.7 $(DESTDIR)$(MANDIR)/man5/org.dmbarrier1.5

# Host side of installing: DESTDIR install and uninstall, man page lint,
# dkms add/build/install against $(KVER)'s headers (and 6.12's when make
# kernels has unpacked it), the Debian packages and
# lintian.  Its outputs (build/dkms, build/deb) are what the guest test
# install-packages loads and installs.
check-install: all
	tests/install/run

# ------------------------------------------------------------------ tests
# A guest keeps about one of the two cores busy (TCG, mostly one vCPU at a
# time), so the host checks run beside the guest tests, their output kept
# in build/check-host.log and printed after them; under nice 19, so that
# they take what the guest leaves (beside them at the same priority, a
# guest booted in 24 s instead of 8).  The guest tests need only the ASan
# build (barrierctl, barrierd), made first.
check: deps
	$(MAKE) -j2 all kernels
	$(MAKE) -j2 asan
	@mkdir -p $(BUILD); echo "== host checks (beside the guest tests, into $(BUILD)/check-host.log)"; \
	nice -n 19 $(MAKE) -j2 --output-sync=target check-host >$(BUILD)/check-host.log 2>&1 & host=$$!; \
	$(MAKE) check-guest; guest=$$?; \
	wait $$host; hrc=$$?; echo "== host checks"; cat $(BUILD)/check-host.log; \
	tests/vm/suite report $(GUEST_SUMMARY); \
	echo "== make check: host checks exit $$hrc, guest tests exit $$guest"; \
	[ $$hrc = 0 ] && [ $$guest = 0 ]

# Independent of each other (the install checks work on copies of the tree),
# so `make check` runs them two at a time: ~90 s one after the other.
check-host: checkpatch check-unit check-fuzz check-install check-model check-mutants-apply

check-unit: $(UNIT_TESTS)
	@set -e; for t in $(UNIT_TESTS); do echo "== $$t"; $$t; done
	$(MAKE) asan
	@set -e; for t in $(UNIT_TESTS:$(BUILD)/%=build/asan/%); do echo "== $$t (ASan/UBSan)"; $$t; done

# The target's lock-free gate in Promela (dm-target/model/gate.pml): spin
# searches every interleaving of the fixed protocol (no violation, search
# complete) and finds N1 in the protocol with the re-read, and the other
# negative controls; a few seconds.  docs/verification.md, "The gate
# protocol, model-checked".
check-model:
	dm-target/model/check

FUZZ_SECONDS ?= 20
check-fuzz: $(FUZZERS)
	@set -eo pipefail; for f in $(FUZZERS); do \
		echo "== $$f ($(FUZZ_SECONDS)s)"; \
		mkdir -p $(BUILD)/fuzz-corpus/$$(basename $$f) $(BUILD)/fuzz-crashes; \
		$$f -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
			-artifact_prefix=$(BUILD)/fuzz-crashes/$$(basename $$f)- \
			$(BUILD)/fuzz-corpus/$$(basename $$f) tests/fuzz/corpus/$$(basename $$f) 2>&1 | tail -n 3; \
	done

fuzz:
	$(MAKE) check-fuzz FUZZ_SECONDS=$${FUZZ_SECONDS:-600}

check-harness:
	tests/vm/selftest.sh

# Every guest test but the long variants; barrierctl runs as the ASan/UBSan
# build (check-unit made it), the plain one in check-long.
GUEST_TESTS = $(sort $(patsubst tests/guest/%.sh,%,$(wildcard tests/guest/*.sh)))
# install-packages installs check-install's .debs on the guest, where the
# DKMS postinst compiles the module under TCG (90 s of its 2 min): it runs
# in check-long; make check keeps check-install's host side (the packages,
# lintian, DKMS for all three kernels).
LONG_TESTS = $(filter long-% %-long,$(GUEST_TESTS)) install-packages upstream-quick
# Only meaningful on the debug kernel (check-debug); they skip elsewhere.
DEBUG_ONLY_TESTS = $(filter debug-%,$(GUEST_TESTS))
# The campaign runs CHECK_CAMPAIGN_N of its schedules here (seeds 1..N; the
# mutants it catches fall within 60), all 200 in check-long-kernels and
# 2000 more in long-campaign.
CHECK_CAMPAIGN_N ?= 60
# Every kernel's tests run whatever failed before them (tests/vm/suite), and
# the end says what happened on each: one line per kernel, then the total.
GUEST_SUMMARY = $(BUILD)/guest-summary
check-guest:
	@rm -f $(GUEST_SUMMARY); rc=0; \
	$(MAKE) --no-print-directory check-harness || { rc=1; echo "harness: self-test FAILED" >>$(GUEST_SUMMARY); }; \
	DMB_CAMPAIGN_N=$(CHECK_CAMPAIGN_N) DMB_BCTL=$(CURDIR)/build/asan/barrierctl tests/vm/suite run \
		$(GUEST_SUMMARY) 6.1 $(BUILD)/vm-results \
		$(filter-out $(LONG_TESTS) $(DEBUG_ONLY_TESTS),$(GUEST_TESTS)) || rc=1; \
	$(MAKE) --no-print-directory guest-kernels-run || rc=1; \
	tests/vm/suite report $(GUEST_SUMMARY) || rc=1; exit $$rc

# The core guest tests on the newer kernels (everything runs on 6.1 above):
# target modes, flush failure, ordering (with its dm-linear control), ext4,
# barrierd's flush failure.  docs/verification.md, "Kernels".
KERNEL_TESTS = target-modes target-flushfail target-flush-transient target-other-bios target-durable stack-lvm-debt order-ahci fs-ext4 barrierd-flushfail
# (tests/vm/run KERNEL=... runs scripts/kernels itself: a `kernels`
# prerequisite here only rebuilt nothing, 15 s.)
guest-kernels-run:
	@rc=0; $(foreach k,$(KERNELS),DMB_BCTL=$(CURDIR)/build/asan/barrierctl tests/vm/suite run \
		$(GUEST_SUMMARY) $(k) $(BUILD)/vm-results-$(k) $(KERNEL_TESTS) || rc=1;) exit $$rc
check-guest-kernels:
	@rm -f $(GUEST_SUMMARY); rc=0; $(MAKE) --no-print-directory guest-kernels-run || rc=1; \
		tests/vm/suite report $(GUEST_SUMMARY) || rc=1; exit $$rc

check-long: deps all check-install upstream-suites
	DMB_LONG=1 tests/vm/run $(LONG_TESTS)
	$(MAKE) check-long-kernels
	$(MAKE) check-debug
	$(MAKE) check-mutants

# The whole suite on the newer kernels: every guest test but the debug
# kernel's own, the long variants included, with the test modules
# scripts/kernels built for each (the core of it ran in make check).
KERNEL_LONG_TESTS = $(filter-out $(DEBUG_ONLY_TESTS),$(GUEST_TESTS))
check-long-kernels: kernels upstream-suites
	@rc=0; $(foreach k,$(KERNELS),echo "== the whole suite on $(k)"; \
		DMB_LONG=1 KERNEL=$(k) tests/vm/run -o $(BUILD)/vm-long-$(k) $(KERNEL_LONG_TESTS) || rc=1;) \
		exit $$rc

# xfstests and blktests (scripts/upstream-suites builds them from the pinned
# snapshots in ../shared/upstream, once per machine, into
# /var/cache/dm-barrier/upstream) over barrier mappings in modes flush, fua
# and drain, dm-linear the baseline in the same boot: upstream-quick,
# xfstests-long and blktests-long in check-long and check-long-kernels, and
# the long ones here on every kernel.  upstream-quick is not in make check
# yet: its 3.5 minutes and the suites' build (4 minutes on a fresh machine)
# would take make check past its 40.  docs/verification.md, "Upstream
# suites".
upstream-suites:
	scripts/upstream-suites build
XFSTESTS_KERNELS ?= 6.1 $(KERNELS)
check-xfstests: deps all kernels upstream-suites
	@rc=0; $(foreach k,$(XFSTESTS_KERNELS),echo "== xfstests and blktests on $(k)"; \
		KERNEL=$(k) tests/vm/run -o $(BUILD)/vm-upstream-$(k) xfstests-long blktests-long || rc=1;) \
		exit $$rc

# The debug kernel (scripts/kernels: Debian's 6.12 source with KASAN,
# lockdep, kmemleak, debugobjects; built once per machine, most of an
# hour): the target, flush-failure, suspend and fault-campaign tests on it,
# failing on any report (tests/vm/kscan.sh), and its negative control
# (debug-kernel: a lock inversion and a leak, both caught).  The campaign
# runs DEBUG_CAMPAIGN_N schedules.  docs/verification.md, "Debug kernel".
# target-polled is left out: its null_blk (memory_backed, poll_queues)
# allocates in its poll path under rcu_read_lock, which the debug kernel
# reports as sleeping in atomic context with fio on null_blk alone, before
# any dm device exists (docs/verification.md, Debug kernel).
# barrierd-flushfail is left out too: when a flush failure leaves the
# kernel's view of the cache "write back" after hdparm -W0, barrierd writes
# queue/write_cache, and 6.12's block core takes q->sysfs_lock then
# q->limits_lock there (queue_attr_store, queue_wc_store), the reverse of
# sd_revalidate_disk's limits_lock -> q_usage_counter: lockdep's report
# names no dm-barrier lock, and switches lockdep off for the boot.
DEBUG_TESTS = debug-kernel $(filter-out target-polled,$(filter target-%,$(GUEST_TESTS))) harness-faultmod \
	campaign
DEBUG_CAMPAIGN_N ?= 20
debug-kernel:
	scripts/kernels module debug
check-debug: deps all debug-kernel
	DMB_CAMPAIGN_N=$(DEBUG_CAMPAIGN_N) KERNEL=debug tests/vm/run -o $(BUILD)/vm-debug $(DEBUG_TESTS)

# The negative controls of the failure-path tests: each patch in
# tests/campaign/mutants reintroduces one finding of the review and must be
# caught by the tests it names (about 25 minutes).
check-mutants: all
	tests/campaign/mutants/run
# Host only, instant: every mutant still applies and names its catchers.
check-mutants-apply:
	tests/campaign/mutants/run --apply

demo: deps
	$(MAKE) all
	tests/vm/run -v tests/demo/demo.sh

bench: deps
	$(MAKE) all
	bench/run

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR)/dm-target clean
	for d in $(TEST_MODULE_DIRS); do $(MAKE) -C $(KDIR) M=$(CURDIR)/$$d clean; done
	rm -rf build
