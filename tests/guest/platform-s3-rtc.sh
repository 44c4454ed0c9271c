# ACPI S3 (mem, deep) woken by the RTC alarm.
. /tests/lib.sh
echo deep >/sys/power/mem_sleep || fail "cannot select deep"
before=$(suspend_stat success)
t0=$(cut -d' ' -f1 /proc/uptime)
rtcwake -d rtc0 -m mem -s 2 || fail "rtcwake -m mem failed: rc $?"
after=$(suspend_stat success)
expect_eq "suspend_stats/success increment" $((after - before)) 1
info "S3 cycle took $(echo "$t0 $(cut -d' ' -f1 /proc/uptime)" | awk '{print $2-$1}') s of uptime"
echo s2idle >/sys/power/mem_sleep
