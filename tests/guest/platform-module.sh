# The out-of-tree test module loads, and its sources behave as wakeup sources:
# a standalone source held blocks wakeup_count reads, its release moves the
# count; the device's events count only while its power/wakeup is enabled.
. /tests/lib.sh
insmod /lib/modules/wltest.ko || fail "insmod wltest.ko"
ctl=/sys/kernel/debug/wltest
src=
for ws in /sys/class/wakeup/*; do
	[ "$(cat "$ws/name")" = wltest ] && src=$ws
done
[ -n "$src" ] || fail "no wakeup source named wltest in /sys/class/wakeup"
n=$(wakeup_count)
echo stay >$ctl/source
expect_eq "wltest active_count after stay" "$(cat "$src/active_count")" 1
if timeout 1 cat /sys/power/wakeup_count >/dev/null; then
	fail "wakeup_count read returned while wltest was held"
fi
echo relax >$ctl/source
m=$(wakeup_count)
expect_eq "count after one event" "$m" $((n + 1))
expect_eq "wltest event_count" "$(cat "$src/event_count")" 1

dev=/sys/devices/platform/wltest-dev/power
expect_eq "device wakeup" "$(cat $dev/wakeup)" enabled
echo "event 0" >$ctl/device
expect_eq "device wakeup_active_count" "$(cat $dev/wakeup_active_count)" 1
echo disabled >$dev/wakeup
echo "event 0" >$ctl/device
expect_eq "count unchanged by a disabled device" "$(wakeup_count)" $((n + 2))
if echo bogus >$ctl/source 2>/dev/null; then fail "bogus command accepted"; fi
rmmod wltest || fail "rmmod wltest"
