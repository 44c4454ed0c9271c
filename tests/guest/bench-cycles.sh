# The CPU per suspend cycle of wakelockd and of the bare loop (make bench,
# bench/README.md §3): run by bench-guest.sh (WLBENCH_INSIDE=1: ttyS1 is
# open, the kernel wake lock bench-keep held, no daemon running), or as
# the plan bench-cycles alone (bench/run.py --plan bench-cycles), which
# sets that up first.  The host wakes each suspend through ttyS1 while a
# phase is armed (BENCHCTL, as in bench-guest.sh).
. /tests/bench-lib.sh
if [ -n "$quick" ]; then cycle_s=6; else cycle_s=40; fi
printf '[access]\nmax_clients_per_uid = 1024\n' >/tmp/bench.conf

if [ -z "$WLBENCH_INSIDE" ]; then
	bench_kernel_line
	modem_open
	echo bench-keep >/sys/power/wake_lock
fi

# daemon_cycles PHASE NAME: the daemon (started, a keeper holding, the
# kernel wake lock dropped) suspends as often as it can for cycle_s; prints
# "BENCH NAME" with its CPU per suspend cycle and stops it.
daemon_cycles() {
	s0=$(suspend_stat success)
	ctl arm "$1"
	kill $keeper
	# From the end of the first cycle: a fresh daemon's first snapshot
	# reads every source's name, once in its life.
	_i=0
	while [ "$(suspend_stat success)" = "$s0" ]; do
		_i=$((_i + 1)); [ $_i -lt 100 ] || fail "no suspend through wakelockd ($1) in 10 s"
		sleep 0.1
	done
	set -- "$1" "$2" $(wlbench cpu); c0=$3; tck=$5
	s0=$(suspend_stat success)
	sleep $cycle_s
	echo bench-keep >/sys/power/wake_lock
	sleep 1
	ctl disarm
	c1=$(wlbench cpu | cut -d' ' -f1)
	n=$(($(suspend_stat success) - s0))
	[ $n -gt 0 ] || fail "no suspend through wakelockd ($1): $(cat /tmp/daemon.log)"
	ms=$(echo "$c0 $c1 $tck $n" | awk '{printf "%.3f", ($2 - $1) * 1000 / $3 / $4}')
	echo "BENCH $2 n=1 median=$ms p99=$ms unit=ms cycles=$n ticks=$((c1 - c0)) clk_tck=$tck"
	kill -TERM $daemon
	wait $daemon
	wlbench drain /dev/ttyS1
}

# fresh_daemon: the daemon again (the first one is stopped by
# daemon_cycles), a keeper holding and the kernel wake lock dropped, as
# daemon_cycles expects it.
fresh_daemon() {
	start_daemon --config /tmp/bench.conf --state freeze --min-awake-ms 0 --log-level warn \
		--start-grace-ms 0
	export WLBENCH_DAEMON_PID=$daemon
	start_holder bench-idle-keeper /tmp/keeper.out
	keeper=$holder
	echo bench-keep >/sys/power/wake_unlock
}

# The three loops whose CPU per cycle is compared run twice, interleaved
# (daemon, daemon with 300 more sources, bare loop; then again), each for
# half of the old cycle_s: under TCG the guest's CPU ticks charge whatever runs
# when the host deschedules the vCPU, so a busy host inflates a run, and
# the host keeps each loop's lowest run (bench/run.py).
cycle_s=$((cycle_s / 2))
pm_trace_on
for round in 1 2; do
	msg "suspend cycles through wakelockd (run $round)"
	fresh_daemon
	daemon_cycles daemon daemon_cpu

	# The same with 300 more wakeup sources, as a phone has (wltest's
	# idle_sources): the wake ledger reads every one around each attempt.
	msg "suspend cycles through wakelockd, 300 more wakeup sources (run $round)"
	insmod /lib/modules/wltest.ko idle_sources=300 || fail "insmod wltest.ko idle_sources=300"
	nws=$(ls /sys/class/wakeup | wc -l)
	[ "$nws" -ge 300 ] || fail "only $nws wakeup sources after loading wltest"
	fresh_daemon
	daemon_cycles daemon300 daemon_cpu_300ws
	rmmod wltest || fail "rmmod wltest"

	msg "suspend cycles, bare loop (run $round)"
	ctl arm bare
	echo bench-keep >/sys/power/wake_unlock
	wlbench bare-loop $cycle_s || fail "wlbench bare-loop"
	echo bench-keep >/sys/power/wake_lock
	sleep 1
	ctl disarm
	wlbench drain /dev/ttyS1
done
echo bench-keep >/sys/power/wake_unlock

exit 0
