# User-space build: libwakelock, wakelockd, wakelock CLI, unit tests, docs.
# Included by the top-level Makefile; also usable alone:
#   make -f userspace.mk userspace userspace-guest check-unit
# Run from the repository root.  Outputs under build/.

# clang-14 and libclang-rt-14-dev: the libFuzzer harnesses (make fuzz, and
# briefly in make check); systemd: systemd-analyze checks the unit we ship
# (scripts/unit-security.sh); everything else builds with cc.
USERSPACE_DEBS := libinih-dev libcmocka-dev scdoc pkg-config clang-14 libclang-rt-14-dev systemd
US_COMMA := ,

US_VERSION := 1.2.0
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
# The public library: all of lib/ (the version script exports the API
# only); the wake ledger's record code serves resume notifications.
US_PUBLIC_SRC := $(US_LIB_SRC)
US_DCORE_SRC := $(filter-out daemon/main.c,$(sort $(wildcard daemon/*.c)))
US_CLI_SRC := $(sort $(wildcard cli/*.c))
US_TEST_COMMON := tests/unit/harness.c tests/unit/fake_power.c
US_TESTS := $(patsubst tests/unit/%.c,%,$(sort $(wildcard tests/unit/test_*.c)))
# Tests that exercise the IPC between processes/threads: also run under TSan.
US_TSAN_TESTS := test_ipc test_powerloop test_alarm test_hooks test_ledger test_hostile test_wakes

US_MAN := build/man/libwakelock.3 build/man/wakelockd.8 build/man/wakelock.1 build/man/wakelockd.conf.5

# Keep intermediate objects of the chained test rules.
.SECONDARY:

.PHONY: userspace userspace-guest check-unit install userspace-clean man fuzz fuzz-build

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

# The shared library, and programs built against it alone, proving the
# version script exports what the header promises (every variant, so that
# test_alarm runs its example under the sanitizers too).
build/$(1)/libwakelock.so.$$(US_VERSION): $$(patsubst %.c,build/$(1)/obj/%.o,$$(US_PUBLIC_SRC)) lib/libwakelock.map
	$$(US_CC) $(2) -shared -Wl,-soname,libwakelock.so.$$(US_SOVER) -Wl,--version-script=lib/libwakelock.map \
		-Wl,-z,defs -o $$@ $$(filter %.o,$$^) $$(US_LDLIBS)

build/$(1)/libwakelock.so: build/$(1)/libwakelock.so.$$(US_VERSION)
	ln -sf libwakelock.so.$$(US_VERSION) build/$(1)/libwakelock.so.$$(US_SOVER)
	ln -sf libwakelock.so.$$(US_VERSION) $$@

build/$(1)/example-hold: tests/unit/example_hold.c build/$(1)/libwakelock.so
	$$(US_CC) $$(US_CFLAGS) $(2) -o $$@ $$< -Lbuild/$(1) -lwakelock -Wl,-rpath,'$$$$ORIGIN'

build/$(1)/example-alarm: tests/unit/example_alarm.c build/$(1)/libwakelock.so
	$$(US_CC) $$(US_CFLAGS) $(2) -o $$@ $$< -Lbuild/$(1) -lwakelock -Wl,-rpath,'$$$$ORIGIN'

build/$(1)/example-resume: tests/unit/example_resume.c build/$(1)/libwakelock.so
	$$(US_CC) $$(US_CFLAGS) $(2) -o $$@ $$< -Lbuild/$(1) -lwakelock -Wl,-rpath,'$$$$ORIGIN'

-include $$(shell find build/$(1)/obj -name '*.d' 2>/dev/null)
endef

$(eval $(call US_VARIANT,host,,))
$(eval $(call US_VARIANT,asan,-fsanitize=address$(US_COMMA)undefined -fno-omit-frame-pointer -fno-sanitize-recover=all,))
$(eval $(call US_VARIANT,tsan,-fsanitize=thread -O1,))
$(eval $(call US_VARIANT,guest,,-static))

# --- host: static library, pkg-config ----------------------------------------
build/host/libwakelock.a: $(patsubst %.c,build/host/obj/%.o,$(US_PUBLIC_SRC))
	@rm -f $@
	ar rcs $@ $^

build/host/libwakelock.pc: lib/libwakelock.pc.in
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(US_LIBDIR)|' \
	    -e 's|@INCLUDEDIR@|$(PREFIX)/include|' -e 's|@VERSION@|$(US_VERSION)|' $< > $@

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
US_EXAMPLES := example-hold example-alarm example-resume
check-unit: $(addprefix build/host/tests/,$(US_TESTS)) $(addprefix build/asan/tests/,$(US_TESTS)) \
	    $(addprefix build/tsan/tests/,$(US_TSAN_TESTS)) \
	    $(foreach v,host asan tsan,$(addprefix build/$(v)/,$(US_EXAMPLES)))
	@mkdir -p build/results
	sh $(US_RUN) build/results \
		$(addprefix host:build/host/tests/,$(US_TESTS)) \
		$(addprefix asan:build/asan/tests/,$(US_TESTS)) \
		$(addprefix tsan:build/tsan/tests/,$(US_TSAN_TESTS))

# --- fuzzing (tests/fuzz) ---------------------------------------------------
# libFuzzer harnesses, built with clang: the library and daemon sources with
# coverage (fuzzer-no-link), each harness linked with the fuzzer's main.
# `make fuzz` runs each for FUZZ_SECONDS on its seed corpus
# (tests/fuzz/corpus/NAME) plus a working corpus in build/fuzz/corpus/NAME;
# crashes go to build/fuzz/artifacts/.  scripts/fuzz-check.sh (make check)
# runs each briefly.
FUZZ_CC ?= $(or $(shell command -v clang-14 2>/dev/null),clang)
FUZZ_SECONDS ?= 300
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O1 -g -Iinclude -pthread -MMD -MP \
	$(FUZZ_SAN)
FUZZ_HARNESSES := $(patsubst tests/fuzz/%.c,%,$(sort $(wildcard tests/fuzz/fuzz_*.c)))
FUZZ_OBJ := $(patsubst %.c,build/fuzz/obj/%.o,$(US_LIB_SRC) $(US_DCORE_SRC))

build/fuzz/obj/tests/fuzz/%.o: tests/fuzz/%.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -c $< -o $@

build/fuzz/obj/%.o: %.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

build/fuzz/libfuzzcore.a: $(FUZZ_OBJ)
	@rm -f $@
	ar rcs $@ $^

build/fuzz/%: build/fuzz/obj/tests/fuzz/%.o build/fuzz/libfuzzcore.a
	$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ -linih $(US_LDLIBS)

fuzz-build: $(addprefix build/fuzz/,$(FUZZ_HARNESSES))

fuzz: fuzz-build
	@for h in $(FUZZ_HARNESSES); do \
		echo "== $$h: $(FUZZ_SECONDS) s"; \
		mkdir -p build/fuzz/corpus/$$h build/fuzz/artifacts; \
		build/fuzz/$$h -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
			-artifact_prefix=build/fuzz/artifacts/$$h- \
			build/fuzz/corpus/$$h tests/fuzz/corpus/$$h || exit 1; \
	done

-include $(shell find build/fuzz/obj -name '*.d' 2>/dev/null)

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
