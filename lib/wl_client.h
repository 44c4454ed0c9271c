/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef WL_CLIENT_H
#define WL_CLIENT_H

#include "wl_proto.h"
#include <pthread.h>
#include "wl_region.h"

/* Published segments of daemons this client registered with: the
 * current one is c->pub; earlier ones stay referenced until close,
 * because a thread on the fast path may still be reading one (they are a
 * few pages each, one per daemon restart). */
struct wl_pub_map {
	const struct wl_shm_header *hdr;     /* from wl_pub_get */
	struct wl_pub_map *next;
};

/* The library's own record of a hold, beside its line in the region
 * (the daemon has no use for it). */
struct wl_hold_meta {
	char name[WAKELOCK_NAME_MAX];
	int epoll_held;   /* acquired by wakelock_epoll_wait, to release next call */
};

struct wakelock_client {
	/* The fast path reads these and, of the region, the hold's line. */
	struct wl_region *region;            /* ours, read-write */
	const struct wl_shm_header *pub;     /* the daemon's, read-only (atomic) */
	const uint32_t *watched;             /* pub->watched[our slot] (atomic) */
	uint32_t kicked_gen;                 /* atomic: the watch we last kicked for */
	int lost;                            /* atomic: the daemon is gone for good */
	int away;                            /* atomic: hung up, not registered again yet */

	int region_fd;                       /* kept to register again */
	struct wl_pub_map *pubs;             /* every mapping pub has pointed to */
	int sock;
	uint32_t slot;
	uint64_t client_id;
	pthread_mutex_t holds_lock;  /* guards alarms, meta and the bitmaps */
	struct wakelock_alarm *alarms;     /* destroyed by wakelock_client_close */
	/* Indices taken (ours, or refused by the daemon: its alarm holds),
	 * and those of our holds, destroyed by wakelock_client_close. */
	uint64_t hold_used[WAKELOCK_MAX_HOLDS_PER_CLIENT / 64];
	uint64_t hold_live[WAKELOCK_MAX_HOLDS_PER_CLIENT / 64];
	/* [WAKELOCK_MAX_HOLDS_PER_CLIENT], allocated with the first hold:
	 * apart from the fields above, which the fast path reads, so that
	 * clients stay small and close together in memory. */
	struct wl_hold_meta *meta;
	/* Timed holds change timed_until, which is one word for all of
	 * them: those changes are serialised (not the untimed fast path). */
	pthread_mutex_t timed_lock;
	/* One request and its reply at a time on sock. */
	pthread_mutex_t sock_lock;
	int resume_fd;               /* resume doorbell's read end, -1 = none (sock_lock) */
	uint64_t resume_seen;        /* the last attempt wakelock_resume_read reported */
	char name[WAKELOCK_NAME_MAX];
	char *sock_path;             /* as given to wakelock_client_open, or NULL */
	pthread_t watcher;
	int watch_stop;              /* eventfd: wakelock_client_close ends the watcher */
	int watching;
};

struct wakelock_alarm {
	wakelock_client *c;
	uint32_t index;   /* in the slot's alarms[] */
	int efd;          /* doorbell's read end: the daemon writes when it fires */
	pthread_mutex_t lock;
	uint64_t seen;    /* fired_seq acknowledged by wakelock_alarm_wait */
	int pending;      /* acknowledged fires await wakelock_alarm_done */
	struct wakelock_alarm *next, **pprev;
};

/* Bit i of a bitmap of region indices (hold_used, hold_live). */
static inline int wl_bit_test(const uint64_t *map, uint32_t i)
{
	return (map[i / 64] >> (i % 64)) & 1;
}

static inline void wl_bit_set(uint64_t *map, uint32_t i)
{
	map[i / 64] |= 1ull << (i % 64);
}

static inline void wl_bit_clear(uint64_t *map, uint32_t i)
{
	map[i / 64] &= ~(1ull << (i % 64));
}

/* Is index i of c's region one of its live holds (holds_lock held, or
 * the client being closed)? */
static inline int wl_hold_live(const wakelock_client *c, uint32_t i)
{
	return wl_bit_test(c->hold_live, i);
}

/* A wakelock_hold is the address of its line in the client's region
 * (hold.c): its index there. */
uint32_t wl_hold_index(const wakelock_hold *h);
/* Its record in the client's meta (h must be a live hold). */
struct wl_hold_meta *wl_hold_meta(wakelock_hold *h);

/* pubmap.c: the daemon's published segment, mapped read-only once per
 * process however many clients register with that daemon: their fast
 * paths then read the same pages.  wl_pub_get takes fd in every case. */
int wl_pub_get(int fd, const struct wl_shm_header **hdr);
void wl_pub_put(const struct wl_shm_header *hdr);

/* client.c */
/* Register c (its name and region) on a new connection to path: on
 * success *sock, *pub (wl_pub_get) and the reply. */
int wl_client_register(wakelock_client *c, const char *path, int timeout_ms, int *sock,
                       const struct wl_shm_header **pub, struct wl_msg_rep *rep);
/* Ask the daemon for a hold entry named name at index want (-1: any). */
int wl_client_hold_request(wakelock_client *c, uint16_t op, const char *name, int want);
/* Wake the daemon (it waits for holds to end): WL_OP_KICK on our
 * connection, without blocking. */
void wl_client_kick(wakelock_client *c);
/* A hold of ours went to zero: kick the daemon if it watches us, we
 * have not kicked for this watch yet, and nothing of ours holds any more
 * (the release half of wl_region.h).  In that order: a client that is
 * not watched, or kicked already, pays one load, not the scan of its
 * holds and a clock read. */
static inline void wl_client_released(wakelock_client *c)
{
	uint32_t g = __atomic_load_n(__atomic_load_n(&c->watched, __ATOMIC_ACQUIRE),
	                             __ATOMIC_SEQ_CST);
	const struct wl_region *rg = c->region;

	if (!g || __atomic_load_n(&c->kicked_gen, __ATOMIC_RELAXED) == g)
		return;
	if (!wl_region_untimed_idle(rg) ||
	    (__atomic_load_n(&rg->timed_until, __ATOMIC_SEQ_CST) &&
	     wl_region_holding(rg, wl_now_mono())))
		return;
	if (__atomic_exchange_n(&c->kicked_gen, g, __ATOMIC_RELAXED) != g)
		wl_client_kick(c);
}
/* The hold's region entry changed: recompute timed_until (timed_lock
 * held) and wake a waiting daemon if nothing holds any more. */
void wl_client_timed_changed(wakelock_client *c, uint64_t now);
/* The acquire saw the daemon's phase CLOSED: wait until it opens. */
void wl_client_wait_open(wakelock_client *c);

/* resume.c: subscribe again (a new daemon), if subscribed. */
int wl_client_resubscribe(wakelock_client *c);

/* watch.c: a thread per client that notices the daemon's hang-up and
 * registers the client and its holds with its successor. */
#define WL_REREGISTER_MS 10000u
/* Between two tries: from the first, doubling up to the last (shorter
 * than the daemon's start grace, WLD_RESTART_GRACE_MS). */
#define WL_REREGISTER_STEP_MIN_MS 50u
#define WL_REREGISTER_STEP_MAX_MS 2000u
int wl_watch_start(wakelock_client *c);
/* error.c: what happened to a client's connection, from its watcher,
 * for every thread: wakelock_last_error() shows it until the thread's
 * next failure (a note newer than that failure replaces it). */
void wl_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void wl_watch_stop(wakelock_client *c);
/* alarm.c: free the handles without asking the daemon (it reaps them
 * with the connection). */
void wl_alarm_forget_all(wakelock_client *c);

#endif
