# Serial-port wakeup, test 6: data received while the port's interrupt is
# armed for wakeup (after the port's suspend callback, before the noirq
# phase) aborts a suspend started without the wakeup_count handshake: a plain
# `echo mem >/sys/power/state`, as systemd does. The port's wakeup_hold_ms is
# 0 (the default, nothing reported while awake), so only the armed path is at
# work. wltest's device sleeps in its suspend_late callback (suspend_late_ms)
# to open the window; the host writes into ttyS1 when the guest prints that
# it is sleeping there. S3 ("deep"), woken by the host through QMP.
# Patched kernel: the attempt fails with -EBUSY and the data is there at once.
# Pristine kernel: the event is soft, the suspend goes ahead (the data waits
# for an unrelated wakeup); asserted as the old behaviour.
. /tests/lib.sh
. /tests/serial-lib.sh
grep -q '^wltest ' /proc/modules || insmod /lib/modules/wltest.ko || fail "insmod wltest.ko"
ctl=/sys/kernel/debug/wltest
[ -w $ctl/suspend_late_ms ] || fail "no $ctl/suspend_late_ms (old wltest module?)"
modem_open 0
modem_drain
settle
echo deep >/sys/power/mem_sleep || fail "cannot select deep"
# dev_info lines from suspend_late must reach the console (no_console_suspend).
echo 7 >/proc/sys/kernel/printk
echo 4000 >$ctl/suspend_late_ms
s0=$(suspend_stat success) f0=$(suspend_stat fail)
host when 'suspend_late:.sleeping' modem-write ARMED
# Wakes the guest once QEMU reports it suspended (at most 60 s from now).
host wakeup
rc=0
echo mem >/sys/power/state 2>/dev/null || rc=$?
echo 0 >$ctl/suspend_late_ms
ds=$(($(suspend_stat success) - s0)) df=$(($(suspend_stat fail) - f0))
errno=$(suspend_stat last_failed_errno)
info "echo mem: rc $rc, success +$ds, fail +$df, last_failed_errno $errno"
got=$(timeout 10 head -c 5 <&3)
expect_eq "bytes received" "$got" ARMED
if pristine; then
	expect_eq "pristine: the suspend went ahead despite the data (success increment)" $ds 1
	expect_eq "pristine: fail increment" $df 0
	echo s2idle >/sys/power/mem_sleep
	exit 0
fi
expect_eq "suspend aborted: success increment" $ds 0
expect_eq "suspend aborted: fail increment" $df 1
expect_eq "last_failed_errno" "$errno" -16
[ "$rc" != 0 ] || fail "echo mem returned success although the suspend was aborted"
# The host's wakeup is still pending: a real S3 now consumes it, and shows
# the port does not keep the system awake afterwards (hold 0).
settle
s1=$(suspend_stat success)
echo mem >/sys/power/state || fail "second echo mem: rc $?"
expect_eq "second suspend success increment" $(($(suspend_stat success) - s1)) 1
echo s2idle >/sys/power/mem_sleep
