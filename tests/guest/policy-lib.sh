# Shared by the plan "policy" (tests/guest/policy-*.sh): the presence
# sources on real kernel devices (kernel/config/policy.config): vkms and
# wl-dpms for the display, the wlpresence module's backlight, uinput for
# keys and the lid, test_power for AC and the battery.
. /tests/lib.sh

# The pre-suspend hook stamps CLOCK_BOOTTIME (ms) into /tmp/stamps at the
# start of every attempt: when the daemon decided nothing keeps the
# system awake, before it reads the wakeup count.
cat >/tmp/stamp-hook <<'HOOK'
#!/bin/sh
awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime >>/tmp/stamps
HOOK
chmod +x /tmp/stamp-hook
rm -f /tmp/stamps
STAMP="--pre-suspend-hook /tmp/stamp-hook"
stamps() { if [ -f /tmp/stamps ]; then wc -l </tmp/stamps; else echo 0; fi; }

# wait_stamp N SECONDS: until the Nth attempt has started; prints its stamp.
wait_stamp() {
	_i=0
	until [ "$(stamps)" -ge "$1" ]; do
		_i=$((_i + 1)); [ $_i -lt $(($2 * 10)) ] || fail "no attempt $1 within $2 s: $(cat /tmp/daemon.log)"
		sleep 0.1
	done
	sed -n "${1}p" /tmp/stamps
}

# wait_resumed BASE: until suspend_stats counts a success beyond BASE (30 s).
wait_resumed() {
	_i=0
	until [ "$(suspend_stat success)" -gt "$1" ]; do
		_i=$((_i + 1)); [ $_i -lt 300 ] || fail "no resume within 30 s: $(cat /tmp/daemon.log)"
		sleep 0.1
	done
}

# expect_within WHAT GOT LOW HIGH
expect_within() {
	[ "$2" -ge "$3" ] && [ "$2" -le "$4" ] || fail "$1: $2 ms, expected $3..$4 ms"
	info "ok: $1: $2 ms (bounds $3..$4)"
}

# hold / unhold: a kernel wake lock, so nothing sleeps while a test sets up.
hold() { echo policy-test >/sys/power/wake_lock; }
unhold() { echo policy-test >/sys/power/wake_unlock; }

# A long-running helper fed through a FIFO: start_fed NAME FD CMD...
# (output in /tmp/NAME.out, pid in $fed_pid) waits for its "ready".
start_fed() {
	_name=$1 _fd=$2; shift 2
	rm -f /tmp/$_name.in; mkfifo /tmp/$_name.in
	"$@" </tmp/$_name.in >/tmp/$_name.out 2>&1 &
	fed_pid=$!
	eval "exec $_fd>/tmp/$_name.in"
	_i=0
	until grep -q '^ready' /tmp/$_name.out; do
		_i=$((_i + 1)); [ $_i -lt 100 ] || fail "$_name did not start: $(cat /tmp/$_name.out)"
		sleep 0.1
	done
}
# fed NAME FD COMMAND: send one command, wait for its "ok" (5 s; looked
# at every 20 ms, as the timed tests stamp the change after it returns).
fed() {
	_fn=$(grep -c "^ok $3\$" /tmp/$1.out)
	echo "$3" >&"$2"
	_i=0
	until [ "$(grep -c "^ok $3\$" /tmp/$1.out)" -gt "$_fn" ]; do
		_i=$((_i + 1)); [ $_i -lt 250 ] || fail "$1: '$3' failed: $(tail -3 /tmp/$1.out)"
		sleep 0.02
	done
}

connector=/sys/class/drm/card0-Virtual-1
[ -d $connector ] || fail "no vkms connector $connector (CONFIG_DRM_VKMS)"

# timed_attempt WHAT LOW HIGH CMD...: CMD is the change that lets the
# guest sleep; the next attempt must start LOW..HIGH ms after it.  The host
# wakes the guest from that suspend through the modem (opened by
# modem_open); returns with the wake bytes read and a kernel wake lock
# held (unhold to let the daemon go on).
#
# The change happens somewhere while CMD runs (fed polls for the helper's
# answer every 20 ms), and the daemon may act on it before CMD returns.
# So the delay is only known to lie between (attempt - CMD's end) and
# (attempt - CMD's start): too early means even the longest reading is
# below LOW, too late means even the shortest is above HIGH.
timed_attempt() {
	_what=$1 _low=$2 _high=$3; shift 3
	# (busybox sh has no local: names of their own, not fed's)
	_tn=$(stamps) _base=$(suspend_stat success)
	host when suspend-to-idle modem-write WAKE
	_t0=$(uptime_ms)
	"$@"
	_t0e=$(uptime_ms)
	_t1=$(wait_stamp $((_tn + 1)) 10)
	[ $((_t1 - _t0)) -ge "$_low" ] ||
		fail "$_what: $((_t1 - _t0)) ms at most, expected $_low..$_high ms"
	[ $((_t1 - _t0e)) -le "$_high" ] ||
		fail "$_what: $((_t1 - _t0e)) ms at least, expected $_low..$_high ms"
	info "ok: $_what: $((_t1 - _t0e))..$((_t1 - _t0)) ms (bounds $_low..$_high)"
	wait_resumed $_base
	hold
	_got=$(timeout 5 head -c 4 <&3)
	expect_eq "wake bytes read" "$_got" WAKE
}
