# `systemctl reload wakelockd` (ExecReload: SIGHUP; RELOADING=1, then READY=1
# from the daemon): the job succeeds, the same process carries on, the
# journal has the reload, the unit is active and was not restarted.
. /tests/lib.sh
. /tests/debian-lib.sh
pid=$(prop MainPID)
restarts=$(prop NRestarts)
mark=$(journal_mark)
out=$(timeout 30 systemctl reload wakelockd 2>&1) || fail "systemctl reload wakelockd: $out"
info "ok: systemctl reload wakelockd succeeded"
reloaded() { journal_since "$mark" info | grep -q '^configuration reloaded'; }
wait_for 20 "'configuration reloaded' at priority info in the journal" reloaded
info "journal: $(journal_since "$mark" | grep 'configuration reloaded')"
expect_eq "MainPID after the reload" "$(prop MainPID)" "$pid"
expect_eq "NRestarts after the reload" "$(prop NRestarts)" "$restarts"
expect_eq "ActiveState after the reload" "$(prop ActiveState)" active
expect_eq "SubState after the reload" "$(prop SubState)" running
if d=$(sandbox_denials); then fail "the sandbox refused the daemon something: $d"; fi
