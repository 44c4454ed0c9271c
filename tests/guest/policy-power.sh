# on_ac = never with test_power: no suspend while AC (or USB) is online;
# unplugged, the guest suspends at once (a uevent, no polling).
. /tests/policy-lib.sh
p=/sys/module/test_power/parameters
[ -d $p ] || fail "no test_power (CONFIG_TEST_POWER)"
modem_open
pm_trace_on
trap 'kill $daemon 2>/dev/null; echo on >$p/ac_online; echo on >$p/usb_online' EXIT
expect_eq "test_ac online" "$(cat /sys/class/power_supply/test_ac/online)" 1
hold
start_daemon --state freeze --policy appliance --on-ac never --min-awake-ms 3000 \
	--start-grace-ms 0 $STAMP --log-level info
unhold
sleep 5
expect_eq "attempts in 5 s on AC" "$(stamps)" 0
wakelock status | grep -q "ac online" || fail "wakelock status does not show AC: $(wakelock status)"
info "ok: wakelock status: $(wakelock status | grep -i 'ac\|battery')"
echo off >$p/usb_online
sleep 2
expect_eq "attempts with USB unplugged and AC online" "$(stamps)" 0
unplug() { echo off >$p/ac_online; }
timed_attempt "AC unplugged to the first attempt" 0 1000 unplug
kill -TERM $daemon
wait $daemon
expect_eq "daemon exit status after SIGTERM" $? 0
unhold
