# systemd-logind's sleep inhibitors (systemd-inhibit, as root): a block
# inhibitor keeps the guest awake and shows as the client logind:WHO; a
# delay inhibitor is no hold: the guest suspends under it.
. /tests/lib.sh
. /tests/debian-lib.sh
modem_open
pm_trace_on
trap 'kill ${blocker:-} ${delayer:-} 2>/dev/null; boot_hold' EXIT
systemctl is-active --quiet systemd-logind || fail "systemd-logind is not running"
listed() { # listed WHO: logind and wakelockd both have the inhibitor
	_i=0
	until systemd-inhibit --list --no-pager 2>/dev/null | grep -q "$1"; do
		_i=$((_i + 1)); [ $_i -lt 100 ] || fail "logind does not list $1"
		sleep 0.1
	done
}
systemd-inhibit --what=sleep --mode=block --who=wl-block --why="incoming call" sleep 100000 &
blocker=$!
listed wl-block
_i=0
until wakelock list --json | grep -q '"client":"logind:wl-block"'; do
	_i=$((_i + 1)); [ $_i -lt 50 ] || fail "the block inhibitor is no hold: $(wakelock list)"
	sleep 0.1
done
info "ok: $(wakelock list | grep logind:wl-block)"
base=$(suspend_stat success)
boot_release
sleep 4
expect_eq "suspends under a block inhibitor" $(( $(suspend_stat success) - base )) 0

systemd-inhibit --what=sleep --mode=delay --who=wl-delay --why="saving state" sleep 100000 &
delayer=$!
listed wl-delay
wakelock list --json | grep -q '"client":"logind:wl-delay"' && fail "a delay inhibitor was taken for a hold"
host every 1500 modem-write W
every=$_host_seq
kill $blocker; blocker=
wait_suspends $base 30
boot_hold
host cancel $every
info "ok: suspended under the delay inhibitor once the block one was gone"
kill -0 $delayer || fail "the delay inhibitor ended"
if d=$(sandbox_denials); then fail "the sandbox refused the daemon something: $d"; fi
