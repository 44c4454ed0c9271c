# logind's sleep inhibitors, with Debian's dbus-daemon and elogind: a block
# inhibitor keeps the guest awake for as long as it is held and is listed
# with logind's who/why/uid/pid; the suspend follows within 1 s of its
# release; a delay inhibitor, and a block inhibitor of a denied name, do
# not keep it awake.
. /tests/lib.sh
modem_open
pm_trace_on
start_logind
# Whatever happens, leave nothing running: a process left with the test's
# output open would keep the plan from ending.
trap 'kill ${daemon:-} ${held_by:-} ${delayer:-} ${denied:-} ${keeper:-} 2>/dev/null; stop_logind' EXIT

# Until the inhibitor is mirrored, a kernel wakelock keeps the daemon from
# suspending (nothing would wake the guest).
echo logind-test-start >/sys/power/wake_lock
inhibit block modem-test "incoming call"
held_by=$inhibitor
start_daemon --state freeze --min-awake-ms 3000 --deny logind:denied-app --log-level debug
_i=0
until wakelock list --json | grep -q '"client":"logind:modem-test"'; do
	_i=$((_i + 1)); [ $_i -lt 50 ] || fail "inhibitor not listed: $(wakelock list; cat /tmp/daemon.log)"
	sleep 0.1
done
echo logind-test-start >/sys/power/wake_unlock
base=$(suspend_stat success)
sleep 3
expect_eq "suspends while a block inhibitor is held" $(( $(suspend_stat success) - base )) 0

list=$(wakelock list --json)
info "wakelock list: $list"
echo "$list" | grep -q "\"client\":\"logind:modem-test\",\"pid\":$held_by,\"uid\":0," ||
	fail "the inhibitor is not listed with logind's who, pid $held_by and uid 0"
echo "$list" | grep -q '"hold":"incoming_call"' || fail "the inhibitor's why is not its hold name"
wakelock stats | grep -q '^logind:modem-test ' || fail "wakelock stats lacks the inhibitor: $(wakelock stats)"
info "ok: listed as logind:modem-test, pid $held_by, uid 0, hold incoming_call; in wakelock stats"

# Neither of these may keep the guest awake once modem-test is gone.
inhibit delay delay-app "saving state"
delayer=$inhibitor
inhibit block denied-app "denied by policy"
denied=$inhibitor
sleep 0.5
wakelock list --json | grep -q '"client":"logind:delay-app"' &&
	fail "a delay inhibitor was taken for a hold"
wakelock stats --json | grep -q '"name":"logind:denied-app","pid":[0-9]*,"uid":0,"allowed":false' ||
	fail "the denied inhibitor is not shown as denied: $(wakelock stats --json)"
info "ok: the delay inhibitor is no hold, the denied one is shown denied"

# Release: the daemon is waiting, so the suspend must begin at once.  The
# host wakes the guest as soon as it reaches the idle loop.
host when suspend-to-idle modem-write WAKE
released=$(uptime_ms)
kill $held_by
_i=0
until [ "$(suspend_stat success)" -gt "$base" ]; do
	_i=$((_i + 1)); [ $_i -lt 300 ] || fail "no suspend within 30 s of the release: $(tail -20 /tmp/daemon.log)"
	sleep 0.1
done
# Inside the 3 s minimum awake time: hold, so that nothing more sleeps.
inhibit block keep-awake "end of test"
keeper=$inhibitor
got=$(timeout 5 head -c 4 <&3)
expect_eq "wake bytes read" "$got" WAKE
began=$(wakelock wakes --json | tr '{' '\n' | sed -n 's/.*"start_boottime_ms":\([0-9]*\).*/\1/p' |
	awk -v r="$released" '$1 >= r - 20 { print; exit }')
[ -n "$began" ] || fail "no ledger record of a suspend after the release: $(wakelock wakes)"
delay=$((began - released))
info "released at ${released} ms (uptime), suspend attempt began at ${began} ms: ${delay} ms"
[ "$delay" -le 1000 ] || fail "suspend began ${delay} ms after the release (at most 1000)"
info "ok: suspend began ${delay} ms after the release"
kill -0 $delayer && kill -0 $denied || fail "the delay or denied inhibitor ended early"

kill -TERM $daemon
wait $daemon
expect_eq "daemon exit status after SIGTERM" $? 0
