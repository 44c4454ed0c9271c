/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The segment lock: a robust mutex whose previous owner may have died. */
#include <errno.h>
#include "wl_shm.h"

int wl_lock(struct wl_shm_header *hdr)
{
	int r = pthread_mutex_lock(&hdr->lock);

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

void wl_unlock(struct wl_shm_header *hdr)
{
	pthread_mutex_unlock(&hdr->lock);
}
