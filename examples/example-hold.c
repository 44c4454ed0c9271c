/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The smallest libwakelock client, built against libwakelock.so (only the
 * symbols the version script exports): hold the system awake for the
 * given number of milliseconds.  Usage: example-hold NAME MS
 */
#define _POSIX_C_SOURCE 200809L /* POSIX.1-2008, for a plain -std=c11 build */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <wakelock.h>

int main(int argc, char **argv)
{
	wakelock_client *c;
	wakelock_hold *h;
	struct timespec ts;
	long ms = argc > 2 ? atol(argv[2]) : 0;
	int r;

	if (argc < 2) {
		fprintf(stderr, "usage: %s NAME [MS]\n", argv[0]);
		return 2;
	}
	r = wakelock_client_open(NULL, argv[1], &c);
	if (r == 0)
		r = wakelock_hold_create(c, "example", &h);
	if (r == 0)
		r = wakelock_hold_acquire(h);
	if (r < 0) {
		fprintf(stderr, "%s: %s (%s)\n", argv[0], wakelock_strerror(r), wakelock_last_error());
		return 1;
	}
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	nanosleep(&ts, NULL);
	wakelock_hold_release(h);
	wakelock_hold_destroy(h);
	wakelock_client_close(c);
	return 0;
}
