/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Resume notifications, built against libwakelock.so: poll
 * the notification fd and print, after each suspend attempt, whether the
 * system slept, for how long, and what woke it; COUNT lines, then exit.
 * Usage: example-resume NAME COUNT
 */
#define _POSIX_C_SOURCE 200809L /* POSIX.1-2008, for a plain -std=c11 build */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <wakelock.h>

int main(int argc, char **argv)
{
	struct wakelock_resume res;
	wakelock_client *c;
	long count = argc > 2 ? atol(argv[2]) : 0;
	int fd = -1, r;

	if (argc != 3 || count < 1) {
		fprintf(stderr, "usage: %s NAME COUNT\n", argv[0]);
		return 2;
	}
	r = wakelock_client_open(NULL, argv[1], &c);
	if (r == 0)
		r = fd = wakelock_resume_fd(c);
	while (r >= 0 && count > 0) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (poll(&p, 1, -1) < 0)
			continue;
		r = wakelock_resume_read(c, &res);
		if (r == 1) {
			printf("attempt %llu: %s, %llu ms asleep, woken by %s (%u not reported)\n",
			       (unsigned long long)res.seq,
			       res.slept ? "slept" : res.error == EBUSY ? "aborted" : "failed",
			       (unsigned long long)res.asleep_ms, res.cause, res.missed);
			fflush(stdout);
			count--;
		}
	}
	if (r < 0) {
		fprintf(stderr, "%s: %s (%s)\n", argv[0], wakelock_strerror(r), wakelock_last_error());
		return 1;
	}
	wakelock_client_close(c);
	return 0;
}
