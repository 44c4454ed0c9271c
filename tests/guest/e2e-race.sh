# Guest side of the end-to-end incoming-call race test (tests/e2e/race.py,
# docs/e2e.md). Not a self-judging test: it sets the configuration up, tells
# the host, and reports the kernel's suspend statistics when the host stops
# the run. Parameters come from the kernel command line (no dots in names):
#   wle2e=wakelockd|naive     power manager + client pair (default wakelockd)
#   wlclient=ARGS             extra modem-client options, ',' for ' '
#                             (e.g. --no-epollwakeup,--no-hold)
#   wlwork=MS                 the client's work per call (default 20)
#   wluser=NAME               run modem-client as NAME (not root, in the
#                             daemon's group and the modem's, so without
#                             CAP_BLOCK_SUSPEND: the kernel ignores its
#                             EPOLLWAKEUP, as for a deployment's client)
#   wlhold=MS                 ttyS1 wakeup_hold_ms, where the kernel has it
#                             (default 500; the kernel's own default, 0,
#                             holds until the line discipline takes the data)
#   wldaemon=ARGS             extra wakelockd options, ',' for ' '
#   wllogind=1                start the system bus and elogind first (the
#                             logind image; the client may take inhibitors:
#                             wlclient=--logind,block)
#   wlrunms=MS                how long the naive loop runs (the host sets it
#                             to the schedule's length plus the bound)
# Lines for the host start with "@@E2E" and go straight to /dev/console (the
# TAP comment pipe may be frozen by a suspend before it prints them); the run
# ends when the host sends "EXIT" to the client on the modem line (then, with
# wakelockd, one more wake without a client and "DONE"; the guest reports the
# wake ledger, "@@E2E WAKE {record}" per suspend attempt).
. /tests/lib.sh
param() { tr ' ' '\n' </proc/cmdline | sed -n "s/^$1=//p" | tail -n 1; }
mode=$(param wle2e); mode=${mode:-wakelockd}
work=$(param wlwork); work=${work:-20}
client_args=$(param wlclient | tr ',' ' ')
daemon_args=$(param wldaemon | tr ',' ' ')
hold=$(param wlhold); hold=${hold:-500}
user=$(param wluser)
run_ms=$(param wlrunms)
logind=$(param wllogind)
TTY=/sys/class/tty/ttyS1

stats() {
	printf 'success=%s fail=%s failed_freeze=%s failed_suspend=%s' \
		"$(suspend_stat success)" "$(suspend_stat fail)" \
		"$(suspend_stat failed_freeze)" "$(suspend_stat failed_suspend)"
	printf ' wakeup_irq=%s' "$(cat /sys/power/pm_wakeup_irq 2>/dev/null || echo none)"
	printf ' port_hold_ms=%s' "$(cat $TTY/wakeup_hold_ms 2>/dev/null || echo none)"
	[ -n "${client_pid:-}" ] && [ -e /proc/$client_pid/status ] &&
		awk '$1 == "Uid:" { u = $2 } $1 == "CapEff:" { c = $2 }
		     END { printf " client_uid=%s client_capeff=%s", u, c }' /proc/$client_pid/status
	for ws in /sys/class/wakeup/*; do
		[ "$(cat "$ws/name" 2>/dev/null)" = ttyS1 ] || continue
		printf ' ttyS1_events=%s' "$(cat "$ws/event_count")"
	done
}

stty -F /dev/ttyS1 raw -echo 115200 || fail "stty on ttyS1"
exec 4</dev/ttyS1
echo enabled >$TTY/power/wakeup || fail "cannot enable wakeup on ttyS1"
if [ -n "$hold" ]; then
	if [ -w $TTY/wakeup_hold_ms ]; then
		echo "$hold" >$TTY/wakeup_hold_ms || fail "wakeup_hold_ms=$hold refused"
	else
		info "this kernel has no $TTY/wakeup_hold_ms (pristine?): wlhold ignored"
	fi
fi
info "ttyS1 wakeup_hold_ms: $(cat $TTY/wakeup_hold_ms 2>/dev/null || echo none)"
# The host builds its timeline from the kernel's PM messages
# ("PM: suspend-to-idle", "PM: resume from suspend-to-idle").
echo 1 >/sys/power/pm_debug_messages || fail "no /sys/power/pm_debug_messages"
echo 8 >/proc/sys/kernel/printk

report() { echo "@@E2E $*" >/dev/console; }

# Set-up under a kernel wake lock (PM_WAKELOCKS is in the guest config): the
# daemon's wakeup_count read blocks while it is held, so nothing suspends
# before the client listens. The naive loop ignores it, so it starts last.
echo e2e-setup >/sys/power/wake_lock || fail "no /sys/power/wake_lock"
[ "$logind" = 1 ] && start_logind
case $mode in
wakelockd)
	# As aggressive as it gets: no grace period after resume, short backoff.
	# The wakelock group may block suspend, as in a deployment.
	# The claim window is the race's own bound for an answer (2 s): a call
	# answered in time is claimed in time.
	printf '[ledger]\nclaim_window_ms = 2000\n' >/tmp/e2e.conf
	wakelockd --config /tmp/e2e.conf --state freeze --min-awake-ms 0 --backoff-initial-ms 10 \
		--backoff-factor 2 --backoff-max-ms 200 --log-level warn --group wakelock \
		--stats-file /run/wakelockd-stats.json $daemon_args ||
		fail "wakelockd did not start"
	pm_pid=$(cat /run/wakelockd/wakelockd.pid)
	# Phone policy (configuration u): the race runs beside a display that
	# exists (vkms) and is off, as on a phone in a pocket.
	case " $daemon_args " in *" --policy phone "*)
		st=$(wakelock status)
		echo "$st" | grep -q '^policy phone' || fail "wakelockd is not in phone policy: $(echo $st)"
		echo "$st" | grep -q 'display.*display off' || fail "no display, or not off: $(echo $st)"
		info "policy: $(echo "$st" | grep 'display')" ;;
	esac
	if [ -n "$user" ]; then
		# The modem belongs to dialout, as on a distribution. su drops
		# every capability with root's uid; the process is modem-client
		# itself (su and sh -c exec).
		chgrp dialout /dev/ttyS1 && chmod 660 /dev/ttyS1 ||
			fail "cannot give /dev/ttyS1 to dialout"
		su "$user" -c "exec modem-client --work-ms $work $client_args" &
	else
		modem-client --work-ms "$work" $client_args &
	fi
	client_pid=$!
	;;
naive)
	naive-client --work-ms "$work" &
	client_pid=$!
	;;
*) fail "unknown wle2e=$mode" ;;
esac
# Listening = the client has the modem open (and, with wakelockd, its socket).
for _ in $(seq 50); do
	fds=$(ls -l /proc/$client_pid/fd 2>/dev/null)
	case $fds in *ttyS1*) ;; *) sleep 0.1; continue ;; esac
	[ "$mode" = naive ] || case $fds in *socket:*) ;; *) sleep 0.1; continue ;; esac
	break
done
sleep 0.2
kill -0 "$client_pid" 2>/dev/null || fail "the client died at start"
if [ "$mode" = wakelockd ]; then
	# Resume notifications: a client that only listens, one line each.
	example-resume e2e-resume 1000000 >/tmp/resume.log 2>&1 &
	resume_pid=$!
	for _ in $(seq 50); do wakelock list 2>/dev/null | grep -q e2e-resume && break; sleep 0.1; done
fi
report "READY mode=$mode work=$work client=$(echo $client_args | tr ' ' ,) $(stats) boot_s=$(cut -d' ' -f1 /proc/uptime)"
if [ "$mode" = naive ]; then
	# It stops by itself: between two of its suspends neither this shell nor
	# the client may get to run for minutes, so a kill could come too late.
	naive-suspend --state freeze ${run_ms:+--run-ms $run_ms} &
	pm_pid=$!
fi
echo e2e-setup >/sys/power/wake_unlock

# The host ends the run with "EXIT" on the modem: the client exits. (Not on
# the control port: a port that is not enabled for wakeup is shut down at
# every suspend, and the bytes it had are lost.) Then stop suspending, report.
# This shell keeps ttyS1 open (fd 4, never read): once the client has exited
# the port must stay open, or the host's bytes could no longer wake us.
wait "$client_pid"
if [ "$mode" = wakelockd ]; then
	# The wake ledger's unclaimed case: with the client gone the daemon keeps
	# suspending, and the host wakes the guest once more through ttyS1 (now
	# without a client: this shell reads the port, but takes no hold). The
	# host says DONE when the claim window of that wake is over.
	report IDLE
	while read -t 120 -r line <&4; do
		case $line in *DONE*) break ;; esac
	done
fi
echo e2e-end >/sys/power/wake_lock
if [ "$mode" = wakelockd ]; then
	# Every attempt's record, one per line (the kernel wake lock above keeps
	# the guest awake meanwhile, and is no claim).
	wakelock wakes --json | tr -d '\n' | sed -e 's/^\[//' -e 's/\]$//' -e 's/},{"seq"/}\n{"seq"/g' |
		while IFS= read -r rec || [ -n "$rec" ]; do report "WAKE $rec"; done
	kill "$resume_pid" 2>/dev/null
	while IFS= read -r line; do report "RESUME $line"; done </tmp/resume.log
fi
kill "$pm_pid" 2>/dev/null
for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$pm_pid" 2>/dev/null || break; sleep 0.1; done
report "END $(stats)"
[ -f /run/wakelockd-stats.json ] && report "DAEMON $(tr -d '\n' </run/wakelockd-stats.json)"
echo e2e-end >/sys/power/wake_unlock
exit 0
