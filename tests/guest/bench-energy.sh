# `make bench`, energy (bench/README.md §6), guest side;
# run by bench-guest.sh at its end.  The system sleeps in ACPI S3 (`mem`,
# `deep`): in this QEMU guest the RTC, and so a wake alarm, ends S3 but not
# suspend-to-idle.  bench/run.py reads QEMU's SUSPEND/WAKEUP events (time
# asleep on the host's clock) and plays the modem: it writes incoming calls
# into ttyS1; a call that finds the guest in S3 (or sees it enter S3
# unanswered) wakes it (QMP system_wakeup: QEMU does not wake S3 on a serial
# byte) and is written 300 ms after the wake-up.
#
#   BENCHCTL energy calib wW / calib-end wW  the bare S3 loop, W ms of work
#   BENCHCTL energy begin TAG / end TAG      a workload (printed by wl-energy)
#   ELEDGER TAG RECORD                       `wakelock wakes --json` after TAG, a record a line
# Workloads: one (1 client), ten (10 aligned clients), calls (10 aligned
# clients + random incoming calls, answered by modem-client).
. /tests/bench-lib.sh
# PERIOD WINDOW SPREAD WORK FIRST: client i of N is first due
# FIRST + i*SPREAD/(N-1) ms after the start, then every PERIOD, WINDOW late
# at most; SPREAD < WINDOW: all windows share [FIRST+SPREAD, FIRST+WINDOW].
# A workload ends at the wake-up of its clients' last fire (FIRES each).
if [ -n "$quick" ]; then
	calib=3 calib0=0 P=5000 W=2500 S=1500 WORK=300 FIRST=3000 alarm_periods=2 call_periods=3
else
	calib=8 calib0=5 P=8000 W=3000 S=2000 WORK=300 FIRST=4000 alarm_periods=6 call_periods=10
fi
CALL_WORK=$WORK BARE_SLEEP=3000

grep -q deep /sys/power/mem_sleep || skip "no ACPI S3 (mem_sleep: $(cat /sys/power/mem_sleep))"
# The modem port, raw; NOT enabled for wakeup: serial_core leaves a wakeup
# port powered through suspend (no shutdown, no startup on resume), and
# QEMU resets the UART on resume from S3, so such a port receives nothing
# afterwards (seen: rx count frozen after one S3 cycle).  Not a loss here:
# QEMU does not wake S3 on a serial byte anyway (the host wakes the guest),
# and the modem client, as root, holds the wake-up with EPOLLWAKEUP.
modem_open
echo disabled >/sys/class/tty/ttyS1/power/wakeup
# No PM debug lines on the serial console: they would lengthen every cycle.
echo 0 >/sys/power/pm_debug_messages
echo 4 >/proc/sys/kernel/printk
echo deep >/sys/power/mem_sleep
echo bench-energy >/sys/power/wake_lock
trap 'kill $client $daemon 2>/dev/null; echo bench-energy >/sys/power/wake_lock' EXIT

# The platform's cost of a wake-up, no daemon: resume + WORK + suspend (the
# ideal's cost per wake-up), and resume + suspend alone.
bare() {
	msg "energy: bare S3 loop, $1 cycles, each woken by the RTC after $BARE_SLEEP ms, $2 ms of work"
	ctl energy calib w$2
	echo bench-energy >/sys/power/wake_unlock
	wl-energy bare $1 $BARE_SLEEP $2 || fail "wl-energy bare"
	echo bench-energy >/sys/power/wake_lock
	ctl energy calib-end w$2
}
bare $calib $WORK
[ $calib0 -gt 0 ] && bare $calib0 0

start_daemon --state mem --mem-sleep deep --min-awake-ms 0 --log-level warn
# The ledger, one record a line, straight to the console (the test's own
# output reaches it later, through a pipe, and would interleave).
ledger() {
	wakelock wakes --json | awk '{ sub(/^\[/, ""); sub(/\]$/, ""); gsub(/\},\{"seq"/, "}\n{\"seq\""); print }' |
		while read -r rec; do echo "ELEDGER $1 $rec" >/dev/console; done
}

msg "energy: 1 client, alarms every $P ms, window $W ms, $alarm_periods periods"
wl-energy alarms one 1 $P $W $S $WORK $FIRST $alarm_periods || fail "wl-energy alarms one"
ledger one
msg "energy: 10 aligned clients, overlapping windows"
wl-energy alarms ten 10 $P $W $S $WORK $FIRST $alarm_periods || fail "wl-energy alarms ten"
ledger ten

msg "energy: 10 aligned clients + random incoming calls, $call_periods periods"
wlbench drain /dev/ttyS1 >/dev/null
modem-client --tty /dev/ttyS1 --work-ms $CALL_WORK --name modem --verbose 2>/tmp/modem.log &
client=$!
i=0
until grep -q listening /tmp/modem.log; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "modem-client did not start: $(cat /tmp/modem.log)"
	sleep 0.1
done
echo "BENCH energy_call_work n=1 median=$CALL_WORK p99=$CALL_WORK unit=ms"
wl-energy alarms calls 10 $P $W $S $WORK $FIRST $call_periods || fail "wl-energy alarms calls"
ledger calls
sed 's/^/modem-client: /' /tmp/modem.log | tail -5
grep '^1:' /proc/tty/driver/serial 2>/dev/null
kill $client
wait $client 2>/dev/null
client=
kill -TERM $daemon
wait $daemon
daemon=
grep -v '^$' /tmp/daemon.log | tail -5
exit 0
