# Restart=on-failure with the library's re-registration: the daemon killed
# with SIGKILL while a client holds is restarted by systemd, the client
# registers again and holds, and the guest does not suspend meanwhile (the
# harness's own wakelock is released: only the client keeps it awake).
# `systemctl stop` while the client holds: the daemon exits cleanly (status
# 0, Result success), its socket is gone, nothing suspends.
. /tests/lib.sh
. /tests/debian-lib.sh
trap 'kill ${holder:-} 2>/dev/null; boot_hold; systemctl start wakelockd' EXIT
holder_start restart-hold /tmp/restart.out as_modem
boot_release
base=$(suspend_stat success)
old=$(prop MainPID)
restarts=$(prop NRestarts)
mark=$(journal_mark)
kill -9 "$old"
restarted() {
	[ "$(prop NRestarts)" = $((restarts + 1)) ] && is_active &&
		[ "$(prop MainPID)" != "$old" ] && [ "$(prop MainPID)" != 0 ]
}
wait_for 30 "systemd restarting wakelockd" restarted
info "ok: restarted by systemd: pid $old -> $(prop MainPID), NRestarts $(prop NRestarts)"
registered() { wakelock list 2>/dev/null | grep -q restart-hold; }
wait_for 20 "the client registering again" registered
info "ok: the client registered again and holds: $(wakelock list | grep restart-hold)"
# A warning, as the journal records it (priority warning).
journal_since "$mark" warning | grep -q 'did not exit cleanly' ||
	fail "no warning of the unclean exit in the journal: $(journal_since "$mark")"
info "ok: the journal has the warning: $(journal_since "$mark" warning | grep 'did not exit cleanly')"
sleep 5      # past the restart grace (at least 3 s after an unclean exit)
expect_eq "suspends while the client held across the restart" $(( $(suspend_stat success) - base )) 0
kill -0 $holder || fail "the client died: $(cat /tmp/restart.out)"

mark=$(journal_mark)
out=$(timeout 30 systemctl stop wakelockd 2>&1) || fail "systemctl stop wakelockd: $out"
expect_eq "ActiveState after stop" "$(prop ActiveState)" inactive
expect_eq "Result after stop" "$(prop Result)" success
expect_eq "ExecMainStatus after stop" "$(prop ExecMainStatus)" 0
journal_since "$mark" info | grep -qx 'stopped' || fail "no 'stopped' in the journal: $(journal_since "$mark")"
[ ! -e /run/wakelockd/wakelockd.sock ] || fail "the socket is left after stop"
if p=$(pgrep -x wakelockd); then fail "a wakelockd still runs after stop: $p"; fi
info "ok: stopped cleanly under the client's hold; socket gone"
sleep 1
expect_eq "suspends after the stop" $(( $(suspend_stat success) - base )) 0
boot_hold
out=$(systemctl start wakelockd 2>&1) || fail "systemctl start wakelockd: $out"
wait_active
wait_for 20 "the client registering with the new daemon" registered
info "ok: started again, the client registered with it"
if d=$(sandbox_denials); then fail "the sandbox refused the daemon something: $d"; fi
