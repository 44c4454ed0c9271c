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

# The port's wakeup sources: the tty device's own (power/wakeup_*, present
# while wakeup is enabled; since series v3 it has the RI/DCD events) and, on
# the patched kernel, the port's RX source (class device named TTY-rx, under
# the tty device: received data, held until the line discipline has taken it
# or for wakeup_hold_ms).
# Their wakeupN/ class devices are both under $TTY.
rx_ws_dir() {
	local d
	for d in "$TTY"/wakeup[0-9]*; do
		[ "$(cat "$d/name" 2>/dev/null)" = "${TTY##*/}-rx" ] && { echo "$d"; return 0; }
	done
	return 1
}
# port_stat NAME: NAME of the device's source (power/wakeup_NAME), plus that of
# the RX source where there is one: "active" is 1 if either is active, counts
# are summed.
port_stat() {
	local v rx
	v=$(cat "$WS_DIR/wakeup_$1")
	rx=$(rx_ws_dir) || { echo "$v"; return 0; }
	case $1 in
	active)
		# An active source's active_time_ms is > 0 within a millisecond.
		if [ "$(cat "$rx/active_time_ms")" -gt 0 ]; then echo 1; else echo "$v"; fi ;;
	*) echo $((${v:-0} + $(cat "$rx/$1"))) ;;
	esac
}
# Event count of the port's sources (their wakeupN/ class devices), summed.
port_events() {
	local d n=0
	for d in "$TTY"/wakeup[0-9]*; do
		[ -e "$d" ] || continue
		n=$((n + $(cat "$d/event_count")))
	done
	echo $n
}

# Discard whatever ttyS1 has buffered (fd 3 must be open and raw).
modem_drain() {
	while timeout 1 head -c 1 <&3 >/dev/null 2>&1; do :; done
}

# Wait until no wakeup source is active (reads of wakeup_count return).
settle() {
	timeout "${1:-10}" cat /sys/power/wakeup_count >/dev/null ||
		fail "a wakeup source stayed active for ${1:-10}s"
}

# wait_event E0 WHAT: wait (at most 5 s) until the port's event count is no
# longer E0.
wait_event() {
	local i=0
	while [ "$(port_events)" = "$1" ]; do
		i=$((i + 1))
		[ $i -le 500 ] || fail "no wakeup event 5 s $2"
		usleep 10000
	done
}

# stall_test WRITE FILL: a reader that stops reading cannot be made to keep
# the system awake by its sender (fd 3 is the open port, never read until the
# end; WRITE and FILL are the host commands that feed it: modem-write and
# modem-fill, or usb-write and usb-fill).
#  1. 20000 bytes fill the line discipline (n_tty keeps 4 KB); what it does
#     not take stays in the port's buffer. Within about a second of the line
#     discipline taking nothing, the port's source must be released.
#  2. The host keeps sending for 3 s: no event, a count read before is still
#     accepted.
#  3. Once the reader has drained everything, received data is an event again.
stall_test() {
	local write=$1 fill=$2 e0 t0 t1 n m got sid
	settle
	e0=$(port_events)
	host "$fill" 20000
	t0=$(now_ms)
	wait_event "$e0" "after the host sent 20000 bytes"
	m=$(wakeup_count 10)
	t1=$(now_ms)
	info "reader not reading: the port's source was released $((t1 - t0)) ms after the host sent 20000 bytes"
	[ $((t1 - t0)) -le 6000 ] || fail "the port's source stayed active $((t1 - t0)) ms for data nobody reads"
	n=$(wakeup_count)
	host every 200 "$write" MORE
	sid=$_host_seq
	sleep 3
	host cancel $sid
	m=$(wakeup_count 3)
	expect_eq "global wakeup_count while the sender kept sending to a stalled reader" "$m" "$n"
	echo "$n" >/sys/power/wakeup_count || fail "count $n rejected: data nobody reads was reported"
	info "ok: a sender nobody reads reports nothing once the line discipline stalled"
	timeout 8 cat <&3 >/tmp/drained
	got=$(wc -c </tmp/drained)
	info "the reader drained $got bytes"
	[ "$got" -ge 20000 ] || fail "only $got of the 20000 bytes (and more) arrived"
	settle
	n=$(wakeup_count)
	host "$write" AGAIN
	expect_eq "data after the drain" "$(timeout 5 head -c 5 <&3)" AGAIN
	if echo "$n" >/sys/power/wakeup_count 2>/dev/null; then
		fail "stale count $n accepted: data read again is no event after the stall"
	fi
	info "ok: once read again, received data is a wakeup event again"
}
