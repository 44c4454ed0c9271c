/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Guest test helper (static, for the QEMU initramfs): register as NAME,
 * set a wake alarm FIRST_MS from now, then every PERIOD_MS (window 0), and
 * for COUNT fires do WORK_MS of "work" before wakelock_alarm_done().  Per fire it
 * prints
 *   fire K seen=N late_ms=L next_in_ms=G success_before=A success_after=B
 * where L is how long after its due time (CLOCK_BOOTTIME) the fire was
 * seen, G how long after the end of the work the next fire is due (negative:
 * it was due during the work), and A, B are /sys/power/suspend_stats/success
 * when the work starts and ends: a script checks that the system slept
 * between fires (the alarm woke it) and never during the work (the daemon
 * held it awake).  The due times are the alarm's grid, first_ms + k *
 * period_ms: a fire seen more than a period late (a slow resume under TCG)
 * makes the daemon skip the grid points already past, not replay them, so
 * a fire's due time is the last grid point before it was seen.
 * Before finishing the last fire it takes an ordinary hold, prints
 * "holding" and keeps it until killed: with no alarm left nothing would
 * wake the system, so the script needs it awake to stop the daemon.
 * Usage: wl-guest-alarm NAME FIRST_MS PERIOD_MS COUNT WORK_MS
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "wakelock.h"

static long long boottime_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static long success_count(void)
{
	FILE *f = fopen("/sys/power/suspend_stats/success", "re");
	long n = -1;

	if (f) {
		if (fscanf(f, "%ld", &n) != 1)
			n = -1;
		fclose(f);
	}
	return n;
}

static int keep_awake(wakelock_client *c)
{
	wakelock_hold *h;
	int r = wakelock_hold_create(c, "end", &h);

	return r ? r : wakelock_hold_acquire(h);
}

static int number(const char *s, long max, long *out)
{
	char *end;

	*out = strtol(s, &end, 10);
	return *s && !*end && *out >= 0 && *out <= max ? 0 : -1;
}

int main(int argc, char **argv)
{
	long first, period, count, work;
	long long t0, due, prev;
	wakelock_client *c;
	wakelock_alarm *a;
	int r;

	if (argc != 6 || number(argv[2], 86400000, &first) || number(argv[3], 86400000, &period) ||
	    number(argv[4], 1000, &count) || number(argv[5], 60000, &work) || count < 1) {
		fprintf(stderr, "usage: %s NAME FIRST_MS PERIOD_MS COUNT WORK_MS\n", argv[0]);
		return 2;
	}
	r = wakelock_client_open(NULL, argv[1], &c);
	if (r == 0)
		r = wakelock_alarm_create(c, "guest", &a);
	t0 = boottime_ms();
	if (r == 0)
		r = wakelock_alarm_set(a, (uint64_t)first, (uint32_t)period, 0);
	if (r == 0) {
		printf("set\n");
		fflush(stdout);
	}
	prev = -1;
	for (long k = 0; r == 0 && k < count; k++) {
		long before, after;
		long long seen_at, next;

		r = wakelock_alarm_wait(a, -1);
		if (r <= 0)
			break;
		seen_at = boottime_ms();
		if (prev < 0)
			due = t0 + first;
		else if (!period || seen_at < prev + period)
			due = prev + period;    /* early: late_ms comes out negative */
		else
			due = prev + period * ((seen_at - prev) / period);
		before = success_count();
		struct timespec ts = { .tv_sec = work / 1000, .tv_nsec = (work % 1000) * 1000000L };
		nanosleep(&ts, NULL);
		after = success_count();
		/* The daemon re-arms when it fires: the first grid point after then. */
		next = period ? due + period * ((seen_at - due) / period + 1) : due;
		printf("fire %ld seen=%d late_ms=%lld next_in_ms=%lld success_before=%ld success_after=%ld\n",
		       k, r, seen_at - due, next - boottime_ms(), before, after);
		fflush(stdout);
		prev = due;
		r = k == count - 1 ? keep_awake(c) : 0;
		if (r == 0)
			r = wakelock_alarm_done(a);
	}
	if (r < 0) {
		fprintf(stderr, "%s: %s: %s\n", argv[0], wakelock_strerror(r), wakelock_last_error());
		return 1;
	}
	printf("holding\n");
	fflush(stdout);
	for (;;)
		pause();
}
