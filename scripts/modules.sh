#!/usr/bin/env bash
# Build the out-of-tree test modules (kernel/modules/*) against a guest kernel.
#   scripts/modules.sh patched|pristine OUTDIR
# Sources are copied to OUTDIR first so no build product lands in the repo.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"
variant=$1
mkdir -p "$2"
outdir=$(cd "$2" && pwd)
build=$WL_CACHE/build-$variant
[ -f "$build/done.stamp" ] || die "no $variant kernel build in $build: run scripts/kernel.sh $variant"
mkdir -p "$outdir"
for mod in "$top"/kernel/modules/*/; do
	name=$(basename "$mod")
	rm -rf "$outdir/$name"
	cp -r "$mod" "$outdir/$name"
	make -C "$build" M="$outdir/$name" -j"$(nproc)" modules >"$outdir/$name.log" 2>&1 ||
		fail_log "$outdir/$name.log" "module $name does not build against the $variant kernel"
	# Warnings are errors here, as in the kernel's own CI.
	if grep -q 'warning:' "$outdir/$name.log"; then
		fail_log "$outdir/$name.log" "module $name builds with warnings"
	fi
done
step "modules built for $variant: $(cd "$outdir" && ls -- */*.ko | tr '\n' ' ')"
