#!/usr/bin/env bash
# make check's fuzz stage: build the libFuzzer harnesses (tests/fuzz) and run
# each one briefly (FUZZ_CHECK_SECONDS, default 20) from its seed corpus,
# which also replays every crash reproducer kept there.  `make fuzz` is the
# longer run.
# Prints a line per harness and writes build/results/fuzz.counts as
# "PASSED FAILED SKIPPED" (one count per harness).  Logs: build/logs/fuzz/.  Without clang or its
# libFuzzer runtime every harness is skipped, with the reason; exits
# non-zero only if a harness failed (or did not build).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
secs=${FUZZ_CHECK_SECONDS:-20}
results=build/results logs=build/logs/fuzz
mkdir -p "$results" "$logs"

harnesses=()
for f in tests/fuzz/fuzz_*.c; do
	[ -e "$f" ] && harnesses+=("$(basename "$f" .c)")
done

passed=0 failed=0 skipped=0 why=
# FUZZ_CC picks another clang (or none: FUZZ_CC=none).
cc=${FUZZ_CC:-$(command -v clang-14 || command -v clang || true)}
probe=$(mktemp -d)
if [ -z "$cc" ] || ! command -v "$cc" >/dev/null; then
	why="no clang (Debian: clang-14)"
elif ! printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n)\n{ (void)d; (void)n; return 0; }\n' >"$probe/p.c" ||
     ! "$cc" -fsanitize=fuzzer,address,undefined -o "$probe/p" "$probe/p.c" >/dev/null 2>&1; then
	why="$cc cannot link libFuzzer (Debian: libclang-rt-14-dev)"
elif ! make --no-print-directory fuzz-build FUZZ_CC="$cc" >"$logs/build.log" 2>&1; then
	why=build
fi
rm -rf "$probe"
mkdir -p build/fuzz/artifacts

start=$SECONDS
for h in "${harnesses[@]}"; do
	if [ "$why" = build ]; then
		printf 'FAIL  %-14s did not build (%s)\n' "$h" "$logs/build.log"
		failed=$((failed + 1))
		continue
	elif [ -n "$why" ]; then
		printf 'skip  %-14s %s\n' "$h" "$why"
		skipped=$((skipped + 1))
		continue
	fi
	# A fresh working corpus: the run depends on the seeds alone.
	work=build/fuzz/check-corpus/$h
	rm -rf "$work"
	mkdir -p "$work"
	log=$logs/$h.log
	build/fuzz/tests/fuzz/"$h" -max_total_time="$secs" -timeout=10 -print_final_stats=1 \
		-artifact_prefix=build/fuzz/artifacts/"$h"- "$work" tests/fuzz/corpus/"$h" >"$log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	if [ "$rc" -eq 0 ]; then
		printf 'ok    %-14s %s runs in %s s\n' "$h" "${runs:-?}" "$secs"
		passed=$((passed + 1))
	else
		printf 'FAIL  %-14s exit %s; reproducer: %s\n' "$h" "$rc" \
			"$(sed -n 's/.*Test unit written to //p' "$log" | tail -1)"
		grep -E 'ERROR|SUMMARY|runtime error|#[0-9]+ 0x' "$log" | head -20 | sed 's/^/      | /'
		failed=$((failed + 1))
	fi
done
echo "$passed $failed $skipped" >"$results/fuzz.counts"
echo "fuzz: $passed passed, $failed failed, $skipped skipped ($((SECONDS - start)) s of fuzzing)"
[ "$failed" -eq 0 ]
