# Serial-port wakeup, series v3 (the bound on unread data): a sender cannot keep the
# system awake through a line discipline that takes its data while nobody
# reads it. ttyS1 (enabled for wakeup, wakeup_hold_ms 0) is in canonical mode
# with a reader blocked in read() for a line that never comes: the host first
# sends 6000 bytes without a newline (n_tty keeps a 4 KB line, then takes and
# discards every further byte, reporting it taken), then keeps sending 200
# bytes every 200 ms. Received data is reported for one second of a stream
# nobody reads (then the RX source's event count must stop moving: within
# 3 s here, to allow for TCG), a count read after that is accepted 1 s later
# although the host kept sending, and a suspend-to-idle through the
# wakeup_count handshake succeeds within 10 attempts (the host's bytes wake
# the guest again at once: bytes wake suspend-to-idle on any kernel). Without
# the bound every push is an event and no handshake succeeds while the host
# sends. Patched kernel only (the pristine kernel reports no receive while
# awake at all).
. /tests/lib.sh
. /tests/serial-lib.sh
[ -f $TTY/wakeup_hold_ms ] || fail "no $TTY/wakeup_hold_ms (kernel without the serial wakeup patch?)"
rx=$(rx_ws_dir) || fail "ttyS1 has no RX wakeup source (ttyS1-rx) under $TTY"
stty -F /dev/ttyS1 115200 icanon -echo -icrnl -inlcr -ixon -ixoff || fail "stty on ttyS1"
exec 3<>/dev/ttyS1
echo enabled >$TTY/power/wakeup || fail "cannot enable wakeup on ttyS1"
echo 0 >$TTY/wakeup_hold_ms
cat <&3 >/tmp/unread.out 2>&1 &
reader=$!
settle
e0=$(cat "$rx/event_count")
t0=$(now_ms)
host modem-fill 6000
host every 200 modem-fill 200
sid=$_host_seq
i=0
while [ "$(cat "$rx/event_count")" = "$e0" ]; do
	i=$((i + 1))
	[ $i -le 500 ] || fail "no wakeup event 5 s after the host started sending"
	usleep 10000
done
info "the stream was reported $(($(now_ms) - t0)) ms after the host started sending"
# Wait until the RX source's event count has not moved for 1 s.
last=$(cat "$rx/event_count") tlast=$(now_ms) still=0
while [ $still -lt 4 ]; do
	usleep 250000
	e=$(cat "$rx/event_count")
	if [ "$e" = "$last" ]; then
		still=$((still + 1))
	else
		last=$e tlast=$(now_ms) still=0
	fi
	[ $(($(now_ms) - t0)) -le 15000 ] ||
		fail "the stream nobody reads was still reported $(($(now_ms) - t0)) ms after it started ($((last - e0)) events)"
done
bound=$((tlast - t0))
info "measured: received data nobody reads reported for $bound ms of the stream ($((last - e0)) events on ttyS1-rx), then not at all"
[ $bound -le 3000 ] || fail "reported for $bound ms of a stream nobody reads (bound: one second)"
n=$(wakeup_count 3)
sleep 1
echo "$n" >/sys/power/wakeup_count || fail "count $n rejected: the stream nobody reads was still reported"
expect_eq "RX source events while the host kept sending" "$(cat "$rx/event_count")" "$last"
info "ok: a count read under the stream is accepted 1 s later"
ok=0 try=0 s0=$(suspend_stat success)
while [ $try -lt 10 ]; do
	try=$((try + 1))
	n=$(timeout 3 cat /sys/power/wakeup_count) || continue
	echo "$n" >/sys/power/wakeup_count 2>/dev/null || continue
	if echo freeze >/sys/power/state 2>/dev/null; then ok=1; break; fi
done
t1=$(now_ms)
host cancel $sid
[ $ok = 1 ] || fail "no suspend-to-idle in $try attempts under a stream nobody reads ($(suspend_stat fail) failed)"
info "ok: suspended (freeze) at attempt $try, $((t1 - t0)) ms after the host started sending; suspend_stats/success $s0 -> $(suspend_stat success)"
[ ! -s /tmp/unread.out ] || fail "the canonical reader got data: $(head -c 80 /tmp/unread.out)"
kill $reader 2>/dev/null
wait $reader 2>/dev/null
exec 3<&-
stty -F /dev/ttyS1 raw -echo 115200 || fail "stty on ttyS1"
