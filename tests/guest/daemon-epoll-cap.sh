# wakelock_epoll_add tells an unprivileged client that the kernel dropped
# EPOLLWAKEUP (no CAP_BLOCK_SUSPEND) instead of returning 0: root keeps the
# flag, the "modem" user (daemon's group, no capabilities) gets EPERM naming
# the capability.
. /tests/lib.sh
out=$(wl-guest-hold --epoll) || fail "as root: $out"
info "ok: root: $out"
out=$(su modem -c "exec wl-guest-hold --epoll"); rc=$?
[ $rc -eq 3 ] || fail "as modem: exit $rc, expected 3 (EPERM): $out"
case $out in *CAP_BLOCK_SUSPEND*) ;; *) fail "as modem, the error does not name the capability: $out" ;; esac
info "ok: modem: $out"
