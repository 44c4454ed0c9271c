# Serial-port wakeup, test 3: a reader using epoll with EPOLLWAKEUP on /dev/ttyS1 never
# leaves a gap without an active wakeup source between a byte's arrival and
# its next epoll_wait. The work is done by serial-epoll-gap (a static binary
# built from tests/guest/serial-epoll-gap.c into build/guest/bin).
. /tests/lib.sh
. /tests/serial-lib.sh
command -v serial-epoll-gap >/dev/null ||
	fail "serial-epoll-gap is not in the image (build tests/guest/serial-epoll-gap.c into build/guest/bin)"
stty -F /dev/ttyS1 raw -echo 115200 || fail "stty on ttyS1"
# A 1000 ms hold: the reader must see the port source still active when
# epoll_wait returns, even on a slow (KASAN, loaded) guest.
echo enabled >$TTY/power/wakeup || fail "cannot enable wakeup on ttyS1"
echo 1000 >$TTY/wakeup_hold_ms
settle
for round in 1 2 3; do
	host after 1500 modem-write CALL$round
	serial-epoll-gap /dev/ttyS1 $TTY 1000 || fail "round $round"
	settle
done
# Hold 0 (the default): the port's source ends when the line discipline has
# taken the data, the item's source from there.
echo 0 >$TTY/wakeup_hold_ms
settle
host after 1500 modem-write CALL0
serial-epoll-gap /dev/ttyS1 $TTY 0 || fail "round with hold 0"
settle
