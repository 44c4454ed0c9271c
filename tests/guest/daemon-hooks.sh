# wakelockd's hooks on a real kernel.  The pre-suspend hook reports a
# wakeup event every time it runs (a kernel wake lock taken and dropped):
# the daemon must still suspend, as the hook runs before wakeup_count is
# read.  The post-resume hook runs exactly once per resume: after N
# suspends its file has N lines.  The host wakes the guest from
# suspend-to-idle through the modem every 2 s.
. /tests/lib.sh
N=3
json_field() { sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p" /run/wakelockd/stats.json; }
lines() { if [ -f "$1" ]; then wc -l <"$1"; else echo 0; fi; }

modem_open
cat >/tmp/pre-hook <<'EOF'
#!/bin/sh
echo hook-event >/sys/power/wake_lock
echo hook-event >/sys/power/wake_unlock
echo "$1 $WAKELOCKD_PHASE" >>/tmp/pre.lines
EOF
cat >/tmp/post-hook <<'EOF'
#!/bin/sh
echo "$1 $WAKELOCKD_PHASE" >>/tmp/post.lines
EOF
chmod +x /tmp/pre-hook /tmp/post-hook
rm -f /tmp/pre.lines /tmp/post.lines
printf '[suspend]\npre_suspend_hook = /tmp/pre-hook\npost_resume_hook = /tmp/post-hook\nhook_timeout_ms = 3000\n' \
	>/tmp/hooks.conf

# Nothing sleeps until all is set up.
echo daemon-hooks >/sys/power/wake_lock
wake_id=
trap 'kill $daemon 2>/dev/null; [ -z "$wake_id" ] || host cancel $wake_id' EXIT
start_daemon --config /tmp/hooks.conf --state freeze --min-awake-ms 300 \
	--stats-file /run/wakelockd/stats.json --log-level info
base=$(suspend_stat success)
host every 2000 modem-write W
wake_id=$_host_seq
echo daemon-hooks >/sys/power/wake_unlock

# The shell runs only while the system is awake: this bounds awake time.
i=0
until [ $(( $(suspend_stat success) - base )) -ge $N ]; do
	i=$((i + 1))
	[ $i -lt 600 ] || fail "$(( $(suspend_stat success) - base )) of $N suspends; \
pre-suspend hook ran $(lines /tmp/pre.lines) times; $(tail -5 /tmp/daemon.log)"
	sleep 0.1
done
# Keep the system awake from here on (the daemon's read of wakeup_count
# blocks), stop the wake-ups, and stop the daemon: it waits for a hook
# still running, and writes its statistics.
echo daemon-hooks >/sys/power/wake_lock
host cancel $wake_id
wake_id=
kill -TERM $daemon
wait $daemon
expect_eq "daemon exit status after SIGTERM" $? 0
echo daemon-hooks >/sys/power/wake_unlock
trap - EXIT

n=$(( $(suspend_stat success) - base ))
info "suspends: $n"
info "daemon stats: $(head -c 300 /run/wakelockd/stats.json)"
[ "$n" -ge $N ] || fail "only $n suspends"
expect_eq "daemon successes = kernel suspend_stats delta" "$(json_field successes)" "$n"
expect_eq "post-resume hook runs = suspends" "$(lines /tmp/post.lines)" "$n"
expect_eq "post-resume hook lines that are not 'post-resume post-resume'" \
	"$(grep -cvx 'post-resume post-resume' /tmp/post.lines)" 0
pre=$(lines /tmp/pre.lines)
[ "$pre" -ge "$n" ] || fail "pre-suspend hook ran $pre times for $n suspends"
expect_eq "pre-suspend hook lines that are not 'pre-suspend pre-suspend'" \
	"$(grep -cvx 'pre-suspend pre-suspend' /tmp/pre.lines)" 0
info "ok: pre-suspend hook ran $pre times (once per attempt; its own wakeup events did not stop the suspends)"
