# USB serial wakeup, test 1: the wakeup_count race on a USB modem (ttyUSB0).
# Read wakeup_count (N), have the host send bytes into the USB serial device,
# wait until the guest has them, write N back. Patched kernel: the data was a
# wakeup event, so the write fails, and the port's source was held only until
# the line discipline took the data (it ended by a relax, not a timer).
# Pristine kernel: the stale count is accepted (asserted: the race this
# series fixes), and a power manager would suspend with the call unread.
. /tests/lib.sh
. /tests/serial-lib.sh
. /tests/usb-lib.sh
usb_open
if ! pristine; then
	expect_eq "ttyUSB0 wakeup_hold_ms default" "$(cat $TTY/wakeup_hold_ms)" 0
fi
# The first packet since the converter was probed changes ftdi_sio's modem
# status (QEMU's usb-serial reports DCD set): a carrier detect change, which
# since series v3 is a 1 s event of the tty device that nothing on the
# receive side cuts short. Let it pass before measuring the data's hold.
host usb-write P
timeout 5 head -c 1 <&3 >/dev/null
modem_drain
settle
pristine || { e0=$(port_events) a0=$(port_stat active_count) x0=$(port_stat expire_count); }
n=$(wakeup_count)
host usb-write RING
got=$(timeout 5 head -c 4 <&3)
expect_eq "bytes received on ttyUSB0" "$got" RING
if echo "$n" >/sys/power/wakeup_count 2>/dev/null; then accepted=yes; else accepted=no; fi
info "count $n read before the bytes arrived, written back after they were read: accepted=$accepted"
if pristine; then
	expect_eq "pristine kernel accepts the stale count (the race)" "$accepted" yes
	exit 0
fi
expect_eq "stale count rejected after data arrived on ttyUSB0" "$accepted" no
# Held until the line discipline took the data: over long before a 1 s timer.
t0=$(now_ms)
m=$(wakeup_count 5)
t1=$(now_ms)
info "wakeup_count read returned after $((t1 - t0)) ms, count $n -> $m"
[ $((t1 - t0)) -lt 900 ] || fail "the port's source stayed active $((t1 - t0)) ms after the data was read"
[ "$m" != "$n" ] || fail "count did not move after the port's event ($n)"
[ $(($(port_events) - e0)) -ge 1 ] || fail "ttyUSB0 event_count did not grow"
[ $(($(port_stat active_count) - a0)) -ge 1 ] || fail "ttyUSB0 active_count did not grow"
expect_eq "ttyUSB0 expire_count growth (ended by the line discipline, no timer)" \
	$(($(port_stat expire_count) - x0)) 0
expect_eq "ttyUSB0 wakeup_active" "$(port_stat active)" 0
echo "$m" >/sys/power/wakeup_count || fail "fresh count $m rejected"
info "ok: fresh count $m accepted"
