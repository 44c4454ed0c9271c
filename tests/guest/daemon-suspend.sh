# wakelockd on a real kernel: no suspend while a client holds the system
# awake; a holder killed with SIGKILL lets it suspend; the daemon's counts
# agree with the kernel's suspend_stats; SIGTERM stops it without suspending.
. /tests/lib.sh
modem_open
pm_trace_on
json_field() { sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p" /run/wakelockd/stats.json; }

# Until our client holds, a kernel wakelock keeps the daemon's read of
# wakeup_count blocked: a daemon with nothing to wait for suspends at once.
echo daemon-test-start >/sys/power/wake_lock
start_daemon --state freeze --min-awake-ms 3000 \
	--stats-file /run/wakelockd/stats.json --log-level info
start_holder test-holder /tmp/holder.out
echo daemon-test-start >/sys/power/wake_unlock
base=$(suspend_stat success)
sleep 3
expect_eq "suspends while a client holds" $(( $(suspend_stat success) - base )) 0
wakelock list | grep -q test-holder || fail "wakelock list does not show the holder: $(wakelock list)"
info "ok: wakelock list shows test-holder"

# Kill the holder at once: the daemon must reap it and suspend; the host
# wakes the guest through the modem as soon as it reaches the idle loop.
host when suspend-to-idle modem-write WAKE
kill -9 $holder
i=0
until [ "$(suspend_stat success)" -gt "$base" ]; do
	i=$((i + 1)); [ $i -lt 300 ] || fail "no suspend within 30 s after the holder died"
	sleep 0.1
done
info "ok: suspended after the holder was killed"
# Inside the 3 s minimum awake time: take a hold again so nothing more sleeps.
wl-guest-hold test-holder2 >/tmp/holder2.out 2>&1 &
holder2=$!
sleep 0.5
grep -q held /tmp/holder2.out || fail "second holder failed: $(cat /tmp/holder2.out)"
got=$(timeout 5 head -c 4 <&3)
expect_eq "wake bytes read" "$got" WAKE

kill -USR1 $daemon; sleep 0.3
expect_eq "daemon successes = kernel suspend_stats delta" \
	"$(json_field successes)" $(( $(suspend_stat success) - base ))
info "daemon stats: $(cat /run/wakelockd/stats.json | head -c 300)"
# Stop the daemon while holder2 still holds: released first, the hold
# would let the daemon suspend before SIGTERM arrives, and nothing would
# wake the guest from that suspend.
kill -TERM $daemon
wait $daemon
expect_eq "daemon exit status after SIGTERM" $? 0
kill $holder2
after=$(suspend_stat success)
sleep 1
expect_eq "no suspend after the daemon stopped" "$(suspend_stat success)" "$after"
