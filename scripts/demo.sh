#!/usr/bin/env bash
# `make demo`: boot the patched guest and show opportunistic suspend at work.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"
cd "$top"
step "booting the guest (QEMU, TCG) with the patched kernel"
python3 scripts/run-guest --plan demo --name demo \
	--kernel "$WL_CACHE/out/patched/bzImage" --initrd build/guest/initramfs-patched.cpio.gz \
	--append 'kunit.enable=0 quiet' --timeout 300 --log build/logs/demo.log
