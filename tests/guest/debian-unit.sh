# wakelockd as a user has it after `apt install ./wakelockd_*.deb` and
# `systemctl enable wakelockd`: systemd started the packaged daemon with the
# packaged, unchanged /etc/wakelockd.conf; the unit (Type=notify) is active
# only because the daemon's READY=1 reached systemd; status and journal show
# its start-up and no error; systemd-analyze security rates the running
# unit at most 2.0, as the host's unit-security stage does offline.
. /tests/lib.sh
. /tests/debian-lib.sh
expect_eq "systemctl is-active wakelockd" "$(systemctl is-active wakelockd)" active
expect_eq "Type" "$(prop Type)" notify
expect_eq "SubState" "$(prop SubState)" running
expect_eq "Result" "$(prop Result)" success
expect_eq "NRestarts" "$(prop NRestarts)" 0
# STATUS= travels in the datagram of READY=1 (daemon/main.c): systemd
# shows it only if that notification arrived.
expect_eq "StatusText (sent with READY=1)" "$(prop StatusText)" "waiting for holds to clear"
pid=$(prop MainPID)
[ "${pid:-0}" -gt 0 ] || fail "no MainPID"
expect_eq "the daemon's program" "$(readlink /proc/$pid/exe)" /usr/sbin/wakelockd
expect_eq "its command line" "$(tr '\0' ' ' </proc/$pid/cmdline)" "/usr/sbin/wakelockd --foreground "
expect_eq "the CLI is the packaged one" "$(command -v wakelock)" /usr/bin/wakelock

# The configuration that runs is the packaged conffile, byte for byte.
want=$(dpkg-query -W -f='${Conffiles}\n' wakelockd | awk '$1 == "/etc/wakelockd.conf" { print $2 }')
[ -n "$want" ] || fail "dpkg does not list /etc/wakelockd.conf as a conffile of wakelockd"
expect_eq "md5 of /etc/wakelockd.conf (the packaged conffile's)" "$(md5sum </etc/wakelockd.conf | cut -d' ' -f1)" "$want"
v=$(dpkg --verify wakelockd libwakelock2)
[ -z "$v" ] || fail "dpkg --verify: $v"
info "ok: dpkg --verify wakelockd libwakelock2: nothing changed"

st=$(SYSTEMD_COLORS=0 systemctl status --no-pager -l -n 20 wakelockd 2>&1)
echo "$st" | sed 's/^/  | /'
bad=$(echo "$st" | grep -iE 'error|fail|warn|denied|not permitted') &&
	fail "systemctl status shows: $bad"
info "ok: systemctl status shows no error"
# The start-up line, as the daemon's own message at priority info: the
# journal adds name, pid and time, and takes the priority from the line.
log=$(journal_since "" info)
echo "$log" | grep -qx 'running: state freeze, socket /run/wakelockd/wakelockd.sock' ||
	fail "no start-up line 'running: state freeze, socket ...' at priority info in the journal: $(journal_since "" | tail -n 8)"
info "ok: the journal has the daemon's start-up at priority info: $(echo "$log" | grep '^running:')"
if w=$(journal_since "" warning; journal_since "" err); [ -n "$w" ]; then
	fail "warnings or errors in the daemon's journal since boot: $w"
fi
info "ok: no warning or error from the daemon since boot"
# Where the boot's time went (systemd-analyze time waits for the boot's
# end, which this plan's unit is part of): monotonic stamps in µs.
ms() { echo $(( $(systemctl show -p "$1" --value ${2:-}) / 1000 )); }
info "boot: systemd started at $(ms UserspaceTimestampMonotonic) ms," \
	"wakelockd ready at $(ms ActiveEnterTimestampMonotonic wakelockd.service) ms," \
	"multi-user.target at $(ms ActiveEnterTimestampMonotonic multi-user.target) ms (uptime)"

sec=$(systemd-analyze security --no-pager wakelockd.service 2>&1)
score=$(echo "$sec" | sed -n 's/.*Overall exposure level for wakelockd.service: \([0-9.]*\).*/\1/p')
[ -n "$score" ] || fail "systemd-analyze security printed no score: $(echo "$sec" | tail -5)"
info "systemd-analyze security wakelockd: exposure $score ($(echo "$sec" | tail -n 1))"
awk -v s="$score" 'BEGIN { exit !(s <= 2.0) }' || fail "exposure $score, more than 2.0"
info "ok: exposure $score <= 2.0"

# What the sandbox leaves the running daemon: its capabilities are the
# unit's CapabilityBoundingSet, no more.
bnd=$(sed -n 's/^CapBnd:[[:space:]]*//p' /proc/$pid/status)
info "CapBnd of the daemon: $bnd"
# CAP_CHOWN 0, CAP_SYS_BOOT 22, CAP_WAKE_ALARM 35, CAP_BLOCK_SUSPEND 36
expect_eq "the daemon's capability bounding set" "$bnd" 0000001800400001
