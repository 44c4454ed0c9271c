# Calls while the power manager suspends: wakelockd loops on
# suspend-to-idle (appliance policy: nothing but holds keeps the guest
# awake), the host wakes the guest through the modem (ttyS1) every 500 ms,
# and wl-ring rings CALLS times at random moments of the guest's awake
# time, so that edges come while the daemon is about to suspend.  The call
# program (wl-ring's reader) polls the key with EPOLLWAKEUP and works
# 400 ms on every key it reads; each ring lasts 300 ms.  (A ring that
# ends before gpio-keys' 5 ms debounce work has run is no key at all:
# once, under TCG in the thaw after a resume, a 100 ms ring was lost so.)
# Every edge's key must be read with no suspend to idle between the edge and the read or
# during the work (wl-ring judges on the kernel log's order, which needs
# the PM debug messages; docs/gpio-ring.md), the guest must have suspended
# to idle between calls, and gpio-keys' source must have counted every
# edge.  The presses' edge-to-read latencies are printed (TCG, 2 vCPUs).
# Control: a reader without EPOLLWAKEUP is suspended on in its work.
. /tests/ring-lib.sh
CALLS=${RING_CALLS:-12}
SEED=${RING_SEED:-1}
hold() { echo ring-calls >/sys/power/wake_lock; }
unhold() { echo ring-calls >/sys/power/wake_unlock; }
wake_id=
trap 'kill $daemon 2>/dev/null; [ -z "$wake_id" ] || host cancel $wake_id; rmmod wlring 2>/dev/null' EXIT
ring_chip
ring_load
ws=$(keys_ws)
[ -n "$ws" ] || fail "no wakeup source named gpio-keys"
e0=$(cat $ws/event_count)
modem_open 0
pm_trace_on
# wl-ring's markers in the kernel log must all get there (rate-limited
# by default).
devkmsg=$(cat /proc/sys/kernel/printk_devkmsg)
echo on >/proc/sys/kernel/printk_devkmsg || fail "cannot switch /dev/kmsg's rate limit off"
hold
start_daemon --state freeze --policy appliance --min-awake-ms 0 --start-grace-ms 0 \
	--stats-file /run/wakelockd/stats.json --log-level info
host every 500 modem-write W
wake_id=$_host_seq
s0=$(suspend_stat success)
unhold
wl-ring calls "$evdev" "$pull" $CALLS 400 1000 $SEED >/tmp/calls.out 2>&1
rc=$?
# The control: the same calls read without EPOLLWAKEUP, as by a program
# without CAP_BLOCK_SUSPEND.  Nothing then holds the system while the
# reader works, and the judge must see it suspend.
CONTROL=4
wl-ring calls "$evdev" "$pull" $CONTROL 400 1000 $SEED plain >/tmp/calls-plain.out 2>&1
rc_plain=$?
hold
host cancel $wake_id
wake_id=
# Shown, not judged: attempts that a ring aborted have the cause
# "source gpio-keys" in the ledger, when a ring came during one at all.
info "the daemon's wakes by cause:"
wakelock wakes --summary 2>&1 | sed 's/^/  /'
kill -TERM $daemon
wait $daemon
expect_eq "daemon exit status after SIGTERM" $? 0
unhold
trap - EXIT
echo "$devkmsg" >/proc/sys/kernel/printk_devkmsg
sed 's/^/  /' /tmp/calls.out
[ $rc -eq 0 ] || fail "wl-ring calls: $(grep -E 'FAIL|summary' /tmp/calls.out | head -5)"
summary=$(grep '^summary' /tmp/calls.out)
idles=$(echo "$summary" | sed -n 's/.* \([0-9]*\) suspends to idle.*/\1/p')
[ "${idles:-0}" -ge $((CALLS / 2)) ] || fail "only ${idles:-no} suspends to idle in the log for $CALLS calls: $summary"
info "ok: $((2 * CALLS)) edges read with no suspend to idle before their work was done; $idles suspends to idle"
slept=$(( $(suspend_stat success) - s0 ))
[ $slept -ge $((CALLS / 2)) ] || fail "the guest suspended only $slept times in $CALLS calls"
info "ok: $slept suspends during $CALLS calls"
expect_eq "gpio-keys event_count (one per edge)" $(( $(cat $ws/event_count) - e0 )) $((2 * (CALLS + CONTROL)))
info "control, no EPOLLWAKEUP:"
sed 's/^/  /' /tmp/calls-plain.out
# A suspend in the work is seen as such, or, when it came while the line
# was low, as the key events it added.
[ $rc_plain -eq 1 ] && grep -q 'FAIL suspended to idle\|FAIL: key events that no edge made' /tmp/calls-plain.out ||
	fail "control: without EPOLLWAKEUP the judge saw no suspend in the reader's work (exit $rc_plain)"
info "ok: control: without EPOLLWAKEUP the judge saw suspends: $(grep -c 'FAIL suspended to idle' /tmp/calls-plain.out) of $((2 * CONTROL)) edges suspended on, $(grep -c 'FAIL: key events that no edge made' /tmp/calls-plain.out) run with key events no edge made"
ring_unload
