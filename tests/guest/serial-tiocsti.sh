# Serial-port wakeup, bug 2 of the v2 review: TIOCSTI (and vt selection) take
# the flip buffer exclusively (tty_buffer_lock_exclusive()), and
# flush_to_ldisc() stops at once when they do, before its drained check: a
# port whose data had all been taken kept its RX source held, and every read
# of wakeup_count blocked until the next byte.
#  1. TIOCSTI on a drained port: a read of wakeup_count then returns (3 s
#     bound), and again after the injected bytes were read.
#  2. TIOCSTI racing received data: 20 rounds of a host burst while 2000
#     TIOCSTIs run; once everything is read, wakeup_count must not block.
# On the pristine kernel (no RX wakeup) the same reads must not block either.
. /tests/lib.sh
. /tests/serial-lib.sh
# check WHAT GOT WANT: expect_eq without the ok line (run once a round).
check() { [ "$2" = "$3" ] || fail "$1: got '$2', expected '$3'"; }
command -v wl-tiocsti >/dev/null || fail "no wl-tiocsti in the image (build/guest/bin)"
modem_open 0
modem_drain
settle

# 1. A drained port.
n=$(wakeup_count 3)
pushed=$(wl-tiocsti /dev/ttyS1 8) || fail "TIOCSTI on ttyS1 failed"
expect_eq "bytes pushed with TIOCSTI" "$pushed" 8
timeout 3 cat /sys/power/wakeup_count >/dev/null ||
	fail "wakeup_count blocked 3 s after TIOCSTI on a drained port"
expect_eq "TIOCSTI bytes read" "$(timeout 5 head -c 8 <&3)" ssssssss
m=$(timeout 3 cat /sys/power/wakeup_count) ||
	fail "wakeup_count blocked 3 s after the TIOCSTI bytes were read"
info "ok: TIOCSTI on a drained port leaves wakeup_count readable ($n -> $m)"

# 2. TIOCSTI racing the worker.
i=0 size=400 sti=2000
while [ $i -lt 20 ]; do
	i=$((i + 1))
	host modem-fill $size
	wl-tiocsti /dev/ttyS1 $sti >/dev/null || fail "round $i: TIOCSTI failed"
	got=$(timeout 10 head -c $((size + sti)) <&3 | wc -c)
	check "round $i: bytes read" "$got" $((size + sti))
	timeout 3 cat /sys/power/wakeup_count >/dev/null ||
		fail "round $i: wakeup_count blocked 3 s once everything was read (source left held)"
	if ! pristine; then
		rx=$(rx_ws_dir) || fail "no RX wakeup source"
		check "round $i: RX source active" "$(cat "$rx/active_time_ms")" 0
	fi
done
info "ok: 20 rounds of $size received bytes racing $sti TIOCSTIs: wakeup_count never blocked once all was read"
