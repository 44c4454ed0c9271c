# Serial-port wakeup, test 2: while received data is unread, the port's wakeup source is
# active and a read of wakeup_count blocks until the hold ends; then the
# port's statistics have grown by exactly what happened. Also: the hold is
# tunable per port (wakeup_hold_ms, bounded), every receive restarts it, and
# 0, the default, holds only until the line discipline has taken the data.
. /tests/lib.sh
. /tests/serial-lib.sh
[ -f $TTY/wakeup_hold_ms ] || fail "no $TTY/wakeup_hold_ms (kernel without the serial wakeup patch?)"
# The kernel's default (0) is asserted by serial-race, the plan's first test,
# before anything sets a hold; test 3 below checks what 0 does.
modem_open
modem_drain
settle
if echo 10001 >$TTY/wakeup_hold_ms 2>/dev/null; then fail "hold above 10000 ms accepted"; fi
if echo -1 >$TTY/wakeup_hold_ms 2>/dev/null; then fail "negative hold accepted"; fi
info "ok: out-of-range holds rejected"

# wait_active [0|1] SECONDS
wait_active() {
	local i=0
	while [ "$(port_stat active)" != "$1" ]; do
		i=$((i + 1))
		[ $i -le $(($2 * 100)) ] || fail "power/wakeup_active did not become $1 in $2 s"
		usleep 10000
	done
}

# 1. One receive, 1000 ms hold, data left unread.
echo 1000 >$TTY/wakeup_hold_ms
a0=$(port_stat active_count) e0=$(port_events) x0=$(port_stat expire_count)
n=$(wakeup_count)
host modem-write A
wait_active 1 5
t0=$(now_ms)
expect_eq "wakeup_active while data unread" "$(port_stat active)" 1
# A blocking read of wakeup_count must wait for the end of the hold.
m=$(wakeup_count 5)
t1=$(now_ms)
info "wakeup_count read blocked $((t1 - t0)) ms with a 1000 ms hold"
[ $((t1 - t0)) -ge 500 ] || fail "wakeup_count returned after $((t1 - t0)) ms, before the 1000 ms hold ended"
[ $((t1 - t0)) -le 3000 ] || fail "hold lasted $((t1 - t0)) ms, far beyond 1000 ms"
expect_eq "wakeup_active after the hold" "$(port_stat active)" 0
expect_eq "active_count growth" $(($(port_stat active_count) - a0)) 1
expect_eq "event_count growth" $(($(port_events) - e0)) 1
expect_eq "expire_count growth (hold ended by its timer)" $(($(port_stat expire_count) - x0)) 1
[ "$m" != "$n" ] || fail "global wakeup_count did not move ($n)"
expect_eq "data still there after the hold" "$(timeout 5 head -c 1 <&3)" A

# 2. A second receive at least 400 ms after the first: one activation, two
# events, and the hold restarted (without the restart the read would return
# less than 1000 ms after t0, the first hold having started before t0).
a0=$(port_stat active_count) e0=$(port_events)
host modem-write B
wait_active 1 5
t0=$(now_ms)
host after 400 modem-write C
m=$(wakeup_count 5)
t1=$(now_ms)
info "second receive >= 400 ms after the first: wakeup_count blocked $((t1 - t0)) ms"
[ $((t1 - t0)) -ge 1200 ] || fail "second receive did not restart the hold ($((t1 - t0)) ms)"
expect_eq "active_count growth (one activation)" $(($(port_stat active_count) - a0)) 1
expect_eq "event_count growth (two events)" $(($(port_events) - e0)) 2
expect_eq "data" "$(timeout 5 head -c 2 <&3)" BC

# 3. Hold 0 (the default): a receive while awake is a wakeup event held only
# until the line discipline has taken the data, which happens at once, read
# or not: the count moves, a count read before it is refused, and the source
# was released without a timer (the data is still unread when we check).
echo 0 >$TTY/wakeup_hold_ms
settle
n=$(wakeup_count) e0=$(port_events) a0=$(port_stat active_count) x0=$(port_stat expire_count)
host modem-write D
wait_event "$e0" "after the host wrote (hold 0)"
m=$(wakeup_count 2)
[ "$m" != "$n" ] || fail "hold 0: global wakeup_count did not move ($n)"
expect_eq "hold 0: event_count growth" $(($(port_events) - e0)) 1
expect_eq "hold 0: active_count growth" $(($(port_stat active_count) - a0)) 1
expect_eq "hold 0: expire_count growth (released when taken, no timer)" $(($(port_stat expire_count) - x0)) 0
if echo "$n" >/sys/power/wakeup_count 2>/dev/null; then
	fail "hold 0: stale count $n accepted although data arrived"
fi
expect_eq "data (hold 0), read after the checks" "$(timeout 5 head -c 1 <&3)" D
info "ok: hold 0 holds until the line discipline takes the data"

# 4. Closing the port ends a running hold (the data goes with it).
echo 5000 >$TTY/wakeup_hold_ms
host modem-write E
wait_active 1 5
exec 3<&-
wait_active 0 2
info "ok: last close ends the hold"
echo 0 >$TTY/wakeup_hold_ms
