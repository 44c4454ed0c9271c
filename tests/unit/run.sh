#!/bin/sh
# Run cmocka test binaries and total their results.
# Usage: run.sh RESULTS_DIR VARIANT:PATH...
# Writes RESULTS_DIR/unit.counts as "PASSED FAILED SKIPPED" (test cases over
# all runs) and one log per binary; exits non-zero on any failure.  A binary
# that crashes or prints no summary counts as one failure.  A skipped case is
# listed with what it printed before skipping (its reason).
out=$1; shift
mkdir -p "$out/unit-logs"
passed=0; failed=0; skipped=0
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
	# cmocka's summary: "[  PASSED  ] N test(s)." counts neither failures nor
	# skips; "[  FAILED  ] N test(s), listed below:" and the same for SKIPPED.
	p=$(sed -n 's/^\[  PASSED  \] \([0-9][0-9]*\) test.*/\1/p' "$log" | tail -1)
	f=$(sed -n 's/^\[  FAILED  \] \([0-9][0-9]*\) test.*/\1/p' "$log" | tail -1)
	s=$(sed -n 's/^\[  SKIPPED \] \([0-9][0-9]*\) test.*/\1/p' "$log" | tail -1)
	p=${p:-0}; f=${f:-0}; s=${s:-0}
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
	passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
	if [ "$f" -eq 0 ]; then status=ok; else status=FAIL; fi
	printf '%-5s %-6s %-16s %3s passed %3s failed %3s skipped\n' \
		"$status" "$variant" "$name" "$p" "$f" "$s"
	# Each skipped case with the lines it printed between RUN and SKIPPED.
	if [ "$s" -ne 0 ]; then
		awk '/^\[ RUN      \] / { name = $4; why = ""; next }
		     /^\[  SKIPPED \] / && $4 == name {
			sub(/^; /, "", why)
			print "      skipped: " name ": " (why == "" ? "(no reason printed)" : why)
			name = ""; next }
		     /^\[/ { name = ""; next }
		     name != "" { why = why "; " $0 }' "$log" | sed "s/^      /      [$variant] /"
	fi
	if [ "$f" -ne 0 ]; then sed 's/^/      | /' "$log" | tail -40; fi
done
echo "$passed $failed $skipped" > "$out/unit.counts"
echo "unit tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
