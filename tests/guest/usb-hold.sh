# USB serial wakeup, test 2: what ttyUSB0's wakeup source does.
#  1. wakeup_hold_ms is bounded (0..10000).
#  2. Set to 1000, a receive holds for that long (a reader that only read()s
#     gets the time to run), ended by the timer.
#  3. Closing the port ends a running hold.
#  4. With power/wakeup disabled, received data is no event at all.
. /tests/lib.sh
. /tests/serial-lib.sh
. /tests/usb-lib.sh
usb_open
modem_drain
settle
if echo 10001 >$TTY/wakeup_hold_ms 2>/dev/null; then fail "hold above 10000 ms accepted"; fi
if echo -1 >$TTY/wakeup_hold_ms 2>/dev/null; then fail "negative hold accepted"; fi
expect_eq "wakeup_hold_ms after refused writes" "$(cat $TTY/wakeup_hold_ms)" 0

# 2. A 1000 ms hold after the receive.
echo 1000 >$TTY/wakeup_hold_ms
x0=$(port_stat expire_count)
host usb-write A
expect_eq "data" "$(timeout 5 head -c 1 <&3)" A
t0=$(now_ms)
m=$(wakeup_count 5)
t1=$(now_ms)
info "wakeup_count read blocked $((t1 - t0)) ms after the data was read, 1000 ms hold"
[ $((t1 - t0)) -ge 300 ] || fail "hold ended $((t1 - t0)) ms after the read, before its 1000 ms"
[ $((t1 - t0)) -le 3000 ] || fail "hold lasted $((t1 - t0)) ms, far beyond 1000 ms"
expect_eq "expire_count growth (hold ended by its timer)" $(($(port_stat expire_count) - x0)) 1

# 3. The last close ends a 5 s hold.
echo 5000 >$TTY/wakeup_hold_ms
host usb-write B
expect_eq "data" "$(timeout 5 head -c 1 <&3)" B
expect_eq "wakeup_active during a 5 s hold" "$(port_stat active)" 1
exec 3<&-
t0=$(now_ms)
settle 3
info "ok: last close ended the hold ($(($(now_ms) - t0)) ms)"
echo 0 >$TTY/wakeup_hold_ms

# 4. Disabled: nothing reported.
exec 3<>/dev/ttyUSB0
echo disabled >$WS_DIR/wakeup || fail "cannot disable wakeup on ttyUSB0"
settle
n=$(wakeup_count)
host usb-write QUIET
expect_eq "data on a disabled port" "$(timeout 5 head -c 5 <&3)" QUIET
expect_eq "global wakeup_count after data on a disabled port" "$(wakeup_count 2)" "$n"
echo "$n" >/sys/power/wakeup_count || fail "count $n rejected although no event happened"
info "ok: a port not enabled for wakeup reports nothing"
