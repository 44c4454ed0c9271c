#!/usr/bin/env bash
# `make check`: every test of the project, then one summary line.
#   1. host unit tests (make check-unit, also under sanitizers)
#   2. the patched and pristine guest kernels, test modules, initramfs
#   3. each guest run listed in tests/guest/suites, in QEMU
# A stage that fails does not stop the others; the exit status is non-zero if
# anything failed, and the last line is "N passed, N failed".
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"
cd "$top"
results=build/results
rm -rf "$results"
mkdir -p "$results"
failures=()

stage() { # stage NAME COMMAND...: run, remember a failure
	local name=$1; shift
	step "$name"
	if ! "$@"; then
		failures+=("$name")
		echo "0 1" >"$results/$name.stage-failed.counts"
		return 1
	fi
}

stage harness scripts/harness-selftest.sh
stage unit make --no-print-directory check-unit
stage fuzz scripts/fuzz-check.sh
for variant in patched pristine; do
	stage "kernel-$variant" make --no-print-directory guest-image VARIANT=$variant ||
		touch "$results/no-$variant"
done

while read -r plan variant timeout extra; do
	case $plan in ''|'#'*) continue ;; esac
	if [ -e "$results/no-$variant" ]; then
		echo "0 1" >"$results/guest-$plan.counts"
		failures+=("guest-$plan (no $variant kernel)")
		continue
	fi
	# Words starting with -- are runner options, the rest kernel arguments.
	# KUnit runs at every boot of a kernel with the suite built in; only the
	# runs that ask for it (--expect-kunit) keep it.
	opts=() append=''
	for w in ${extra:-}; do
		case $w in --*) opts+=("$w") ;; *) append="$append $w" ;; esac
	done
	case " ${opts[*]} " in *" --expect-kunit "*) ;; *) append="kunit.enable=0$append" ;; esac
	stage "guest-$plan" python3 scripts/run-guest --plan "$plan" \
		--kernel "$WL_CACHE/out/$variant/bzImage" \
		--initrd "build/guest/initramfs-$variant.cpio.gz" \
		--timeout "$timeout" --append "$append" "${opts[@]}" \
		--log "build/logs/guest-$plan.log" --counts "$results/guest-$plan.counts"
done <tests/guest/suites

# The end-to-end race test boots its own guests (tests/e2e, examples.mk).
stage e2e make --no-print-directory check-e2e

passed=0 failed=0
for f in "$results"/*.counts; do
	[ -e "$f" ] || continue
	read -r p q <"$f"
	passed=$((passed + p)) failed=$((failed + q))
done
if [ ${#failures[@]} -gt 0 ]; then
	echo "failed stages: ${failures[*]}"
	[ "$failed" -gt 0 ] || failed=${#failures[@]}
fi
echo "$passed passed, $failed failed"
[ ${#failures[@]} -eq 0 ] && [ "$failed" -eq 0 ]
