# [logind] mode = suspend, with Debian's dbus-daemon and elogind: wakelockd
# arms the kernel, then suspends through logind's Suspend, so a delay
# inhibitor's holder sees PrepareForSleep(true) before each attempt and
# PrepareForSleep(false) after it, exactly once each, and logind (not
# wakelockd) writes the sleep state (its SuspendState: freeze here).
. /tests/lib.sh
modem_open
pm_trace_on
json_field() { sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p" /run/wakelockd/stats.json; }
# A short delay-inhibitor wait, and suspend-to-idle (QEMU's serial port
# can wake it; S3 would need the RTC).
mkdir -p /etc/elogind
printf '[Login]\nInhibitDelayMaxSec=1\n[Sleep]\nSuspendState=freeze\n' >/etc/elogind/logind.conf
start_logind
# Whatever happens, leave nothing running: a process left with the test's
# output open would keep the plan from ending.
trap 'kill ${daemon:-} ${monitor:-} ${keeper:-} ${delayer:-} 2>/dev/null; stop_logind' EXIT
dbus-monitor --system \
	"type='signal',interface='org.freedesktop.login1.Manager',member='PrepareForSleep'" \
	>/tmp/prepare.log 2>&1 &
monitor=$!

echo logind-suspend >/sys/power/wake_lock
inhibit delay delay-app "save state"
delayer=$inhibitor
start_daemon --state freeze --min-awake-ms 2500 --logind suspend \
	--stats-file /run/wakelockd/stats.json --log-level debug
base=$(suspend_stat success)
echo logind-suspend >/sys/power/wake_unlock
n=0
while [ $n -lt 3 ]; do
	host when suspend-to-idle modem-write W
	_i=0
	until [ "$(suspend_stat success)" -gt $((base + n)) ]; do
		_i=$((_i + 1))
		[ $_i -lt 300 ] || fail "suspend $((n + 1)) not within 30 s: $(tail -15 /tmp/daemon.log)"
		sleep 0.1
	done
	n=$((n + 1))
	got=$(timeout 5 head -c 1 <&3)
	expect_eq "wake byte after suspend $n" "$got" W
done
# Inside the 2.5 s minimum awake time: hold, so that nothing more sleeps.
inhibit block keep-awake "end of test"
keeper=$inhibitor
sleep 1
expect_eq "suspends through logind" $(( $(suspend_stat success) - base )) 3
kill -USR1 $daemon; sleep 0.3
attempts=$(json_field attempts)
kill $monitor
wait $monitor 2>/dev/null
yes=$(grep -c 'boolean true' /tmp/prepare.log)
no=$(grep -c 'boolean false' /tmp/prepare.log)
info "daemon attempts $attempts; PrepareForSleep(true) $yes, PrepareForSleep(false) $no"
expect_eq "PrepareForSleep(true) once per attempt" "$yes" "$attempts"
expect_eq "PrepareForSleep(false) once per attempt" "$no" "$attempts"
# Alternating, true first: never two of a kind in a row.
order=$(sed -n 's/.*boolean \(true\|false\).*/\1/p' /tmp/prepare.log | tr '\n' ' ')
case " $order" in *" true true "*|*" false false "*|" false"*)
	fail "PrepareForSleep out of order: $order" ;;
esac
info "ok: PrepareForSleep order: $order"
# elogind logs to the kernel's log when there is no journal.
sleeps=$(dmesg | grep -c 'elogind.*Suspending system')
expect_eq "elogind wrote the sleep state (its log)" "$sleeps" "$attempts"
kill -0 $delayer || fail "the delay inhibitor ended early"

kill -TERM $daemon
wait $daemon
expect_eq "daemon exit status after SIGTERM" $? 0
