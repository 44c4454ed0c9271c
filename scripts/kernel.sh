#!/usr/bin/env bash
# Build a guest kernel from Debian's linux-source-6.12, outside the repository.
#
#   scripts/kernel.sh patched    # pristine tree + kernel/patches/series
#   scripts/kernel.sh pristine   # the same source, no patches (for comparisons)
#   scripts/kernel.sh bench      # the patched tree with base.config alone: no
#                                # KASAN, lockdep or KUnit (make bench's peers)
#   scripts/kernel.sh systemd    # the patched tree with base, debug and
#                                # systemd.config: the Debian guest's kernel
#   scripts/kernel.sh --fragments VARIANT   # print the config fragments it uses
#
# Layout under $WL_CACHE (default ${XDG_CACHE_HOME:-~/.cache}/wakelockd):
#   linux-source-6.12/      pristine unpack of /usr/src/linux-source-6.12.tar.xz
#   tree-patched/           a copy of it with the series applied
#   build-<variant>/        O= build directory (.config, objects, build.log)
#   out/<variant>/bzImage   the result the runner boots
# Every step is skipped when its inputs (source version, patches, config
# fragments, this script) did not change, so a warm `make check` does no work.
set -euo pipefail

usage() { echo "usage: $0 [--fragments] patched|pristine|bench|systemd" >&2; exit 2; }
list_only=
if [ "${1:-}" = --fragments ]; then list_only=1; shift; fi
variant=${1:-patched}
case $variant in patched|pristine|bench|systemd) ;; *) usage ;; esac

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"

# Config fragments merged onto tinyconfig.  patched takes every fragment but
# systemd.config, pristine also not policy.config and phone.config (the
# presence devices and the ring line's GPIO key: only patched runs the
# policy and ring plans, and a cold build of DRM twice costs minutes);
# their hash decides whether a cached kernel is reused.  bench
# takes base.config alone, so that the kernel peers make bench measures pay
# no debugging instrumentation.  systemd is the Debian guest's (the plan
# "debian"): a disk, cgroups, seccomp, namespaces and BPF that the initramfs
# plans do not need, with the same lockdep and KASAN as patched; a variant
# of its own, so that the other plans' kernel stays as it was measured.
case $variant in
bench) fragments=("$top/kernel/config/base.config") ;;
systemd) fragments=("$top/kernel/config/base.config" "$top/kernel/config/debug.config"
	"$top/kernel/config/systemd.config") ;;
*)
	fragments=()
	for f in "$top"/kernel/config/*.config; do
		case $variant/$(basename "$f") in
		*/systemd.config | pristine/policy.config | pristine/phone.config) ;;
		*) fragments+=("$f") ;;
		esac
	done ;;
esac
if [ -n "$list_only" ]; then
	for f in "${fragments[@]}"; do echo "${f#"$top"/}"; done
	exit 0
fi

tarball=/usr/src/linux-source-6.12.tar.xz
pristine=$WL_CACHE/linux-source-6.12
tree=$pristine
[ "$variant" != pristine ] && tree=$WL_CACHE/tree-patched
build=$WL_CACHE/build-$variant
out=$WL_CACHE/out/$variant
log=$build/build.log
jobs=${JOBS:-$(nproc)}

[ -f "$tarball" ] || die "$tarball is missing: run 'make deps' (installs linux-source-6.12)"
mkdir -p "$WL_CACHE" "$out"

# Kernel builds are serialised: two at once on a small machine only thrash.
exec 9>"$WL_CACHE/build.lock"
if ! flock -n 9; then
	step "waiting for another kernel build to finish ($WL_CACHE/build.lock)"
	flock 9
fi

hash_of() { cat "$@" 2>/dev/null | sha256sum | cut -c1-16; }

# 1. Pristine source, unpacked once per Debian package version.
srcver=$(dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null || stat -c %Y "$tarball")
if [ "$(cat "$pristine.version" 2>/dev/null)" != "$srcver" ]; then
	step "unpacking $tarball ($srcver) into $WL_CACHE"
	rm -rf "$pristine" "$pristine.version"
	tar -C "$WL_CACHE" -xf "$tarball"
	echo "$srcver" >"$pristine.version"
fi

# 2. Patched tree: a fresh copy with the series applied, whenever it changed.
series=$top/kernel/patches/series
patch_files=()
while read -r p; do
	case $p in ''|'#'*) continue ;; esac
	[ -f "$top/kernel/patches/$p" ] || die "kernel/patches/series names $p, which does not exist"
	patch_files+=("$top/kernel/patches/$p")
done <"$series"
patch_hash=none
if [ "$variant" != pristine ]; then
	patch_hash=$(hash_of "$series" "${patch_files[@]}" </dev/null)
	if [ "$(cat "$tree.stamp" 2>/dev/null)" != "$srcver $patch_hash" ]; then
		step "applying ${#patch_files[@]} patch(es) from kernel/patches/series"
		# Files touched by the previous series must be rebuilt too, even
		# where the new series leaves them pristine (cp -a keeps old mtimes).
		old_touched=$(cat "$tree.touched" 2>/dev/null || true)
		rm -rf "$tree" "$tree.stamp"
		cp -a "$pristine" "$tree"
		: >"$tree.touched.new"
		for p in "${patch_files[@]}"; do
			if ! out_msg=$(patch -d "$tree" -p1 --forward --batch <"$p" 2>&1); then
				echo "$out_msg" | tail -20 >&2
				die "patch $(basename "$p") does not apply to linux-source-6.12 $srcver"
			fi
			echo "  applied $(basename "$p")"
			lsdiff --strip=1 "$p" >>"$tree.touched.new" 2>/dev/null ||
				grep -E '^\+\+\+ b/' "$p" | sed 's|^+++ b/||' >>"$tree.touched.new"
		done
		for f in $old_touched $(cat "$tree.touched.new"); do
			[ -e "$tree/$f" ] && touch "$tree/$f"
		done
		sort -u "$tree.touched.new" >"$tree.touched"
		rm -f "$tree.touched.new"
		echo "$srcver $patch_hash" >"$tree.stamp"
	fi
fi

# 3. Configuration: tinyconfig + our fragments, then check nothing was dropped.
config_hash=$(hash_of "${fragments[@]}")
mkdir -p "$build"
# Patches can add Kconfig options (the KUnit suite's): reconfigure when they
# change too, or a new option would silently stay off.
if [ "$(cat "$build/config.stamp" 2>/dev/null)" != "$config_hash $patch_hash $srcver" ] || [ ! -f "$build/.config" ]; then
	step "configuring $variant kernel: tinyconfig + ${fragments[*]#"$top"/}"
	: >"$log"
	make -C "$tree" O="$build" tinyconfig >>"$log" 2>&1 || fail_log "$log" "make tinyconfig failed"
	(cd "$tree" && scripts/kconfig/merge_config.sh -m -O "$build" "$build/.config" "${fragments[@]}") \
		>>"$log" 2>&1 || fail_log "$log" "merging config fragments failed"
	make -C "$tree" O="$build" olddefconfig >>"$log" 2>&1 || fail_log "$log" "make olddefconfig failed"
	# Options a tree does not define at all come with patches it lacks (the
	# KUnit suite's option in the pristine tree): not asked of it. Suites
	# that must run are checked by the runner (--expect-kunit).
	find "$tree" -name 'Kconfig*' -exec sed -n 's/^[[:space:]]*\(menu\)\?config[[:space:]]\+\([A-Z0-9_]\+\).*/\2/p' {} + >"$build/kconfig.symbols"
	known=(--known "$build/kconfig.symbols")
	missing=$(python3 "$top/scripts/check-config.py" "${known[@]}" "$build/.config" "${fragments[@]}") ||
		die "Kconfig dropped options the fragments ask for (unmet dependencies?):
$missing"
	# The bench kernel exists to be free of debugging instrumentation.
	if [ "$variant" = bench ] &&
		debug_on=$(grep -E '^CONFIG_(KASAN|LOCKDEP|PROVE_LOCKING|DEBUG_ATOMIC_SLEEP|KCSAN)=y' "$build/.config"); then
		die "the bench kernel must have no debugging instrumentation, but: $debug_on"
	fi
	echo "$config_hash $patch_hash $srcver" >"$build/config.stamp"
	rm -f "$build/done.stamp"
fi

# 4. Build, unless nothing changed since the last successful build.
want="$srcver $patch_hash $config_hash"
if [ "$(cat "$build/done.stamp" 2>/dev/null)" = "$want" ] && [ -f "$out/bzImage" ]; then
	step "$variant kernel is up to date ($out/bzImage)"
	exit 0
fi
step "building $variant bzImage with -j$jobs (log: $log)"
start=$(date +%s)
make -C "$tree" O="$build" -j"$jobs" bzImage modules_prepare >>"$log" 2>&1 &
pid=$!
# Progress: the number of objects compiled so far, every 20 s.
while kill -0 "$pid" 2>/dev/null; do
	sleep 20
	kill -0 "$pid" 2>/dev/null || break
	echo "  ... $(grep -c '^  CC' "$log" || true) files compiled, $(( $(date +%s) - start )) s"
done
wait "$pid" || fail_log "$log" "kernel build failed ($variant)"
cp "$build/arch/x86/boot/bzImage" "$out/bzImage"
# External modules resolve symbols from Module.symvers, which only `make
# modules` writes; the guest has no in-tree modules, so vmlinux's list is it.
cp "$build/vmlinux.symvers" "$build/Module.symvers"
echo "$want" >"$build/done.stamp"
step "$variant bzImage ready in $(( $(date +%s) - start )) s: $out/bzImage ($(du -h "$out/bzImage" | cut -f1))"
