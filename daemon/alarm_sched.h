/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef WLD_ALARM_SCHED_H
#define WLD_ALARM_SCHED_H

#include <stddef.h>
#include <stdint.h>
#include "lib/wl_shm.h"

/*
 * Scheduling of wake alarms, as pure functions of their times and `now`
 * (CLOCK_BOOTTIME ns): no clock, no lock, no daemon, so every rule is
 * unit-tested directly.
 *
 * Coalescing: each armed alarm may fire anywhere in [due, due + window].
 * The timer is set to the earliest window end of all alarms, and when it
 * expires every alarm already due fires: an alarm fires as late as its
 * own window allows unless an earlier window ends after its due time, in
 * which case it rides along with that wake-up.  No alarm ever fires
 * before its due time or after its window.
 */

/* Largest time (ns) any alarm computation may reach: the timer takes a
 * signed 64-bit timespec. */
#define ALARM_SCHED_MAX_NS ((uint64_t)INT64_MAX)

/* Arm t: first expiry first_ms from now, then every period_ms (0: once),
 * each at most window_ms late.  -EINVAL if a periodic alarm's window
 * exceeds its period (it could then fire less often than asked and
 * drift), -EOVERFLOW if a time would exceed ALARM_SCHED_MAX_NS.  t is
 * unchanged on error. */
int alarm_sched_set(struct wl_alarm_times *t, uint64_t now, uint64_t first_ms,
                    uint32_t period_ms, uint32_t window_ms);
void alarm_sched_cancel(struct wl_alarm_times *t);
/* The latest time t may fire (due + window), 0 when disarmed. */
uint64_t alarm_sched_latest(const struct wl_alarm_times *t);
/* The earlier of next (0 = none) and t's latest fire time. */
uint64_t alarm_sched_merge(uint64_t next, const struct wl_alarm_times *t);
/* When to set the timer for n alarms: 0 = none armed. */
uint64_t alarm_sched_next(const struct wl_alarm_times *t, size_t n);
/* 1 if t must fire at now. */
int alarm_sched_due(const struct wl_alarm_times *t, uint64_t now);
/* t fires at now (it is due): returns how late (ns after due); a periodic
 * alarm moves to its next due time after now on its own grid (due + k *
 * period, never now + period: no drift), a one-shot one disarms. */
uint64_t alarm_sched_fire(struct wl_alarm_times *t, uint64_t now);

#endif
