# Access as the package sets it up: a member of the group its sysusers.d
# snippet made (modem) reads `wakelock list` and `stats` and holds; his
# `deny` is refused (root or [access] admin_group only) and changes
# nothing, root's is obeyed; a user outside the group (nobody) cannot even
# connect.
. /tests/lib.sh
. /tests/debian-lib.sh
trap 'kill ${holder:-} 2>/dev/null; wakelock allow chatty-app >/dev/null 2>&1' EXIT
grp=$(getent group wakelock) || fail "no group wakelock"
info "group: $grp"
case ",${grp##*:}," in *,modem,*) ;; *) fail "modem is not a member of wakelock: $grp" ;; esac

holder_start chatty-app /tmp/chatty.out as_modem
out=$(as_modem wakelock list 2>&1) || fail "wakelock list as modem: $out"
echo "$out" | grep -q chatty-app || fail "wakelock list as modem lacks chatty-app: $out"
info "ok: wakelock list as modem: $(echo "$out" | grep chatty-app)"
out=$(as_modem wakelock stats 2>&1) || fail "wakelock stats as modem: $out"
echo "$out" | grep -q '^chatty-app ' || fail "wakelock stats as modem lacks chatty-app: $out"
info "ok: wakelock stats as modem lists chatty-app"

allowed() { wakelock stats --json | grep -o '"name":"chatty-app","pid":[0-9]*,"uid":[0-9]*,"allowed":[a-z]*' |
	sed 's/.*"allowed"://'; }
expect_eq "chatty-app allowed before any deny" "$(allowed)" true
if out=$(as_modem wakelock deny chatty-app 2>&1); then
	fail "wakelock deny as modem (not an administrator) succeeded: $out"
fi
info "refused as it should be: $out"
echo "$out" | grep -qi 'may not change the policy' || fail "the refusal does not say why: $out"
expect_eq "chatty-app allowed after the member's refused deny" "$(allowed)" true
out=$(wakelock deny chatty-app 2>&1) || fail "wakelock deny as root: $out"
expect_eq "chatty-app after root's deny" "$(allowed)" false
out=$(wakelock allow chatty-app 2>&1) || fail "wakelock allow as root: $out"
expect_eq "chatty-app after root's allow" "$(allowed)" true

if out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups -- wakelock list 2>&1); then
	fail "wakelock list as nobody (not in the group) succeeded: $out"
fi
info "ok: nobody is refused: $out"
if d=$(sandbox_denials); then fail "the sandbox refused the daemon something: $d"; fi
