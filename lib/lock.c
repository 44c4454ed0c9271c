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

static void deadline_in(struct timespec *ts, unsigned ms)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

/*
 * How long one wait for the lock lasts before the lock is tried again.
 * A robust mutex hands off to one waiter at a time: the unlocker wakes one
 * waiter, and if that waiter is killed before it takes the lock, the
 * others sleep on although the lock is free.  No sleep here lasts longer
 * than this, so such a lost hand-off costs at most this long, never
 * forever.
 */
#define WL_LOCK_RETRY_MS 50u

int wl_lock(struct wl_shm_header *hdr)
{
	struct timespec ts;
	int r;

	for (;;) {
		deadline_in(&ts, WL_LOCK_RETRY_MS);
		r = pthread_mutex_timedlock(&hdr->lock, &ts);
		if (r != ETIMEDOUT)
			return after_lock(hdr, r);
	}
}

/* For shutdown paths: a live client stuck inside the lock (stopped in a
 * debugger, say) must not keep the daemon from exiting. */
int wl_lock_timeout(struct wl_shm_header *hdr, unsigned ms)
{
	struct timespec ts, end;
	int r;

	deadline_in(&end, ms);
	for (;;) {
		deadline_in(&ts, WL_LOCK_RETRY_MS);
		if (ts.tv_sec > end.tv_sec || (ts.tv_sec == end.tv_sec && ts.tv_nsec > end.tv_nsec))
			ts = end;
		r = pthread_mutex_timedlock(&hdr->lock, &ts);
		if (r != ETIMEDOUT || (ts.tv_sec == end.tv_sec && ts.tv_nsec == end.tv_nsec))
			return after_lock(hdr, r);
	}
}

void wl_unlock(struct wl_shm_header *hdr)
{
	pthread_mutex_unlock(&hdr->lock);
}
