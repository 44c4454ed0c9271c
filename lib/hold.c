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
	if (r < 0) {
		wl_client_unlock(c);
		free(h);
		return r;
	}
	h->c = c;
	h->index = (uint32_t)r;
	/* Linked before the client lock is dropped: a re-registration
	 * (watch.c) moves every listed hold, and must not miss this one. */
	pthread_mutex_lock(&c->holds_lock);
	h->next = c->holds;
	if (h->next)
		h->next->pprev = &h->next;
	h->pprev = &c->holds;
	c->holds = h;
	pthread_mutex_unlock(&c->holds_lock);
	wl_client_unlock(c);
	*out = h;
	return 0;
}

void wl_hold_destroy(wl_hold *h)
{
	wl_client *c;
	int r;

	if (!h)
		return;
	c = h->c;
	r = wl_client_lock(c);
	pthread_mutex_lock(&c->holds_lock);
	*h->pprev = h->next;
	if (h->next)
		h->next->pprev = h->pprev;
	pthread_mutex_unlock(&c->holds_lock);
	if (r == 0) {
		wl_table_hold_free(c->seg.hdr, c->slot, h->index, WL_NOW_LAZY);
		wl_client_unlock(c);
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
	wl_client_unlock(h->c);
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
	wl_client_unlock(h->c);
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
	wl_client_unlock(h->c);
	return r;
}
