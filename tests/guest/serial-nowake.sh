# Serial-port wakeup, test 5: a port not enabled for wakeup (power/wakeup = disabled, the
# default) behaves exactly as before: received data is no wakeup event, holds
# nothing, and a count read before it can still be written back. The console
# port (ttyS0) is not enabled for wakeup either and keeps working (this
# test's own output goes through it).
. /tests/lib.sh
. /tests/serial-lib.sh
stty -F /dev/ttyS1 raw -echo 115200 || fail "stty on ttyS1"
exec 3<>/dev/ttyS1
echo disabled >$TTY/power/wakeup || fail "cannot disable wakeup on ttyS1"
expect_eq "ttyS1 power/wakeup" "$(cat $TTY/power/wakeup)" disabled
expect_eq "ttyS0 (console) power/wakeup" "$(cat /sys/class/tty/ttyS0/power/wakeup)" disabled
modem_drain
settle
n=$(wakeup_count)
host modem-write QUIET
expect_eq "bytes received" "$(timeout 5 head -c 5 <&3)" QUIET
expect_eq "wakeup_active of a disabled port" "$(cat $TTY/power/wakeup_active)" ""
# Nothing is held: the read returns at once, with the same count.
t0=$(now_ms)
m=$(wakeup_count 2)
t1=$(now_ms)
expect_eq "global wakeup_count after data on a disabled port" "$m" "$n"
info "wakeup_count read took $((t1 - t0)) ms (nothing held)"
[ $((t1 - t0)) -lt 4000 ] || fail "wakeup_count read blocked $((t1 - t0)) ms"
echo "$n" >/sys/power/wakeup_count || fail "count $n rejected although no event happened"
info "ok: count $n still accepted after data on a disabled port"
# A burst, then the same checks again.
host modem-write 0123456789abcdef0123456789abcdef
expect_eq "burst received" "$(timeout 5 head -c 32 <&3)" 0123456789abcdef0123456789abcdef
expect_eq "global wakeup_count after a burst" "$(wakeup_count 2)" "$n"
exec 3<&-
