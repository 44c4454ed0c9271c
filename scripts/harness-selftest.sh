#!/usr/bin/env bash
# Host tests of the harness itself (tests/unit/test_*.py); writes
# build/results/harness.counts as "PASSED FAILED SKIPPED".  unittest's
# summary says "Ran N tests" then "OK", "OK (skipped=S)" or
# "FAILED (failures=F, errors=E, skipped=S, ...)": failures, errors and
# unexpected successes are failed, skips are skipped (each listed with its
# reason), the rest passed.  A run that prints no summary is one failure.
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(python3 -m unittest discover -v -s tests/unit -p 'test_*.py' 2>&1)
rc=$?
echo "$out" | grep -E " \.\.\. skipped" | sed 's/^/skipped: /'
echo "$out" | tail -n 4
ran=$(echo "$out" | sed -n 's/^Ran \([0-9]*\) test.*/\1/p' | tail -n 1)
summary=$(echo "$out" | grep -E '^(OK|FAILED)( \(.*\))?$' | tail -n 1)
field() { # field NAME: the count NAME=N in the summary, else 0
	local n
	n=$(echo "$summary" | grep -o "$1=[0-9]*" | cut -d= -f2)
	echo "${n:-0}"
}
failed=$(( $(field failures) + $(field errors) + $(field 'unexpected successes') ))
skipped=$(field skipped)
passed=$(( ${ran:-0} - failed - skipped ))
[ "$passed" -ge 0 ] || passed=0
# No summary at all (a crash, an import error outside the tests), or a
# non-zero exit that the summary does not explain: one failure more.
if [ -z "$ran" ] || [ -z "$summary" ] || { [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; }; then
	failed=$((failed + 1))
fi
mkdir -p build/results
echo "$passed $failed $skipped" >build/results/harness.counts
echo "harness self-test: $passed passed, $failed failed, $skipped skipped"
exit $rc
