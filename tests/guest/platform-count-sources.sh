# /sys/power/wakeup_count_sources (kernel/patches/pm/0004): the wakeupN of
# the sources active or deactivated since the last successful write of
# wakeup_count, which the daemon's ledger reads instead of every source.
. /tests/lib.sh
f=/sys/power/wakeup_count_sources
[ -r $f ] || fail "$f is missing on the patched kernel"
# The class device (wakeupN) of the wakeup source named $1.
source_of() {
	for d in /sys/class/wakeup/wakeup*; do
		[ "$(cat $d/name 2>/dev/null)" = "$1" ] && { basename $d; return; }
	done
	fail "no wakeup source named $1 in /sys/class/wakeup"
}
listed() { grep -qx "$1" $f; }

echo wltest-count >/sys/power/wake_lock
w=$(source_of wltest-count)
echo wltest-count >/sys/power/wake_unlock
n=$(wakeup_count)
echo "$n" >/sys/power/wakeup_count || fail "writing back the current count ($n) failed"
! listed $w || fail "$w listed after a write that came after its event: $(cat $f)"
info "ok: $w (wltest-count) not listed after the write"
echo wltest-count >/sys/power/wake_lock
listed $w || fail "$w not listed while active: $(cat $f)"
echo wltest-count >/sys/power/wake_unlock
listed $w || fail "$w not listed once released: $(cat $f)"
info "ok: $w listed while active and once released"
# A stale count fails and keeps the list; the current one clears it.
if echo "$n" >/sys/power/wakeup_count 2>/dev/null; then
	fail "stale count $n accepted"
fi
listed $w || fail "$w no longer listed after a failed write: $(cat $f)"
m=$(wakeup_count)
echo "$m" >/sys/power/wakeup_count || fail "writing back the current count ($m) failed"
! listed $w || fail "$w still listed after a successful write: $(cat $f)"
info "ok: a failed write keeps $w listed, a successful one does not"
# Every line names a directory of /sys/class/wakeup.
while read -r l; do
	[ -d "/sys/class/wakeup/$l" ] || fail "listed '$l' is not in /sys/class/wakeup"
done <$f
if echo wakeup0 >$f 2>/dev/null; then
	fail "$f accepted a write"
fi
info "ok: $f is read-only, and lists only class devices"
