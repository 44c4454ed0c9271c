# Helpers of the usb-* guest tests. QEMU's usb-serial device (an FTDI FT232 on
# the PIIX3 UHCI controller; run-guest --usb-modem) is the guest's ttyUSB0,
# the "USB modem"; the host writes into it with `host usb-write TEXT` and
# `host usb-fill N`. Sourced after /tests/lib.sh and /tests/serial-lib.sh,
# whose helpers (port_stat, port_events, settle, modem_drain on fd 3, ...)
# then work on ttyUSB0.
TTY=/sys/class/tty/ttyUSB0
WS_DIR=$TTY/power

# usb_open: wait for ttyUSB0 (enumeration takes a few seconds under TCG), put
# it in raw mode and open it as fd 3. On the patched kernel, enable it for
# wakeup; the unpatched kernel has no power/wakeup on ttyUSB0 at all.
usb_open() {
	local i=0
	while [ ! -c /dev/ttyUSB0 ]; do
		i=$((i + 1))
		[ $i -le 300 ] || fail "no /dev/ttyUSB0 after 30 s (QEMU without --usb-modem? kernel without USB_SERIAL_FTDI_SIO?)"
		usleep 100000
	done
	stty -F /dev/ttyUSB0 raw -echo 115200 || fail "stty on ttyUSB0"
	exec 3<>/dev/ttyUSB0
	if pristine; then
		[ -e $WS_DIR/wakeup ] && fail "pristine kernel: ttyUSB0 has power/wakeup"
		info "pristine kernel: ttyUSB0 has no power/wakeup (cannot be enabled for wakeup)"
		return 0
	fi
	echo enabled >$WS_DIR/wakeup || fail "cannot enable wakeup on ttyUSB0"
	echo 0 >$TTY/wakeup_hold_ms || fail "cannot set ttyUSB0 wakeup_hold_ms"
}
