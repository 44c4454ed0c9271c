# USB serial wakeup, test 3: a continuous sender to a reader that stops reading
# (stall_test in serial-lib.sh) on ttyUSB0, with the default hold (0: until
# the line discipline takes the data).
. /tests/lib.sh
. /tests/serial-lib.sh
. /tests/usb-lib.sh
usb_open
modem_drain
stall_test usb-write usb-fill
