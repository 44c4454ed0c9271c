#!/usr/bin/env bash
# `make check`: every test of the project, then one summary line.
#   1. host unit tests (make check-unit: meson test, also under sanitizers),
#      fuzzing, the systemd unit's validity and exposure
#      (scripts/unit-security.sh), a DESTDIR install put to use
#      (scripts/install-check.sh), the Debian packages built, linted and
#      installed into a throw-away root (scripts/deb.sh)
#   2. the patched and pristine guest kernels, test modules, initramfs, the
#      Debian guest (systemd kernel, disk image), and checkpatch --strict on
#      every patch of the series
#   3. each guest run listed in tests/guest/suites, in QEMU
# A stage that fails does not stop the others; the exit status is non-zero if
# anything failed, and the last line is "N passed, N failed, N skipped": the
# sums of build/results/*.counts (scripts/summary.sh), where each stage
# writes "PASSED FAILED SKIPPED".
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"
cd "$top"
results=build/results
rm -rf "$results"
mkdir -p "$results"
failures=()

stage() { # stage NAME COUNTS COMMAND...: run, remember a failure
	# COUNTS is the file the stage writes its own counts to (- if none). A
	# stage that fails without counting a failure there (it crashed, or
	# writes no counts) is one failure, in NAME.stage-failed.counts.
	local name=$1 counts=$2 p=0 q=0; shift 2
	step "$name"
	if ! "$@"; then
		failures+=("$name")
		if [ "$counts" != - ] && [ -s "$counts" ]; then
			read -r p q _ <"$counts"
		fi
		case $q in ''|*[!0-9]*) q=0 ;; esac
		[ $((10#$q)) -gt 0 ] || echo "0 1 0" >"$results/$name.stage-failed.counts"
		return 1
	fi
}

stage harness "$results/harness.counts" scripts/harness-selftest.sh
stage unit "$results/unit.counts" make --no-print-directory check-unit
stage fuzz "$results/fuzz.counts" scripts/fuzz-check.sh
stage unit-security "$results/unit-security.counts" scripts/unit-security.sh
stage install "$results/install.counts" make --no-print-directory check-install
stage deb "$results/deb.counts" make --no-print-directory check-deb
for variant in patched pristine; do
	stage "kernel-$variant" - make --no-print-directory guest-image VARIANT=$variant ||
		touch "$results/no-$variant"
done
# The image with Debian's dbus-daemon and elogind (suites: --image=logind).
[ -e "$results/no-patched" ] ||
	stage image-logind - make --no-print-directory guest-image-logind VARIANT=patched ||
	touch "$results/no-image-logind"
# The Debian guest (systemd kernel variant, disk image with our .deb, tests
# disk; suites: --disk=debian).
stage image-debian - make --no-print-directory guest-image-debian DEB_REBUILD=0 ||
	touch "$results/no-systemd"
stage checkpatch "$results/checkpatch.counts" scripts/checkpatch-series.sh

while read -r plan variant timeout extra; do
	case $plan in ''|'#'*) continue ;; esac
	if [ -e "$results/no-$variant" ]; then
		echo "0 1 0" >"$results/guest-$plan.counts"
		failures+=("guest-$plan (no $variant kernel)")
		continue
	fi
	# Words starting with -- are runner options, the rest kernel arguments.
	# KUnit runs at every boot of a kernel with the suite built in; only the
	# runs that ask for it (--expect-kunit) keep it.
	opts=() append='' image='' disk=''
	for w in ${extra:-}; do
		case $w in
		--image=*) image=-${w#--image=} ;;
		--disk=*) disk=${w#--disk=} ;;
		--*) opts+=("$w") ;;
		*) append="$append $w" ;;
		esac
	done
	# What the guest boots: an initramfs of build/guest, or a disk image of
	# the cache with its tests disk (--disk=NAME: make guest-image-NAME).
	if [ -n "$disk" ]; then
		boot=(--disk "$WL_CACHE/$disk.img" --tests-disk "build/guest/$disk-tests.img")
	else
		boot=(--initrd "build/guest/initramfs-$variant$image.cpio.gz")
	fi
	if [ -n "$image" ] && [ -e "$results/no-image$image" ]; then
		echo "0 1 0" >"$results/guest-$plan.counts"
		failures+=("guest-$plan (no image$image)")
		continue
	fi
	case " ${opts[*]} " in *" --expect-kunit "*) ;; *) append="kunit.enable=0$append" ;; esac
	stage "guest-$plan" "$results/guest-$plan.counts" python3 scripts/run-guest --plan "$plan" \
		--kernel "$WL_CACHE/out/$variant/bzImage" \
		"${boot[@]}" \
		--timeout "$timeout" --append "$append" "${opts[@]}" \
		--log "build/logs/guest-$plan.log" --counts "$results/guest-$plan.counts"
done <tests/guest/suites

# The end-to-end race test boots its own guests (tests/e2e, examples.mk).
stage e2e "$results/e2e.counts" make --no-print-directory check-e2e

if [ ${#failures[@]} -gt 0 ]; then
	echo "failed stages: ${failures[*]}"
fi
step summary
scripts/summary.sh "$results"
summed=$?
[ ${#failures[@]} -eq 0 ] && [ $summed -eq 0 ]
