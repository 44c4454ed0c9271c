# The daemon under its real sandbox (ProtectSystem=strict, SystemCallFilter,
# DevicePolicy=closed, PrivateNetwork ...) suspends the guest to idle when
# nothing holds, and it resumes: woken by bytes on ttyS1, the kernel counts
# the suspend, the daemon's ledger records it resumed with ttyS1's wakeup
# source as the cause, `wakelock wakes` and `wakelock stats` agree; a group
# member's hold keeps it awake.
. /tests/lib.sh
. /tests/debian-lib.sh
modem_open 5000
pm_trace_on
trap 'kill ${holder:-} 2>/dev/null' EXIT
src=ttyS1
grep -qx ttyS1-rx /sys/class/wakeup/*/name 2>/dev/null && src=ttyS1-rx

# A member of the group holds: the harness's wakelock may go, nothing sleeps.
holder_start member-hold /tmp/member.out as_modem
wakelock list | grep -q member-hold || fail "wakelock list lacks the member's hold: $(wakelock list)"
base=$(suspend_stat success)
boot_release
sleep 4      # past the 3 s start-up grace
expect_eq "suspends while the group member holds" $(( $(suspend_stat success) - base )) 0
boot_hold

# The member lets go: the daemon suspends at once, ttyS1's bytes wake it.
holder_stop member-hold
released=$(uptime_ms)
suspend_once "$base"
info "ok: suspended and resumed ($(( $(suspend_stat success) - base )) suspend(s))"
sleep 1.5    # the ledger's claim window of the wake
wakelock wakes --json | tr -d '\n' | sed -e 's/^\[//' -e 's/\]$//' -e 's/},{"seq"/}\n{"seq"/g' |
	awk -v r="$released" '{ if (match($0, /"start_boottime_ms":[0-9]+/) &&
		substr($0, RSTART + 20, RLENGTH - 20) + 0 >= r - 20) print }' >/tmp/wakes.json
cat /tmp/wakes.json
resumed=$(grep -c '"outcome":"resumed"' /tmp/wakes.json)
expect_eq "resumed attempts in the ledger since the release (kernel's count)" \
	"$resumed" $(( $(suspend_stat success) - base ))
grep '"outcome":"resumed"' /tmp/wakes.json | grep -q "\"cause\":\"source $src\"" ||
	fail "no resumed attempt caused by $src in the ledger"
info "ok: the ledger has the resume, caused by $src"
wakelock wakes | tail -n 3
wakelock stats | head -n 20
# The daemon has run since boot and is the only one to suspend the guest.
expect_eq "the daemon's successes (wakelock stats) = the kernel's suspends since boot" \
	"$(wakelock stats --json | grep -o '"successes":[0-9]*' | head -n 1 | cut -d: -f2)" "$(suspend_stat success)"
if d=$(sandbox_denials); then fail "the sandbox refused the daemon something: $d"; fi
info "ok: no EPERM, EACCES or seccomp record from the daemon"
