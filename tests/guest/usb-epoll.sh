# USB serial wakeup, test 5: a reader polling ttyUSB0 with EPOLLWAKEUP, port
# hold 0 (the default). serial-epoll-gap checks that the port's source was
# activated once for the data and that, from epoll_wait's return until the
# reader's next epoll_wait (3 s of work later), a wakeup source stays active
# (the epoll item's, activated when the line discipline woke the poller).
. /tests/lib.sh
. /tests/serial-lib.sh
. /tests/usb-lib.sh
command -v serial-epoll-gap >/dev/null || fail "serial-epoll-gap is not in the image"
usb_open
modem_drain
exec 3<&-
settle
host after 1500 usb-write CALL
serial-epoll-gap /dev/ttyUSB0 $TTY 0 || fail "EPOLLWAKEUP hand-off on ttyUSB0"
settle
