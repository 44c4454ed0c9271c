/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Operations on the client table.  Every function here runs with the
 * segment lock held, in whichever process: client (acquire/release),
 * daemon (registration, reaping, expiry, policy) or anyone repairing
 * after EOWNERDEAD.
 *
 * Cost: acquire/release touch one hold, its slot and the header, and read
 * CLOCK_MONOTONIC at most once, only when the hold changes state (or is
 * timed).  Daemon-side walks (expiry, recount, policy) go over the live
 * slots only (hdr->order[0..nlive), see wl_shm.h); reaping one client
 * touches that client's slot only.
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

void wl_table_update_rt_offset(struct wl_shm_header *hdr)
{
	uint64_t m = wl_now_mono(), r = wl_now_real();

	hdr->rt_offset = (int64_t)(r - m);
}

/* The time of this operation: read once, on first need. */
static uint64_t clk(uint64_t *now)
{
	if (*now == WL_NOW_LAZY)
		*now = wl_now_mono();
	return *now;
}

static int hold_should_be_active(const struct wl_shm_hold *h, uint64_t *now)
{
	return h->in_use && (h->depth > 0 || (h->deadline && h->deadline > clk(now)));
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
 * slot and the global counter.  Notifies the daemon when the counter
 * reaches zero. */
static void hold_sync(struct wl_shm_header *hdr, struct wl_shm_slot *s,
                      struct wl_shm_hold *h, uint64_t *now)
{
	int want = hold_should_be_active(h, now);

	if (want == (int)h->active)
		return;
	if (want) {
		uint64_t t = clk(now);

		h->active = 1;
		h->since = t;
		if (s->active++ == 0)
			s->active_since = t;
		s->acquire_count++;
		/* Wall time is derived for display from the daemon's offset:
		 * no second clock read here. */
		s->last_acquired_mono = t;
		s->last_acquired_off = hdr->rt_offset;
		if (s->allowed)
			hdr->counter++;
		else
			s->denied_count++;
	} else {
		h->active = 0;
		if (s->active > 0 && --s->active == 0)
			slot_became_idle(s, clk(now));
		if (s->allowed && hdr->counter > 0 && --hdr->counter == 0)
			wl_notify(hdr);
	}
}

/* Recompute the derived state of one slot from its holds; returns its
 * active count.  Clears the holds of a slot that is not live. */
static uint32_t slot_recount(struct wl_shm_slot *s, uint64_t *now)
{
	uint32_t active = 0;
	uint64_t next = 0;

	for (uint32_t j = 0; j < WL_MAX_HOLDS_PER_CLIENT; j++) {
		struct wl_shm_hold *h = &s->holds[j];

		if (s->state != WL_SLOT_LIVE)
			h->in_use = 0;
		h->active = (uint32_t)hold_should_be_active(h, now);
		active += h->active;
		if (h->in_use && h->deadline > clk(now) && (!next || h->deadline < next))
			next = h->deadline;
	}
	if (active && !s->active)
		s->active_since = clk(now);
	s->active = active;
	s->next_deadline = next;
	return active;
}

/* Live slots only: O(live clients x holds per client). */
void wl_table_recount(struct wl_shm_header *hdr, uint64_t now)
{
	uint32_t total = 0;
	uint64_t next = 0;

	for (uint32_t k = 0; k < hdr->nlive; k++) {
		struct wl_shm_slot *s = &hdr->slots[hdr->order[k]];
		uint32_t active = slot_recount(s, &now);

		if (s->allowed)
			total += active;
		if (s->next_deadline && (!next || s->next_deadline < next))
			next = s->next_deadline;
	}
	hdr->counter = total;
	hdr->next_deadline = next;
	/* Whoever waits must re-evaluate: the count may have changed. */
	wl_notify(hdr);
}

/* Rebuild the live-slot list from slot.state (the primary state). */
static void rebuild_order(struct wl_shm_header *hdr)
{
	uint32_t n = 0, f = hdr->nslots;

	for (uint32_t i = 0; i < hdr->nslots; i++) {
		struct wl_shm_slot *s = &hdr->slots[i];

		if (s->state == WL_SLOT_LIVE) {
			s->pos = n;
			hdr->order[n++] = i;
		} else {
			hdr->order[--f] = i;
		}
	}
	hdr->nlive = n;
}

/*
 * Is the live-slot list exactly the set of LIVE slots?  Registration puts a
 * slot in the list before marking it LIVE, reaping marks it FREE before
 * taking it out, so a LIVE slot is never outside order[0..nlive): checking
 * the entries of the list (each LIVE, with pos pointing back, hence no
 * duplicates) is enough, and costs O(live clients).
 */
static int order_valid(const struct wl_shm_header *hdr)
{
	if (hdr->nlive > hdr->nslots)
		return 0;
	for (uint32_t k = 0; k < hdr->nlive; k++) {
		uint32_t i = hdr->order[k];

		if (i >= hdr->nslots || hdr->slots[i].state != WL_SLOT_LIVE ||
		    hdr->slots[i].pos != k)
			return 0;
	}
	return 1;
}

/* After EOWNERDEAD.  Only the daemon changes the live-slot list, so after a
 * client's death it is intact and the repair is O(live clients); the full
 * O(table) rebuild is for a list left half updated. */
void wl_table_repair(struct wl_shm_header *hdr, uint64_t now)
{
	hdr->repairs++;
	if (!order_valid(hdr))
		rebuild_order(hdr);
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
		uint64_t dl = clk(&now) + timeout_ns;

		if (dl > h->deadline)
			h->deadline = dl;
		if (!s->next_deadline || dl < s->next_deadline)
			s->next_deadline = dl;
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
	hold_sync(hdr, s, h, &now);
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
	} else if (h->deadline && h->deadline > clk(&now)) {
		h->deadline = 0;
	} else {
		h->deadline = 0;
		hold_sync(hdr, s, h, &now);
		return -EINVAL;
	}
	hold_sync(hdr, s, h, &now);
	return 0;
}

/* O(live clients), plus a scan of the holds of each slot that has a
 * deadline due (or a stale-early one). */
uint64_t wl_table_expire(struct wl_shm_header *hdr, uint64_t now)
{
	uint64_t next = 0;

	for (uint32_t k = 0; k < hdr->nlive; k++) {
		struct wl_shm_slot *s = &hdr->slots[hdr->order[k]];

		if (!s->next_deadline)
			continue;
		if (s->next_deadline <= clk(&now)) {
			uint64_t snext = 0;

			for (uint32_t j = 0; j < WL_MAX_HOLDS_PER_CLIENT; j++) {
				struct wl_shm_hold *h = &s->holds[j];

				if (!h->in_use || !h->deadline)
					continue;
				if (h->deadline <= now) {
					h->deadline = 0;
					if (h->active && h->depth == 0)
						s->expire_count++;
					hold_sync(hdr, s, h, &now);
				} else if (!snext || h->deadline < snext) {
					snext = h->deadline;
				}
			}
			s->next_deadline = snext;
		}
		if (s->next_deadline && (!next || s->next_deadline < next))
			next = s->next_deadline;
	}
	hdr->next_deadline = next;
	return next;
}

int wl_table_slot_alloc(struct wl_shm_header *hdr, int32_t pid, uint32_t uid,
                        const char *name, int allowed, uint64_t *client_id)
{
	struct wl_shm_slot *s;
	uint32_t i;

	/* order[nlive..nslots) are the free slots: take the first. */
	if (hdr->nlive >= hdr->nslots)
		return -ENOSPC;
	i = hdr->order[hdr->nlive];
	s = &hdr->slots[i];
	memset(s, 0, sizeof(*s));
	s->client_id = hdr->next_client_id++;
	s->pid = pid;
	s->uid = uid;
	strncpy(s->name, name, WL_NAME_MAX - 1);
	s->allowed = allowed ? 1 : 0;
	s->registered_rt = wl_now_real();
	s->pos = hdr->nlive++;
	*client_id = s->client_id;
	/* Publish last, so a lock-free reader never sees a half-made slot. */
	__atomic_store_n(&s->state, WL_SLOT_LIVE, __ATOMIC_RELEASE);
	return (int)i;
}

void wl_table_slot_free(struct wl_shm_header *hdr, uint32_t slot, uint64_t now)
{
	struct wl_shm_slot *s;
	uint32_t last, pos;

	if (slot >= hdr->nslots)
		return;
	s = &hdr->slots[slot];
	if (s->state != WL_SLOT_LIVE)
		return;
	/* Only this client's holds: hold_sync keeps slot.active and the
	 * counter exact (and notifies when the counter reaches zero). */
	for (uint32_t j = 0; j < WL_MAX_HOLDS_PER_CLIENT; j++) {
		struct wl_shm_hold *h = &s->holds[j];

		if (!h->in_use)
			continue;
		h->depth = 0;
		h->deadline = 0;
		hold_sync(hdr, s, h, &now);
		h->in_use = 0;
	}
	s->next_deadline = 0;
	/* FREE first, then out of the live-slot list (see order_valid()):
	 * swap with the last live entry. */
	__atomic_store_n(&s->state, WL_SLOT_FREE, __ATOMIC_RELEASE);
	s->client_id = 0;
	pos = s->pos;
	if (hdr->nlive > 0 && pos < hdr->nlive && hdr->order[pos] == slot) {
		last = hdr->order[hdr->nlive - 1];
		hdr->order[pos] = last;
		hdr->slots[last].pos = pos;
		hdr->order[hdr->nlive - 1] = slot;
		hdr->nlive--;
	} else {
		rebuild_order(hdr);    /* cannot happen with an intact list */
	}
	/* The daemon re-evaluates: a deadline it sleeps towards may be gone. */
	wl_notify(hdr);
}

void wl_table_set_allowed(struct wl_shm_header *hdr, uint32_t slot, int allowed,
                          uint64_t now)
{
	struct wl_shm_slot *s;

	(void)now;
	if (slot >= hdr->nslots)
		return;
	s = &hdr->slots[slot];
	allowed = allowed ? 1 : 0;
	if (s->state != WL_SLOT_LIVE || (int)s->allowed == allowed)
		return;
	s->allowed = (uint32_t)allowed;
	/* The slot's active holds move in or out of the counter: O(1). */
	if (allowed)
		hdr->counter += s->active;
	else
		hdr->counter = hdr->counter > s->active ? hdr->counter - s->active : 0;
	/* Always: the waiter re-checks whatever the new count is. */
	wl_notify(hdr);
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
	hold_sync(hdr, s, h, &now);
	h->in_use = 0;
}
