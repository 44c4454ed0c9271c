# ACPI S3 (mem, deep) woken by the RTC alarm.
. /tests/lib.sh
echo deep >/sys/power/mem_sleep || fail "cannot select deep"
before=$(suspend_stat success)
t0=$(cut -d' ' -f1 /proc/uptime)
echo 0 >/sys/class/rtc/rtc0/wakealarm
echo +2 >/sys/class/rtc/rtc0/wakealarm || fail "cannot arm the RTC alarm"
echo mem >/sys/power/state || fail "write mem to /sys/power/state: rc $?"
after=$(suspend_stat success)
expect_eq "suspend_stats/success increment" $((after - before)) 1
info "S3 cycle took $(echo "$t0 $(cut -d' ' -f1 /proc/uptime)" | awk '{print $2-$1}') s of uptime"
echo s2idle >/sys/power/mem_sleep
