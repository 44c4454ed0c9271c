# ACPI S3 woken by the host through QMP system_wakeup (the harness's other
# way to wake the guest).
. /tests/lib.sh
echo deep >/sys/power/mem_sleep || fail "cannot select deep"
before=$(suspend_stat success)
host when 'sleep.state.S3' wakeup
echo mem >/sys/power/state || fail "write mem: rc $?"
after=$(suspend_stat success)
expect_eq "suspend_stats/success increment" $((after - before)) 1
echo s2idle >/sys/power/mem_sleep
