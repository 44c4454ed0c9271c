# Shared helpers for guest tests (sourced by busybox sh inside the QEMU guest).
#
# Host actions: `host CMD ARGS...` prints "@@HOST <id> CMD ARGS" on the console;
# the runner (scripts/run-guest.py) performs it and answers "@@ACK <id> [data]"
# on ttyS2, which run-plan keeps open as fd 7. Commands (see docs/harness.md):
#   host modem-write TEXT            write TEXT (no newline) into ttyS1 now
#   host modem-hex HEX               write raw bytes into ttyS1 now
#   host modem-fill N                write N bytes into ttyS1 now
#   host usb-write TEXT, usb-fill N  the same into ttyUSB0 (run-guest --usb-modem)
#   host after MS CMD ARGS...        ack at once, run CMD in MS milliseconds
#   host when REGEX CMD ARGS...      ack at once, run CMD when a console line
#                                    matches REGEX (one word; give up after 60 s)
#   host every MS CMD ARGS...        ack at once, run CMD now and every MS ms
#                                    until "host cancel ID" (ID = $_host_seq)
#   host wakeup                      QMP system_wakeup (wakes the guest from S3)
#   host modem-read N MS             read up to N bytes the guest sent on ttyS1
#                                    (waits at most MS ms); the ack carries them
#   host expect-poweroff NAME        the guest's power-off from now on is test
#                                    NAME passing (it must be its plan's last)
#   host boot-again                  the guest powers off next (hibernation):
#                                    boot the same disks again and read on
#                                    (run-guest --boots N; refused beyond N)
# The answer's payload, if any, is left in $HOST_REPLY.

_host_seq=0
host() {
	_host_seq=$((_host_seq + 1))
	echo "@@HOST $_host_seq $*" >/dev/console
	while read -r _tag _id HOST_REPLY <&7; do
		[ "$_tag" = "@@ACK" ] && [ "$_id" = "$_host_seq" ] && return 0
		[ "$_tag" = "@@NAK" ] && [ "$_id" = "$_host_seq" ] && fail "host refused: $*: $HOST_REPLY"
	done
	fail "control port closed while waiting for the host ($*)"
}

fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
info() { echo "$*"; }

# expect_eq WHAT GOT WANT
expect_eq() {
	[ "$2" = "$3" ] || fail "$1: got '$2', expected '$3'"
	info "ok: $1 = $2"
}

# A read of /sys/power/wakeup_count blocks while any wakeup source is active;
# never read it without a bound. Prints the count, fails after $1 seconds.
wakeup_count() {
	timeout "${1:-5}" cat /sys/power/wakeup_count || fail "reading wakeup_count blocked for ${1:-5}s"
}

suspend_stat() { cat /sys/power/suspend_stats/"$1"; }

# modem_open [HOLD_MS]: put ttyS1 (the "modem") in raw mode and open it as
# fd 3; enable it for wakeup and, where the kernel has the attribute, set its
# wakeup_hold_ms to HOLD_MS (default 500). The kernel's default is 0, which
# holds only until the line discipline has taken the data: enough for readers
# with EPOLLWAKEUP, not for the plain read() loops of the shell tests, which
# get a timed hold here.
modem_open() {
	stty -F /dev/ttyS1 raw -echo 115200 || fail "stty on ttyS1"
	exec 3<>/dev/ttyS1
	echo enabled >/sys/class/tty/ttyS1/power/wakeup || fail "cannot enable wakeup on ttyS1"
	if [ -e /sys/class/tty/ttyS1/wakeup_hold_ms ]; then
		echo "${1:-500}" >/sys/class/tty/ttyS1/wakeup_hold_ms ||
			fail "cannot set ttyS1 wakeup_hold_ms to ${1:-500}"
	fi
}

# Let the kernel print its PM debug messages (KERN_DEBUG) on the console: the
# runner's "when suspend-to-idle" trigger waits for one of them.
pm_trace_on() {
	echo 1 >/sys/power/pm_debug_messages || fail "no /sys/power/pm_debug_messages"
	echo 8 >/proc/sys/kernel/printk
}

# start_daemon ARGS...: start wakelockd in the foreground in the background
# (log in /tmp/daemon.log, pid in $daemon) and wait for its socket.
start_daemon() {
	wakelockd --foreground "$@" 2>/tmp/daemon.log &
	daemon=$!
	_i=0
	until [ -S /run/wakelockd/wakelockd.sock ]; do
		_i=$((_i + 1)); [ $_i -lt 100 ] || fail "wakelockd did not start: $(cat /tmp/daemon.log)"
		sleep 0.1
	done
}

# start_holder NAME OUT: run wl-guest-hold NAME in the background (output in
# OUT, pid in $holder) and wait until it reports its hold is taken.
start_holder() {
	wl-guest-hold "$1" >"$2" 2>&1 &
	holder=$!
	_i=0
	until grep -q held "$2"; do
		_i=$((_i + 1)); [ $_i -lt 100 ] || fail "$1 never got its hold: $(cat "$2")"
		sleep 0.1
	done
}

# start_logind: the system bus and elogind, as an elogind distribution runs
# them (image built with scripts/initramfs.sh --logind).  Pids in $dbus and
# $elogind; their logs in /tmp/dbus.log and /tmp/elogind.log.  From then
# on wakelockd, wakelock and modem-client are the builds with sd-bus
# (/usr/local/bin first in PATH).
start_logind() {
	[ -x /lib/elogind/elogind ] || skip "no elogind in this image (scripts/initramfs.sh --logind)"
	export PATH=/usr/local/bin:$PATH
	[ -d /sys/fs/cgroup ] || fail "no /sys/fs/cgroup: elogind needs CONFIG_CGROUPS"
	[ ! -e /run/dbus/system_bus_socket ] || fail "a system bus runs already (stop_logind missing?)"
	dbus-uuidgen --ensure=/etc/machine-id || fail "dbus-uuidgen failed"
	mkdir -p /run/dbus /var/lib/dbus
	cp /etc/machine-id /var/lib/dbus/machine-id
	dbus-daemon --system --nofork --nopidfile --nosyslog >/tmp/dbus.log 2>&1 &
	dbus=$!
	_i=0
	until [ -S /run/dbus/system_bus_socket ]; do
		_i=$((_i + 1)); [ $_i -lt 100 ] || fail "dbus-daemon did not start: $(cat /tmp/dbus.log)"
		sleep 0.1
	done
	SYSTEMD_PAGER=cat SYSTEMD_LOG_LEVEL=info /lib/elogind/elogind >/tmp/elogind.log 2>&1 &
	elogind=$!
	_i=0
	until busctl --no-pager status org.freedesktop.login1 >/dev/null 2>&1; do
		_i=$((_i + 1))
		[ $_i -lt 100 ] || fail "elogind did not take org.freedesktop.login1: $(cat /tmp/elogind.log)"
		kill -0 $elogind 2>/dev/null || fail "elogind exited: $(cat /tmp/elogind.log)"
		sleep 0.1
	done
}

# stop_logind: end what start_logind started (the next test starts afresh).
stop_logind() {
	kill $elogind $dbus 2>/dev/null
	wait $elogind $dbus 2>/dev/null
	rm -f /run/dbus/system_bus_socket
}

# inhibit MODE WHO WHY: take a sleep inhibitor with elogind-inhibit, held
# until its process ($inhibitor) is killed; waits until logind lists it.
inhibit() {
	elogind-inhibit --what=sleep --mode="$1" --who="$2" --why="$3" sleep 100000 \
		>/tmp/inhibit.$2.out 2>&1 &
	inhibitor=$!
	_i=0
	until elogind-inhibit --list --no-pager 2>/dev/null | grep -q "$2"; do
		_i=$((_i + 1))
		[ $_i -lt 100 ] || fail "inhibitor $2 not listed: $(cat /tmp/inhibit.$2.out)"
		sleep 0.1
	done
}

# uptime_ms: CLOCK_BOOTTIME in ms (the ledger's start_boottime_ms clock).
uptime_ms() { awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime; }
