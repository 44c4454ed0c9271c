# Serial-port wakeup, test 7: a continuous sender to a reader that stops
# reading (stall_test in serial-lib.sh) on ttyS1, with the default hold (0:
# until the line discipline takes the data). Unlike a USB serial converter,
# the 16550 has no flow control here: it keeps pushing what it receives.
. /tests/lib.sh
. /tests/serial-lib.sh
modem_open 0
modem_drain
stall_test modem-write modem-fill
