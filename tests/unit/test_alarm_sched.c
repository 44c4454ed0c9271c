/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Wake alarm scheduling without clocks: one alarm, periodic re-arming on
 * a fixed grid, coalescing of overlapping windows, cancel, limits. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "daemon/alarm_sched.h"

#define MS 1000000ull
#define T0 (1000 * MS)    /* an arbitrary boot time */

static void test_one_shot(void **st)
{
	struct wl_alarm_times t = { 0 };
	(void)st;

	assert_int_equal(alarm_sched_next(&t, 1), 0);          /* disarmed */
	assert_int_equal(alarm_sched_set(&t, T0, 50, 0, 0), 0);
	assert_int_equal(t.due, T0 + 50 * MS);
	assert_int_equal(alarm_sched_next(&t, 1), T0 + 50 * MS);
	assert_false(alarm_sched_due(&t, T0 + 50 * MS - 1));    /* never early */
	assert_true(alarm_sched_due(&t, T0 + 50 * MS));
	assert_int_equal(alarm_sched_fire(&t, T0 + 53 * MS), 3 * MS);
	assert_int_equal(t.due, 0);                             /* one-shot: done */
	assert_false(alarm_sched_due(&t, T0 + 100 * MS));
	assert_int_equal(alarm_sched_next(&t, 1), 0);
	/* Zero delay: due at once. */
	assert_int_equal(alarm_sched_set(&t, T0, 0, 0, 0), 0);
	assert_true(alarm_sched_due(&t, T0));
}

static void test_periodic_no_drift(void **st)
{
	struct wl_alarm_times t = { 0 };
	uint64_t start = T0 + 100 * MS;
	(void)st;

	assert_int_equal(alarm_sched_set(&t, T0, 100, 100, 10), 0);
	/* Fired late by a varying amount every time: the grid does not move. */
	for (uint64_t k = 0; k < 1000; k++) {
		uint64_t due = start + k * 100 * MS, late = (k * 7) % 11 * MS / 2;

		assert_int_equal(t.due, due);
		assert_int_equal(alarm_sched_next(&t, 1), due + 10 * MS);
		assert_int_equal(alarm_sched_fire(&t, due + late), late);
	}
	assert_int_equal(t.due, start + 1000 * 100 * MS);
	/* Missed expiries (asleep without a wake-capable timer) are not
	 * replayed: the next one is the first grid point after now. */
	uint64_t due = t.due;
	assert_int_equal(alarm_sched_fire(&t, due + 350 * MS), 350 * MS);
	assert_int_equal(t.due, due + 400 * MS);
	/* Exactly on a later grid point: that point is this fire. */
	due = t.due;
	assert_int_equal(alarm_sched_fire(&t, due + 200 * MS), 200 * MS);
	assert_int_equal(t.due, due + 300 * MS);
}

static void test_coalesce_overlapping(void **st)
{
	struct wl_alarm_times a[3] = { { 0 } };
	uint64_t at;
	(void)st;

	/* Windows [100,150], [120,220], [140,160] ms overlap at 140..150. */
	assert_int_equal(alarm_sched_set(&a[0], T0, 100, 0, 50), 0);
	assert_int_equal(alarm_sched_set(&a[1], T0, 120, 0, 100), 0);
	assert_int_equal(alarm_sched_set(&a[2], T0, 140, 0, 20), 0);
	at = alarm_sched_next(a, 3);
	assert_int_equal(at, T0 + 150 * MS);  /* as late as the tightest allows */
	for (int i = 0; i < 3; i++)
		assert_true(alarm_sched_due(&a[i], at));
	assert_int_equal(alarm_sched_fire(&a[0], at), 50 * MS);
	assert_int_equal(alarm_sched_fire(&a[1], at), 30 * MS);
	assert_int_equal(alarm_sched_fire(&a[2], at), 10 * MS);
	assert_int_equal(alarm_sched_next(a, 3), 0);      /* one wake-up for three */
}

static void test_no_coalesce_disjoint(void **st)
{
	struct wl_alarm_times a[2] = { { 0 } };
	uint64_t at;
	(void)st;

	/* [100,110] and [200,250]: two wake-ups, neither early nor late. */
	assert_int_equal(alarm_sched_set(&a[0], T0, 100, 0, 10), 0);
	assert_int_equal(alarm_sched_set(&a[1], T0, 200, 0, 50), 0);
	at = alarm_sched_next(a, 2);
	assert_int_equal(at, T0 + 110 * MS);
	assert_true(alarm_sched_due(&a[0], at));
	assert_false(alarm_sched_due(&a[1], at));
	alarm_sched_fire(&a[0], at);
	at = alarm_sched_next(a, 2);
	assert_int_equal(at, T0 + 250 * MS);
	assert_true(alarm_sched_due(&a[1], at));
	/* A window that ends before the other starts: not pulled in even if
	 * the other's due time is only 1 ns later. */
	assert_int_equal(alarm_sched_set(&a[0], T0, 100, 0, 10), 0);
	a[1].due = T0 + 110 * MS + 1;
	a[1].window = 0;
	at = alarm_sched_next(a, 2);
	assert_false(alarm_sched_due(&a[1], at));
}

static void test_cancel(void **st)
{
	struct wl_alarm_times a[2] = { { 0 } };
	(void)st;

	assert_int_equal(alarm_sched_set(&a[0], T0, 10, 10, 0), 0);
	assert_int_equal(alarm_sched_set(&a[1], T0, 500, 0, 0), 0);
	assert_int_equal(alarm_sched_next(a, 2), T0 + 10 * MS);
	alarm_sched_cancel(&a[0]);
	assert_false(alarm_sched_due(&a[0], T0 + 1000 * MS));
	assert_int_equal(alarm_sched_next(a, 2), T0 + 500 * MS);
	alarm_sched_cancel(&a[1]);
	assert_int_equal(alarm_sched_next(a, 2), 0);
	/* Re-setting replaces the schedule. */
	assert_int_equal(alarm_sched_set(&a[0], T0, 7, 0, 0), 0);
	assert_int_equal(alarm_sched_set(&a[0], T0, 9, 0, 1), 0);
	assert_int_equal(alarm_sched_next(a, 2), T0 + 10 * MS);
}

static void test_limits(void **st)
{
	struct wl_alarm_times t = { .due = 42, .period = 43, .window = 44 };
	(void)st;

	assert_int_equal(alarm_sched_set(&t, T0, 10, 100, 101), -EINVAL);
	assert_int_equal(alarm_sched_set(&t, T0, UINT64_MAX, 0, 0), -EOVERFLOW);
	assert_int_equal(alarm_sched_set(&t, T0, UINT64_MAX / MS, 0, 0), -EOVERFLOW);
	assert_int_equal(alarm_sched_set(&t, UINT64_MAX - 5, 0, 0, 0), -EOVERFLOW);
	assert_int_equal(alarm_sched_set(&t, ALARM_SCHED_MAX_NS - 10 * MS, 9, 0, 2),
	                 -EOVERFLOW);
	/* Unchanged by the failures. */
	assert_int_equal(t.due, 42);
	assert_int_equal(t.period, 43);
	assert_int_equal(t.window, 44);
	/* Edges that are fine: window == period, one-shot with any window,
	 * the largest values of the 32-bit arguments. */
	assert_int_equal(alarm_sched_set(&t, T0, 10, 100, 100), 0);
	assert_int_equal(alarm_sched_set(&t, T0, 10, 0, UINT32_MAX), 0);
	assert_int_equal(alarm_sched_set(&t, T0, 10, UINT32_MAX, UINT32_MAX), 0);
	assert_int_equal(t.period, (uint64_t)UINT32_MAX * MS);
	assert_int_equal(alarm_sched_set(&t, ALARM_SCHED_MAX_NS - 10 * MS, 9, 0, 1), 0);
	/* A periodic alarm whose next expiry would leave the representable
	 * range disarms instead of wrapping around into the past. */
	t = (struct wl_alarm_times){ .due = ALARM_SCHED_MAX_NS - 5 * MS, .period = 10 * MS };
	alarm_sched_fire(&t, t.due);
	assert_int_equal(t.due, 0);
	/* Times scribbled into the segment: the sum saturates instead of
	 * wrapping into the past (which would spin the daemon's timer). */
	t = (struct wl_alarm_times){ .due = T0, .window = UINT64_MAX };
	assert_int_equal(alarm_sched_latest(&t), ALARM_SCHED_MAX_NS);
	assert_false(alarm_sched_due(&t, T0 - 1));
}

/* Random alarms through the daemon's loop (timer at next(), fire what is
 * due): every fire lies in its window, and sharing wake-ups happens. */
static void test_random_schedules_stay_in_window(void **st)
{
	enum { N = 12 };
	struct wl_alarm_times a[N];
	uint64_t now = T0, wakeups = 0, fires = 0;
	(void)st;

	srand(7);
	for (int i = 0; i < N; i++) {
		uint32_t period = 50 + (uint32_t)(rand() % 400);
		assert_int_equal(alarm_sched_set(&a[i], now, (uint64_t)(rand() % 300), period,
		                                 (uint32_t)rand() % (period + 1)), 0);
	}
	for (int step = 0; step < 5000; step++) {
		uint64_t at = alarm_sched_next(a, N);
		int fired = 0;

		assert_true(at >= now || step == 0);
		now = at;
		for (int i = 0; i < N; i++) {
			uint64_t due = a[i].due, win = a[i].window;

			if (!alarm_sched_due(&a[i], now))
				continue;
			assert_true(now >= due && now <= due + win);
			alarm_sched_fire(&a[i], now);
			assert_true(a[i].due > now);
			fired++;
		}
		assert_true(fired >= 1);      /* the timer never fires for nothing */
		wakeups++;
		fires += (uint64_t)fired;
	}
	assert_true(fires > wakeups);     /* windows were shared */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_shot),
		cmocka_unit_test(test_periodic_no_drift),
		cmocka_unit_test(test_coalesce_overlapping),
		cmocka_unit_test(test_no_coalesce_disjoint),
		cmocka_unit_test(test_cancel),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_random_schedules_stay_in_window),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
