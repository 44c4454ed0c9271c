# Shared by the plan "ring" (tests/guest/ring-*.sh): a phone's ring line,
# the modem's RI on a GPIO that gpio-keys turns into KEY_PHONE
# (kernel/config/phone.config, kernel/modules/wlring, docs/gpio-ring.md).
# The GPIO is line 0 of a gpio-sim bank labelled "wlring-modem"; the test
# rings by writing the line's sysfs "pull" (RI idles high, pulled low
# while it rings: gpio-keys sees it active low).
. /tests/lib.sh

# ring_chip: make the gpio-sim bank once per boot and leave the line high;
# sets $pull, the line's sysfs attribute.
ring_chip() {
	_cfs=/sys/kernel/config
	grep -q " $_cfs configfs " /proc/mounts || mount -t configfs none $_cfs ||
		fail "cannot mount configfs on $_cfs (CONFIG_CONFIGFS_FS)"
	_sim=$_cfs/gpio-sim/wlring
	if [ ! -d $_sim ]; then
		mkdir $_sim || fail "no gpio-sim in configfs (CONFIG_GPIO_SIM)"
		mkdir $_sim/gpio-bank0 || fail "mkdir gpio-bank0"
		echo wlring-modem >$_sim/gpio-bank0/label || fail "bank label"
		echo 1 >$_sim/gpio-bank0/num_lines || fail "bank num_lines"
		echo 1 >$_sim/live || fail "gpio-sim device did not go live"
	fi
	pull=/sys/devices/platform/$(cat $_sim/dev_name)/$(cat $_sim/gpio-bank0/chip_name)/sim_gpio0/pull
	[ -f "$pull" ] || fail "no $pull"
	echo pull-up >"$pull" || fail "cannot pull the line up"
}

# ring_load ARGS...: load wlring (gpio-keys on the line) with module
# parameters ARGS; waits for gpio-keys to bind and sets $keys (the
# platform device's sysfs directory) and $evdev (its /dev/input/eventN).
ring_load() {
	insmod /lib/modules/wlring.ko "$@" || fail "insmod wlring.ko $*"
	keys=/sys/bus/platform/devices/gpio-keys
	_i=0
	until [ -e $keys/driver ]; do
		_i=$((_i + 1)); [ $_i -lt 50 ] || fail "gpio-keys did not bind to the wlring device: $(dmesg | grep -i gpio | tail -3)"
		sleep 0.1
	done
	evdev=
	for _e in $keys/input/input*/event*; do
		[ -e "$_e" ] && evdev=/dev/input/${_e##*/}
	done
	[ -n "$evdev" ] || fail "no evdev device under gpio-keys (CONFIG_INPUT_EVDEV)"
	# devtmpfs makes the node a moment later, from its own thread.
	_i=0
	until [ -c "$evdev" ]; do
		_i=$((_i + 1)); [ $_i -lt 50 ] || fail "no $evdev in /dev"
		sleep 0.1
	done
	[ "$(cat $keys/input/input*/name)" = wlring ] || fail "the gpio-keys input device is not wlring's"
}

ring_unload() { rmmod wlring || fail "rmmod wlring"; }

# keys_ws: the /sys/class/wakeup entry of the gpio-keys device (empty if
# it has none: not a wakeup device, or power/wakeup disabled).
keys_ws() {
	for _w in /sys/class/wakeup/*; do
		[ "$(cat $_w/name 2>/dev/null)" = gpio-keys ] && echo $_w && return
	done
}

# ring_edge LEVEL: pull-down (the modem rings) or pull-up (it stops).
ring_edge() { echo "$1" >"$pull" || fail "cannot write $1 into $pull"; }

# start_reader N TIMEOUT_MS [plain]: wl-ring reads N key events from
# $evdev under EPOLLWAKEUP, or without it with "plain" (output in
# /tmp/reader.out, pid in $reader).
start_reader() {
	# Not the last reader's "ready": the new one truncates the file only
	# once it runs.
	rm -f /tmp/reader.out
	wl-ring read "$evdev" "$1" "$2" $3 >/tmp/reader.out 2>&1 &
	reader=$!
	_i=0
	until grep -q '^ready' /tmp/reader.out 2>/dev/null; do
		_i=$((_i + 1)); [ $_i -lt 50 ] || fail "wl-ring did not start: $(cat /tmp/reader.out)"
		sleep 0.1
	done
}

# wait_reader WHAT: the reader's exit status must be 0; sets $got to
# its keys on one line.
wait_reader() {
	wait $reader || fail "$1: $(cat /tmp/reader.out)"
	got=$(grep '^key' /tmp/reader.out | tr '\n' ' ')
}
