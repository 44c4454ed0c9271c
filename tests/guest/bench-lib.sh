# Shared by the guest side of `make bench` (bench-guest.sh, bench-cycles.sh,
# bench-energy.sh): the console protocol bench/run.py reads, and the
# duration switch.
. /tests/lib.sh
# "BENCHCTL arm PHASE" / "disarm" and the energy marks go to the console,
# where the host reads them as they come.
ctl() { echo "BENCHCTL $*" >/dev/console; }
msg() { echo "BENCHMSG $*"; }
quick=$(sed -n 's/.*wlbenchquick=\([0-9]*\).*/\1/p' /proc/cmdline)

# The kernel the figures are measured on, as it shows itself: lockdep has
# /proc/lockdep, KASAN says so at boot.  bench/run.py prints it next to
# every guest figure and judges no ratio against a kernel peer on a debug
# kernel.
bench_kernel_line() {
	_lockdep=0; [ -e /proc/lockdep ] && _lockdep=1
	_kasan=0; dmesg | grep -q 'KernelAddressSanitizer initialized' && _kasan=1
	echo "BENCHKERNEL release=$(uname -r) lockdep=$_lockdep kasan=$_kasan"
}
