# A critical battery (test_power): discharging at or below
# critical_battery_percent, the configured action is taken even while a
# client holds: with critical_action = poweroff the guest powers off (the
# runner takes QEMU's exit after "reboot: Power down" as this test passing:
# host expect-poweroff; it is the plan's last test).  Above the level, or
# on AC, nothing happens.
. /tests/policy-lib.sh
p=/sys/module/test_power/parameters
[ -d $p ] || fail "no test_power (CONFIG_TEST_POWER)"
trap 'kill $daemon $holder $tail 2>/dev/null; echo on >$p/ac_online; echo on >$p/usb_online; echo 50 >$p/battery_capacity' EXIT
hold
start_daemon --state freeze --policy phone --critical-battery-percent 5 --critical-action poweroff \
	--start-grace-ms 0 --log-level info
# The daemon's log on the console, for the record of what it did last.
tail -f /tmp/daemon.log &
tail=$!
start_holder critical-holder /tmp/holder.out
unhold
echo 3 >$p/battery_capacity
sleep 2
kill -0 $daemon || fail "wakelockd exited at 3 % on AC: $(cat /tmp/daemon.log)"
info "ok: 3 % on AC: no action"
echo off >$p/ac_online
echo off >$p/usb_online
echo discharging >$p/battery_status
echo 20 >$p/battery_capacity
sleep 2
kill -0 $daemon || fail "wakelockd exited at 20 % discharging"
info "ok: 20 % discharging: no action"
wakelock status | grep -q "battery test_battery 20" ||
	fail "wakelock status does not show the battery at 20 %: $(wakelock status)"
info "ok: wakelock status: $(wakelock status | grep -i battery)"
host expect-poweroff policy-critical
echo 4 >$p/battery_capacity
sleep 20
fail "no power-off within 20 s of 4 % discharging with critical_action = poweroff: $(cat /tmp/daemon.log)"
