/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The daemon's lock over its published state, and the phase futex.
 *
 * The lock is an ordinary process-private mutex: only the daemon's own
 * threads take it (clients map the segment read-only and never lock), so
 * no other process can leave it taken, and nothing in the daemon ever
 * waits for a client.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "wl_shm.h"

void wl_lock(struct wl_shm_header *hdr)
{
	pthread_mutex_lock(&hdr->lock);
}

void wl_unlock(struct wl_shm_header *hdr)
{
	pthread_mutex_unlock(&hdr->lock);
}

/* A shared futex (not FUTEX_PRIVATE): waiters are other processes, on
 * read-only mappings of the same memfd page. */
void wl_phase_wake(struct wl_shm_header *hdr)
{
	syscall(SYS_futex, &hdr->phase, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

int wl_phase_wait(const struct wl_shm_header *hdr, uint32_t phase, uint64_t timeout_ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(timeout_ns / 1000000000u),
		.tv_nsec = (long)(timeout_ns % 1000000000u),
	};

	if (syscall(SYS_futex, &hdr->phase, FUTEX_WAIT, phase, &ts, NULL, 0) < 0 &&
	    errno != EAGAIN && errno != EINTR && errno != ETIMEDOUT)
		return -errno;
	return 0;
}
