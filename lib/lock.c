/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The segment lock: a robust mutex whose previous owner may have died. */
#include <errno.h>
#include <time.h>
#include "wl_shm.h"

static int after_lock(struct wl_shm_header *hdr, int r)
{
	if (r == EOWNERDEAD) {
		/*
		 * The owner died inside the critical section, possibly halfway
		 * through an update.  Everything it could have left half done
		 * is derived state: rebuild it from the primary state, then
		 * declare the mutex usable again.  Its slot is reaped by the
		 * daemon when its socket hangs up.
		 */
		wl_table_repair(hdr, wl_now_mono());
		pthread_mutex_consistent(&hdr->lock);
		return 0;
	}
	return -r;
}

int wl_lock(struct wl_shm_header *hdr)
{
	return after_lock(hdr, pthread_mutex_lock(&hdr->lock));
}

/* For shutdown paths: a live client stuck inside the lock (stopped in a
 * debugger, say) must not keep the daemon from exiting. */
int wl_lock_timeout(struct wl_shm_header *hdr, unsigned ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return after_lock(hdr, pthread_mutex_timedlock(&hdr->lock, &ts));
}

void wl_unlock(struct wl_shm_header *hdr)
{
	pthread_mutex_unlock(&hdr->lock);
}
