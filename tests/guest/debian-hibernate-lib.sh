# Helpers of the plan "debian-hibernate" (sourced after lib.sh and
# debian-lib.sh): the packaged daemon told to hibernate, its ledger read.

# The drop-in a user writes with `systemctl edit wakelockd` to make the
# daemon hibernate (docs/debian-guest.md): the command line overrides
# /etc/wakelockd.conf, which stays the packaged conffile.  min-awake-ms:
# after a resume the daemon stays awake 20 s before it looks for holds
# again; without it, nothing holding, it would hibernate again at once,
# before this shell, thawed with everything else, could take the harness's
# wakelock back.
DROPIN=/etc/systemd/system/wakelockd.service.d/hibernate.conf

# state_disk_on: the drop-in in place and the daemon running with it.
state_disk_on() {
	if ! [ -f "$DROPIN" ]; then
		mkdir -p "${DROPIN%/*}"
		cat >"$DROPIN" <<-EOF
		[Service]
		ExecStart=
		ExecStart=/usr/sbin/wakelockd --foreground --state disk --min-awake-ms 20000
		EOF
		systemctl daemon-reload || fail "systemctl daemon-reload"
		systemctl restart wakelockd || fail "systemctl restart wakelockd: $(systemctl status --no-pager wakelockd 2>&1 | tail -n 10)"
	fi
	wait_active
	_pid=$(prop MainPID)
	case $(tr '\0' ' ' </proc/"$_pid"/cmdline) in
	*"--state disk "*) ;;
	*) fail "the daemon does not run with --state disk: $(tr '\0' ' ' </proc/"$_pid"/cmdline)" ;;
	esac
}

# state_mem_then_disk S: the drop-in's daemon suspending to ACPI S3 and
# hibernating once a spell of sleep is S s old ([suspend]
# hibernate_after_s, --hibernate-after-s); restarts the daemon.  S3, not
# suspend-to-idle: QEMU's RTC alarm does not wake a guest from
# suspend-to-idle (it raises the ACPI fixed RTC event only from S3).
state_mem_then_disk() {
	cat >"$DROPIN" <<-EOF
	[Service]
	ExecStart=
	ExecStart=/usr/sbin/wakelockd --foreground --state mem --mem-sleep deep --hibernate-after-s $1 --min-awake-ms 20000
	EOF
	systemctl daemon-reload || fail "systemctl daemon-reload"
	systemctl restart wakelockd || fail "systemctl restart wakelockd"
	wait_active
	case $(tr '\0' ' ' </proc/"$(prop MainPID)"/cmdline) in
	*"--hibernate-after-s $1 "*) ;;
	*) fail "the daemon does not run with --hibernate-after-s $1" ;;
	esac
}

# records_since MS: the ledger's records (one JSON object a line) whose
# attempt started at or after MS ms of CLOCK_BOOTTIME (uptime_ms).
records_since() {
	wakelock wakes --json | tr -d '\n' | sed -e 's/^\[//' -e 's/\]$//' -e 's/},{"seq"/}\n{"seq"/g' |
		awk -v t="$1" 'match($0, /"start_boottime_ms":[0-9]+/) &&
			substr($0, RSTART + 20, RLENGTH - 20) + 0 >= t'
}

# field NAME: the numeric field NAME of the JSON record on stdin.
field() { sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p"; }

# allow_resume_device DEV: the second drop-in hibernation needs under the
# packaged unit.  The kernel opens the swap device to write the image in
# the context of the process that wrote "disk" to /sys/power/state, the
# daemon, and DevicePolicy=closed (a cgroup device program) refuses it
# that block device: the write fails with EPERM.  Restarts the daemon.
allow_resume_device() {
	cat >"${DROPIN%/*}/resume-device.conf" <<-EOF
	[Service]
	DeviceAllow=$1 rw
	EOF
	systemctl daemon-reload || fail "systemctl daemon-reload"
	systemctl restart wakelockd || fail "systemctl restart wakelockd"
	wait_active
}

# daemon_state: the power loop's state (wakelock status: grace,
# waiting-for-holds, suspending ...).
daemon_state() { wakelock status --json | sed -n 's/.*"abi":"[0-9.]*","state":"\([a-z-]*\)".*/\1/p'; }
# daemon_waits: true while the loop waits for the system to be free (a
# kernel wakeup source active, or holds), not backing off or suspending.
daemon_waits() {
	case $(daemon_state) in reading-wakeup-count | waiting-for-holds) return 0 ;; esac
	return 1
}
