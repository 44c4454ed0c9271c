# The demo's guest side: one suspend-to-idle cycle, woken by an incoming
# "call" on the modem port, with the kernel's statistics before and after.
. /tests/lib.sh
show_stats() {
	for f in success fail failed_suspend last_failed_dev; do
		printf '  suspend_stats/%-16s %s\n' "$f" "$(cat /sys/power/suspend_stats/$f)"
	done
	printf '  %-29s %s\n' wakeup_count "$(wakeup_count)"
	for ws in /sys/class/wakeup/*; do
		[ "$(cat "$ws/name")" = ttyS1 ] || continue
		printf '  ttyS1 wakeup source: events %s, active %s times, %s ms total\n' \
			"$(cat "$ws/event_count")" "$(cat "$ws/active_count")" "$(cat "$ws/total_time_ms")"
	done
}
modem_open
pm_trace_on
info "before suspend:"
show_stats
before=$(suspend_stat success)
info "suspending to idle; the host calls in as soon as the guest sleeps"
host when suspend-to-idle modem-write CALL
t0=$(cut -d' ' -f1 /proc/uptime)
echo freeze >/sys/power/state || fail "suspend failed"
t1=$(cut -d' ' -f1 /proc/uptime)
got=$(timeout 5 head -c 4 <&3)
info "woke up after $(echo "$t0 $t1" | awk '{printf "%.0f", ($2-$1)*1000}') ms; modem says '$got'"
info "after resume:"
show_stats
expect_eq "completed suspend cycles" $(( $(suspend_stat success) - before )) 1
expect_eq "call received" "$got" CALL
