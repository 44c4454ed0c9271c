# Benchmarks: `make bench`.  Included by the top-level Makefile; run from
# the repository root.  See bench/README.md.
#
#   make bench                      host + guest, table + build/bench/results.json;
#                                   the guest boots the bench kernel (patched
#                                   series, base.config only: no KASAN/lockdep),
#                                   built first when missing
#   make bench BENCH_ARGS=--quick   shorter runs (a smoke test)
#   make bench BENCH_VARIANT=patched
#                                   the debug (KASAN+lockdep) kernel of make check:
#                                   ratios against kernel peers are not judged
#   make bench BENCH_KERNEL=PATH BENCH_VARIANT=NAME [BENCH_KERNEL_CONFIG=.config]
#                                   use an already built bzImage: no kernel
#                                   build, only the initramfs is made
BENCH_VARIANT ?= bench
BENCH_KERNEL ?=
BENCH_KERNEL_CONFIG ?=
BENCH_ARGS ?=
BENCH_CC ?= cc
BENCH_CFLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O2 -g -Iinclude -pthread

.PHONY: bench bench-bins bench-guest-image

build/host/bench/wlbench: bench/wlbench.c lib/wl_client.h lib/wl_shm.h include/wakelock.h build/host/libwlcore.a
	@mkdir -p $(@D)
	$(BENCH_CC) $(BENCH_CFLAGS) -o $@ $< build/host/libwlcore.a -pthread

build/host/bench/trace_shim.so: bench/trace_shim.c
	@mkdir -p $(@D)
	$(BENCH_CC) $(BENCH_CFLAGS) -shared -fPIC -o $@ $< -ldl

build/guest/bin/wlbench: bench/wlbench.c lib/wl_client.h lib/wl_shm.h include/wakelock.h build/guest/libwlcore.a
	@mkdir -p $(@D)
	$(BENCH_CC) $(BENCH_CFLAGS) -static -o $@ $< build/guest/libwlcore.a -pthread

# The energy workload (bench/energy.c): the only bench program that uses
# libwakelock's public API alone.
build/guest/bin/wl-energy: bench/energy.c include/wakelock.h build/guest/libwlcore.a
	@mkdir -p $(@D)
	$(BENCH_CC) $(BENCH_CFLAGS) -static -o $@ $< build/guest/libwlcore.a -pthread

bench-bins: build/host/wakelockd build/host/bench/wlbench build/host/bench/trace_shim.so \
	build/guest/bin/wlbench build/guest/bin/wl-energy

# The guest image with wlbench inside (initramfs.sh copies build/guest/bin).
ifeq ($(BENCH_KERNEL),)
BENCH_KERNEL_PATH = $(WL_CACHE)/out/$(BENCH_VARIANT)/bzImage
BENCH_INITRD = build/guest/initramfs-$(BENCH_VARIANT).cpio.gz
bench-guest-image: bench-bins
	@$(MAKE) --no-print-directory guest-image VARIANT=$(BENCH_VARIANT)
else
BENCH_KERNEL_PATH = $(BENCH_KERNEL)
BENCH_INITRD = build/bench/initramfs-$(BENCH_VARIANT).cpio.gz
bench-guest-image: bench-bins
	@$(MAKE) --no-print-directory userspace-guest examples-guest
	@scripts/initramfs.sh $(BENCH_INITRD) build/modules/$(BENCH_VARIANT)
endif

bench: deps userspace bench-guest-image
	@mkdir -p build/bench
	python3 bench/run.py --kernel $(BENCH_KERNEL_PATH) --initrd $(BENCH_INITRD) \
		--variant $(BENCH_VARIANT) $(if $(BENCH_KERNEL_CONFIG),--kernel-config $(BENCH_KERNEL_CONFIG)) \
		--out build/bench $(BENCH_ARGS)
