# The pm_wakeup KUnit suite runs once, at boot, and cannot be started again:
# run again under a live user space it would disarm that user space's
# wakeup_count handshake. With KUNIT_DEBUGFS, KUnit offers a "run" file for
# every suite except init section suites; ours must have none, while its
# results stay readable.
. /tests/lib.sh
dir=/sys/kernel/debug/kunit/pm_wakeup
[ -d /sys/kernel/debug/kunit ] || fail "no /sys/kernel/debug/kunit (KUNIT_DEBUGFS off?)"
[ -d "$dir" ] || fail "no $dir: the suite is not registered"
[ -r "$dir/results" ] || fail "no readable $dir/results"
grep -q "ok [0-9]* pm_wakeup" "$dir/results" ||
	fail "$dir/results has no result line for the suite: $(head -c 300 "$dir/results")"
if grep -q "^not ok" "$dir/results"; then fail "the suite failed at boot"; fi
info "ok: $dir/results holds the boot run"
if [ -e "$dir/run" ]; then
	fail "$dir/run exists: the suite could be started again under user space"
fi
info "ok: no $dir/run"
