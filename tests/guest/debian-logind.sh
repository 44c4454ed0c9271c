# systemd-logind's sleep inhibitors (systemd-inhibit, as root): a block
# inhibitor keeps the guest awake and shows as the client logind:WHO; a
# delay inhibitor is no hold: the guest suspends under it.
. /tests/lib.sh
. /tests/debian-lib.sh
modem_open 5000
pm_trace_on
trap 'kill ${blocker:-} ${delayer:-} 2>/dev/null; boot_hold' EXIT
systemctl is-active --quiet systemd-logind || fail "systemd-logind is not running"
logind_lists() { systemd-inhibit --list --no-pager 2>/dev/null | grep -q "$1"; }

systemd-inhibit --what=sleep --mode=block --who=wl-block --why="incoming call" sleep 100000 &
blocker=$!
wait_for 20 "logind listing wl-block" logind_lists wl-block
wait_for 10 "the block inhibitor as a hold" logind_holds wl-block
info "ok: $(wakelock list | grep logind:wl-block)"
no_suspend_for 4 "a block inhibitor"

systemd-inhibit --what=sleep --mode=delay --who=wl-delay --why="saving state" sleep 100000 &
delayer=$!
wait_for 20 "logind listing wl-delay" logind_lists wl-delay
sleep 0.5
logind_holds wl-delay && fail "a delay inhibitor was taken for a hold"
kill $blocker; blocker=
wait_for 10 "the block inhibitor's hold to go" sh -c '! wakelock list --json | grep -q logind:wl-block'
suspend_once "$base"
info "ok: suspended under the delay inhibitor once the block one was gone"
kill -0 $delayer || fail "the delay inhibitor ended"
if d=$(sandbox_denials); then fail "the sandbox refused the daemon something: $d"; fi
