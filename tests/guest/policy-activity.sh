# Laptop policy with uinput: key presses postpone the suspend by
# idle_timeout_ms (counted from the last one); a closed lid with the
# display on suspends within 1 s; an open lid counts as activity again.
. /tests/policy-lib.sh
IDLE=3000
modem_open
pm_trace_on
trap 'kill $daemon $ui $dpms 2>/dev/null' EXIT
start_fed ui 6 wl-uinput; ui=$fed_pid
start_fed dpms 5 wl-dpms; dpms=$fed_pid

# AC is online (test_power): on_ac = opportunistic keeps one timeout.
hold
start_daemon --state freeze --policy laptop --idle-timeout-ms $IDLE --display-off-delay-ms 0 \
	--on-ac opportunistic --min-awake-ms 3000 --start-grace-ms 0 $STAMP --log-level info
unhold
# A key a second for 8 s: never idle for 3 s.
for i in 1 2 3 4 5 6 7 8; do fed ui 6 key; sleep 1; done
expect_eq "attempts during 8 s of typing" "$(stamps)" 0
wakelock status | grep -q "activity" || fail "no activity in wakelock status: $(wakelock status)"
info "ok: wakelock status: $(wakelock status | grep -i 'activity\|lid')"
# The lower bound is the point: no attempt before idle_timeout_ms.  Above
# it, the pre-suspend hook's stamp lags the daemon's decision by a process
# start (hundreds of ms on a loaded TCG host).
timed_attempt "last key to the first attempt" $((IDLE - 200)) $((IDLE + 1000)) fed ui 6 key

# The display on and the user typing: a closed lid suspends at once.
# Typing goes on for longer than --min-awake-ms since the last resume, and
# the lid closes right after a key: only the lid can explain an attempt
# within 1 s (the idle timeout is 3 s away, the minimum awake time over).
fed dpms 5 on
fed ui 6 key
n=$(stamps)
unhold
for i in 1 2 3; do sleep 1; fed ui 6 key; done
expect_eq "attempts with the display on and typing for 3 s" "$(stamps)" $n
timed_attempt "lid closed to the first attempt" 0 1000 fed ui 6 "lid closed"
wakelock status | grep -q "lid closed" || fail "wakelock status does not show the lid closed: $(wakelock status)"

# Opened again: the display (still on) holds.  The daemon may have begun
# an attempt while the lid was still closed (it decided, ran the hook, and
# waits in its read of wakeup_count, which our kernel wake lock blocks):
# that attempt must end at its last look, which sees the lid open.
fed ui 6 "lid open"
n=$(stamps) base=$(suspend_stat success)
unhold
sleep 3
expect_eq "suspends with the lid open and the display on" $(( $(suspend_stat success) - base )) 0
[ "$(stamps)" -le $((n + 1)) ] || fail "attempts with the lid open and the display on: $(( $(stamps) - n ))"
info "ok: attempts begun with the lid closed and aborted: $(( $(stamps) - n )) (0 or 1)"
wakelock status | grep -q "lid open" || fail "wakelock status does not show the lid open: $(wakelock status)"
fed dpms 5 off
hold
kill -TERM $daemon
wait $daemon
expect_eq "daemon exit status after SIGTERM" $? 0
unhold
