# USB serial wakeup, test 4: data arriving on ttyUSB0 during suspend entry,
# with the wakeup_count handshake done. wltest's device sleeps 3 s in its
# prepare callback (after tasks are frozen, before any device is suspended;
# USB devices suspend asynchronously, so a suspend callback would not keep them
# up); the host writes into the USB serial device when the guest prints that
# it is sleeping there, and wakes the guest through ttyS1 8 s later in case it
# went to sleep.
# Patched kernel: the data is a wakeup event, the suspend is aborted (-EBUSY)
# and the data is there at once. Pristine kernel: no event, the guest
# suspends with the call unread (asserted as the old behaviour; under QEMU
# the USB device is then reset on resume and the call is lost).
. /tests/lib.sh
. /tests/serial-lib.sh
grep -q '^wltest ' /proc/modules || insmod /lib/modules/wltest.ko || fail "insmod wltest.ko"
ctl=/sys/kernel/debug/wltest
[ -w $ctl/prepare_ms ] || fail "no $ctl/prepare_ms (old wltest module?)"
# ttyS1 wakes the guest from suspend-to-idle if it does go to sleep.
stty -F /dev/ttyS1 raw -echo 115200 || fail "stty on ttyS1"
exec 5<>/dev/ttyS1
echo enabled >/sys/class/tty/ttyS1/power/wakeup || fail "cannot enable wakeup on ttyS1"
. /tests/usb-lib.sh
usb_open
modem_drain
settle
echo 7 >/proc/sys/kernel/printk
echo 3000 >$ctl/prepare_ms
s0=$(suspend_stat success) f0=$(suspend_stat fail)
n=$(wakeup_count)
echo "$n" >/sys/power/wakeup_count || fail "count $n rejected before suspend"
host when 'prepare:.sleeping' usb-write CALL
host after 8000 modem-write WAKE
rc=0
echo freeze >/sys/power/state 2>/dev/null || rc=$?
echo 0 >$ctl/prepare_ms
ds=$(($(suspend_stat success) - s0)) df=$(($(suspend_stat fail) - f0))
errno=$(suspend_stat last_failed_errno)
info "echo freeze: rc $rc, success +$ds, fail +$df, last_failed_errno $errno"
timeout 10 head -c 4 <&5 >/dev/null
if pristine; then
	expect_eq "pristine: the suspend went ahead despite the call (success increment)" $ds 1
	expect_eq "pristine: fail increment" $df 0
	# Under QEMU the UHCI root hub comes back from suspend-to-idle reset, the
	# converter is enumerated anew (ttyUSB1) and what the old ttyUSB0 held is
	# gone: the call is lost, not only late. Shown, not judged.
	got=$(timeout 3 head -c 4 <&3 2>/dev/null)
	info "pristine: after the resume ttyUSB0 gave '$got'; converters now: $(ls /sys/bus/usb-serial/devices 2>/dev/null | tr '\n' ' ')"
	exit 0
fi
got=$(timeout 10 head -c 4 <&3)
expect_eq "bytes received on ttyUSB0" "$got" CALL
expect_eq "suspend aborted: success increment" $ds 0
expect_eq "suspend aborted: fail increment" $df 1
expect_eq "last_failed_errno" "$errno" -16
[ "$rc" != 0 ] || fail "echo freeze returned success although the suspend was aborted"
