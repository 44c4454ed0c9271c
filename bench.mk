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

.PHONY: bench bench-guest-image

# wlbench and trace_shim are built by meson (bench/meson.build): in
# build/host (-Dbench=true) and, static, in build/static for the guest.

# The guest image with wlbench inside (initramfs.sh copies build/guest/bin),
# and Debian's dbus-daemon and elogind for the logind peer (docs/logind.md).
ifeq ($(BENCH_KERNEL),)
BENCH_KERNEL_PATH = $(WL_CACHE)/out/$(BENCH_VARIANT)/bzImage
BENCH_INITRD = build/guest/initramfs-$(BENCH_VARIANT)-logind.cpio.gz
bench-guest-image:
	@$(MAKE) --no-print-directory guest-image-logind VARIANT=$(BENCH_VARIANT)
else
BENCH_KERNEL_PATH = $(BENCH_KERNEL)
BENCH_INITRD = build/bench/initramfs-$(BENCH_VARIANT)-logind.cpio.gz
bench-guest-image:
	@$(MAKE) --no-print-directory userspace-guest userspace-logind
	@scripts/initramfs.sh --logind $(BENCH_INITRD) build/modules/$(BENCH_VARIANT)
endif

bench: deps userspace bench-guest-image
	@mkdir -p build/bench
	python3 bench/run.py --kernel $(BENCH_KERNEL_PATH) --initrd $(BENCH_INITRD) \
		--variant $(BENCH_VARIANT) $(if $(BENCH_KERNEL_CONFIG),--kernel-config $(BENCH_KERNEL_CONFIG)) \
		--out build/bench $(BENCH_ARGS)
