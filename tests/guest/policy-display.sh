# Phone policy on vkms and a backlight: a display that is on keeps the
# guest awake (0 suspends in 10 s); turned off, the first attempt comes
# display_off_delay_ms after, within one re-check earlier and 300 ms later.
# The same for a backlight, whose changes arrive as uevents.
. /tests/policy-lib.sh
DELAY=2000
modem_open
pm_trace_on
insmod /lib/modules/wlpresence.ko || fail "cannot load wlpresence.ko"
bl=/sys/class/backlight/wlpresence
trap 'kill $daemon $dpms 2>/dev/null; echo 0 >$bl/brightness; rmmod wlpresence 2>/dev/null' EXIT
expect_eq "vkms connector before any modeset" "$(cat $connector/enabled)" disabled

start_fed dpms 5 wl-dpms; dpms=$fed_pid
fed dpms 5 on
expect_eq "connector enabled after the modeset" "$(cat $connector/enabled)" enabled
expect_eq "connector dpms" "$(cat $connector/dpms)" On

hold
start_daemon --state freeze --policy phone --display-off-delay-ms $DELAY --min-awake-ms 3000 \
	--start-grace-ms 0 $STAMP --log-level info
unhold
base=$(suspend_stat success)
sleep 10
expect_eq "suspends in 10 s with the display on" $(( $(suspend_stat success) - base )) 0
expect_eq "attempts in 10 s with the display on" "$(stamps)" 0
wakelock status | grep -q "display card0-Virtual-1 on" ||
	fail "wakelock status does not show the display on: $(wakelock status)"
info "ok: wakelock status: $(wakelock status | grep display)"

off() { fed dpms 5 off; expect_eq "connector dpms after off" "$(cat $connector/dpms)" Off; }
timed_attempt "DPMS off to the first attempt" $((DELAY - 1100)) $((DELAY + 300)) off

# The backlight: lit with the connector blanked, it keeps the guest awake.
echo 0 >$bl/bl_power
echo 120 >$bl/brightness
n=$(stamps)
unhold
sleep 4
expect_eq "attempts in 4 s with the backlight lit" "$(stamps)" $n
wakelock status | grep -q "display wlpresence on" ||
	fail "wakelock status does not show the backlight on: $(wakelock status)"
dark() { echo 0 >$bl/brightness; }
timed_attempt "backlight off to the first attempt" $((DELAY - 1100)) $((DELAY + 300)) dark
kill -TERM $daemon
wait $daemon
expect_eq "daemon exit status after SIGTERM" $? 0
unhold
