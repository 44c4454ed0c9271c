/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Operations on the published table, all in the daemon with its lock
 * held: registration, reaping, policy, names, the daemon-owned holds of
 * alarms, and reading the clients' regions (wl_table_holders decides,
 * wl_table_sync mirrors for display).
 *
 * Cost: the decision reads each live client's depths; mirroring walks
 * the holds of the live clients; reaping one client touches that
 * client's slot only.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "wl_region.h"

uint64_t wl_now_mono(void) { return wl_clock_ns(CLOCK_MONOTONIC); }
uint64_t wl_now_real(void) { return wl_clock_ns(CLOCK_REALTIME); }

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

/* Bring a daemon-owned hold's active flag in line with its depth and
 * deadline, with the slot's counts and statistics. */
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
		s->active++;
		if (s->dactive++ == 0)
			s->active_since = t;
		s->d_acquire_count++;
		s->acquire_count++;
		s->last_acquired_mono = t;
		s->last_acquired_off = hdr->rt_offset;
		if (s->allowed)
			hdr->counter++;
	} else {
		uint64_t held = clk(now) > h->since ? *now - h->since : 0;

		h->active = 0;
		if (s->active > 0)
			s->active--;
		if (s->dactive > 0)
			s->dactive--;
		s->d_total_held_ns += held;
		s->total_held_ns += held;
		if (held > s->max_held_ns)
			s->max_held_ns = held;
		if (s->allowed && hdr->counter > 0)
			hdr->counter--;
	}
}

/* Recompute the daemon-owned part of one slot; returns its active
 * count.  Client holds keep their mirrored state (wl_table_sync). */
static uint32_t slot_recount(struct wl_shm_slot *s, uint64_t *now)
{
	uint32_t active = 0, dactive = 0;
	uint64_t next = 0;

	for (uint32_t j = 0; j < WAKELOCK_MAX_HOLDS_PER_CLIENT; j++) {
		struct wl_shm_hold *h = &s->holds[j];

		if (s->state != WL_SLOT_LIVE)
			h->in_use = 0;
		if (h->owner == WL_HOLD_DAEMON) {
			h->active = (uint32_t)hold_should_be_active(h, now);
			dactive += h->active;
			if (h->in_use && h->deadline > clk(now) && (!next || h->deadline < next))
				next = h->deadline;
		}
		active += h->in_use && h->active;
	}
	if (dactive && !s->dactive)
		s->active_since = clk(now);
	s->active = active;
	s->dactive = dactive;
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

static int lookup(struct wl_shm_header *hdr, uint32_t slot, uint32_t hold,
                  struct wl_shm_slot **sp, struct wl_shm_hold **hp)
{
	if (slot >= hdr->nslots || hold >= WAKELOCK_MAX_HOLDS_PER_CLIENT)
		return -EINVAL;
	*sp = &hdr->slots[slot];
	*hp = &(*sp)->holds[hold];
	if ((*sp)->state != WL_SLOT_LIVE || !(*hp)->in_use)
		return -ESTALE;
	/* A client's hold is the client's to change, in its region. */
	if ((*hp)->owner != WL_HOLD_DAEMON)
		return -EPERM;
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
		if (!hdr->next_deadline || dl < hdr->next_deadline)
			hdr->next_deadline = dl;
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

			for (uint32_t j = 0; j < WAKELOCK_MAX_HOLDS_PER_CLIENT; j++) {
				struct wl_shm_hold *h = &s->holds[j];

				if (!h->in_use || !h->deadline || h->owner != WL_HOLD_DAEMON)
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

static int slot_alloc(struct wl_shm_header *hdr, int32_t pid, uint32_t uid,
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
	strncpy(s->name, name, WAKELOCK_NAME_MAX - 1);
	s->allowed = allowed ? 1 : 0;
	s->registered_rt = wl_now_real();
	s->registered_mono = wl_now_mono();
	s->pos = hdr->nlive++;
	*client_id = s->client_id;
	/* Publish last, so a lock-free reader never sees a half-made slot. */
	__atomic_store_n(&s->state, WL_SLOT_LIVE, __ATOMIC_RELEASE);
	return (int)i;
}

/* Whether a live slot is called name: O(live clients), at registration
 * only. */
static int name_taken(const struct wl_shm_header *hdr, const char *name)
{
	for (uint32_t k = 0; k < hdr->nlive; k++)
		if (!strncmp(hdr->slots[hdr->order[k]].name, name, WAKELOCK_NAME_MAX))
			return 1;
	return 0;
}

int wl_table_slot_alloc(struct wl_shm_header *hdr, int32_t pid, uint32_t uid,
                        const char *name, int allowed, uint64_t *client_id)
{
	/*
	 * The name is what deny, allow and `wakelock list` go by, so it is
	 * its owner's while the owner lives: a second client under it would
	 * be denied with it, or pass for it.  It is free again once the
	 * owner is reaped (a client that re-registers after a restart of
	 * the daemon finds it free: the table is new).
	 */
	if (wl_name_reserved(name))
		return -EPERM;
	if (name_taken(hdr, name))
		return -EADDRINUSE;
	return slot_alloc(hdr, pid, uid, name, allowed, client_id);
}

int wl_table_slot_alloc_own(struct wl_shm_header *hdr, int32_t pid, uint32_t uid,
                            const char *name, int allowed, uint64_t *client_id)
{
	return slot_alloc(hdr, pid, uid, name, allowed, client_id);
}

const char *wl_table_refusal(int r, int hold, const char *name, char *buf, size_t len)
{
	if (r == -EADDRINUSE && !hold)
		snprintf(buf, len, "a live client is already registered as %s", name);
	else if (r == -EPERM)
		snprintf(buf, len, "%s: names starting with " WL_LOGIND_PREFIX ", "
		         WL_ALARM_HOLD_PREFIX " or " WL_UID_PREFIX " are wakelockd's own", name);
	else if (r == -ENOSPC)
		snprintf(buf, len, "%s", hold ? "the client has the most holds allowed" :
		         "client table full");
	else if (r == -EEXIST && hold)
		snprintf(buf, len, "that hold index is taken");
	else
		snprintf(buf, len, "%s", strerror(-r));
	return buf;
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
	/* Only this client's holds; its region goes with it. */
	for (uint32_t j = 0; j < WAKELOCK_MAX_HOLDS_PER_CLIENT; j++) {
		struct wl_shm_hold *h = &s->holds[j];

		if (!h->in_use)
			continue;
		h->depth = 0;
		h->deadline = 0;
		if (h->owner == WL_HOLD_DAEMON)
			hold_sync(hdr, s, h, &now);
		else if (h->active && s->allowed && hdr->counter > 0)
			hdr->counter--;
		h->active = 0;
		h->in_use = 0;
	}
	if (s->holding && s->allowed && hdr->holders > 0)
		hdr->holders--;
	s->holding = 0;
	__atomic_store_n(&hdr->watched[slot], 0, __ATOMIC_SEQ_CST);
	s->next_deadline = 0;
	/* FREE first, then out of the live-slot list:
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
		rebuild_order(hdr);    /* cannot happen: only we change the list */
	}
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
}

static void hold_init(struct wl_shm_hold *h, const char *name, uint32_t owner)
{
	memset(h, 0, sizeof(*h));
	strncpy(h->name, name, WAKELOCK_NAME_MAX - 1);
	h->owner = owner;
	h->in_use = 1;
}

int wl_table_hold_alloc(struct wl_shm_header *hdr, uint32_t slot, const char *name,
                        uint32_t owner, int want)
{
	struct wl_shm_slot *s;

	if (slot >= hdr->nslots || want >= (int)WAKELOCK_MAX_HOLDS_PER_CLIENT)
		return -EINVAL;
	s = &hdr->slots[slot];
	if (s->state != WL_SLOT_LIVE)
		return -ESTALE;
	/* "alarm:NAME" is an alarm's hold, the daemon's: a client's hold of
	 * that name would pass for one in `list` and the ledger. */
	if (owner == WL_HOLD_CLIENT && wl_name_reserved(name))
		return -EPERM;
	if (want >= 0) {
		if (s->holds[want].in_use)
			return -EEXIST;
		hold_init(&s->holds[want], name, owner);
		return want;
	}
	for (uint32_t j = 0; j < WAKELOCK_MAX_HOLDS_PER_CLIENT; j++) {
		if (!s->holds[j].in_use) {
			hold_init(&s->holds[j], name, owner);
			return (int)j;
		}
	}
	return -ENOSPC;
}

void wl_table_hold_free(struct wl_shm_header *hdr, uint32_t slot, uint32_t hold,
                        uint64_t now)
{
	struct wl_shm_slot *s;
	struct wl_shm_hold *h;

	if (slot >= hdr->nslots || hold >= WAKELOCK_MAX_HOLDS_PER_CLIENT)
		return;
	s = &hdr->slots[slot];
	h = &s->holds[hold];
	if (s->state != WL_SLOT_LIVE || !h->in_use)
		return;
	h->depth = 0;
	h->deadline = 0;
	if (h->owner == WL_HOLD_DAEMON) {
		hold_sync(hdr, s, h, &now);
	} else if (h->active) {
		h->active = 0;
		if (s->active > 0)
			s->active--;
		if (s->allowed && hdr->counter > 0)
			hdr->counter--;
	}
	h->in_use = 0;
}

/*
 * Finished alarm work, as the client reports it in its region: the fires
 * up to alarm_done[j] are done.  All of them: the alarm's hold ends.  An
 * earlier one only (it fired again meanwhile): the hold is renewed for a
 * full timeout, so a fire is never released by the work of an earlier
 * one.  The value is clamped to the fires there were and never goes
 * back, so a client can only end its own alarm's hold early.
 */
static void alarms_ack(struct wl_shm_header *hdr, uint32_t slot, const struct wl_region *rg,
                       uint64_t *now)
{
	struct wl_shm_slot *s = &hdr->slots[slot];

	for (uint32_t j = 0; j < WAKELOCK_MAX_ALARMS_PER_CLIENT; j++) {
		struct wl_shm_alarm *al = &s->alarms[j];
		uint64_t done;

		if (!al->in_use || al->hold >= WAKELOCK_MAX_HOLDS_PER_CLIENT)
			continue;
		done = __atomic_load_n(&rg->alarm_done[j], __ATOMIC_ACQUIRE);
		if (done > al->fired_seq)
			done = al->fired_seq;
		if (done <= al->done_seq)
			continue;
		al->done_seq = done;
		if (done == al->fired_seq) {
			wl_table_release(hdr, slot, al->hold, 1, clk(now));
		} else {
			uint32_t ms = hdr->alarm_timeout_ms ? hdr->alarm_timeout_ms : 1;

			wl_table_acquire(hdr, slot, al->hold, (uint64_t)ms * 1000000u, clk(now));
		}
	}
}

uint32_t wl_table_holders(struct wl_shm_header *hdr, const struct wl_region *const *regions,
                          uint64_t now, uint64_t *next)
{
	uint32_t n = 0;
	uint64_t nx;

	for (uint32_t k = 0; k < hdr->nlive; k++) {
		uint32_t i = hdr->order[k];

		if (regions[i] && hdr->slots[i].alarm_count)
			alarms_ack(hdr, i, regions[i], &now);
	}
	nx = wl_table_expire(hdr, now);
	for (uint32_t k = 0; k < hdr->nlive; k++) {
		uint32_t i = hdr->order[k];
		struct wl_shm_slot *s = &hdr->slots[i];
		const struct wl_region *rg = regions[i];
		uint64_t until = 0;
		int holding = s->dactive > 0;

		if (rg) {
			until = __atomic_load_n(&rg->timed_until, __ATOMIC_SEQ_CST);
			holding |= wl_region_holding(rg, now);
		}
		s->holding = (uint32_t)holding;
		if (!s->allowed)
			continue;
		n += holding;
		if (until > now && (!nx || until < nx))
			nx = until;
	}
	hdr->holders = n;
	*next = nx;
	return n;
}

/* A region's word as it is now, read once (the client may change it
 * while we look). */
#define ONCE(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

/*
 * Since when an active client hold is held, for `list`: the time of its
 * acquire, as the client stamped it in its region (lib/hold.c, at each
 * 0 -> 1 of the depth), not when the daemon first looked, which may be
 * much later.  The stamp is the client's word, so it is clamped to the
 * slot's life: never before the registration, never after now.  A lying
 * client can only misreport its own hold.  A timed hold carries no stamp
 * (its acquire does not touch the depth): it counts from the first look
 * that found it.
 */
static void hold_since(struct wl_shm_header *hdr, struct wl_shm_slot *s, struct wl_shm_hold *h,
                       const struct wl_region_hold *rh, int was, uint64_t now)
{
	uint64_t t = was ? h->since : now;

	if (h->depth > 0) {
		t = ONCE(rh->since);
		if (t < s->registered_mono)
			t = s->registered_mono;
		if (t > now)
			t = now;
	}
	h->since = t;
	/* The slot's last activation: the latest acquire seen. */
	if (t > s->last_acquired_mono) {
		s->last_acquired_mono = t;
		s->last_acquired_off = hdr->rt_offset;
	}
}

void wl_table_sync(struct wl_shm_header *hdr, const struct wl_region *const *regions,
                   uint64_t now)
{
	uint32_t counter = 0;

	for (uint32_t k = 0; k < hdr->nlive; k++) {
		uint32_t i = hdr->order[k];
		struct wl_shm_slot *s = &hdr->slots[i];
		const struct wl_region *rg = regions[i];
		uint64_t acq = 0, held = 0, earliest = now;
		uint32_t active = 0;

		for (uint32_t j = 0; j < WAKELOCK_MAX_HOLDS_PER_CLIENT; j++) {
			struct wl_shm_hold *h = &s->holds[j];

			if (!h->in_use)
				continue;
			if (h->owner == WL_HOLD_CLIENT && rg) {
				const struct wl_region_hold *rh = &rg->holds[j];
				int was = h->active;

				h->depth = ONCE(rh->depth);
				h->deadline = ONCE(rh->deadline);
				h->active = h->depth > 0 || h->deadline > now;
				if (h->active)
					hold_since(hdr, s, h, rh, was, now);
				/* Sums of client-reported counts: they can only
				 * misreport the client itself. */
				acq += ONCE(rh->activations);
				held += ONCE(rh->held_ns);
			}
			if (h->active && h->since < earliest)
				earliest = h->since;
			active += h->active;
		}
		if (active && !s->active)
			s->active_since = earliest;
		s->active = active;
		s->acquire_count = s->d_acquire_count + acq;
		s->total_held_ns = s->d_total_held_ns + held;
		if (s->allowed)
			counter += active;
	}
	hdr->counter = counter;
}
