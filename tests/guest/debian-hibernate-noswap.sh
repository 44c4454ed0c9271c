# state = disk with no swap active (resume= names /dev/vdc, which holds no
# swap yet): the kernel takes the whole snapshot and then fails to find a
# swap device to write it to ("Cannot find swap device"), and the write to
# /sys/power/state returns ENODEV.  The daemon must say so in the journal
# at priority warning, once per attempt, back off between attempts
# (100 ms, doubling: the packaged configuration) instead of spinning, and
# lose nothing: the same process, no restart, its statistics and ledger
# counting every failure, a group member's hold still obeyed.
. /tests/lib.sh
. /tests/debian-lib.sh
. /tests/debian-hibernate-lib.sh
trap 'kill ${holder:-} 2>/dev/null' EXIT
state_disk_on
expect_eq "active swap areas" "$(awk 'NR > 1' /proc/swaps | wc -l)" 0
grep -qw disk /sys/power/state || fail "the kernel offers no hibernation: /sys/power/state is '$(cat /sys/power/state)'"
pid=$(prop MainPID)
fails0=$(wakelock stats --json | grep -o '"failures":[0-9]*' | head -n 1 | cut -d: -f2)
cursor=$(journal_mark)
released=$(uptime_ms)
boot_release
wait_for 240 "three failed hibernation attempts" sh -c \
	". /tests/lib.sh; . /tests/debian-hibernate-lib.sh; [ \$(records_since $released | grep -c '\"outcome\":\"failed\"') -ge 3 ]"
boot_hold
# An attempt under way when the wakelock came back ends too (failed, or
# aborted by that wakeup event); then the daemon waits, in the read of
# wakeup_count that the active wakelock blocks.
wait_for 60 "the daemon waiting again" sh -c \
	". /tests/lib.sh; . /tests/debian-hibernate-lib.sh; daemon_waits"
records_since "$released" >/tmp/noswap.json
cat /tmp/noswap.json
n=$(grep -c '"outcome":"failed"' /tmp/noswap.json)
expect_eq "failed attempts with errno ENODEV" "$(grep -c '"outcome":"failed","errno":"ENODEV"' /tmp/noswap.json)" "$n"
others=$(grep -v '"outcome":"failed"' /tmp/noswap.json | grep -v '"outcome":"aborted"')
[ -z "$others" ] || fail "attempts that neither failed nor were aborted: $others"

# Backoff: the k-th pause between a failed attempt's return and the next
# attempt is at least 100 ms * 2^k.  A loop that retried at once would
# break this within a few attempts, whatever an attempt itself costs.
grep '"outcome":"failed"' /tmp/noswap.json | awk '
	match($0, /"start_boottime_ms":[0-9]+/) { s = substr($0, RSTART + 20, RLENGTH - 20) + 0 }
	match($0, /"end_boottime_ms":[0-9]+/) { e = substr($0, RSTART + 18, RLENGTH - 18) + 0 }
	{ if (NR > 1) { want = 100 * 2 ^ (NR - 2); gap = s - last
	    printf "pause before attempt %d: %d ms (backoff %d ms)\n", NR, gap, want
	    if (gap < want - 2) bad = 1 }
	  last = e }
	END { exit bad }' || fail "the daemon did not back off between failed attempts"
info "ok: the pauses between failed attempts follow the backoff"

# The journal: one warning per failed attempt, naming the state and errno;
# the kernel's own reason once per attempt.
# (journald takes the last one from the daemon's stream later: it too was
# frozen and thawed by the attempt)
warnings() { journal_since "$cursor" warning | grep -c 'suspend to disk failed: No such device'; }
deadline 30
until [ "$(warnings)" -ge "$n" ] || ! in_time; do journalctl --sync; sleep 0.5; done
if [ "$(warnings)" -ne "$n" ]; then
	journalctl -u wakelockd.service -o short-monotonic --no-pager --cursor="$cursor" | tail -n 30
	journalctl -o short-monotonic --no-pager --cursor="$cursor" | grep -i journal | tail -n 5
fi
expect_eq "journal warnings 'suspend to disk failed: No such device'" "$(warnings)" "$n"
kern=$(journal_since "$cursor" -k | grep -c 'Cannot find swap device')
[ "$kern" -ge "$n" ] || fail "kernel said 'Cannot find swap device' $kern times for $n failed attempts"
info "ok: the kernel said 'Cannot find swap device' $kern times"
e=$(journal_since "$cursor" err)
[ -z "$e" ] || fail "errors in the daemon's journal: $e"
info "ok: no error-priority lines from the daemon"

# Nothing lost: the same daemon, never restarted, counting every failure.
expect_eq "the daemon's pid" "$(prop MainPID)" "$pid"
expect_eq "NRestarts" "$(prop NRestarts)" 0
fails1=$(wakelock stats --json | grep -o '"failures":[0-9]*' | head -n 1 | cut -d: -f2)
# (an aborted attempt is a failure there too)
expect_eq "the daemon's failures since the release (wakelock stats) = the ledger's records" \
	$(( fails1 - fails0 )) "$(wc -l </tmp/noswap.json)"
holder_start member-hold /tmp/member.out as_modem
wakelock list | grep -q '^member-hold ' || fail "wakelock list lacks the member's hold: $(wakelock list)"
before=$(records_since "$released" | wc -l)
boot_release
sleep 3
boot_hold
expect_eq "attempts while the member holds" "$(records_since "$released" | wc -l)" "$before"
holder_stop member-hold
if d=$(sandbox_denials); then fail "the sandbox refused the daemon something: $d"; fi
info "ok: no EPERM, EACCES or seccomp record from the daemon"
