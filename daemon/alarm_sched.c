/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Wake alarm scheduling: pure arithmetic, see alarm_sched.h. */
#include <errno.h>
#include "alarm_sched.h"

#define NS_PER_MS 1000000u

int alarm_sched_set(struct wl_alarm_times *t, uint64_t now, uint64_t first_ms,
                    uint32_t period_ms, uint32_t window_ms)
{
	uint64_t first, due, latest;

	if (period_ms && window_ms > period_ms)
		return -EINVAL;
	if (__builtin_mul_overflow(first_ms, NS_PER_MS, &first) ||
	    __builtin_add_overflow(now, first, &due) ||
	    __builtin_add_overflow(due, (uint64_t)window_ms * NS_PER_MS, &latest) ||
	    latest > ALARM_SCHED_MAX_NS)
		return -EOVERFLOW;
	/* 0 means disarmed; only a clock at its epoch could produce it. */
	t->due = due ? due : 1;
	t->period = (uint64_t)period_ms * NS_PER_MS;
	t->window = (uint64_t)window_ms * NS_PER_MS;
	return 0;
}

void alarm_sched_cancel(struct wl_alarm_times *t)
{
	t->due = 0;
}

uint64_t alarm_sched_latest(const struct wl_alarm_times *t)
{
	uint64_t l;

	if (!t->due)
		return 0;
	/* set() and fire() keep it below ALARM_SCHED_MAX_NS; the segment is
	 * writable by its clients, though, and a wrapped sum would fire the
	 * timer in the past for an alarm not yet due, over and over. */
	if (__builtin_add_overflow(t->due, t->window, &l) || l > ALARM_SCHED_MAX_NS)
		return ALARM_SCHED_MAX_NS;
	return l;
}

uint64_t alarm_sched_merge(uint64_t next, const struct wl_alarm_times *t)
{
	uint64_t l = alarm_sched_latest(t);

	if (l && (!next || l < next))
		return l;
	return next;
}

uint64_t alarm_sched_next(const struct wl_alarm_times *t, size_t n)
{
	uint64_t next = 0;

	for (size_t i = 0; i < n; i++)
		next = alarm_sched_merge(next, &t[i]);
	return next;
}

int alarm_sched_due(const struct wl_alarm_times *t, uint64_t now)
{
	return t->due && t->due <= now;
}

uint64_t alarm_sched_fire(struct wl_alarm_times *t, uint64_t now)
{
	uint64_t late = now > t->due ? now - t->due : 0, skip, next;

	if (!t->period) {
		t->due = 0;
		return late;
	}
	/* Expiries missed while asleep or delayed are not replayed: the next
	 * one is the first point of the grid after now. */
	skip = late / t->period + 1;
	if (__builtin_mul_overflow(skip, t->period, &next) ||
	    __builtin_add_overflow(t->due, next, &next) ||
	    next + t->window < next || next + t->window > ALARM_SCHED_MAX_NS)
		t->due = 0;      /* beyond any representable time: done */
	else
		t->due = next;
	return late;
}
