# /sys/power/wakeup_count from a shell: a fresh count can be written back, a
# stale one cannot, and a read blocks while a wakeup source is active.
. /tests/lib.sh
n=$(wakeup_count)
echo "$n" >/sys/power/wakeup_count || fail "writing back the current count ($n) failed"
info "ok: current count $n accepted"
# A wakeup event: a kernel wakelock held and released bumps the count.
echo wltest-shell >/sys/power/wake_lock
if timeout 1 cat /sys/power/wakeup_count >/dev/null; then
	fail "wakeup_count read returned while a wake_lock was held"
fi
info "ok: read blocks while wake_lock held"
if echo "$n" >/sys/power/wakeup_count 2>/dev/null; then
	fail "writing the count succeeded while an event was in progress"
fi
echo wltest-shell >/sys/power/wake_unlock
m=$(wakeup_count)
[ "$m" != "$n" ] || fail "count did not move after an event ($n)"
if echo "$n" >/sys/power/wakeup_count 2>/dev/null; then
	fail "stale count $n accepted after the count moved to $m"
fi
info "ok: stale count $n rejected (now $m)"
echo "$m" >/sys/power/wakeup_count || fail "fresh count $m rejected"
info "ok: fresh count $m accepted"
