# Wake alarms on a real kernel: wakelockd suspends the guest to ACPI S3,
# which only the RTC can end here (serial bytes do not wake S3 and the
# host sends none).  A client's periodic alarm must wake the system at its
# time, every time, and the system must stay awake while the client works
# (the daemon takes the alarm's hold before it tells the client).
. /tests/lib.sh
FIRST=5000 PERIOD=6000 FIRES=3 WORK=500
# How late a fire is seen is printed, not bounded: under TCG the guest's
# CLOCK_BOOTTIME can jump across S3 (seen: +37 s at one resume, the fires
# then 36-37 s "late" on the client's grid though they came every ~6 s).
# That an alarm woke the system, and that the client ran before the next
# suspend, shows in suspend_stats: S3 ends only by the RTC here, and a
# system that is never woken times the test out.
grep -q deep /sys/power/mem_sleep || fail "no ACPI S3 (mem_sleep: $(cat /sys/power/mem_sleep))"
pm_trace_on

# Set-up under a kernel wake lock, so that nothing sleeps before the alarm
# is armed.
echo daemon-alarm-start >/sys/power/wake_lock
# The daemon and the client inherit the test's output: stop them on any
# exit, or the runner would wait for them.
trap 'kill $client $daemon 2>/dev/null' EXIT
start_daemon --state mem --mem-sleep deep --min-awake-ms 0 --log-level info
if grep -q 'CLOCK_BOOTTIME_ALARM unavailable' /tmp/daemon.log; then
	fail "wakelockd cannot wake the system: $(cat /tmp/daemon.log)"
fi
wl-guest-alarm alarm-test $FIRST $PERIOD $FIRES $WORK >/tmp/alarm.out 2>&1 &
client=$!
i=0
until grep -q '^set' /tmp/alarm.out; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "the alarm client did not start: $(cat /tmp/alarm.out)"
	sleep 0.1
done
base=$(suspend_stat success)
echo daemon-alarm-start >/sys/power/wake_unlock

# The shell sleeps with the rest of user space between fires; once the
# client has seen its last one it keeps the system awake ("holding").
# Time asleep does not count against this bound.
i=0
until grep -q '^holding' /tmp/alarm.out; do
	kill -0 $client 2>/dev/null || fail "the alarm client failed: $(cat /tmp/alarm.out)"
	i=$((i + 1)); [ $i -lt 1200 ] || fail "the alarm client never finished: $(cat /tmp/alarm.out)"
	sleep 0.1
done
cat /tmp/alarm.out

prev_after=$base
k=0
while read -r word n seen late before after; do
	[ "$word" = fire ] || continue
	late=${late#late_ms=} before=${before#success_before=} after=${after#success_after=}
	expect_eq "fire $n: expiries seen at once" "$seen" seen=1
	[ "$late" -ge 0 ] || fail "fire $n came ${late#-} ms early"
	info "ok: fire $n came $late ms after its time (CLOCK_BOOTTIME), not early"
	# Exactly one suspend since the previous fire: the system slept, the
	# alarm woke it, and the client saw the fire in that same wake-up (had
	# the system slept again first, the fire would be seen a period late).
	expect_eq "fire $n: suspends since the previous fire" $((before - prev_after)) 1
	expect_eq "fire $n: suspends during the work" $((after - before)) 0
	prev_after=$after
	k=$((k + 1))
done </tmp/alarm.out
expect_eq "fires" $k $FIRES

# The wake ledger (docs/ledger.md): each of those resumes is recorded as the
# alarm's wake, claimed by the alarm's hold, which the daemon takes before
# it tells the client.  Past the last wake's claim window (1 s) first: the
# client holds, nothing suspends meanwhile.
sleep 1.5
wakelock wakes --json | tr -d '\n' | sed -e 's/^\[//' -e 's/\]$//' -e 's/},{"seq"/}\n{"seq"/g' |
	grep '"outcome":"resumed"' >/tmp/wakes.json
cat /tmp/wakes.json
expect_eq "resumed attempts in the wake ledger" "$(wc -l </tmp/wakes.json)" $FIRES
expect_eq "of them woken by the alarm" \
	"$(grep -c '"alarm":{"client":"alarm-test","name":"guest"}' /tmp/wakes.json)" $FIRES
expect_eq "of them claimed by the alarm's hold" \
	"$(grep '"claim":"claimed"' /tmp/wakes.json | grep -c '"client":"alarm-test","hold":"alarm:guest"')" $FIRES

kill -TERM $daemon
wait $daemon
expect_eq "daemon exit status after SIGTERM" $? 0
kill $client
grep -i 'alarm' /tmp/daemon.log | head -5
