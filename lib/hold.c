/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Named holds: the fast path (lock, update the table, unlock). */
#include <errno.h>
#include <stdlib.h>
#include "wl_client.h"

int wl_hold_create(wl_client *c, const char *name, wl_hold **out)
{
	wl_hold *h;
	int r;

	if (!c || !out)
		return -EINVAL;
	*out = NULL;
	r = wl_name_check(name);
	if (r < 0)
		return r;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	r = wl_client_lock(c);
	if (r < 0) {
		free(h);
		return r;
	}
	r = wl_table_hold_alloc(c->seg.hdr, c->slot, name);
	wl_unlock(c->seg.hdr);
	if (r < 0) {
		free(h);
		return r;
	}
	h->c = c;
	h->index = (uint32_t)r;
	pthread_mutex_lock(&c->holds_lock);
	h->next = c->holds;
	if (h->next)
		h->next->pprev = &h->next;
	h->pprev = &c->holds;
	c->holds = h;
	pthread_mutex_unlock(&c->holds_lock);
	*out = h;
	return 0;
}

void wl_hold_destroy(wl_hold *h)
{
	if (!h)
		return;
	pthread_mutex_lock(&h->c->holds_lock);
	*h->pprev = h->next;
	if (h->next)
		h->next->pprev = h->pprev;
	pthread_mutex_unlock(&h->c->holds_lock);
	if (wl_client_lock(h->c) == 0) {
		wl_table_hold_free(h->c->seg.hdr, h->c->slot, h->index, WL_NOW_LAZY);
		wl_unlock(h->c->seg.hdr);
	}
	free(h);
}

static int acquire(wl_hold *h, uint64_t timeout_ns)
{
	int r;

	if (!h)
		return -EINVAL;
	r = wl_client_lock(h->c);
	if (r < 0)
		return r;
	/* WL_NOW_LAZY: the clock is read only if the hold changes state. */
	r = wl_table_acquire(h->c->seg.hdr, h->c->slot, h->index, timeout_ns, WL_NOW_LAZY);
	wl_unlock(h->c->seg.hdr);
	return r;
}

int wl_hold_acquire(wl_hold *h)
{
	return acquire(h, 0);
}

int wl_hold_acquire_timeout(wl_hold *h, uint32_t timeout_ms)
{
	/* A zero timeout would mean "untimed" below; a hold that lapses at
	 * once is a no-op that still has to be valid. */
	return acquire(h, timeout_ms ? (uint64_t)timeout_ms * 1000000u : 1);
}

int wl_hold_release(wl_hold *h)
{
	int r;

	if (!h)
		return -EINVAL;
	r = wl_client_lock(h->c);
	if (r < 0)
		return r;
	r = wl_table_release(h->c->seg.hdr, h->c->slot, h->index, 0, WL_NOW_LAZY);
	wl_unlock(h->c->seg.hdr);
	return r;
}

int wl_hold_is_held(wl_hold *h)
{
	struct wl_shm_hold *sh;
	int r;

	if (!h)
		return -EINVAL;
	r = wl_client_lock(h->c);
	if (r < 0)
		return r;
	sh = &h->c->seg.hdr->slots[h->c->slot].holds[h->index];
	r = sh->depth > 0 || (sh->deadline && sh->deadline > wl_now_mono());
	wl_unlock(h->c->seg.hdr);
	return r;
}
