/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The EPOLLWAKEUP hand-off (design.md §3, "Closing the hand-off window"). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "wl_client.h"

/*
 * Whether the kernel kept EPOLLWAKEUP on fd's item in epfd.  Without
 * CAP_BLOCK_SUSPEND, epoll_ctl() silently drops the flag; the item's line
 * in /proc/self/fdinfo/EPFD ("tfd: FD events: MASK ...", MASK in hex) is
 * the only place that tells.  1 kept, 0 dropped, -errno if unknown.
 */
static int wakeup_kept(int epfd, int fd)
{
	char path[64], line[256];
	int r = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", epfd);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		int tfd;
		unsigned mask;

		if (sscanf(line, "tfd: %d events: %x", &tfd, &mask) == 2 && tfd == fd) {
			r = !!(mask & EPOLLWAKEUP);
			break;
		}
	}
	fclose(f);
	return r;
}

int wakelock_epoll_add(int epfd, int fd, uint32_t events, uint64_t data)
{
	struct epoll_event ev = { .events = events | EPOLLWAKEUP, .data.u64 = data };

	/* With EPOLLET or EPOLLONESHOT the kernel relaxes the item's wakeup
	 * source when the event is delivered, not at the next epoll_wait:
	 * the window we want closed would be open again. */
	if (events & (EPOLLET | EPOLLONESHOT))
		return -EINVAL;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
		return -errno;
	/* The hand-off needs the kernel's source: fail rather than pretend.
	 * (Unknown, e.g. without /proc: trust the call.  A kernel without
	 * CONFIG_PM_SLEEP, which has no wakeup_count, drops the flag for
	 * everyone and never suspends: nothing to hand off there.) */
	if (wakeup_kept(epfd, fd) == 0 && access("/sys/power/wakeup_count", F_OK) == 0) {
		epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL);
		wl_set_error("the kernel ignored EPOLLWAKEUP: this process lacks "
		             "CAP_BLOCK_SUSPEND (grant it, e.g. AmbientCapabilities="
		             "CAP_BLOCK_SUSPEND in its unit)");
		return -EPERM;
	}
	return 0;
}

int wakelock_epoll_wait(wakelock_hold *h, int epfd, struct epoll_event *events,
                  int maxevents, int timeout_ms)
{
	struct wl_hold_meta *m;
	int n, r;

	if (!h)
		return -EINVAL;
	m = wl_hold_meta(h);
	/*
	 * Release the previous batch's hold before blocking.  This is safe:
	 * the kernel's EPOLLWAKEUP source for that batch is still active
	 * until the epoll_wait() below runs, so the daemon cannot complete a
	 * wakeup_count handshake in between.
	 */
	if (m->epoll_held) {
		m->epoll_held = 0;
		wakelock_hold_release(h);
	}
	do
		n = epoll_wait(epfd, events, maxevents, timeout_ms);
	while (n < 0 && errno == EINTR && timeout_ms < 0);
	if (n < 0)
		return -errno;
	if (n > 0) {
		/* Take over from the kernel while its source is still held. */
		r = wakelock_hold_acquire(h);
		if (r < 0)
			return r;
		m->epoll_held = 1;
	}
	return n;
}
