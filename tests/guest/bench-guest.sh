# `make bench`, guest side (bench/run.py boots this plan; not part of make
# check).  Prints "BENCH ..."/"RAW ..." lines (wlbench) that the host parses,
# and "BENCHCTL arm PHASE" / "BENCHCTL disarm" on the console: while armed,
# the host writes one byte into ttyS1 each time the kernel prints
# "PM: suspend-to-idle" (the wake source of both suspend loops).
# The energy figures follow (tests/guest/bench-energy.sh).
. /tests/lib.sh
ctl() { echo "BENCHCTL $*" >/dev/console; }
msg() { echo "BENCHMSG $*"; }
quick=$(sed -n 's/.*wlbenchquick=\([0-9]*\).*/\1/p' /proc/cmdline)
if [ -n "$quick" ]; then hold_s=0.5; scale_s=0.3; rounds=300; idle_s=3; cycle_s=6
else hold_s=1; scale_s=0.5; rounds=2000; idle_s=10; cycle_s=40; fi
export WLBENCH_MAXRAW=500

# The kernel the figures are measured on, as it shows itself: lockdep has
# /proc/lockdep, KASAN says so at boot.  bench/run.py prints it next to
# every guest figure and judges no ratio against a kernel peer on a debug
# kernel.
lockdep=0; [ -e /proc/lockdep ] && lockdep=1
kasan=0; dmesg | grep -q 'KernelAddressSanitizer initialized' && kasan=1
echo "BENCHKERNEL release=$(uname -r) lockdep=$lockdep kasan=$kasan"

modem_open
# A kernel wake lock keeps the daemon's wakeup_count read blocked while the
# hold benchmarks run: nothing suspends under them.
echo bench-keep >/sys/power/wake_lock
# 1000 clients of one user (root) for the scale figures.
printf '[access]\nmax_clients_per_uid = 1024\n' >/tmp/bench.conf
start_daemon --config /tmp/bench.conf --state freeze --min-awake-ms 0 --log-level warn
export WLBENCH_DAEMON_PID=$daemon

msg "hold cost, 1/2/8/64 processes"
for p in 1 2 8 64; do wlbench hold $p $hold_s 16 || fail "wlbench hold $p"; done
msg "kernel peers"
wlbench wakelock $rounds || fail "wlbench wakelock"
wlbench epoll $rounds || fail "wlbench epoll"
# The peer of programs that block sleep through logind: an Inhibit call and
# the close of its descriptor on the real bus (the logind image only).
if [ -x /lib/elogind/elogind ]; then
	msg "logind peer"
	path0=$PATH
	start_logind
	wl-inhibit-bench $((rounds / 10)) || fail "wl-inhibit-bench"
	stop_logind
	PATH=$path0
else
	msg "no elogind in this image (initramfs.sh --logind): the logind peer is not measured"
fi
msg "scale"
for c in 1 10 100 1000; do wlbench scale $c $scale_s || fail "wlbench scale $c"; done

msg "idle cost"
start_holder bench-idle-keeper /tmp/keeper.out
keeper=$holder
echo bench-keep >/sys/power/wake_unlock
wlbench idle $idle_s || fail "wlbench idle"

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
# Every run has a daemon of its own (the first one served the 1000
# clients of the scale figures).
cycle_s=$((cycle_s / 2))
echo bench-keep >/sys/power/wake_lock
kill $keeper
kill -TERM $daemon
wait $daemon
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

# Energy: share of time asleep against the ideal, wake-ups of aligned
# alarms (ACPI S3; bench-energy.sh).
sh /tests/bench-energy.sh
case $? in
0) ;;
77) msg "energy: not measured (see above)" ;;
*) fail "bench-energy.sh" ;;
esac
exit 0
