# lib/build.mk: libdmbarrier.so.1 and barrierctl.
#
# For other components: link the library with $(LIBDMB_LDLIBS) (it carries
# the rpath into $(BUILD)/lib) and depend on $(LIBDMB_SO).  The public
# header is lib/libdmbarrier.h (lib/ is on the include path already).

LIBDMB_VERSION := 1.0.0
LIBDMB_DIR := $(BUILD)/lib
LIBDMB_SONAME := libdmbarrier.so.1
LIBDMB_SO := $(LIBDMB_DIR)/libdmbarrier.so
LIBDMB_PC := $(LIBDMB_DIR)/libdmbarrier.pc
LIBDMB_SRCS := lib/ctx.c lib/status.c lib/dm.c lib/event.c lib/kmod.c lib/writecache.c
LIBDMB_OBJS := $(LIBDMB_SRCS:%.c=$(BUILD)/obj/%.o)
LIBDMB_DEPLIBS := $(shell pkg-config --libs devmapper libkmod 2>/dev/null)
LIBDMB_LDLIBS = -L$(LIBDMB_DIR) -ldmbarrier -Wl,-rpath,$(abspath $(LIBDMB_DIR))

BARRIERCTL := $(BUILD)/barrierctl
BARRIERCTL_SRCS := lib/barrierctl.c lib/barrierctl-args.c lib/barrierctl-output.c lib/barrierctl-bus.c
BARRIERCTL_OBJS := $(BARRIERCTL_SRCS:%.c=$(BUILD)/obj/%.o)
BARRIERCTL_LIBS := $(shell pkg-config --libs json-c libsystemd 2>/dev/null)

# Everything in lib/ is compiled hidden; the API is marked _public_.
CPPFLAGS_lib_ := -fvisibility=hidden $(shell pkg-config --cflags devmapper libkmod json-c libsystemd 2>/dev/null)

USERSPACE += $(LIBDMB_SO) $(LIBDMB_PC) $(BARRIERCTL)

$(LIBDMB_DIR)/$(LIBDMB_SONAME): $(LIBDMB_OBJS) lib/libdmbarrier.sym
	@mkdir -p $(@D)
	$(CC) -shared -Wl,-soname,$(LIBDMB_SONAME) -Wl,--version-script=lib/libdmbarrier.sym \
		-Wl,--no-undefined $(ALL_LDFLAGS) -o $@ $(LIBDMB_OBJS) $(LIBDMB_DEPLIBS)

$(LIBDMB_SO): $(LIBDMB_DIR)/$(LIBDMB_SONAME)
	ln -sf $(LIBDMB_SONAME) $@

# The build tree's .pc points at the build tree; install writes its own.
define libdmb_pc
	sed -e 's|@PREFIX@|$(1)|' -e 's|@LIBDIR@|$(2)|' -e 's|@INCLUDEDIR@|$(3)|' \
		-e 's|@VERSION@|$(LIBDMB_VERSION)|' lib/libdmbarrier.pc.in
endef
$(LIBDMB_PC): lib/libdmbarrier.pc.in
	@mkdir -p $(@D)
	$(call libdmb_pc,$(abspath $(BUILD)),$(abspath $(LIBDMB_DIR)),$(CURDIR)/lib) >$@

$(BARRIERCTL): $(BARRIERCTL_OBJS) $(LIBDMB_SO)
	$(CC) $(ALL_LDFLAGS) -o $@ $(BARRIERCTL_OBJS) $(LIBDMB_LDLIBS) $(BARRIERCTL_LIBS)

# ------------------------------------------------------------- install
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
SBINDIR ?= $(PREFIX)/sbin
MANDIR ?= $(PREFIX)/share/man

.PHONY: install-lib uninstall-lib
install: install-lib
uninstall: uninstall-lib

install-lib: $(LIBDMB_SO) $(BARRIERCTL_OBJS)
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(SBINDIR) \
		$(DESTDIR)$(MANDIR)/man8
	install -m 0644 $(LIBDMB_DIR)/$(LIBDMB_SONAME) $(DESTDIR)$(LIBDIR)/libdmbarrier.so.$(LIBDMB_VERSION)
	ln -sf libdmbarrier.so.$(LIBDMB_VERSION) $(DESTDIR)$(LIBDIR)/$(LIBDMB_SONAME)
	ln -sf $(LIBDMB_SONAME) $(DESTDIR)$(LIBDIR)/libdmbarrier.so
	install -m 0644 lib/libdmbarrier.h $(DESTDIR)$(INCLUDEDIR)/libdmbarrier.h
	$(call libdmb_pc,$(PREFIX),$(LIBDIR),$(INCLUDEDIR)) >$(DESTDIR)$(LIBDIR)/pkgconfig/libdmbarrier.pc
	# Relinked without the build tree's rpath.
	$(CC) $(ALL_LDFLAGS) -o $(DESTDIR)$(SBINDIR)/barrierctl $(BARRIERCTL_OBJS) \
		-L$(LIBDMB_DIR) -ldmbarrier $(BARRIERCTL_LIBS)
	install -m 0644 docs/man/barrierctl.8 $(DESTDIR)$(MANDIR)/man8/barrierctl.8
	$(if $(DESTDIR),,ldconfig)

uninstall-lib:
	rm -f $(DESTDIR)$(LIBDIR)/libdmbarrier.so.$(LIBDMB_VERSION) \
		$(DESTDIR)$(LIBDIR)/$(LIBDMB_SONAME) $(DESTDIR)$(LIBDIR)/libdmbarrier.so \
		$(DESTDIR)$(LIBDIR)/pkgconfig/libdmbarrier.pc $(DESTDIR)$(INCLUDEDIR)/libdmbarrier.h \
		$(DESTDIR)$(SBINDIR)/barrierctl $(DESTDIR)$(MANDIR)/man8/barrierctl.8
