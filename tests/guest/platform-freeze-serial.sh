# Suspend-to-idle, woken by bytes the host writes into ttyS1 once the guest
# has reached the idle loop; the bytes must be readable afterwards.
. /tests/lib.sh
modem_open
pm_trace_on
before=$(suspend_stat success)
host when suspend-to-idle modem-write RING
echo freeze >/sys/power/state || fail "write freeze to /sys/power/state: rc $?"
after=$(suspend_stat success)
expect_eq "suspend_stats/success increment" $((after - before)) 1
got=$(timeout 5 head -c 4 <&3)
expect_eq "bytes read after resume" "$got" RING
info "last wakeup irq: $(cat /sys/power/pm_wakeup_irq 2>/dev/null)"
