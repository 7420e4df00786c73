# daemon/build.mk: barrierd, its systemd unit, D-Bus files and udev rules.
#
# barrierd links libdmbarrier from the build tree (rpath into $(BUILD)/lib;
# install relinks without it).  daemon/policy.c and daemon/config.c are
# pure and also linked into the host unit tests (tests/unit/build.mk).

BARRIERD := $(BUILD)/barrierd
BARRIERD_SRCS := daemon/main.c daemon/bus.c daemon/polkit.c daemon/watch.c daemon/device.c \
	daemon/policy.c daemon/config.c daemon/log.c
BARRIERD_OBJS := $(BARRIERD_SRCS:%.c=$(BUILD)/obj/%.o)
BARRIERD_LIBS := $(shell pkg-config --libs libsystemd libudev 2>/dev/null)
CPPFLAGS_daemon_ := $(shell pkg-config --cflags libsystemd libudev 2>/dev/null)

# The pure parts, for unit tests.
BARRIERD_PURE_OBJS := $(BUILD)/obj/daemon/policy.o $(BUILD)/obj/daemon/config.o

USERSPACE += $(BARRIERD)

$(BARRIERD): $(BARRIERD_OBJS) $(LIBDMB_SO)
	$(CC) $(ALL_LDFLAGS) -o $@ $(BARRIERD_OBJS) $(LIBDMB_LDLIBS) $(BARRIERD_LIBS)

# ------------------------------------------------------------- install
# Debian renames lvm2's 10-dm.rules to 55-dm.rules; subsystem rules must
# run after it, so 11-dm-barrier.rules is installed under the number that
# follows the dm rules present.
UDEVDIR ?= $(shell pkg-config --variable=udevdir udev 2>/dev/null || echo /lib/udev)
SYSTEMDUNITDIR ?= $(shell pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null || \
	echo /lib/systemd/system)
DBUSDIR ?= /usr/share/dbus-1
# polkitd reads actions only from its own datadir, not from PREFIX's.
POLKITACTIONSDIR ?= /usr/share/polkit-1/actions
SYSCONFDIR ?= /etc
DMB_RULES_NAME ?= $(if $(wildcard $(UDEVDIR)/rules.d/55-dm.rules),56-dm-barrier.rules,11-dm-barrier.rules)

.PHONY: install-daemon uninstall-daemon
install: install-daemon
uninstall: uninstall-daemon

install-daemon: $(BARRIERD_OBJS) $(LIBDMB_SO)
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(SYSTEMDUNITDIR) \
		$(DESTDIR)$(DBUSDIR)/system.d $(DESTDIR)$(DBUSDIR)/system-services \
		$(DESTDIR)$(DBUSDIR)/interfaces $(DESTDIR)$(POLKITACTIONSDIR) \
		$(DESTDIR)$(UDEVDIR)/rules.d \
		$(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(SYSCONFDIR)
	# Relinked without the build tree's rpath.
	$(CC) $(ALL_LDFLAGS) -o $(DESTDIR)$(SBINDIR)/barrierd $(BARRIERD_OBJS) \
		-L$(LIBDMB_DIR) -ldmbarrier $(BARRIERD_LIBS)
	sed 's|/usr/local/sbin/barrierd|$(SBINDIR)/barrierd|' daemon/barrierd.service \
		>$(DESTDIR)$(SYSTEMDUNITDIR)/barrierd.service
	install -m 0644 daemon/org.dmbarrier1.conf $(DESTDIR)$(DBUSDIR)/system.d/org.dmbarrier1.conf
	install -m 0644 daemon/org.dmbarrier1.service \
		$(DESTDIR)$(DBUSDIR)/system-services/org.dmbarrier1.service
	install -m 0644 docs/dbus/org.dmbarrier1.xml $(DESTDIR)$(DBUSDIR)/interfaces/org.dmbarrier1.xml
	install -m 0644 daemon/org.dmbarrier1.policy \
		$(DESTDIR)$(POLKITACTIONSDIR)/org.dmbarrier1.policy
	install -m 0644 udev/11-dm-barrier.rules $(DESTDIR)$(UDEVDIR)/rules.d/$(DMB_RULES_NAME)
	install -m 0644 docs/man/barrierd.8 $(DESTDIR)$(MANDIR)/man8/barrierd.8
	install -m 0644 docs/man/barrierd.conf.5 $(DESTDIR)$(MANDIR)/man5/barrierd.conf.5
	test -e $(DESTDIR)$(SYSCONFDIR)/barrierd.conf || \
		install -m 0644 daemon/barrierd.conf.example $(DESTDIR)$(SYSCONFDIR)/barrierd.conf

uninstall-daemon:
	rm -f $(DESTDIR)$(SBINDIR)/barrierd $(DESTDIR)$(SYSTEMDUNITDIR)/barrierd.service \
		$(DESTDIR)$(DBUSDIR)/system.d/org.dmbarrier1.conf \
		$(DESTDIR)$(DBUSDIR)/system-services/org.dmbarrier1.service \
		$(DESTDIR)$(DBUSDIR)/interfaces/org.dmbarrier1.xml \
		$(DESTDIR)$(POLKITACTIONSDIR)/org.dmbarrier1.policy \
		$(DESTDIR)$(UDEVDIR)/rules.d/$(DMB_RULES_NAME) \
		$(DESTDIR)$(MANDIR)/man8/barrierd.8 $(DESTDIR)$(MANDIR)/man5/barrierd.conf.5
	# The configuration only if it is still the example install put there.
	if cmp -s daemon/barrierd.conf.example $(DESTDIR)$(SYSCONFDIR)/barrierd.conf; then \
		rm -f $(DESTDIR)$(SYSCONFDIR)/barrierd.conf; fi
