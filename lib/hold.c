/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Named holds.  The fast path, wakelock_hold_acquire and wakelock_hold_release of an
 * untimed hold, touches the hold's line in the client's own region and
 * reads one word of the daemon's: no lock, no system call (wl_region.h
 * has the handshake).  A hold handle is the address of its line
 * (struct wl_region_hold), whose `owner` word leads back to the client,
 * so a pair touches no other memory of its own than that line: with many
 * clients, one page a pair.  Creating and destroying a hold are requests
 * to the daemon, which keeps the names.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "wl_client.h"

static struct wl_region_hold *line_of(wakelock_hold *h)
{
	return (struct wl_region_hold *)(void *)h;
}

static wakelock_client *client_of(const struct wl_region_hold *rh)
{
	return (wakelock_client *)(uintptr_t)rh->owner;
}

uint32_t wl_hold_index(const wakelock_hold *h)
{
	const struct wl_region_hold *rh = (const struct wl_region_hold *)(const void *)h;

	return (uint32_t)(rh - client_of(rh)->region->holds);
}

struct wl_hold_meta *wl_hold_meta(wakelock_hold *h)
{
	return &client_of(line_of(h))->meta[wl_hold_index(h)];
}

/* A free index of the client's region (holds_lock held), -1 if none. */
static int index_take(wakelock_client *c)
{
	for (uint32_t w = 0; w < WAKELOCK_MAX_HOLDS_PER_CLIENT / 64; w++) {
		if (~c->hold_used[w]) {
			int b = __builtin_ctzll(~c->hold_used[w]);

			c->hold_used[w] |= 1ull << b;
			return (int)(w * 64 + (uint32_t)b);
		}
	}
	return -1;
}

static void index_put(wakelock_client *c, uint32_t i)
{
	wl_bit_clear(c->hold_used, i);
}

int wakelock_hold_create(wakelock_client *c, const char *name, wakelock_hold **out)
{
	struct wl_region_hold *rh;
	int r, i;

	if (!c || !out)
		return -EINVAL;
	*out = NULL;
	r = wl_name_check(name);
	if (r < 0)
		return r;
	/* The region entry is ours to pick; the daemon records the name at
	 * the same index (an alarm's hold, the daemon's, may hold one). */
	pthread_mutex_lock(&c->holds_lock);
	if (!c->meta)
		c->meta = calloc(WAKELOCK_MAX_HOLDS_PER_CLIENT, sizeof(*c->meta));
	i = c->meta ? index_take(c) : -2;
	pthread_mutex_unlock(&c->holds_lock);
	if (i == -2)
		return -ENOMEM;
	for (;;) {
		if (i < 0)
			return -ENOSPC;
		memset(&c->region->holds[i], 0, sizeof(c->region->holds[i]));
		r = wl_client_hold_request(c, WL_OP_HOLD_CREATE, name, i);
		if (r != -EEXIST)
			break;
		/* Taken by an alarm's hold: try the next free one. */
		pthread_mutex_lock(&c->holds_lock);
		i = index_take(c);
		pthread_mutex_unlock(&c->holds_lock);
	}
	/* Indices the daemon refused as taken stay marked used: they belong
	 * to its alarm holds.  Any other refusal (a reserved or invalid
	 * name, the daemon gone) gives the index back. */
	if (r < 0) {
		pthread_mutex_lock(&c->holds_lock);
		index_put(c, (uint32_t)i);
		pthread_mutex_unlock(&c->holds_lock);
		return r;
	}
	rh = &c->region->holds[i];
	rh->owner = (uint64_t)(uintptr_t)c;
	pthread_mutex_lock(&c->holds_lock);
	memcpy(c->meta[i].name, name, strlen(name) + 1);
	c->meta[i].epoll_held = 0;
	wl_bit_set(c->hold_live, (uint32_t)i);
	pthread_mutex_unlock(&c->holds_lock);
	*out = (wakelock_hold *)(void *)rh;
	return 0;
}

void wakelock_hold_destroy(wakelock_hold *h)
{
	struct wl_region_hold *rh;
	wakelock_client *c;
	uint32_t i;

	if (!h)
		return;
	rh = line_of(h);
	c = client_of(rh);
	i = wl_hold_index(h);
	pthread_mutex_lock(&c->holds_lock);
	wl_bit_clear(c->hold_live, i);
	pthread_mutex_unlock(&c->holds_lock);
	/* Release whatever depth it had, then the entry. */
	pthread_mutex_lock(&c->timed_lock);
	__atomic_store_n(&rh->depth, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&rh->deadline, 0, __ATOMIC_RELAXED);
	wl_client_timed_changed(c, wl_now_mono());
	pthread_mutex_unlock(&c->timed_lock);
	wl_client_hold_request(c, WL_OP_HOLD_DESTROY, NULL, (int)i);
	pthread_mutex_lock(&c->holds_lock);
	index_put(c, i);
	pthread_mutex_unlock(&c->holds_lock);
}

/* The fast path: our hold's depth, then the daemon's phase. */
int wakelock_hold_acquire(wakelock_hold *h)
{
	struct wl_region_hold *rh;
	wakelock_client *c;
	uint32_t d;

	if (!h)
		return -EINVAL;
	rh = line_of(h);
	c = client_of(rh);
	if (__atomic_load_n(&c->lost, __ATOMIC_RELAXED)) {
		wl_set_error("wakelockd has exited or been replaced");
		return -ENOTCONN;
	}
	/* Publish, then look at the daemon (wl_region.h). */
	d = __atomic_fetch_add(&rh->depth, 1, __ATOMIC_SEQ_CST);
	if (d >= WL_DEPTH_MAX) {
		__atomic_fetch_sub(&rh->depth, 1, __ATOMIC_SEQ_CST);
		return -EOVERFLOW;
	}
	if (d == 0) {
		/* Statistics, racy by design between threads of one client. */
		__atomic_store_n(&rh->activations, __atomic_load_n(&rh->activations,
		                 __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
		uint64_t now = wl_now_coarse();
		uint32_t ep = __atomic_load_n(&__atomic_load_n(&c->pub, __ATOMIC_ACQUIRE)->attempt_epoch,
		                              __ATOMIC_RELAXED);

		__atomic_store_n(&rh->since, now, __ATOMIC_RELAXED);
		if (__atomic_load_n(&rh->first_epoch, __ATOMIC_RELAXED) != ep) {
			__atomic_store_n(&rh->first_since, now, __ATOMIC_RELAXED);
			__atomic_store_n(&rh->first_epoch, ep, __ATOMIC_RELAXED);
		}
	}
	if (__atomic_load_n(&__atomic_load_n(&c->pub, __ATOMIC_ACQUIRE)->phase,
	                    __ATOMIC_SEQ_CST) != WL_PHASE_OPEN)
		wl_client_wait_open(c);
	return 0;
}

static int release_timed(wakelock_hold *h)
{
	struct wl_region_hold *rh = line_of(h);
	wakelock_client *c = client_of(rh);
	uint64_t now = wl_now_mono();
	int r = 0;

	pthread_mutex_lock(&c->timed_lock);
	if (__atomic_load_n(&rh->deadline, __ATOMIC_RELAXED) > now)
		__atomic_store_n(&rh->deadline, 0, __ATOMIC_RELAXED);
	else
		r = -EINVAL;
	wl_client_timed_changed(c, now);
	pthread_mutex_unlock(&c->timed_lock);
	if (r < 0)
		wl_set_error("the hold is not held");
	return r;
}

/* The fast path: our hold's depth, and a kick if it was our last hold
 * and the daemon waits for it to end. */
int wakelock_hold_release(wakelock_hold *h)
{
	struct wl_region_hold *rh;
	wakelock_client *c;
	uint32_t d;

	if (!h)
		return -EINVAL;
	rh = line_of(h);
	c = client_of(rh);
	if (__atomic_load_n(&c->lost, __ATOMIC_RELAXED)) {
		wl_set_error("wakelockd has exited or been replaced");
		return -ENOTCONN;
	}
	d = __atomic_load_n(&rh->depth, __ATOMIC_RELAXED);
	do {
		if (d == 0)
			return release_timed(h);
	} while (!__atomic_compare_exchange_n(&rh->depth, &d, d - 1, 1,
	                                      __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
	if (d == 1) {
		uint64_t since = __atomic_load_n(&rh->since, __ATOMIC_RELAXED), now = wl_now_coarse();

		__atomic_store_n(&rh->held_ns, __atomic_load_n(&rh->held_ns, __ATOMIC_RELAXED) +
		                 (now > since ? now - since : 0), __ATOMIC_RELAXED);
	}
	/* Watched: the daemon waits for this client.  If nothing of it holds
	 * any more, wake it, once per watch (threads releasing our last
	 * holds at once: the later one sees them all at zero). */
	if (d == 1)
		wl_client_released(c);
	return 0;
}

int wakelock_hold_acquire_timeout(wakelock_hold *h, uint32_t timeout_ms)
{
	struct wl_region_hold *rh;
	wakelock_client *c;
	uint64_t now, dl, until;

	if (!h)
		return -EINVAL;
	rh = line_of(h);
	c = client_of(rh);
	if (__atomic_load_n(&c->lost, __ATOMIC_RELAXED)) {
		wl_set_error("wakelockd has exited or been replaced");
		return -ENOTCONN;
	}
	now = wl_now_mono();
	/* A zero timeout is a hold that lapses at once: valid, no effect. */
	dl = now + (uint64_t)(timeout_ms ? timeout_ms : 0) * 1000000u;
	pthread_mutex_lock(&c->timed_lock);
	if (dl > __atomic_load_n(&rh->deadline, __ATOMIC_RELAXED)) {
		if (__atomic_load_n(&rh->deadline, __ATOMIC_RELAXED) <= now &&
		    __atomic_load_n(&rh->depth, __ATOMIC_RELAXED) == 0)
			__atomic_store_n(&rh->activations, __atomic_load_n(&rh->activations,
			                 __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
		__atomic_store_n(&rh->deadline, dl, __ATOMIC_RELAXED);
	}
	/* A store either way (under timed_lock, so no lost update): it is
	 * the store half of the handshake with the phase load below. */
	until = __atomic_load_n(&c->region->timed_until, __ATOMIC_RELAXED);
	__atomic_store_n(&c->region->timed_until, dl > until ? dl : until, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&c->timed_lock);
	if (__atomic_load_n(&__atomic_load_n(&c->pub, __ATOMIC_ACQUIRE)->phase,
	                    __ATOMIC_SEQ_CST) != WL_PHASE_OPEN)
		wl_client_wait_open(c);
	return 0;
}

int wakelock_hold_is_held(wakelock_hold *h)
{
	struct wl_region_hold *rh;

	if (!h)
		return -EINVAL;
	rh = line_of(h);
	return __atomic_load_n(&rh->depth, __ATOMIC_RELAXED) > 0 ||
	       __atomic_load_n(&rh->deadline, __ATOMIC_RELAXED) > wl_now_mono();
}
