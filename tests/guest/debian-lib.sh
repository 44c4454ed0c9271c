# Helpers of the plan "debian" (sourced after lib.sh by POSIX sh, dash in
# the Debian guest): wakelockd installed from our .deb and run by systemd
# (docs/debian-guest.md).  The guest boots with the kernel wakelock
# wltest-boot held (wl-test-awake.service), so that the packaged daemon does
# not suspend before a test asks it to.

# prop NAME: a property of wakelockd.service (systemctl show).
prop() { systemctl show -p "$1" --value wakelockd.service; }

# boot_hold / boot_release: take and drop the harness's kernel wakelock.
boot_hold() { echo wltest-boot >/sys/power/wake_lock || fail "cannot take the wltest-boot wakelock"; }
boot_release() { echo wltest-boot >/sys/power/wake_unlock || fail "cannot release the wltest-boot wakelock"; }

# as_modem CMD...: run CMD as the unprivileged member of the daemon's group
# (uid modem, groups modem, wakelock, dialout; no capabilities).
as_modem() { setpriv --reuid=modem --regid=modem --init-groups -- "$@"; }

# Deadlines in seconds of uptime: a full system under TCG and KASAN spawns
# a process in tens of milliseconds or more, so loops count time, not turns.
# deadline S: from now on, in_time is true for S seconds.
deadline() { read -r _up _rest </proc/uptime; _until=$(( ${_up%.*} + $1 )); }
in_time() { read -r _up _rest </proc/uptime; [ "${_up%.*}" -lt "$_until" ]; }

# wait_for SECONDS WHAT COMMAND...: until COMMAND succeeds, or fail.
wait_for() {
	_s=$1 _what=$2; shift 2
	deadline "$_s"
	until "$@"; do
		in_time || fail "$_what: not within $_s s"
		sleep 0.2
	done
}

is_active() { [ "$(prop ActiveState)" = active ]; }
# wait_active [SECONDS]: until wakelockd.service is active (default 30 s).
wait_active() {
	deadline "${1:-30}"
	until is_active; do
		in_time || fail "wakelockd not active after ${1:-30} s: $(systemctl status --no-pager wakelockd 2>&1 | tail -20)"
		sleep 0.2
	done
}

# journal_mark: a cursor for journal_since: an entry of this test's own,
# written and waited for.  Not the newest entry's cursor with
# --after-cursor: journalctl 252 with a match (-u, -p, -k) then skips the
# first matching entry after the cursor whenever the cursor's own entry
# does not match (seen: 4 of 5 warnings counted).  --cursor= (from that
# entry on) from an entry no match takes is exact.
journal_mark() {
	_tag="wltest mark $$ $(uptime_ms)"
	echo "$_tag" | systemd-cat -t wltest-mark || fail "systemd-cat"
	deadline 30
	until [ "$(journalctl -t wltest-mark -n 1 -o cat --no-pager)" = "$_tag" ]; do
		in_time || fail "the journal never got the mark '$_tag'"
		sleep 0.2
	done
	journalctl -t wltest-mark -n 1 -o cat --no-pager --show-cursor | sed -n 's/^-- cursor: //p'
}
# journal_since CURSOR [PRIORITY]: wakelockd's journal lines from the mark
# CURSOR on (all of this boot's without one), of PRIORITY only if given
# (info, warning...); journal_since CURSOR -k: the kernel's.
journal_since() {
	if [ -n "$1" ]; then set -- "--cursor=$1" "${2:-}"; else set -- -b "${2:-}"; fi
	if [ "$2" = -k ]; then
		journalctl -k -o cat --no-pager "$1"
	else
		journalctl -u wakelockd.service -o cat --no-pager "$1" ${2:+-p "$2..$2"}
	fi
}

# sandbox_denials: what shows a sandbox refusing the daemon something: its
# journal lines with EPERM or EACCES words, and the kernel's seccomp audit
# records (type=1326).  Prints them; exit 0 if there are any.
sandbox_denials() {
	{
		journal_since "" | grep -iE 'not permitted|permission denied|EPERM|EACCES|seccomp'
		journalctl -k -b -o cat --no-pager | grep -E 'type=1326|audit.*seccomp'
	} | grep . && return 0
	return 1
}

# holder_start NAME OUT [as_modem]: wl-guest-hold NAME in the background
# (pid in $holder) until it reports its hold taken.
# The subshells exec, so that $holder is wl-guest-hold's own pid (a
# backgrounded shell function would leave it a child of a subshell, which
# kill would end alone, the hold still held).
holder_start() {
	if [ "${3:-}" = as_modem ]; then
		(exec setpriv --reuid=modem --regid=modem --init-groups -- wl-guest-hold "$1" >"$2" 2>&1) &
	else
		(exec wl-guest-hold "$1" >"$2" 2>&1) &
	fi
	holder=$!
	wait_for 20 "$1 getting its hold" grep -q held "$2"
}

# holder_stop NAME: end the holder started last, until the daemon no
# longer lists NAME.
holder_stop() {
	kill "$holder" 2>/dev/null
	wait "$holder" 2>/dev/null
	holder=
	wait_for 10 "the daemon dropping $1" sh -c "! wakelock list 2>/dev/null | grep -q '^$1 '"
}

# pm_state: what tells why the guest does not suspend (for failures).
pm_state() {
	echo "suspend_stats: success $(suspend_stat success) fail $(suspend_stat fail)" \
		"last failed step $(suspend_stat last_failed_step) errno $(suspend_stat last_failed_errno)"
	echo "active wakeup sources:"
	awk 'NR > 1 && $6 != 0 { print "  " $1 " active_since " $6 }' /sys/kernel/debug/wakeup_sources 2>/dev/null
	wakelock list 2>&1 | head -n 10
	wakelock status 2>&1 | head -n 20
	journal_since "" | tail -n 15
}

# wait_suspends BASE [SECONDS]: until the kernel counted a suspend past BASE.
wait_suspends() {
	deadline "${2:-60}"
	until [ "$(suspend_stat success)" -gt "$1" ]; do
		in_time || fail "no suspend within ${2:-60} s: $(pm_state)"
		sleep 0.2
	done
}

# suspend_once BASE: let the guest suspend (drop the harness's wakelock)
# with ttyS1 open for wakeup (modem_open 5000: the bytes hold the guest
# awake 5 s, time for this shell to take its wakelock back); the host
# writes WAKE into ttyS1 once the kernel enters suspend-to-idle
# (pm_trace_on).  Returns with the wakelock held again and WAKE read.
suspend_once() {
	host when suspend-to-idle modem-write WAKE
	boot_release
	wait_suspends "$1"
	boot_hold
	_got=$(timeout 5 head -c 4 <&3)
	expect_eq "wake bytes read on ttyS1" "$_got" WAKE
}

# logind_holds WHO: the daemon shows logind's sleep inhibitor WHO as its
# client logind:WHO.
logind_holds() { wakelock list --json | grep -q "\"client\":\"logind:$1\""; }

# no_suspend_for S WHAT: the harness's wakelock dropped for S s with no
# suspend meanwhile (WHAT keeps the guest awake), then taken back; base is
# the success count before, for a suspend_once after WHAT ends.
no_suspend_for() {
	base=$(suspend_stat success)
	boot_release
	sleep "$1"
	expect_eq "suspends under $2" $(( $(suspend_stat success) - base )) 0
	boot_hold
}
