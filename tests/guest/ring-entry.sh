# A ring during suspend entry aborts it.  The power manager's handshake
# is done (wakeup_count read and written back), then the modem rings,
# then /sys/power/state is written: the suspend must fail, counted as an
# abort by gpio-keys' source (its power/wakeup_count), and the key must
# still be read.  gpio-keys armed for wakeup must not stop a suspend with
# no ring either (it arms the line's interrupt for wakeup, which gpio-sim
# refuses without kernel/patches/gpio/0001), and with power/wakeup
# disabled the same late ring must not abort (the control): both suspends
# are ended by the host writing into the modem (ttyS1).
. /tests/ring-lib.sh
trap 'rmmod wlring 2>/dev/null' EXIT
ring_chip
ring_load
ws=$(keys_ws)
[ -n "$ws" ] || fail "no wakeup source named gpio-keys"
modem_open
pm_trace_on

# late_ring [read]: the handshake, then a ring, then the state write
# (status in $late_rc), then the ring's end; with "read", a reader polling
# with EPOLLWAKEUP must get both edges.  The control rings with no reader:
# the reader's own EPOLLWAKEUP source, active from the moment evdev queues
# the key, would abort that suspend too.
late_ring() {
	[ "$1" = read ] && start_reader 2 20000
	_n=$(wakeup_count)
	echo "$_n" >/sys/power/wakeup_count || fail "wakeup_count write of $_n refused"
	ring_edge pull-down
	echo freeze >/sys/power/state 2>/dev/null
	late_rc=$?
	ring_edge pull-up
	if [ "$1" = read ]; then
		wait_reader "late ring"
		expect_eq "late ring: keys read" "$got" "key 169 1 key 169 0 "
	fi
}
# woken: the host's WAKE that ended a suspend is read (and so not left to
# the next suspend).
woken() { expect_eq "wake bytes read" "$(timeout 5 head -c 4 <&3)" WAKE; }

f0=$(suspend_stat fail) s0=$(suspend_stat success) ab0=$(cat $keys/power/wakeup_count)
late_ring read
[ $late_rc -ne 0 ] || fail "the guest suspended although the modem rang after the handshake"
expect_eq "suspend failures after a late ring" $(( $(suspend_stat fail) - f0 )) 1
expect_eq "suspend successes after a late ring" $(( $(suspend_stat success) - s0 )) 0
expect_eq "gpio-keys aborts (power/wakeup_count)" $(( $(cat $keys/power/wakeup_count) - ab0 )) 1
info "last failed step: $(suspend_stat last_failed_step), errno $(suspend_stat last_failed_errno)"

s0=$(suspend_stat success)
host when suspend-to-idle modem-write WAKE
n=$(wakeup_count)
echo "$n" >/sys/power/wakeup_count || fail "wakeup_count write refused"
echo freeze >/sys/power/state || fail "no suspend with gpio-keys armed for wakeup: $(dmesg | grep -i 'gpio-keys' | tail -2)"
expect_eq "suspends with gpio-keys armed, no ring" $(( $(suspend_stat success) - s0 )) 1
woken

echo disabled >$keys/power/wakeup || fail "cannot disable gpio-keys' power/wakeup"
s0=$(suspend_stat success)
host when suspend-to-idle modem-write WAKE
late_ring
[ $late_rc -eq 0 ] || fail "control: the late ring aborted the suspend with power/wakeup disabled"
expect_eq "control: suspends after a late ring, power/wakeup disabled" $(( $(suspend_stat success) - s0 )) 1
woken
ring_unload
trap - EXIT
