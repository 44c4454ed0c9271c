#!/usr/bin/env bash
# make check's unit stage: the systemd unit we ship (daemon/wakelockd.service.in)
# is valid and keeps the daemon to least privilege.
#   1. systemd-analyze verify: the unit parses and its ExecStart exists (the
#      template is rendered with the daemon built here);
#   2. systemd-analyze security --offline=true: the exposure score (printed)
#      is at most WL_UNIT_THRESHOLD (default 2.0; systemd calls up to 4.9 "OK").
# Writes build/results/unit-security.counts as "PASSED FAILED SKIPPED".
#   scripts/unit-security.sh [TEMPLATE]   (another template: for the tests)
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
template=${1:-daemon/wakelockd.service.in}
threshold=${WL_UNIT_THRESHOLD:-2.0}
results=${WL_RESULTS:-build/results}
daemon=$top/build/host/wakelockd
mkdir -p "$results"
passed=0 failed=0 skipped=0
count() { echo "$passed $failed $skipped" >"$results/unit-security.counts"; }

if ! command -v systemd-analyze >/dev/null; then
	echo "SKIP: no systemd-analyze (Debian: systemd): 2 checks skipped"
	skipped=2
	count
	exit 0
fi
[ -x "$daemon" ] || make --no-print-directory -f userspace.mk build/host/wakelockd >/dev/null ||
	{ echo "FAIL: cannot build $daemon"; failed=2; count; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
unit=$dir/wakelockd.service
sed "s|@SBINDIR@|$(dirname "$daemon")|" "$template" >"$unit"

if out=$(systemd-analyze verify --man=no "$unit" 2>&1) && [ -z "$out" ]; then
	echo "ok: systemd-analyze verify $template"
	passed=$((passed + 1))
else
	echo "FAIL: systemd-analyze verify $template:"
	echo "$out" | sed 's/^/    /'
	failed=$((failed + 1))
fi

out=$(systemd-analyze security --offline=true "$unit" 2>&1)
score=$(echo "$out" | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
if [ -z "$score" ]; then
	echo "FAIL: no exposure score from systemd-analyze security:"
	echo "$out" | tail -5 | sed 's/^/    /'
	failed=$((failed + 1))
elif awk -v s="$score" -v t="$threshold" 'BEGIN { exit !(s <= t) }'; then
	echo "ok: exposure $score <= $threshold ($(echo "$out" | tail -1 | sed 's/.*: //'))"
	passed=$((passed + 1))
else
	echo "FAIL: exposure $score > $threshold; what it could still do:"
	echo "$out" | grep '^✗' | sed 's/^/    /'
	failed=$((failed + 1))
fi
echo "unit-security: $passed passed, $failed failed, $skipped skipped"
count
[ "$failed" -eq 0 ]
