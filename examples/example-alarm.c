/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The smallest wake alarm client, built against libwakelock.so (only the
 * symbols the version script exports): be woken
 * MS milliseconds from now, every PERIOD ms for COUNT times, and do the
 * "work" (print a line) before the system may sleep again.
 * Usage: example-alarm NAME MS [PERIOD COUNT]
 */
#define _POSIX_C_SOURCE 200809L /* POSIX.1-2008, for a plain -std=c11 build */
#include <stdio.h>
#include <stdlib.h>
#include <wakelock.h>

int main(int argc, char **argv)
{
	wakelock_client *c;
	wakelock_alarm *a;
	long period = argc > 3 ? atol(argv[3]) : 0, count = argc > 4 ? atol(argv[4]) : 1;
	int r;

	if (argc < 3 || period < 0 || count < 1) {
		fprintf(stderr, "usage: %s NAME MS [PERIOD COUNT]\n", argv[0]);
		return 2;
	}
	r = wakelock_client_open(NULL, argv[1], &c);
	if (r == 0)
		r = wakelock_alarm_create(c, "example", &a);
	if (r == 0)
		r = wakelock_alarm_set(a, (uint64_t)atoll(argv[2]), (uint32_t)period, 0);
	while (r == 0 && count > 0) {
		r = wakelock_alarm_wait(a, -1);
		if (r > 0) {
			printf("woken (%d)\n", r);
			count -= r;
			r = wakelock_alarm_done(a);
		}
	}
	if (r < 0) {
		fprintf(stderr, "%s: %s (%s)\n", argv[0], wakelock_strerror(r), wakelock_last_error());
		return 1;
	}
	wakelock_alarm_destroy(a);
	wakelock_client_close(c);
	return 0;
}
