# Wake alarms on a real kernel: wakelockd suspends the guest to ACPI S3,
# which only the RTC can end here (serial bytes do not wake S3 and the
# host sends none).  A client's periodic alarm must wake the system at its
# time, every time, and the system must stay awake while the client works
# (the daemon takes the alarm's hold before it tells the client).
. /tests/lib.sh
FIRST=5000 PERIOD=6000 FIRES=3 WORK=500
# How late a fire is seen is printed, not bounded: under TCG a resume from
# S3 can take seconds and the guest's CLOCK_BOOTTIME can jump across it
# (seen: +12 s and +37 s at one resume), which the daemon answers by
# skipping the grid points already past.
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
# No start grace: it is there for clients of a predecessor to register
# again (daemon-restart.sh); here its 3 s would make the first fire, due
# 5 s after the alarm is set, imminent at the daemon's first cycle, and the
# suspend before it would not happen.
start_daemon --state mem --mem-sleep deep --min-awake-ms 0 --start-grace-ms 0 --log-level info
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

# Whether the system may sleep before a fire depends on how far away it was
# when the previous fire's work ended: the daemon waits, rather than
# suspends, for an alarm due within 2 s (docs/ledger.md), and a slow resume
# can bring a fire so late that the next point of the grid is close or
# already past.  Far (3 s or more, as with every fire of an on-time run):
# exactly one suspend, the one the alarm ended.  Near (under 1.5 s): none.
# Between the two either is right, but never more than one.
prev_after=$base prev_next=$FIRST
k=0
while read -r word n seen late next before after; do
	[ "$word" = fire ] || continue
	late=${late#late_ms=} next=${next#next_in_ms=}
	before=${before#success_before=} after=${after#success_after=}
	expect_eq "fire $n: expiries seen at once" "$seen" seen=1
	[ "$late" -ge 0 ] || fail "fire $n came ${late#-} ms early"
	info "ok: fire $n came $late ms after its time (CLOCK_BOOTTIME), not early"
	slept=$((before - prev_after))
	if [ "$prev_next" -ge 3000 ]; then
		# The system slept, the alarm woke it, and the client saw the
		# fire in that same wake-up (had the system slept again first,
		# the fire would be seen a period late).
		expect_eq "fire $n (due $prev_next ms after the previous work): suspends since then" $slept 1
	elif [ "$prev_next" -lt 1500 ]; then
		expect_eq "fire $n (due $prev_next ms after the previous work): suspends since then" $slept 0
	else
		[ $slept -le 1 ] || fail "fire $n (due $prev_next ms after the previous work): $slept suspends since then, expected at most 1"
		info "ok: fire $n (due $prev_next ms after the previous work): $slept suspends since then (0 or 1)"
	fi
	expect_eq "fire $n: suspends during the work" $((after - before)) 0
	prev_after=$after prev_next=$next
	k=$((k + 1))
done </tmp/alarm.out
expect_eq "fires" $k $FIRES

# The wake ledger (docs/ledger.md): each of those suspends is recorded as
# the alarm's wake, claimed by the alarm's hold, which the daemon takes
# before it tells the client.  Past the last wake's claim window (1 s)
# first: the client holds, nothing suspends meanwhile.
sleep 1.5
slept=$(($(suspend_stat success) - base))
[ $slept -ge 1 ] || fail "no suspend at all between the fires"
wakelock wakes --json | tr -d '\n' | sed -e 's/^\[//' -e 's/\]$//' -e 's/},{"seq"/}\n{"seq"/g' |
	grep '"outcome":"resumed"' >/tmp/wakes.json
cat /tmp/wakes.json
expect_eq "resumed attempts in the wake ledger (suspends counted by the kernel)" "$(wc -l </tmp/wakes.json)" $slept
expect_eq "of them woken by the alarm" \
	"$(grep -c '"alarm":{"client":"alarm-test","name":"guest"}' /tmp/wakes.json)" $slept
expect_eq "of them claimed by the alarm's hold" \
	"$(grep '"claim":"claimed"' /tmp/wakes.json | grep -c '"client":"alarm-test","hold":"alarm:guest"')" $slept

kill -TERM $daemon
wait $daemon
expect_eq "daemon exit status after SIGTERM" $? 0
kill $client
grep -i 'alarm' /tmp/daemon.log | head -5
