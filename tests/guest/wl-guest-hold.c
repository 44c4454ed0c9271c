/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Guest test helper (static, for the QEMU initramfs): register as NAME,
 * acquire a hold, print "held <pid>" and keep it until killed or for MS
 * milliseconds (0 = forever).  Lets guest scripts check "no suspend while
 * a hold exists" and "a killed holder lets the system sleep again".
 * Usage: wl-guest-hold NAME [MS]
 *        wl-guest-hold --epoll    (wakelock_epoll_add on a pipe: exit 0 if it
 *                                  succeeded, 3 if EPERM, 1 otherwise)
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "wakelock.h"

static int epoll_check(void)
{
	int p[2], ep = epoll_create1(EPOLL_CLOEXEC), r;

	if (ep < 0 || pipe(p) < 0)
		return 1;
	r = wakelock_epoll_add(ep, p[0], EPOLLIN, 0);
	printf("wakelock_epoll_add: %s%s%s\n", r ? wakelock_strerror(r) : "ok", r ? ": " : "",
	       r ? wakelock_last_error() : "");
	return r == 0 ? 0 : r == -EPERM ? 3 : 1;
}

int main(int argc, char **argv)
{
	wakelock_client *c;
	wakelock_hold *h;
	long ms = argc > 2 ? atol(argv[2]) : 0;
	int r;

	if (argc == 2 && !strcmp(argv[1], "--epoll"))
		return epoll_check();
	if (argc < 2) {
		fprintf(stderr, "usage: %s NAME [MS]\n", argv[0]);
		return 2;
	}
	r = wakelock_client_open(NULL, argv[1], &c);
	if (r == 0)
		r = wakelock_hold_create(c, "guest", &h);
	if (r == 0)
		r = wakelock_hold_acquire(h);
	if (r < 0) {
		fprintf(stderr, "%s: %s: %s\n", argv[0], wakelock_strerror(r), wakelock_last_error());
		return 1;
	}
	printf("held %d\n", (int)getpid());
	fflush(stdout);
	if (ms <= 0)
		for (;;)
			pause();
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
	wakelock_hold_release(h);
	wakelock_client_close(c);
	return 0;
}
