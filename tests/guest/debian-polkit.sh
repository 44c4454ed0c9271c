# An unprivileged user's systemd-inhibit --what=sleep --mode=block through
# polkit.  The guest has no seat and the user no session, so systemd's
# default for org.freedesktop.login1.inhibit-block-sleep (allow_any
# auth_admin_keep) refuses him: no agent answers.  A polkit rule written
# here (polkitd re-reads rules.d on change) then allows the group
# wakelock; his inhibitor is then a hold in the daemon.  The rule is what
# docs/logind.md gives a distribution's users.
. /tests/lib.sh
. /tests/debian-lib.sh
RULE=/etc/polkit-1/rules.d/60-wltest-inhibit.rules
modem_open 5000
pm_trace_on
trap 'kill ${blocker:-} 2>/dev/null; rm -f "$RULE"; boot_hold' EXIT

# Refused: exits at once with polkit's answer, logind lists nothing.
if out=$(as_modem timeout 30 systemd-inhibit --what=sleep --mode=block --who=wl-user \
	--why=refused true 2>&1); then
	fail "an unprivileged block inhibitor without a rule was allowed: $out"
fi
case $out in
*"nteractive authentication required"* | *"ccess denied"*) info "ok: refused: $out" ;;
*) fail "systemd-inhibit failed otherwise than by polkit's refusal: $out" ;;
esac
logind_holds wl-user && fail "the daemon holds for a refused inhibitor"

cat >"$RULE" <<-'EOR'
	polkit.addRule(function(action, subject) {
		if (action.id == "org.freedesktop.login1.inhibit-block-sleep" &&
		    subject.isInGroup("wakelock"))
			return polkit.Result.YES;
	});
EOR
# polkitd re-reads rules.d when it changes: the same call is allowed once
# it has (its log line is not waited for: journalctl 252 may skip it).
allowed() { as_modem systemd-inhibit --what=sleep --mode=block --who=wl-probe --why=probe true 2>/dev/null; }
wait_for 30 "polkitd allowing the user's block inhibitor under the rule" allowed
(exec setpriv --reuid=modem --regid=modem --init-groups -- systemd-inhibit --what=sleep \
	--mode=block --who=wl-user --why="user call" sleep 100000) &
blocker=$!
wait_for 20 "the user's block inhibitor as a hold" logind_holds wl-user
info "ok: $(wakelock list | grep logind:wl-user)"
no_suspend_for 4 "the user's block inhibitor"
kill $blocker; blocker=
wait_for 10 "the user's hold to go" sh -c '! wakelock list --json | grep -q logind:wl-user'
suspend_once "$base"
info "ok: suspended once the user's inhibitor ended"
rm -f "$RULE"
