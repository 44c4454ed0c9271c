#!/bin/sh
# Run cmocka test binaries and total their results.
# Usage: run.sh RESULTS_DIR VARIANT:PATH...
# Writes RESULTS_DIR/unit.counts as "PASSED FAILED" (test cases over all
# runs) and one log per binary; exits non-zero on any failure.  A binary
# that crashes or prints no summary counts as one failure.
out=$1; shift
mkdir -p "$out/unit-logs"
passed=0; failed=0
for spec in "$@"; do
	variant=${spec%%:*}; bin=${spec#*:}
	name=$(basename "$bin")
	log="$out/unit-logs/$variant-$name.log"
	# TSan needs ASLR-compatible mappings on some kernels; keep reports fatal.
	TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
	ASAN_OPTIONS="detect_leaks=1:abort_on_error=0" \
	UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
		timeout 300 "$bin" >"$log" 2>&1
	rc=$?
	p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
	f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
	p=${p:-0}; f=${f:-0}
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
	passed=$((passed + p)); failed=$((failed + f))
	if [ "$f" -eq 0 ]; then status=ok; else status=FAIL; fi
	printf '%-5s %-6s %-16s %3s passed %3s failed\n' "$status" "$variant" "$name" "$p" "$f"
	grep -h -E '^(uncontended|SIGKILL storm)' "$log" | sed "s/^/      [$variant] /"
	if [ "$f" -ne 0 ]; then sed 's/^/      | /' "$log" | tail -40; fi
done
echo "$passed $failed" > "$out/unit.counts"
echo "unit tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
