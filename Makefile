# wakelockd: the single entry point. `make demo` and `make check` do all
# set-up (Debian packages, kernel tree outside the repo, builds) themselves.

WL_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/wakelockd
export WL_CACHE
VARIANT ?= patched

# Debian packages: kernel build, QEMU guest, host tooling.
KERNEL_DEBS := build-essential flex bison bc libelf-dev libssl-dev cpio xz-utils \
	patchutils python3 linux-source-6.12 qemu-system-x86 busybox-static
# User space, built by meson (userspace.mk: userspace, userspace-guest,
# check-unit, install, fuzz); the end-to-end race test (examples.mk: race,
# check-e2e); benchmarks (bench.mk: bench); packages (packaging.mk: deb,
# check-install, check-deb).
include userspace.mk
include examples.mk
include bench.mk
include packaging.mk

.PHONY: all deps kernel kernel-pristine modules guest-image guest-image-logind guest-image-debian check demo clean help
all: userspace

help:
	@echo "make demo    boot the guest and show opportunistic suspend at work"
	@echo "make check   all tests (host unit tests, kernel KUnit, guest tests), cold or warm"
	@echo "make kernel  build the patched guest kernel in $(WL_CACHE)"
	@echo "make bench   benchmarks"
	@echo "make fuzz    run each libFuzzer harness for FUZZ_SECONDS (default 300)"

deps:
	@scripts/deps.sh $(KERNEL_DEBS) $(USERSPACE_DEBS)

kernel: deps
	@scripts/kernel.sh patched
kernel-pristine: deps
	@scripts/kernel.sh pristine

# Kernel, test modules and initramfs for one VARIANT (patched or pristine).
guest-image: deps
	@scripts/kernel.sh $(VARIANT)
	@scripts/modules.sh $(VARIANT) build/modules/$(VARIANT)
	@$(MAKE) --no-print-directory userspace-guest
	@scripts/initramfs.sh build/guest/initramfs-$(VARIANT).cpio.gz build/modules/$(VARIANT)

# The same with Debian's dbus-daemon and elogind, and wakelockd built with
# sd-bus (the plan "logind", docs/logind.md).
guest-image-logind: guest-image
	@$(MAKE) --no-print-directory userspace-logind
	@scripts/initramfs.sh --logind build/guest/initramfs-$(VARIANT)-logind.cpio.gz build/modules/$(VARIANT)

# A Debian 12 guest with systemd as PID 1 and our .deb installed by dpkg
# (the plan "debian", docs/debian-guest.md): the systemd kernel variant, the
# disk image in $(WL_CACHE) (debootstrap: needs root) and the tests disk.
# DEB_REBUILD=0 takes build/deb as it is (make check: its deb stage has
# just built them).
DEBIAN_IMAGE_DEBS := debootstrap e2fsprogs
DEB_REBUILD ?= 1
guest-image-debian:
	@scripts/deps.sh $(KERNEL_DEBS) $(DEBIAN_IMAGE_DEBS)
	@scripts/kernel.sh systemd
	@$(MAKE) --no-print-directory $(if $(filter 0,$(DEB_REBUILD)),,deb) userspace-guest
	@scripts/debian-image.sh build/deb >/dev/null
	@scripts/debian-tests.sh build/guest/debian-tests.img

modules: guest-image


check: deps
	@scripts/check.sh

demo: deps
	@$(MAKE) --no-print-directory guest-image VARIANT=patched
	@scripts/demo.sh

clean:
	rm -rf build
