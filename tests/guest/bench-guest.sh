# `make bench`, guest side (bench/run.py boots this plan; not part of make
# check).  Prints "BENCH ..."/"RAW ..." lines (wlbench) that the host parses,
# and "BENCHCTL arm PHASE" / "BENCHCTL disarm" on the console: while armed,
# the host writes one byte into ttyS1 each time the kernel prints
# "PM: suspend-to-idle" (the wake source of both suspend loops).
# The energy figures follow (tests/guest/bench-energy.sh).
. /tests/bench-lib.sh
if [ -n "$quick" ]; then hold_s=0.5; scale_s=0.3; rounds=300; idle_s=3
else hold_s=1; scale_s=0.5; rounds=2000; idle_s=10; fi
export WLBENCH_MAXRAW=500

# The kernel the figures are measured on (bench-lib.sh).
bench_kernel_line

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

# The CPU per suspend cycle of the daemon and of the bare loop
# (bench-cycles.sh; also a plan of its own).  Every run there has a daemon
# of its own: this one served the 1000 clients of the scale figures.
echo bench-keep >/sys/power/wake_lock
kill $keeper
kill -TERM $daemon
wait $daemon
WLBENCH_INSIDE=1 sh /tests/bench-cycles.sh || fail "bench-cycles.sh"

# Energy: share of time asleep against the ideal, wake-ups of aligned
# alarms (ACPI S3; bench-energy.sh).
sh /tests/bench-energy.sh
case $? in
0) ;;
77) msg "energy: not measured (see above)" ;;
*) fail "bench-energy.sh" ;;
esac
exit 0
