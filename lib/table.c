/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Operations on the client table.  Every function here runs with the
 * segment lock held, in whichever process: client (acquire/release),
 * daemon (registration, reaping, expiry, policy) or anyone repairing
 * after EOWNERDEAD.
 */
#include <errno.h>
#include <string.h>
#include <time.h>
#include "wl_shm.h"

uint64_t wl_now_mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);   /* vDSO: no system call */
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t wl_now_real(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int hold_should_be_active(const struct wl_shm_hold *h, uint64_t now)
{
	return h->in_use && (h->depth > 0 || h->deadline > now);
}

/* The slot's active count went from 0 to 1. */
static void slot_became_active(struct wl_shm_header *hdr, struct wl_shm_slot *s,
                               uint64_t now)
{
	(void)hdr;
	s->active_since = now;
}

/* The slot's active count went to 0: account the time held. */
static void slot_became_idle(struct wl_shm_slot *s, uint64_t now)
{
	uint64_t held = now > s->active_since ? now - s->active_since : 0;

	s->total_held_ns += held;
	if (held > s->max_held_ns)
		s->max_held_ns = held;
}

/* Bring hold.active in line with depth/deadline, propagating to the
 * slot and the global counter.  Returns nothing; notifies the daemon when
 * the counter reaches zero. */
static void hold_sync(struct wl_shm_header *hdr, struct wl_shm_slot *s,
                      struct wl_shm_hold *h, uint64_t now)
{
	int want = hold_should_be_active(h, now);

	if (want == (int)h->active)
		return;
	if (want) {
		h->active = 1;
		h->since = now;
		if (s->active++ == 0)
			slot_became_active(hdr, s, now);
		s->acquire_count++;
		s->last_acquired_rt = wl_now_real();
		if (s->allowed)
			hdr->counter++;
		else
			s->denied_count++;
	} else {
		h->active = 0;
		if (s->active > 0 && --s->active == 0)
			slot_became_idle(s, now);
		if (s->allowed && hdr->counter > 0 && --hdr->counter == 0)
			wl_notify(hdr);
	}
}

void wl_table_recount(struct wl_shm_header *hdr, uint64_t now)
{
	uint32_t total = 0;
	uint64_t next = 0;

	for (uint32_t i = 0; i < hdr->nslots; i++) {
		struct wl_shm_slot *s = &hdr->slots[i];
		uint32_t active = 0;

		for (uint32_t j = 0; j < WL_MAX_HOLDS_PER_CLIENT; j++) {
			struct wl_shm_hold *h = &s->holds[j];

			if (s->state != WL_SLOT_LIVE)
				h->in_use = 0;
			h->active = (uint32_t)hold_should_be_active(h, now);
			active += h->active;
			if (h->in_use && h->deadline > now && (!next || h->deadline < next))
				next = h->deadline;
		}
		if (active && !s->active)
			s->active_since = now;
		s->active = active;
		if (s->state == WL_SLOT_LIVE && s->allowed)
			total += active;
	}
	hdr->counter = total;
	hdr->next_deadline = next;
	/* Whoever waits must re-evaluate: the count may have changed. */
	wl_notify(hdr);
}

void wl_table_repair(struct wl_shm_header *hdr, uint64_t now)
{
	hdr->repairs++;
	wl_table_recount(hdr, now);
}

static int lookup(struct wl_shm_header *hdr, uint32_t slot, uint32_t hold,
                  struct wl_shm_slot **sp, struct wl_shm_hold **hp)
{
	if (slot >= hdr->nslots || hold >= WL_MAX_HOLDS_PER_CLIENT)
		return -EINVAL;
	*sp = &hdr->slots[slot];
	*hp = &(*sp)->holds[hold];
	if ((*sp)->state != WL_SLOT_LIVE || !(*hp)->in_use)
		return -ESTALE;
	return 0;
}

int wl_table_acquire(struct wl_shm_header *hdr, uint32_t slot, uint32_t hold,
                     uint64_t timeout_ns, uint64_t now)
{
	struct wl_shm_slot *s;
	struct wl_shm_hold *h;
	int r = lookup(hdr, slot, hold, &s, &h);

	if (r)
		return r;
	if (timeout_ns) {
		uint64_t dl = now + timeout_ns;

		if (dl > h->deadline)
			h->deadline = dl;
		/* The daemon sleeps until the earliest deadline it knows: if
		 * this one is earlier, wake it to re-arm. */
		if (!hdr->next_deadline || dl < hdr->next_deadline) {
			hdr->next_deadline = dl;
			wl_notify(hdr);
		}
	} else {
		if (h->depth >= 0x7fffffffu)
			return -EOVERFLOW;
		h->depth++;
	}
	hold_sync(hdr, s, h, now);
	return 0;
}

int wl_table_release(struct wl_shm_header *hdr, uint32_t slot, uint32_t hold,
                     int all, uint64_t now)
{
	struct wl_shm_slot *s;
	struct wl_shm_hold *h;
	int r = lookup(hdr, slot, hold, &s, &h);

	if (r)
		return r;
	if (all) {
		h->depth = 0;
		h->deadline = 0;
	} else if (h->depth > 0) {
		h->depth--;
	} else if (h->deadline > now) {
		h->deadline = 0;
	} else {
		h->deadline = 0;
		hold_sync(hdr, s, h, now);
		return -EINVAL;
	}
	hold_sync(hdr, s, h, now);
	return 0;
}

uint64_t wl_table_expire(struct wl_shm_header *hdr, uint64_t now)
{
	uint64_t next = 0;

	for (uint32_t i = 0; i < hdr->nslots; i++) {
		struct wl_shm_slot *s = &hdr->slots[i];

		if (s->state != WL_SLOT_LIVE)
			continue;
		for (uint32_t j = 0; j < WL_MAX_HOLDS_PER_CLIENT; j++) {
			struct wl_shm_hold *h = &s->holds[j];

			if (!h->in_use || !h->deadline)
				continue;
			if (h->deadline <= now) {
				h->deadline = 0;
				if (h->active && h->depth == 0)
					s->expire_count++;
				hold_sync(hdr, s, h, now);
			} else if (!next || h->deadline < next) {
				next = h->deadline;
			}
		}
	}
	hdr->next_deadline = next;
	return next;
}

int wl_table_slot_alloc(struct wl_shm_header *hdr, int32_t pid, uint32_t uid,
                        const char *name, int allowed, uint64_t *client_id)
{
	for (uint32_t i = 0; i < hdr->nslots; i++) {
		struct wl_shm_slot *s = &hdr->slots[i];

		if (s->state != WL_SLOT_FREE)
			continue;
		memset(s, 0, sizeof(*s));
		s->client_id = hdr->next_client_id++;
		s->pid = pid;
		s->uid = uid;
		strncpy(s->name, name, WL_NAME_MAX - 1);
		s->allowed = allowed ? 1 : 0;
		s->registered_rt = wl_now_real();
		*client_id = s->client_id;
		/* Publish last, so a lock-free reader never sees a half-made slot. */
		__atomic_store_n(&s->state, WL_SLOT_LIVE, __ATOMIC_RELEASE);
		return (int)i;
	}
	return -ENOSPC;
}

void wl_table_slot_free(struct wl_shm_header *hdr, uint32_t slot, uint64_t now)
{
	struct wl_shm_slot *s;

	if (slot >= hdr->nslots)
		return;
	s = &hdr->slots[slot];
	if (s->state != WL_SLOT_LIVE)
		return;
	for (uint32_t j = 0; j < WL_MAX_HOLDS_PER_CLIENT; j++) {
		struct wl_shm_hold *h = &s->holds[j];

		h->depth = 0;
		h->deadline = 0;
		hold_sync(hdr, s, h, now);
		h->in_use = 0;
	}
	__atomic_store_n(&s->state, WL_SLOT_FREE, __ATOMIC_RELEASE);
	s->client_id = 0;
	/* Belt and braces: a dead client may have left derived state
	 * inconsistent without dying inside the lock (it cannot), but a
	 * recount is cheap and makes reaping self-healing. */
	wl_table_recount(hdr, now);
}

void wl_table_set_allowed(struct wl_shm_header *hdr, uint32_t slot, int allowed,
                          uint64_t now)
{
	struct wl_shm_slot *s;

	if (slot >= hdr->nslots)
		return;
	s = &hdr->slots[slot];
	allowed = allowed ? 1 : 0;
	if (s->state != WL_SLOT_LIVE || (int)s->allowed == allowed)
		return;
	s->allowed = (uint32_t)allowed;
	wl_table_recount(hdr, now);
}

int wl_table_hold_alloc(struct wl_shm_header *hdr, uint32_t slot, const char *name)
{
	struct wl_shm_slot *s;

	if (slot >= hdr->nslots)
		return -EINVAL;
	s = &hdr->slots[slot];
	if (s->state != WL_SLOT_LIVE)
		return -ESTALE;
	for (uint32_t j = 0; j < WL_MAX_HOLDS_PER_CLIENT; j++) {
		struct wl_shm_hold *h = &s->holds[j];

		if (h->in_use)
			continue;
		memset(h, 0, sizeof(*h));
		strncpy(h->name, name, WL_NAME_MAX - 1);
		h->in_use = 1;
		return (int)j;
	}
	return -ENOSPC;
}

void wl_table_hold_free(struct wl_shm_header *hdr, uint32_t slot, uint32_t hold,
                        uint64_t now)
{
	struct wl_shm_slot *s;
	struct wl_shm_hold *h;

	if (lookup(hdr, slot, hold, &s, &h))
		return;
	h->depth = 0;
	h->deadline = 0;
	hold_sync(hdr, s, h, now);
	h->in_use = 0;
}
