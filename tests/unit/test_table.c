/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The published table without any daemon: the daemon's own holds,
 * the decision from the clients' regions, mirroring, and validation of
 * foreign/corrupt/old segments. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "lib/wl_region.h"

#define MS 1000000ull

static struct wl_shm_header *new_seg(void)
{
	size_t len = wl_shm_total_size(WL_MAX_CLIENTS);
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	assert_true(m != MAP_FAILED);
	assert_int_equal(wl_seg_init(m, WL_MAX_CLIENTS), 0);
	return m;
}

static void free_seg(struct wl_shm_header *h)
{
	munmap(h, wl_shm_total_size(WL_MAX_CLIENTS));
}

static int client(struct wl_shm_header *h, const char *name, int allowed)
{
	uint64_t id;
	int s = wl_table_slot_alloc(h, 1234, 1000, name, allowed, &id);
	assert_true(s >= 0);
	return s;
}

static void test_nesting(void **st)
{
	struct wl_shm_header *h = new_seg();
	int s = client(h, "a", 1);
	int k = wl_table_hold_alloc(h, (uint32_t)s, "k", WL_HOLD_DAEMON, -1);
	(void)st;

	assert_int_equal(wl_table_acquire(h, s, k, 0, 10 * MS), 0);
	assert_int_equal(wl_table_acquire(h, s, k, 0, 11 * MS), 0);
	assert_int_equal(h->counter, 1);      /* one hold, however deep */
	assert_int_equal(h->slots[s].holds[k].depth, 2);
	assert_int_equal(wl_table_release(h, s, k, 0, 12 * MS), 0);
	assert_int_equal(h->counter, 1);
	assert_int_equal(wl_table_release(h, s, k, 0, 13 * MS), 0);
	assert_int_equal(h->counter, 0);
	assert_int_equal(wl_table_release(h, s, k, 0, 14 * MS), -EINVAL);
	assert_int_equal(h->counter, 0);
	assert_int_equal(h->slots[s].acquire_count, 1);
	assert_int_equal(h->slots[s].total_held_ns, 3 * MS);
	free_seg(h);
}

static void test_two_holds_two_clients(void **st)
{
	struct wl_shm_header *h = new_seg();
	int a = client(h, "a", 1), b = client(h, "b", 1);
	int ka = wl_table_hold_alloc(h, a, "x", WL_HOLD_DAEMON, -1),
	    kb1 = wl_table_hold_alloc(h, b, "y", WL_HOLD_DAEMON, -1),
	    kb2 = wl_table_hold_alloc(h, b, "z", WL_HOLD_DAEMON, -1);
	(void)st;

	wl_table_acquire(h, a, ka, 0, MS);
	wl_table_acquire(h, b, kb1, 0, MS);
	wl_table_acquire(h, b, kb2, 0, MS);
	assert_int_equal(h->counter, 3);
	assert_int_equal(h->slots[b].active, 2);
	wl_table_slot_free(h, b, 2 * MS);         /* reaping */
	assert_int_equal(h->counter, 1);
	assert_int_equal(h->slots[b].state, WL_SLOT_FREE);
	wl_table_release(h, a, ka, 0, 3 * MS);
	assert_int_equal(h->counter, 0);
	free_seg(h);
}

static void test_timeout(void **st)
{
	struct wl_shm_header *h = new_seg();
	int s = client(h, "t", 1), k = wl_table_hold_alloc(h, s, "k", WL_HOLD_DAEMON, -1);
	uint64_t t0 = wl_now_mono();
	(void)st;

	assert_int_equal(wl_table_acquire(h, s, k, 50 * MS, t0), 0);
	assert_int_equal(h->counter, 1);
	assert_int_equal(h->next_deadline, t0 + 50 * MS);
	/* A shorter timeout does not shorten it; a longer one extends it. */
	wl_table_acquire(h, s, k, 10 * MS, t0);
	assert_int_equal(h->slots[s].holds[k].deadline, t0 + 50 * MS);
	wl_table_acquire(h, s, k, 80 * MS, t0);
	assert_int_equal(wl_table_expire(h, t0 + 60 * MS), t0 + 80 * MS);
	assert_int_equal(h->counter, 1);
	assert_int_equal(wl_table_expire(h, t0 + 80 * MS), 0);
	assert_int_equal(h->counter, 0);
	assert_int_equal(h->slots[s].expire_count, 1);
	/* Timed + untimed: stays while either holds. */
	wl_table_acquire(h, s, k, 0, t0);
	wl_table_acquire(h, s, k, 5 * MS, t0);
	wl_table_expire(h, t0 + 6 * MS);
	assert_int_equal(h->counter, 1);
	wl_table_release(h, s, k, 0, t0 + 7 * MS);
	assert_int_equal(h->counter, 0);
	/* Release of a pending timed hold cancels it. */
	wl_table_acquire(h, s, k, 100 * MS, t0);
	assert_int_equal(wl_table_release(h, s, k, 0, t0 + MS), 0);
	assert_int_equal(h->counter, 0);
	free_seg(h);
}

static void test_denied(void **st)
{
	struct wl_shm_header *h = new_seg();
	int s = client(h, "bad", 0), k = wl_table_hold_alloc(h, s, "k", WL_HOLD_DAEMON, -1);
	(void)st;

	wl_table_acquire(h, s, k, 0, MS);
	assert_int_equal(h->counter, 0);          /* recorded, not counted */
	assert_int_equal(h->slots[s].active, 1);
	wl_table_set_allowed(h, s, 1, 2 * MS);
	assert_int_equal(h->counter, 1);
	wl_table_set_allowed(h, s, 0, 3 * MS);
	assert_int_equal(h->counter, 0);
	free_seg(h);
}

static void test_limits(void **st)
{
	struct wl_shm_header *h = new_seg();
	uint64_t id;
	int s = client(h, "a", 1);
	(void)st;

	assert_int_equal(wl_table_hold_alloc(h, s, "k", WL_HOLD_CLIENT, 7), 7);
	assert_int_equal(wl_table_hold_alloc(h, s, "k", WL_HOLD_CLIENT, 7), -EEXIST);
	assert_int_equal(wl_table_hold_alloc(h, s, "k", WL_HOLD_CLIENT, WAKELOCK_MAX_HOLDS_PER_CLIENT),
	                 -EINVAL);
	/* A client's hold is changed in its region, never by the daemon. */
	assert_int_equal(wl_table_acquire(h, s, 7, 0, MS), -EPERM);
	for (unsigned i = 1; i < WAKELOCK_MAX_HOLDS_PER_CLIENT; i++)
		assert_true(wl_table_hold_alloc(h, s, "k", WL_HOLD_DAEMON, -1) >= 0);
	assert_int_equal(wl_table_hold_alloc(h, s, "k", WL_HOLD_DAEMON, -1), -ENOSPC);
	for (unsigned i = 1; i < WL_MAX_CLIENTS; i++) {
		char nm[16];

		snprintf(nm, sizeof(nm), "c%u", i);
		assert_true(wl_table_slot_alloc(h, 1, 1, nm, 1, &id) >= 0);
	}
	assert_int_equal(wl_table_slot_alloc(h, 1, 1, "c", 1, &id), -ENOSPC);
	/* Freed slots keep identities unique: ids are never reused. */
	wl_table_slot_free(h, 5, MS);
	int n = wl_table_slot_alloc(h, 1, 1, "c5", 1, &id);
	assert_int_equal(n, 5);
	assert_int_equal(id, WL_MAX_CLIENTS + 1);
	assert_int_equal(wl_table_acquire(h, 5, 0, 0, MS), -ESTALE); /* hold not allocated */
	free_seg(h);
}

/*
 * A name is its owner's while the owner lives: a second live slot of the
 * same name is refused (EADDRINUSE), 31 bytes long or not, and the name
 * is free again once its owner is reaped.  Names with the daemon's
 * prefixes are refused to clients, slots and holds, and left to the
 * daemon's own path.
 */
static void test_names_are_identities(void **st)
{
	struct wl_shm_header *h = new_seg();
	const char *longname = "0123456789abcdefghijklmnopqrstu";   /* 31 bytes */
	char msg[128];
	uint64_t id, id2;
	int v, l, o;
	(void)st;

	v = wl_table_slot_alloc(h, 10, 1000, "victim", 1, &id);
	assert_true(v >= 0);
	assert_int_equal(wl_table_slot_alloc(h, 11, 1001, "victim", 1, &id2), -EADDRINUSE);
	assert_int_equal(wl_table_slot_alloc(h, 10, 1000, "victim", 1, &id2), -EADDRINUSE);
	assert_int_equal(h->nlive, 1);
	assert_int_equal(h->slots[v].pid, 10);                  /* the first owner kept it */
	assert_true(wl_table_slot_alloc(h, 12, 1000, "victim2", 1, &id2) >= 0);
	assert_true(wl_table_slot_alloc(h, 12, 1000, "Victim", 1, &id2) >= 0);
	l = wl_table_slot_alloc(h, 13, 1000, longname, 1, &id2);
	assert_true(l >= 0);
	assert_int_equal(wl_table_slot_alloc(h, 14, 1000, longname, 1, &id2), -EADDRINUSE);
	assert_string_equal(wl_table_refusal(-EADDRINUSE, 0, "victim", msg, sizeof(msg)),
	                    "a live client is already registered as victim");
	/* Reaped: free again, to anyone. */
	wl_table_slot_free(h, (uint32_t)v, MS);
	v = wl_table_slot_alloc(h, 15, 1001, "victim", 1, &id2);
	assert_true(v >= 0);
	assert_true(id2 > id);

	/* The daemon's prefixes, refused to clients... */
	assert_int_equal(wl_table_slot_alloc(h, 16, 1000, "logind:GNOME_Calls", 1, &id2), -EPERM);
	assert_int_equal(wl_table_slot_alloc(h, 16, 1000, "alarm:x", 1, &id2), -EPERM);
	assert_int_equal(wl_table_slot_alloc(h, 16, 1000, "uid:1000", 1, &id2), -EPERM);
	assert_non_null(strstr(wl_table_refusal(-EPERM, 0, "logind:x", msg, sizeof(msg)),
	                       "wakelockd's own"));
	/* ... not to the daemon's own slots, which may share a name. */
	o = wl_table_slot_alloc_own(h, 1, 0, "logind:GNOME_Calls", 1, &id2);
	assert_true(o >= 0);
	assert_true(wl_table_slot_alloc_own(h, 2, 0, "logind:GNOME_Calls", 1, &id2) >= 0);
	assert_int_equal(wl_table_slot_alloc(h, 16, 1000, "logind:GNOME_Calls", 1, &id2), -EPERM);
	/* "logind" and "alarm" alone, or the prefix later in the name, are
	 * ordinary names. */
	assert_true(wl_table_slot_alloc(h, 16, 1000, "logind", 1, &id2) >= 0);
	assert_true(wl_table_slot_alloc(h, 16, 1000, "x-alarm:y", 1, &id2) >= 0);

	/* Holds: "alarm:NAME" is an alarm's, the daemon's, never a client's. */
	assert_int_equal(wl_table_hold_alloc(h, v, "alarm:x", WL_HOLD_CLIENT, 3), -EPERM);
	assert_int_equal(wl_table_hold_alloc(h, v, "logind:x", WL_HOLD_CLIENT, -1), -EPERM);
	assert_int_equal(wl_table_hold_alloc(h, v, "uid:0", WL_HOLD_CLIENT, -1), -EPERM);
	assert_int_equal(h->slots[v].holds[3].in_use, 0);
	assert_int_equal(wl_table_hold_alloc(h, v, "alarm:x", WL_HOLD_DAEMON, 3), 3);
	assert_int_equal(wl_table_hold_alloc(h, v, "call", WL_HOLD_CLIENT, 4), 4);
	assert_int_equal(wl_table_hold_alloc(h, o, "why", WL_HOLD_DAEMON, -1), 0);
	assert_string_equal(wl_table_refusal(-EEXIST, 1, "call", msg, sizeof(msg)),
	                    "that hold index is taken");
	free_seg(h);
}

static struct wl_region *region(void)
{
	void *m = mmap(NULL, sizeof(struct wl_region), PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(m != MAP_FAILED);
	return m;
}

/*
 * The decision: a live, allowed slot holds while its region says so
 * (untimed count or a timed hold not yet over) or a daemon-owned hold is
 * active; the next change by itself is the earliest timed end.
 */
static void test_holders_from_regions(void **st)
{
	struct wl_shm_header *h = new_seg();
	const struct wl_region *regions[WL_MAX_CLIENTS] = { 0 };
	struct wl_region *ra = region(), *rb = region(), *rc = region();
	int a = client(h, "a", 1), b = client(h, "b", 1), c = client(h, "c", 0);
	uint64_t now = 1000 * MS, next;
	(void)st;

	regions[a] = ra;
	regions[b] = rb;
	regions[c] = rc;
	assert_int_equal(wl_table_holders(h, regions, now, &next), 0);
	assert_int_equal(next, 0);
	ra->holds[0].depth = 1;
	rb->timed_until = now + 30 * MS;
	rc->holds[9].depth = 5;                             /* denied: not counted */
	assert_int_equal(wl_table_holders(h, regions, now, &next), 2);
	assert_int_equal(next, now + 30 * MS);
	assert_int_equal(h->holders, 2);
	assert_true(h->slots[c].holding);             /* shown, not counted */
	assert_int_equal(wl_table_holders(h, regions, now + 30 * MS, &next), 1);
	assert_int_equal(next, 0);
	ra->holds[0].depth = 0;
	assert_int_equal(wl_table_holders(h, regions, now, &next), 1);
	/* A daemon-owned hold (an alarm's) counts like a client's. */
	rb->timed_until = 0;
	int k = wl_table_hold_alloc(h, a, "alarm:x", WL_HOLD_DAEMON, -1);
	assert_int_equal(wl_table_acquire(h, a, k, 20 * MS, now), 0);
	assert_int_equal(wl_table_holders(h, regions, now, &next), 1);
	assert_int_equal(next, now + 20 * MS);
	assert_int_equal(wl_table_holders(h, regions, now + 20 * MS, &next), 0);
	assert_int_equal(h->slots[a].expire_count, 1);
	/* A reaped slot is gone from the decision with its region. */
	ra->holds[0].depth = 3;
	wl_table_slot_free(h, a, now);
	regions[a] = NULL;
	assert_int_equal(wl_table_holders(h, regions, now, &next), 0);
	munmap(ra, sizeof(*ra));
	munmap(rb, sizeof(*rb));
	munmap(rc, sizeof(*rc));
	free_seg(h);
}

/* Mirroring for display: what the region says, read once, summed with
 * the daemon's own counts; a scribbled region misreports itself only. */
static void test_sync_mirrors_regions(void **st)
{
	struct wl_shm_header *h = new_seg();
	const struct wl_region *regions[WL_MAX_CLIENTS] = { 0 };
	struct wl_region *ra = region(), *rb = region();
	int a = client(h, "a", 1), b = client(h, "b", 1);
	uint64_t now = 1000 * MS;
	(void)st;

	regions[a] = ra;
	regions[b] = rb;
	assert_int_equal(wl_table_hold_alloc(h, a, "x", WL_HOLD_CLIENT, 0), 0);
	assert_int_equal(wl_table_hold_alloc(h, a, "y", WL_HOLD_CLIENT, 5), 5);
	ra->holds[0].depth = 2;
	ra->holds[0].activations = 4;
	ra->holds[0].held_ns = 9 * MS;
	ra->holds[5].deadline = now + MS;
	ra->holds[6].depth = 9;                             /* no such hold: ignored */
	wl_table_sync(h, regions, now);
	assert_int_equal(h->slots[a].holds[0].active, 1);
	assert_int_equal(h->slots[a].holds[0].depth, 2);
	assert_int_equal(h->slots[a].holds[5].active, 1);
	assert_int_equal(h->slots[a].holds[6].in_use, 0);
	assert_int_equal(h->slots[a].active, 2);
	assert_int_equal(h->slots[a].acquire_count, 4);
	assert_int_equal(h->slots[a].total_held_ns, 9 * MS);
	assert_int_equal(h->counter, 2);
	/* Garbage in b's region: b's own entries only. */
	memset(rb, 0xa5, sizeof(*rb));
	assert_int_equal(wl_table_hold_alloc(h, b, "z", WL_HOLD_CLIENT, 1), 1);
	wl_table_sync(h, regions, now);
	assert_int_equal(h->slots[a].active, 2);
	assert_int_equal(h->slots[b].active, 1);
	assert_int_equal(h->counter, 3);
	munmap(ra, sizeof(*ra));
	munmap(rb, sizeof(*rb));
	free_seg(h);
}

/*
 * `list` shows the time since the acquire, as the client stamped it in
 * its region, not since the daemon's first look; clamped to the slot's
 * life (never before its registration, never in the future), so a
 * client can only misreport itself.
 */
static void test_sync_since_from_region(void **st)
{
	struct wl_shm_header *h = new_seg();
	const struct wl_region *regions[WL_MAX_CLIENTS] = { 0 };
	struct wl_region *ra = region(), *rb = region();
	uint64_t id, reg, now;
	int a, b;
	(void)st;

	/* Registered 3 s ago (as a client of the previous daemon would be
	 * after a restart, it may have held from before: see below). */
	a = wl_table_slot_alloc(h, 1, 1000, "a", 1, &id);
	b = wl_table_slot_alloc(h, 2, 1000, "b", 1, &id);
	h->slots[a].registered_mono -= 3000 * MS;
	reg = h->slots[a].registered_mono;
	assert_true(reg > 0 && h->slots[b].registered_mono > reg);
	regions[a] = ra;
	regions[b] = rb;
	assert_int_equal(wl_table_hold_alloc(h, a, "x", WL_HOLD_CLIENT, 0), 0);
	assert_int_equal(wl_table_hold_alloc(h, a, "early", WL_HOLD_CLIENT, 1), 1);
	assert_int_equal(wl_table_hold_alloc(h, a, "late", WL_HOLD_CLIENT, 2), 2);
	assert_int_equal(wl_table_hold_alloc(h, a, "timed", WL_HOLD_CLIENT, 3), 3);
	assert_int_equal(wl_table_hold_alloc(h, b, "y", WL_HOLD_CLIENT, 0), 0);
	now = wl_now_mono();
	/* Acquired 2 s before the first look. */
	ra->holds[0].depth = 1;
	ra->holds[0].since = now - 2000 * MS;
	/* A stamp before the registration, and one in the future. */
	ra->holds[1].depth = 1;
	ra->holds[1].since = 1;
	ra->holds[2].depth = 1;
	ra->holds[2].since = now + 3600000 * MS;
	/* A timed hold has no stamp of its own: from the first look. */
	ra->holds[3].deadline = now + 60000 * MS;
	ra->holds[3].since = now - 9000 * MS;
	/* Another client's garbage is its own. */
	rb->holds[0].depth = 1;
	rb->holds[0].since = 0;
	wl_table_sync(h, regions, now);
	assert_int_equal(h->slots[a].holds[0].since, now - 2000 * MS);
	assert_int_equal(h->slots[a].holds[1].since, reg);
	assert_int_equal(h->slots[a].holds[2].since, now);
	assert_int_equal(h->slots[a].holds[3].since, now);
	assert_int_equal(h->slots[a].active_since, reg);
	assert_int_equal(h->slots[a].last_acquired_mono, now);
	assert_int_equal(h->slots[b].holds[0].since, h->slots[b].registered_mono);
	/* Released and taken again between two looks: the new acquire. */
	ra->holds[0].since = now + 500 * MS;
	wl_table_sync(h, regions, now + 1000 * MS);
	assert_int_equal(h->slots[a].holds[0].since, now + 500 * MS);
	assert_int_equal(h->slots[a].holds[3].since, now);         /* still the first look */
	/* Not held: no longer active, and the next acquire counts anew. */
	ra->holds[0].depth = 0;
	wl_table_sync(h, regions, now + 1100 * MS);
	assert_int_equal(h->slots[a].holds[0].active, 0);
	munmap(ra, sizeof(*ra));
	munmap(rb, sizeof(*rb));
	free_seg(h);
}

/* Alarm work reported done in the region: all fires done ends the
 * alarm's hold, an earlier one renews it; values beyond the fires there
 * were, or going back, change nothing else. */
static void test_alarm_done_from_region(void **st)
{
	struct wl_shm_header *h = new_seg();
	const struct wl_region *regions[WL_MAX_CLIENTS] = { 0 };
	struct wl_region *r = region();
	int a = client(h, "a", 1), k;
	struct wl_shm_alarm *al = &h->slots[a].alarms[2];
	uint64_t now = wl_now_mono(), next;
	(void)st;

	regions[a] = r;
	h->alarm_timeout_ms = 1000;
	k = wl_table_hold_alloc(h, a, "alarm:r", WL_HOLD_DAEMON, -1);
	al->in_use = 1;
	al->hold = (uint32_t)k;
	h->slots[a].alarm_count = 1;
	/* Two fires; the hold from the first. */
	assert_int_equal(wl_table_acquire(h, a, k, 1000 * MS, now), 0);
	al->fired_seq = 2;
	r->alarm_done[2] = 1;                         /* the first is done */
	assert_int_equal(wl_table_holders(h, regions, now, &next), 1);
	assert_int_equal(al->done_seq, 1);
	assert_true(h->slots[a].holds[k].active);     /* renewed for the second */
	r->alarm_done[2] = 99;                        /* beyond: clamped to 2 */
	assert_int_equal(wl_table_holders(h, regions, now, &next), 0);
	assert_int_equal(al->done_seq, 2);
	assert_false(h->slots[a].holds[k].active);
	r->alarm_done[2] = 0;                         /* going back: ignored */
	assert_int_equal(wl_table_holders(h, regions, now, &next), 0);
	assert_int_equal(al->done_seq, 2);
	munmap(r, sizeof(*r));
	free_seg(h);
}

static void test_names(void **st)
{
	(void)st;
	assert_int_equal(wl_name_check("ok-name_1.x"), 0);
	assert_int_equal(wl_name_check(""), -EINVAL);
	assert_int_equal(wl_name_check(NULL), -EINVAL);
	assert_int_equal(wl_name_check("has space"), -EINVAL);
	assert_int_equal(wl_name_check("a,b"), -EINVAL);
	assert_int_equal(wl_name_check("0123456789012345678901234567890123"), -ENAMETOOLONG);
}

/* --- validation of what a client is handed ----------------------------- */

static int file_with(const void *data, size_t len)
{
	char path[] = "/tmp/wl-seg-XXXXXX";
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	return fd;
}

static void check_map(struct wl_shm_header *h, size_t len, int expect)
{
	struct wl_seg seg;
	int r = wl_seg_map_fd(file_with(h, len), &seg);

	assert_int_equal(r, expect);
	if (r == 0)
		wl_seg_unmap(&seg);
}

static void test_validation(void **st)
{
	size_t len = wl_shm_total_size(WL_MAX_CLIENTS);
	struct wl_shm_header *h = new_seg();
	char junk[4096];
	(void)st;

	check_map(h, len, 0);
	check_map(h, len / 2, -EBADMSG);            /* truncated */
	h->abi_major = WL_ABI_MAJOR + 1;
	check_map(h, len, -EPROTONOSUPPORT);        /* newer daemon */
	h->abi_major = WL_ABI_MAJOR;
	h->abi_minor = WL_ABI_MINOR + 3;
	check_map(h, len, 0);                       /* compatible addition */
	h->nslots = 100000;
	check_map(h, len, -EBADMSG);                /* corrupt */
	h->nslots = WL_MAX_CLIENTS;
	h->slot_size = 12;
	check_map(h, len, -EBADMSG);
	h->slot_size = sizeof(struct wl_shm_slot);
	h->magic = 0x12345678;
	check_map(h, len, -EPROTO);                 /* foreign */
	memset(junk, 'x', sizeof(junk));
	check_map((void *)junk, sizeof(junk), -EPROTO);
	check_map((void *)junk, 3, -EBADMSG);
	free_seg(h);
}

/* The daemon's segment: nobody but its creator's mapping can write it,
 * and a snapshot cannot be written at all. */
static void test_segment_sealed(void **st)
{
	struct wl_seg seg, ro;
	int snap;
	(void)st;

	assert_int_equal(wl_seg_create(&seg, 8), 0);
	assert_true(mmap(NULL, seg.len, PROT_READ | PROT_WRITE, MAP_SHARED, seg.fd, 0) ==
	            MAP_FAILED);
	assert_int_equal(dup2(seg.fd, 100), 100);
	assert_int_equal(wl_seg_map_fd(100, &ro), 0);
	assert_int_equal(ro.hdr->nslots, 8);
	seg.hdr->counter = 5;                         /* the owner writes */
	assert_int_equal(ro.hdr->counter, 5);         /* everyone sees */
	snap = wl_seg_snapshot(seg.hdr);
	assert_true(snap >= 0);
	assert_true(mmap(NULL, seg.len, PROT_READ | PROT_WRITE, MAP_SHARED, snap, 0) ==
	            MAP_FAILED);
	close(snap);
	wl_seg_unmap(&ro);
	wl_seg_unmap(&seg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nesting),
		cmocka_unit_test(test_two_holds_two_clients),
		cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_denied),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_holders_from_regions),
		cmocka_unit_test(test_sync_mirrors_regions),
		cmocka_unit_test(test_sync_since_from_region),
		cmocka_unit_test(test_names_are_identities),
		cmocka_unit_test(test_alarm_done_from_region),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_validation),
		cmocka_unit_test(test_segment_sealed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
