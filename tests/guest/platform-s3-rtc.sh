# ACPI S3 (mem, deep) woken by the RTC alarm.
. /tests/lib.sh
echo deep >/sys/power/mem_sleep || fail "cannot select deep"
before=$(suspend_stat success)
t0=$(cut -d' ' -f1 /proc/uptime)
echo 0 >/sys/class/rtc/rtc0/wakealarm
# 4 s: the alarm must fire once the guest is in S3.  Suspending the devices
# took up to 2 s under TCG on a loaded host, and an alarm that fires before
# QEMU enters S3 is lost: nothing else wakes the guest (plan timeout).
echo +4 >/sys/class/rtc/rtc0/wakealarm || fail "cannot arm the RTC alarm"
echo mem >/sys/power/state || fail "write mem to /sys/power/state: rc $?"
after=$(suspend_stat success)
expect_eq "suspend_stats/success increment" $((after - before)) 1
info "S3 cycle took $(echo "$t0 $(cut -d' ' -f1 /proc/uptime)" | awk '{print $2-$1}') s of uptime"
echo s2idle >/sys/power/mem_sleep
