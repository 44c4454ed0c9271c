# Removing the package (the plan's last test): `dpkg -r wakelockd` stops the
# daemon and leaves no socket; `dpkg --purge` also takes the configuration
# and the group its sysusers.d snippet created.
. /tests/lib.sh
. /tests/debian-lib.sh
systemctl is-active --quiet wakelockd || fail "wakelockd not active before the removal"
out=$(dpkg -r wakelockd 2>&1) || fail "dpkg -r wakelockd: $out"
echo "$out" | sed 's/^/  | /'
if p=$(pgrep -x wakelockd); then fail "wakelockd still runs after dpkg -r: pid $p"; fi
[ ! -e /run/wakelockd/wakelockd.sock ] || fail "the socket is left after dpkg -r"
state=$(systemctl is-active wakelockd 2>&1)
case $state in active|activating|reloading) fail "the unit is $state after dpkg -r" ;; esac
info "ok: dpkg -r stopped the daemon (unit $state), no socket"
out=$(dpkg --purge wakelockd 2>&1) || fail "dpkg --purge wakelockd: $out"
echo "$out" | sed 's/^/  | /'
if g=$(getent group wakelock); then fail "the group is left after purge: $g"; fi
[ ! -e /etc/wakelockd.conf ] || fail "/etc/wakelockd.conf is left after purge"
[ ! -e /etc/systemd/system/multi-user.target.wants/wakelockd.service ] ||
	fail "the service's enablement link is left after purge"
[ ! -e /run/wakelockd ] || fail "/run/wakelockd is left after purge"
# A purged package is forgotten (dpkg-query finds nothing) or not-installed.
st=$(dpkg-query -W -f='${db:Status-Status}' wakelockd 2>/dev/null) || st=unknown-to-dpkg
case $st in not-installed|unknown-to-dpkg) info "ok: dpkg: wakelockd $st" ;;
	*) fail "dpkg's state of wakelockd after purge: $st" ;; esac
info "ok: purged: no daemon, no socket, no group, no configuration"
