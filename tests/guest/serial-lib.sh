# Helpers shared by the serial-* guest tests (serial-port wakeup: received data on a serial
# port enabled for wakeup is a wakeup event). Sourced after /tests/lib.sh.
#
# The same tests run on the patched kernel and on the pristine one (the suite
# passes wlkernel=pristine on the kernel command line there): where the
# pristine kernel has the bug, the test asserts the bug instead of the fix, so
# that the pristine run documents what the patch changes.

TTY=/sys/class/tty/ttyS1
WS_DIR=$TTY/power

pristine() { grep -q 'wlkernel=pristine' /proc/cmdline; }

# Time since boot in milliseconds (/proc/uptime has 10 ms resolution).
now_ms() {
	local up _
	read -r up _ </proc/uptime
	echo "${up%.*}${up#*.}0"
}

# The port's wakeup source, as the device's power/ attributes show it.
port_stat() { cat "$WS_DIR/wakeup_$1"; }
# Event count of the port's source (only in its wakeupN/ class device).
port_events() { cat "$TTY"/wakeup[0-9]*/event_count; }

# Discard whatever ttyS1 has buffered (fd 3 must be open and raw).
modem_drain() {
	while timeout 1 head -c 1 <&3 >/dev/null 2>&1; do :; done
}

# Wait until no wakeup source is active (reads of wakeup_count return).
settle() {
	timeout "${1:-10}" cat /sys/power/wakeup_count >/dev/null ||
		fail "a wakeup source stayed active for ${1:-10}s"
}
