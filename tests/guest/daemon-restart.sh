# wakelockd killed (-9) and started again while a client holds: the
# client's library registers with the new daemon on its own, bringing the
# names of its holds (the holds themselves are in its region), and the new
# daemon must not suspend until the hold goes (here: the holder killed),
# then must.
. /tests/lib.sh
modem_open
pm_trace_on

echo daemon-restart-start >/sys/power/wake_lock
start_daemon --state freeze --min-awake-ms 3000 --log-level info
start_holder restart-holder /tmp/holder.out
echo daemon-restart-start >/sys/power/wake_unlock
base=$(suspend_stat success)

kill -9 $daemon
wait $daemon 2>/dev/null
wakelockd --foreground --state freeze --min-awake-ms 3000 --log-level info 2>/tmp/daemon2.log &
daemon=$!
i=0
until grep -q 'running:' /tmp/daemon2.log; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "the second wakelockd did not start: $(cat /tmp/daemon2.log)"
	sleep 0.1
done
grep -q 'did not exit cleanly' /tmp/daemon2.log ||
	fail "the second wakelockd did not wait for its predecessor's clients: $(cat /tmp/daemon2.log)"
# Longer than the restart grace (3 s): the hold, not the grace, keeps the
# system awake now.
sleep 5
expect_eq "suspends since the kill while the client holds" $(( $(suspend_stat success) - base )) 0
wakelock list | grep -q restart-holder ||
	fail "the holder is not registered with the new daemon: $(wakelock list)"
info "ok: the holder re-registered with the new daemon"

# The hold goes: the new daemon suspends; the host wakes the guest through
# the modem once it is in the idle loop.
host when suspend-to-idle modem-write WAKE
kill -9 $holder
i=0
until [ "$(suspend_stat success)" -gt "$base" ]; do
	i=$((i + 1)); [ $i -lt 300 ] || fail "no suspend within 30 s after the hold went"
	sleep 0.1
done
info "ok: suspended once the hold went"
# Inside the 3 s minimum awake time: a kernel wake lock, so nothing sleeps
# again before the daemon is stopped.
echo daemon-restart-end >/sys/power/wake_lock
got=$(timeout 5 head -c 4 <&3)
expect_eq "wake bytes read" "$got" WAKE
kill -TERM $daemon
wait $daemon
expect_eq "daemon exit status after SIGTERM" $? 0
echo daemon-restart-end >/sys/power/wake_unlock
