# Serial-port wakeup, test 1: the deterministic race. Read wakeup_count (N), have the host
# send bytes into ttyS1 (enabled for wakeup), wait until the guest has them,
# write N back. The data is a wakeup event, so the write must fail (patched).
# On the pristine kernel it succeeds: received data is not an event while the
# system is awake, and a power manager would suspend with the call unread.
. /tests/lib.sh
. /tests/serial-lib.sh
# The plan's first test: nothing has set ttyS1's hold yet, so this is the
# kernel's default, 0 (held until the line discipline takes the data).
pristine || expect_eq "default wakeup_hold_ms" "$(cat $TTY/wakeup_hold_ms)" 0
modem_open
modem_drain
settle
n=$(wakeup_count)
t0=$(now_ms)
host modem-write RING
got=$(timeout 5 head -c 4 <&3)
t1=$(now_ms)
expect_eq "bytes received" "$got" RING
if echo "$n" >/sys/power/wakeup_count 2>/dev/null; then
	accepted=yes
else
	accepted=no
fi
info "count $n read before the bytes arrived; written back after they were read ($((t1 - t0)) ms later): accepted=$accepted"
if pristine; then
	# The bug this series fixes: the stale count is accepted.
	expect_eq "pristine kernel accepts the stale count (the race)" "$accepted" yes
	m=$(wakeup_count)
	expect_eq "pristine: wakeup_count unchanged by received data" "$m" "$n"
	exit 0
fi
expect_eq "stale count rejected after data arrived" "$accepted" no
# The count moves once the hold ends (the source is deactivated).
t2=$(now_ms)
m=$(wakeup_count 5)
t3=$(now_ms)
info "wakeup_count read blocked $((t3 - t2)) ms (hold $(cat $TTY/wakeup_hold_ms) ms), count $n -> $m"
[ "$m" != "$n" ] || fail "count did not move after the port's event ($n)"
if echo "$n" >/sys/power/wakeup_count 2>/dev/null; then
	fail "stale count $n accepted after the count moved to $m"
fi
echo "$m" >/sys/power/wakeup_count || fail "fresh count $m rejected"
info "ok: fresh count $m accepted"
echo 0 >$TTY/wakeup_hold_ms
