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

# wait_active [SECONDS]: until wakelockd.service is active (default 20 s).
wait_active() {
	_i=0
	until [ "$(prop ActiveState)" = active ]; do
		_i=$((_i + 1))
		[ $_i -lt $((${1:-20} * 10)) ] || fail "wakelockd not active after ${1:-20} s: $(systemctl status --no-pager wakelockd 2>&1 | tail -20)"
		sleep 0.1
	done
}

# journal_mark: a cursor for journal_since (the journal's newest entry now).
journal_mark() { journalctl --show-cursor -n 0 -q 2>/dev/null | sed -n 's/^-- cursor: //p'; }
# journal_since CURSOR: wakelockd's journal lines after CURSOR (all of this
# boot's without one).
journal_since() {
	if [ -n "$1" ]; then
		journalctl -u wakelockd.service -o cat --no-pager --after-cursor="$1"
	else
		journalctl -b -u wakelockd.service -o cat --no-pager
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
holder_start() {
	if [ "${3:-}" = as_modem ]; then
		as_modem wl-guest-hold "$1" >"$2" 2>&1 &
	else
		wl-guest-hold "$1" >"$2" 2>&1 &
	fi
	holder=$!
	_i=0
	until grep -q held "$2"; do
		_i=$((_i + 1)); [ $_i -lt 100 ] || fail "$1 never got its hold: $(cat "$2")"
		sleep 0.1
	done
}

# wait_suspends BASE [SECONDS]: until the kernel counted a suspend past BASE.
wait_suspends() {
	_i=0
	until [ "$(suspend_stat success)" -gt "$1" ]; do
		_i=$((_i + 1))
		[ $_i -lt $((${2:-30} * 10)) ] || fail "no suspend within ${2:-30} s: $(journal_since "" | tail -15)"
		sleep 0.1
	done
}
