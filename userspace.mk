# User space (libwakelock, wakelockd, wakelock, examples, unit tests, man
# pages) is built by meson (meson.build in each directory); this file is the
# make front door to it.  Included by the top-level Makefile; run from the
# repository root.  Build directories (docs/building.md):
#   build/host    the default build: `make userspace`, `make install`
#   build/asan    AddressSanitizer + UndefinedBehaviorSanitizer
#   build/tsan    ThreadSanitizer (the tests of the suite "ipc")
#   build/static  programs linked statically for the QEMU guest
#   build/logind  wakelockd and wakelock, shared, with sd-bus: the guest
#                 image that runs Debian's dbus-daemon and elogind
#   build/fuzz    libFuzzer harnesses (clang)

# meson/ninja: the build; libinih-dev: the config parser; libcmocka-dev:
# unit tests; scdoc: man pages; clang-14 + libclang-rt-14-dev: libFuzzer;
# systemd: systemd-analyze checks the unit we ship; libwayland-dev: the
# test that our header lives beside libwayland's; man-db: the installed
# pages render; libsystemd-dev: sd-bus, to follow logind's inhibitors;
# dbus-daemon: test_logind's private bus.
USERSPACE_DEBS := meson ninja-build pkg-config libinih-dev libcmocka-dev scdoc clang-14 \
	libclang-rt-14-dev systemd libwayland-dev man-db libsystemd-dev dbus-daemon \
	libdrm-dev

US_COMMA := ,
FUZZ_CC ?= $(or $(shell command -v clang-14 2>/dev/null),clang)
PREFIX ?= /usr/local
DESTDIR ?=
MESON_TEST := meson test --no-stdsplit --num-processes 1 --print-errorlogs

.PHONY: userspace userspace-guest check-unit install userspace-clean man fuzz fuzz-build \
	meson-host meson-asan meson-tsan meson-static meson-fuzz meson-logind userspace-logind

# A build directory is set up once; meson re-configures it by itself when a
# meson.build changes.  A directory left by the old make build (obj/) is
# replaced; anything else in it (fuzz corpora) stays.
define MESON_DIR
build/$(1)/build.ninja:
	@if [ -d build/$(1)/obj ]; then rm -rf build/$(1); fi
	$(2) meson setup build/$(1) --prefix=$(PREFIX) $(3)
meson-$(1): build/$(1)/build.ninja
	ninja -C build/$(1)
endef
US_NOMAN := -Dman-pages=disabled
$(eval $(call MESON_DIR,host,,-Dbench=true))
$(eval $(call MESON_DIR,asan,,$(US_NOMAN) -Db_sanitize=address$(US_COMMA)undefined -Db_lundef=false '-Dc_args=-fno-sanitize-recover=all -fno-omit-frame-pointer'))
$(eval $(call MESON_DIR,tsan,,$(US_NOMAN) -Db_sanitize=thread -Db_lundef=false -Doptimization=1))
$(eval $(call MESON_DIR,static,,$(US_NOMAN) -Dtests=false -Dstatic-programs=true -Dguest=true -Dbench=true))
$(eval $(call MESON_DIR,logind,,$(US_NOMAN) -Dtests=false -Dlogind=enabled -Dbench=true))
$(eval $(call MESON_DIR,fuzz,CC=$(FUZZ_CC),$(US_NOMAN) -Dtests=false -Dfuzz=true -Db_sanitize=address$(US_COMMA)undefined -Db_lundef=false '-Dc_args=-fsanitize=fuzzer-no-link -fno-sanitize-recover=all'))

userspace: meson-host
man: meson-host

# The guest's programs, static, where scripts/initramfs.sh takes them.
US_GUEST_PROGS := daemon/wakelockd cli/wakelock tests/guest/wl-guest-hold tests/guest/wl-guest-alarm \
	tests/guest/serial-epoll-gap tests/guest/wakeup-count-errors tests/guest/wl-dpms tests/guest/wl-uinput tests/guest/wl-tiocsti tests/guest/wl-ring examples/modem-client examples/example-resume examples/naive-client examples/naive-suspend \
	bench/wlbench bench/wl-energy
userspace-guest: meson-static
	@mkdir -p build/guest/bin
	cp $(addprefix build/static/,$(US_GUEST_PROGS)) build/guest/bin/

# The logind image's daemon and CLI (scripts/initramfs.sh --logind).
userspace-logind: meson-logind
	@mkdir -p build/guest/logind-bin
	cp build/logind/daemon/wakelockd build/logind/cli/wakelock build/logind/examples/modem-client \
		build/logind/bench/wl-inhibit-bench build/guest/logind-bin/
	cp -L build/logind/lib/libwakelock.so.$(shell sed -n "s/^libwakelock_soversion = //p" meson.build) \
		build/guest/logind-bin/

# The unit stage: every test in the plain and ASan/UBSan builds, the IPC
# suite under TSan; scripts/unit-results.py counts the cmocka cases.
check-unit: meson-host meson-asan meson-tsan
	@mkdir -p build/results
	@$(MESON_TEST) -C build/host --suite unit; \
	 $(MESON_TEST) -C build/asan --suite unit; \
	 $(MESON_TEST) -C build/tsan --suite ipc; \
	 python3 scripts/unit-results.py build/results host:build/host asan:build/asan tsan:build/tsan

# `make install DESTDIR=... PREFIX=...`: everything a package ships.
install: build/host/build.ninja
	meson configure build/host --prefix=$(PREFIX)
	DESTDIR=$(DESTDIR) meson install -C build/host

# --- fuzzing (tests/fuzz, docs/fuzzing.md) ----------------------------------
FUZZ_SECONDS ?= 300
FUZZ_HARNESSES := $(patsubst tests/fuzz/%.c,%,$(sort $(wildcard tests/fuzz/fuzz_*.c)))
fuzz-build: meson-fuzz
fuzz: fuzz-build
	@for h in $(FUZZ_HARNESSES); do \
		echo "== $$h: $(FUZZ_SECONDS) s"; \
		mkdir -p build/fuzz/corpus/$$h build/fuzz/artifacts; \
		build/fuzz/tests/fuzz/$$h -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
			-artifact_prefix=build/fuzz/artifacts/$$h- \
			build/fuzz/corpus/$$h tests/fuzz/corpus/$$h || exit 1; \
	done

userspace-clean:
	rm -rf build/host build/asan build/tsan build/static build/fuzz build/results/unit.*
