# The guest offers both sleep states the project relies on.
. /tests/lib.sh
states=$(cat /sys/power/state)
info "/sys/power/state: $states"
case " $states " in *" freeze "*) ;; *) fail "freeze (suspend-to-idle) not offered" ;; esac
case " $states " in *" mem "*) ;; *) fail "mem not offered" ;; esac
modes=$(cat /sys/power/mem_sleep)
info "/sys/power/mem_sleep: $modes"
case "$modes" in *deep*) ;; *) fail "mem_sleep lacks deep (ACPI S3)" ;; esac
[ -e /sys/class/tty/ttyS1/power/wakeup ] || fail "ttyS1 is not wakeup-capable"
[ -e /sys/class/rtc/rtc0 ] || fail "no RTC"
