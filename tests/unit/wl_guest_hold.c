/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Guest test helper (static, for the QEMU initramfs): register as NAME,
 * acquire a hold, print "held <pid>" and keep it until killed or for MS
 * milliseconds (0 = forever).  Lets guest scripts check "no suspend while
 * a hold exists" and "a killed holder lets the system sleep again".
 * Usage: wl-guest-hold NAME [MS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "wakelock.h"

int main(int argc, char **argv)
{
	wl_client *c;
	wl_hold *h;
	long ms = argc > 2 ? atol(argv[2]) : 0;
	int r;

	if (argc < 2) {
		fprintf(stderr, "usage: %s NAME [MS]\n", argv[0]);
		return 2;
	}
	r = wl_client_open(NULL, argv[1], &c);
	if (r == 0)
		r = wl_hold_create(c, "guest", &h);
	if (r == 0)
		r = wl_hold_acquire(h);
	if (r < 0) {
		fprintf(stderr, "%s: %s: %s\n", argv[0], wl_strerror(r), wl_last_error());
		return 1;
	}
	printf("held %d\n", (int)getpid());
	fflush(stdout);
	if (ms <= 0)
		for (;;)
			pause();
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
	wl_hold_release(h);
	wl_client_close(c);
	return 0;
}
