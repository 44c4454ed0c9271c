# A wake that needs time to deliver ([wake_grace], docs/policy.md): a wake
# by ttyS1 (the "modem") keeps the guest awake hold_after_wake_ms after
# the resume although nothing holds, and the ledger shows the grace as the
# wake's claim.  Appliance policy: nothing else keeps the guest awake.
. /tests/policy-lib.sh
GRACE=4000
# The port's source for received data: ttyS1-rx since series v3 (a source
# of its own per port), the tty device's own before.
src=ttyS1
grep -qx ttyS1-rx /sys/class/wakeup/*/name 2>/dev/null && src=ttyS1-rx
modem_open 0
pm_trace_on
trap 'kill $daemon 2>/dev/null' EXIT
hold
start_daemon --state freeze --policy appliance --min-awake-ms 0 --start-grace-ms 0 \
	--wake-grace $src=$GRACE $STAMP --log-level info
host when suspend-to-idle modem-write WAKE
base=$(suspend_stat success)
unhold
wait_resumed $base
host when suspend-to-idle modem-write WAKE
t2=$(wait_stamp 2 20)
wait_resumed $((base + 1))
hold
timeout 5 head -c 8 <&3 >/dev/null
sleep 1.5     # past the second wake's claim window
wakelock wakes --json | tr -d '\n' | sed -e 's/^\[//' -e 's/\]$//' -e 's/},{"seq"/}\n{"seq"/g' >/tmp/wakes.json
cat /tmp/wakes.json; echo
first=$(sed -n 1p /tmp/wakes.json)
case $first in *'"cause":"source '$src'"'*) ;; *) fail "the first wake's cause is not $src: $first" ;; esac
case $first in *'"claim":"claimed"'*'"client":"wakelockd","hold":"grace:'$src'"'*) ;;
	*) fail "the first wake is not claimed by the grace: $first" ;; esac
info "ok: the first wake ($src) is claimed by wakelockd's grace:$src"
resumed=$(echo "$first" | sed -n 's/.*"end_boottime_ms":\([0-9]*\).*/\1/p')
expect_within "resume to the next attempt (grace $GRACE ms)" $((t2 - resumed)) $((GRACE - 100)) $((GRACE + 1000))
kill -TERM $daemon
wait $daemon
expect_eq "daemon exit status after SIGTERM" $? 0
unhold
