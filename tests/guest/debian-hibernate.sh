# Hibernation by the packaged daemon under systemd, as suspend-then-
# hibernate: a swap on /dev/vdc (the run's scratch disk), resume=/dev/vdc
# on the kernel command line.  First state = disk under the packaged unit
# as it is (the drop-in of debian-hibernate-lib.sh): DevicePolicy=closed
# refuses the swap, EPERM.  Then state = mem (S3) with hibernate_after_s:
# nothing holding, the daemon suspends to S3 with its own wake alarm
# set, that alarm wakes the guest, and the next attempt writes "disk": the
# kernel writes the image to the swap and powers off; the harness boots
# the same disks again (run-guest --boots 2), the kernel restores the
# image, and this shell goes on where it stopped.  Then: the same boot
# (boot_id, a marker in /run, a process started before), the kernel's own
# word for the restore, the ledger's two records (the suspend woken for
# the hibernation, the hibernation resumed with the time off as its time
# asleep), the same daemon, and its loop still obeying holds.
. /tests/lib.sh
. /tests/debian-lib.sh
. /tests/debian-hibernate-lib.sh
trap 'kill ${holder:-} ${sleeper:-} 2>/dev/null' EXIT
# pm_debug_messages: the restored kernel logs "Hibernation image restored
# successfully" only with it.
pm_trace_on
state_disk_on

# The swap, and the kernel's resume device pointing at it.
[ -b /dev/vdc ] || fail "no /dev/vdc (run-guest --scratch-disk)"
case " $(cat /proc/cmdline) " in *" resume=/dev/vdc "*) ;; *) fail "no resume=/dev/vdc in $(cat /proc/cmdline)" ;; esac
expect_eq "the kernel's resume device (/sys/power/resume)" "$(cat /sys/power/resume)" "$(cat /sys/block/vdc/dev)"
mkswap -L wlswap /dev/vdc >/dev/null || fail "mkswap /dev/vdc"
swapon /dev/vdc || fail "swapon /dev/vdc"
expect_eq "active swap areas" "$(awk 'NR > 1 { print $1 }' /proc/swaps)" /dev/vdc
info "/sys/power/disk: $(cat /sys/power/disk); image_size $(cat /sys/power/image_size) bytes"

# The packaged unit as it is: the kernel may not open the swap for the
# daemon (DevicePolicy=closed), the attempt fails with EPERM, said in the
# journal; then the drop-in that allows the resume device.
t0=$(uptime_ms)
c0=$(journal_mark)
boot_release
wait_for 120 "a failed attempt with the swap on" sh -c \
	". /tests/lib.sh; . /tests/debian-hibernate-lib.sh; records_since $t0 | grep -q '\"outcome\":\"failed\"'"
boot_hold
wait_for 60 "the daemon waiting again" sh -c ". /tests/lib.sh; . /tests/debian-hibernate-lib.sh; daemon_waits"
records_since "$t0" | grep '"outcome":"failed"' | head -n 1 | grep -q '"errno":"EPERM"' ||
	fail "not EPERM: $(records_since "$t0")"
deadline 30
until journal_since "$c0" warning | grep -q 'suspend to disk failed: Operation not permitted'; do
	in_time && { journalctl --sync; sleep 0.5; continue; }
	journalctl -o short-monotonic --no-pager --cursor="$c0" | grep -v kernel: | tail -n 30
	fail "no warning 'suspend to disk failed: Operation not permitted' in the journal within 30 s"
done
info "ok: under DevicePolicy=closed the image cannot be written: EPERM, and the journal says so"
allow_resume_device /dev/vdc
# Suspend-then-hibernate: to S3 first, hibernation after 8 s of it.
state_mem_then_disk 8

# What only a resume keeps: this boot's id, a file in /run (a tmpfs), a
# process, the daemon's pid.
boot_id=$(cat /proc/sys/kernel/random/boot_id)
echo "$boot_id" >/run/wl-hibernate.marker
sleep 100000 &
sleeper=$!
pid=$(prop MainPID)
cursor=$(journal_mark)
released=$(uptime_ms)

# From here the daemon hibernates the guest: this shell is frozen with the
# rest of user space, and thawed in the restored system.
host boot-again
boot_release
wait_for 900 "a resumed hibernation in the ledger" sh -c \
	". /tests/lib.sh; . /tests/debian-hibernate-lib.sh; records_since $released | grep '\"state\":\"disk\"' | grep -q '\"outcome\":\"resumed\"'"
boot_hold
back=$(uptime_ms)
info "resumed: uptime $back ms"

expect_eq "boot_id (the same boot)" "$(cat /proc/sys/kernel/random/boot_id)" "$boot_id"
expect_eq "the marker in /run" "$(cat /run/wl-hibernate.marker 2>/dev/null)" "$boot_id"
kill -0 "$sleeper" 2>/dev/null || fail "the process started before the hibernation is gone"
info "ok: the process started before the hibernation is still there (pid $sleeper)"
journal_since "$cursor" -k | grep -iE 'hibernat|image' >/tmp/kern.txt
cat /tmp/kern.txt
grep -q 'hibernation entry' /tmp/kern.txt || fail "the kernel log has no 'hibernation entry'"
grep -q 'Hibernation image restored successfully' /tmp/kern.txt ||
	fail "the kernel log has no 'Hibernation image restored successfully'"
grep -q 'hibernation exit' /tmp/kern.txt || fail "the kernel log has no 'hibernation exit'"
info "ok: the kernel restored the image"

# The ledger: two attempts since the release.  The suspend to S3,
# resumed by the daemon's own wake about 8 s after it began (its cause
# hibernate_after), then the hibernation, resumed, asleep for at least the
# time QEMU was off and booting again (more than 5 s under TCG).
records_since "$released" >/tmp/both.json
cat /tmp/both.json
expect_eq "attempts since the release" "$(wc -l </tmp/both.json)" 2
head -n 1 /tmp/both.json >/tmp/idle.json
grep -q '"outcome":"resumed"' /tmp/idle.json || fail "the suspend did not resume: $(cat /tmp/idle.json)"
grep -q '"state":"mem"' /tmp/idle.json || fail "the first attempt was not a suspend to S3: $(cat /tmp/idle.json)"
grep -q '"cause":"hibernate_after"' /tmp/idle.json ||
	fail "the suspend was not woken by the daemon's wake for the hibernation: $(cat /tmp/idle.json)"
idle=$(field asleep_ms </tmp/idle.json)
[ "${idle:-0}" -ge 3000 ] && [ "${idle:-0}" -le 12000 ] ||
	fail "asleep_ms $idle in the suspend: expected about 8 s less its entry (3..12 s)"
info "ok: suspended to S3 for $idle ms, woken for the hibernation"
tail -n 1 /tmp/both.json >/tmp/hib.json
grep -q '"state":"disk"' /tmp/hib.json || fail "the second attempt did not write disk: $(cat /tmp/hib.json)"
grep -q '"outcome":"resumed","errno":null' /tmp/hib.json || fail "the attempt did not resume: $(cat /tmp/hib.json)"
asleep=$(field asleep_ms </tmp/hib.json)
[ "${asleep:-0}" -ge 5000 ] || fail "asleep_ms $asleep: less than the time the guest was off"
info "ok: the ledger has the attempt resumed, $asleep ms off (asleep_source $(sed -n 's/.*"asleep_source":"\([a-z_]*\)".*/\1/p' </tmp/hib.json))"
wakelock wakes | tail -n 2

# The same daemon, and no complaint from it.
expect_eq "the daemon's pid" "$(prop MainPID)" "$pid"
expect_eq "NRestarts" "$(prop NRestarts)" 0
expect_eq "ActiveState" "$(prop ActiveState)" active
w=$(journal_since "$cursor" warning; journal_since "$cursor" err)
[ -z "$w" ] || fail "warnings or errors in the daemon's journal since the release: $w"
info "ok: no warning or error from the daemon"

# Its loop goes on: past the 20 s after the resume (min-awake-ms), a
# group member's hold keeps it from the next attempt.
wait_for 60 "the daemon waiting again after its grace" sh -c \
	". /tests/lib.sh; . /tests/debian-hibernate-lib.sh; daemon_waits"
holder_start member-hold /tmp/member.out as_modem
boot_release
wait_for 20 "the daemon waiting for the member's hold" sh -c \
	". /tests/lib.sh; . /tests/debian-hibernate-lib.sh; [ \"\$(daemon_state)\" = waiting-for-holds ]"
sleep 3
boot_hold
expect_eq "attempts while the member holds" "$(records_since "$released" | wc -l)" 2
holder_stop member-hold
d=$(journal_since "$cursor" | grep -iE 'not permitted|permission denied|EPERM|EACCES|seccomp')
[ -z "$d" ] || fail "the sandbox refused the daemon something since the drop-in: $d"
info "ok: no EPERM or EACCES from the daemon since the resume device was allowed"
swapoff /dev/vdc || fail "swapoff /dev/vdc"
