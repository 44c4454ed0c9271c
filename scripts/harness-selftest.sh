#!/usr/bin/env bash
# Host tests of the harness itself (tests/unit/test_*.py); writes counts.
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(python3 -m unittest discover -s tests/unit -p 'test_*.py' 2>&1)
rc=$?
echo "$out" | tail -n 4
ran=$(echo "$out" | sed -n 's/^Ran \([0-9]*\) test.*/\1/p')
bad=$(echo "$out" | sed -n 's/^FAILED (\(.*\))/\1/p' | grep -o '[0-9]\+' | paste -sd+ | bc)
mkdir -p build/results
echo "$(( ${ran:-0} - ${bad:-0} )) ${bad:-0}" >build/results/harness.counts
exit $rc
