# User-space build: libwakelock, wakelockd, wakelock CLI, unit tests, docs.
# Included by the top-level Makefile; also usable alone:
#   make -f userspace.mk userspace userspace-guest check-unit
# Run from the repository root.  Outputs under build/.

USERSPACE_DEBS := libinih-dev libcmocka-dev scdoc pkg-config
US_COMMA := ,

US_VERSION := 1.1.0
US_SOVER := 1
US_CC ?= cc
PREFIX ?= /usr/local
DESTDIR ?=
US_LIBDIR ?= $(PREFIX)/lib
US_SYSTEMDDIR ?= $(PREFIX)/lib/systemd/system

# Truncating long paths in messages is intended: no -Wformat-truncation.
US_CFLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wno-format-truncation -O2 -g -Iinclude -pthread -MMD -MP
US_LDLIBS := -pthread

US_LIB_SRC := $(sort $(wildcard lib/*.c))
# The public library: everything but helpers used only by the daemon/CLI.
US_PUBLIC_SRC := $(filter-out lib/json.c,$(US_LIB_SRC))
US_DCORE_SRC := $(filter-out daemon/main.c,$(sort $(wildcard daemon/*.c)))
US_CLI_SRC := $(sort $(wildcard cli/*.c))
US_TEST_COMMON := tests/unit/harness.c tests/unit/fake_power.c
US_TESTS := $(patsubst tests/unit/%.c,%,$(sort $(wildcard tests/unit/test_*.c)))
# Tests that exercise the IPC between processes/threads: also run under TSan.
US_TSAN_TESTS := test_ipc test_powerloop test_alarm test_hooks

US_MAN := build/man/libwakelock.3 build/man/wakelockd.8 build/man/wakelock.1 build/man/wakelockd.conf.5

# Keep intermediate objects of the chained test rules.
.SECONDARY:

.PHONY: userspace userspace-guest check-unit install userspace-clean man

# --- one build variant: $(1)=dir $(2)=extra CFLAGS $(3)=extra LDFLAGS --------
define US_VARIANT
build/$(1)/obj/%.o: %.c
	@mkdir -p $$(@D)
	$$(US_CC) $$(US_CFLAGS) $(2) -fPIC -c $$< -o $$@

build/$(1)/libwlcore.a: $$(patsubst %.c,build/$(1)/obj/%.o,$$(US_LIB_SRC))
	@rm -f $$@
	ar rcs $$@ $$^

build/$(1)/libwldaemon.a: $$(patsubst %.c,build/$(1)/obj/%.o,$$(US_DCORE_SRC))
	@rm -f $$@
	ar rcs $$@ $$^

build/$(1)/wakelockd: build/$(1)/obj/daemon/main.o build/$(1)/libwldaemon.a build/$(1)/libwlcore.a
	$$(US_CC) $(2) $(3) -o $$@ $$^ -linih $$(US_LDLIBS)

build/$(1)/wakelock: $$(patsubst %.c,build/$(1)/obj/%.o,$$(US_CLI_SRC)) build/$(1)/libwlcore.a
	$$(US_CC) $(2) $(3) -o $$@ $$^ $$(US_LDLIBS)

build/$(1)/tests/%: build/$(1)/obj/tests/unit/%.o $$(patsubst %.c,build/$(1)/obj/%.o,$$(US_TEST_COMMON)) build/$(1)/libwldaemon.a build/$(1)/libwlcore.a build/$(1)/wakelockd build/$(1)/wakelock
	@mkdir -p $$(@D)
	$$(US_CC) $(2) $(3) -o $$@ $$(filter %.o %.a,$$^) -lcmocka -linih $$(US_LDLIBS)

-include $$(shell find build/$(1)/obj -name '*.d' 2>/dev/null)
endef

$(eval $(call US_VARIANT,host,,))
$(eval $(call US_VARIANT,asan,-fsanitize=address$(US_COMMA)undefined -fno-omit-frame-pointer -fno-sanitize-recover=all,))
$(eval $(call US_VARIANT,tsan,-fsanitize=thread -O1,))
$(eval $(call US_VARIANT,guest,,-static))

# --- host: shared + static library, programs, pkg-config ------------------
build/host/libwakelock.so.$(US_VERSION): $(patsubst %.c,build/host/obj/%.o,$(US_PUBLIC_SRC)) lib/libwakelock.map
	$(US_CC) -shared -Wl,-soname,libwakelock.so.$(US_SOVER) -Wl,--version-script=lib/libwakelock.map \
		-Wl,-z,defs -o $@ $(filter %.o,$^) $(US_LDLIBS)

build/host/libwakelock.so: build/host/libwakelock.so.$(US_VERSION)
	ln -sf libwakelock.so.$(US_VERSION) build/host/libwakelock.so.$(US_SOVER)
	ln -sf libwakelock.so.$(US_VERSION) $@

build/host/libwakelock.a: $(patsubst %.c,build/host/obj/%.o,$(US_PUBLIC_SRC))
	@rm -f $@
	ar rcs $@ $^

build/host/libwakelock.pc: lib/libwakelock.pc.in
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(US_LIBDIR)|' \
	    -e 's|@INCLUDEDIR@|$(PREFIX)/include|' -e 's|@VERSION@|$(US_VERSION)|' $< > $@

# A program built against the installed-style shared library, proving the
# version script exports what the header promises.
build/host/example-hold: tests/unit/example_hold.c build/host/libwakelock.so
	$(US_CC) $(US_CFLAGS) -o $@ $< -Lbuild/host -lwakelock -Wl,-rpath,'$$ORIGIN'

build/host/example-alarm: tests/unit/example_alarm.c build/host/libwakelock.so
	$(US_CC) $(US_CFLAGS) -o $@ $< -Lbuild/host -lwakelock -Wl,-rpath,'$$ORIGIN'

userspace: build/host/libwakelock.so build/host/libwakelock.a build/host/libwakelock.pc \
	build/host/wakelockd build/host/wakelock build/host/example-hold build/host/example-alarm

# --- guest: static programs ------------------------------------------------
userspace-guest: build/guest/wakelockd build/guest/wakelock build/guest/tests/wl-guest-hold \
	    build/guest/tests/wl-guest-alarm
	@mkdir -p build/guest/bin
	cp build/guest/wakelockd build/guest/wakelock build/guest/bin/
	cp build/guest/tests/wl-guest-hold build/guest/tests/wl-guest-alarm build/guest/bin/

build/guest/tests/wl-guest-hold: build/guest/obj/tests/unit/wl_guest_hold.o build/guest/libwlcore.a
	@mkdir -p $(@D)
	$(US_CC) -static -o $@ $^ $(US_LDLIBS)

build/guest/tests/wl-guest-alarm: build/guest/obj/tests/unit/wl_guest_alarm.o build/guest/libwlcore.a
	@mkdir -p $(@D)
	$(US_CC) -static -o $@ $^ $(US_LDLIBS)

# --- unit tests -----------------------------------------------------------
US_RUN := tests/unit/run.sh
check-unit: $(addprefix build/host/tests/,$(US_TESTS)) $(addprefix build/asan/tests/,$(US_TESTS)) \
	    $(addprefix build/tsan/tests/,$(US_TSAN_TESTS)) build/host/example-hold \
	    build/host/example-alarm
	@mkdir -p build/results
	sh $(US_RUN) build/results \
		$(addprefix host:build/host/tests/,$(US_TESTS)) \
		$(addprefix asan:build/asan/tests/,$(US_TESTS)) \
		$(addprefix tsan:build/tsan/tests/,$(US_TSAN_TESTS))

# --- docs and install -------------------------------------------------------
build/man/%: docs/%.scd
	@mkdir -p $(@D)
	scdoc < $< > $@

man: $(US_MAN)

install: userspace man
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/sbin $(DESTDIR)$(US_LIBDIR)/pkgconfig \
		$(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/man/man3 $(DESTDIR)$(PREFIX)/share/man/man5 \
		$(DESTDIR)$(PREFIX)/share/man/man8 $(DESTDIR)$(US_SYSTEMDDIR)
	install -m 0755 build/host/wakelockd $(DESTDIR)$(PREFIX)/sbin/wakelockd
	install -m 0755 build/host/wakelock $(DESTDIR)$(PREFIX)/bin/wakelock
	install -m 0755 build/host/libwakelock.so.$(US_VERSION) $(DESTDIR)$(US_LIBDIR)/
	ln -sf libwakelock.so.$(US_VERSION) $(DESTDIR)$(US_LIBDIR)/libwakelock.so.$(US_SOVER)
	ln -sf libwakelock.so.$(US_VERSION) $(DESTDIR)$(US_LIBDIR)/libwakelock.so
	install -m 0644 build/host/libwakelock.a $(DESTDIR)$(US_LIBDIR)/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(US_LIBDIR)|' \
	    -e 's|@INCLUDEDIR@|$(PREFIX)/include|' -e 's|@VERSION@|$(US_VERSION)|' \
	    lib/libwakelock.pc.in > $(DESTDIR)$(US_LIBDIR)/pkgconfig/libwakelock.pc
	install -m 0644 include/wakelock.h $(DESTDIR)$(PREFIX)/include/
	install -m 0644 build/man/wakelock.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 0644 build/man/libwakelock.3 $(DESTDIR)$(PREFIX)/share/man/man3/
	install -m 0644 build/man/wakelockd.conf.5 $(DESTDIR)$(PREFIX)/share/man/man5/
	install -m 0644 build/man/wakelockd.8 $(DESTDIR)$(PREFIX)/share/man/man8/
	sed 's|@SBINDIR@|$(PREFIX)/sbin|' daemon/wakelockd.service.in > $(DESTDIR)$(US_SYSTEMDDIR)/wakelockd.service

userspace-clean:
	rm -rf build/host build/asan build/tsan build/guest build/results/unit.* build/man
