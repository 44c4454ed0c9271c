#!/usr/bin/env bash
# make check's unit stage: the systemd unit we ship (daemon/wakelockd.service.in)
# is valid and keeps the daemon to least privilege.
#   1. systemd-analyze verify: the unit parses and its ExecStart exists (the
#      template is rendered with the daemon built here);
#   2. systemd-analyze security --offline=true: the exposure score (printed)
#      is at most WL_UNIT_THRESHOLD (default 2.0; systemd calls up to 4.9 "OK");
#   3. the sandbox leaves the daemon what it cannot work without: the three
#      capabilities in the bounding set, not taken away again by ProtectClock
#      (which drops CAP_WAKE_ALARM), and /sys/power writable.
# Writes build/results/unit-security.counts as "PASSED FAILED SKIPPED".
#   scripts/unit-security.sh [TEMPLATE]   (another template: for the tests)
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
template=${1:-daemon/wakelockd.service.in}
threshold=${WL_UNIT_THRESHOLD:-2.0}
results=${WL_RESULTS:-build/results}
daemon=$top/build/host/daemon/wakelockd
mkdir -p "$results"
passed=0 failed=0 skipped=0
count() { echo "$passed $failed $skipped" >"$results/unit-security.counts"; }

if ! command -v systemd-analyze >/dev/null; then
	echo "SKIP: no systemd-analyze (Debian: systemd): 3 checks skipped"
	skipped=3
	count
	exit 0
fi
[ -x "$daemon" ] || make --no-print-directory meson-host >/dev/null ||
	{ echo "FAIL: cannot build $daemon"; failed=3; count; exit 1; }
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
# 3. What the daemon needs (daemon/alarms.c, server.c, segfile.c, sysfs.c).
# Only the last value of a setting counts; an empty bounding set line
# resets it, and no line at all means every capability.
setting() { sed -n "s/^$1=//p" "$unit" | tail -1; }
needs=()
caps=$(setting CapabilityBoundingSet)
if grep -q '^CapabilityBoundingSet=' "$unit"; then
	case $caps in "~"*) needs+=("CapabilityBoundingSet is a deny list (keep it an allow list)") ;; esac
	for cap in CAP_WAKE_ALARM CAP_BLOCK_SUSPEND CAP_CHOWN; do
		case " $caps " in *" $cap "*) ;; *) needs+=("$cap not in CapabilityBoundingSet") ;; esac
	done
fi
case $(setting ProtectClock) in
	yes | true | on | 1) needs+=("ProtectClock=yes drops CAP_WAKE_ALARM: alarms could not wake the system") ;;
esac
if [ "$(setting ProtectSystem)" = strict ]; then
	case " $(awk -F= '/^ReadWritePaths=/ { l = ($2 == "" ? "" : l " " $2) } END { print l }' "$unit") " in
		*" /sys/power "* | *" -/sys/power "*) ;;
		*) needs+=("ProtectSystem=strict without ReadWritePaths=/sys/power") ;;
	esac
fi
if [ ${#needs[@]} -eq 0 ]; then
	echo "ok: the unit leaves the daemon CAP_WAKE_ALARM, CAP_BLOCK_SUSPEND, CAP_CHOWN and /sys/power"
	passed=$((passed + 1))
else
	echo "FAIL: the unit takes away what the daemon needs:"
	printf '    %s\n' "${needs[@]}"
	failed=$((failed + 1))
fi

echo "unit-security: $passed passed, $failed failed, $skipped skipped"
count
[ "$failed" -eq 0 ]
