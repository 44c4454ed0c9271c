# A ring while the system is awake is a wakeup event: gpio-keys holds the
# device's wakeup source from the edge's interrupt until it has reported
# the key, so each edge (ring, then its end) moves the source's counts and
# the global wakeup_count, and the key reaches a reader polling evdev
# (without EPOLLWAKEUP, whose own source would move the count too).  Controls: the same edges with power/wakeup disabled, and
# with the key described without "wakeup-source", still deliver the key
# but move no count.
. /tests/ring-lib.sh
trap 'rmmod wlring 2>/dev/null' EXIT
ring_chip

# ring_twice WHAT: ring and stop ringing 200 ms apart; the reader must get
# both edges as KEY_PHONE (169) down and up.
ring_twice() {
	start_reader 2 5000 plain
	ring_edge pull-down
	sleep 0.2
	ring_edge pull-up
	wait_reader "$1"
	expect_eq "$1: keys read" "$got" "key 169 1 key 169 0 "
}

ring_load
expect_eq "gpio-keys power/wakeup" "$(cat $keys/power/wakeup)" enabled
ws=$(keys_ws)
[ -n "$ws" ] || fail "no wakeup source named gpio-keys in /sys/class/wakeup"
e0=$(cat $ws/event_count) a0=$(cat $ws/active_count) n0=$(wakeup_count)
ring_twice "wakeup-source"
expect_eq "gpio-keys event_count after two edges" $(( $(cat $ws/event_count) - e0 )) 2
expect_eq "gpio-keys active_count after two edges" $(( $(cat $ws/active_count) - a0 )) 2
n1=$(wakeup_count)
expect_eq "global wakeup_count after two edges" $((n1 - n0)) 2

echo disabled >$keys/power/wakeup || fail "cannot disable gpio-keys' power/wakeup"
[ -z "$(keys_ws)" ] || fail "gpio-keys kept its wakeup source with power/wakeup disabled"
ring_twice "power/wakeup disabled"
expect_eq "global wakeup_count, power/wakeup disabled" $(( $(wakeup_count) - n1 )) 0
ring_unload

ring_load wakeup=0
[ -z "$(cat $keys/power/wakeup 2>/dev/null)" ] ||
	fail "gpio-keys is enabled for wakeup without wakeup-source"
[ -z "$(keys_ws)" ] || fail "gpio-keys has a wakeup source without wakeup-source"
n2=$(wakeup_count)
ring_twice "no wakeup-source"
expect_eq "global wakeup_count, no wakeup-source" $(( $(wakeup_count) - n2 )) 0
ring_unload
trap - EXIT
