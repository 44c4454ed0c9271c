# The error paths of /sys/power/wakeup_count, each with its errno: EINTR for
# a blocked read hit by a signal, EINVAL for a stale or busy or non-numeric
# write, EBUSY for any write while autosleep is on (wakeup-count-errors.c).
. /tests/lib.sh
command -v wakeup-count-errors >/dev/null || fail "wakeup-count-errors not in the image"
[ -e /sys/power/autosleep ] || fail "no /sys/power/autosleep (CONFIG_PM_AUTOSLEEP off?)"
wakeup-count-errors || fail "see above"
