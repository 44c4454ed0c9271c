/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Holds survive a restart of the daemon.
 *
 * Every client has a thread that sleeps in poll() on its connection.
 * When the daemon hangs up (kill -9, crash, restart), the thread connects
 * again, and registers under the same name with the same region: for at
 * least WL_REREGISTER_MS, and beyond for as long as one of the client's
 * holds is held (a daemon may be away for a minute; the holds must not
 * be lost meanwhile), 50 ms apart at first, doubling up to
 * WL_REREGISTER_STEP_MAX_MS.  The holds never moved: they are in the region,
 * which the client owns, so the new daemon sees every one of them the
 * moment it maps it.  The thread then tells it the names of the holds,
 * at the same indices.  Every daemon stays awake for a grace period
 * after it starts (WLD_RESTART_GRACE_MS, daemon/powerloop.h), longer
 * than the longest step between two tries, so that no suspend happens
 * before the clients that held are back.  What happened is told by
 * wakelock_last_error() in every thread (wl_note, error.c).
 *
 * Meanwhile the application goes on acquiring and releasing in its
 * region, untouched by all this: only the daemon's published segment
 * (c->pub, swapped atomically; the old mapping stays until close), the
 * eventfd and the connection change, the last two keeping their
 * descriptor numbers (dup2), so wakelock_client_fd() stays valid.
 *
 * Not carried over: wake alarms (the new daemon knows nothing of their
 * schedule).  A client with alarms is not re-registered; its calls fail
 * with -ENOTCONN as before and it must reopen.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/eventfd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "wl_client.h"

/* Sleep up to ms, or until wakelock_client_close; 1 if asked to stop. */
static int stop_requested(wakelock_client *c, int ms)
{
	struct pollfd p = { .fd = c->watch_stop, .events = POLLIN };

	return poll(&p, 1, ms) > 0;
}

/* One attempt to register with the (new) daemon. */
static int reregister(wakelock_client *c)
{
	struct wl_pub_map *pm = calloc(1, sizeof(*pm));
	struct wl_msg_rep rep;
	int sock, r;

	if (!pm)
		return -ENOMEM;
	r = wl_client_register(c, c->sock_path, 200, &sock, &pm->hdr, &rep);
	if (r < 0) {
		free(pm);
		return r;
	}
	if (rep.slot >= pm->hdr->nslots) {
		wl_pub_put(pm->hdr);
		free(pm);
		close(sock);
		return -EBADMSG;
	}
	pthread_mutex_lock(&c->sock_lock);
	/* Same descriptor number: what the application has of
	 * wakelock_client_fd() stays valid, and a kick in flight goes to one
	 * daemon or the other, both harmless. */
	if (dup2(sock, c->sock) < 0)
		r = -errno;
	pthread_mutex_unlock(&c->sock_lock);
	close(sock);
	if (r < 0) {
		wl_pub_put(pm->hdr);
		free(pm);
		return r;
	}
	c->slot = rep.slot;
	c->client_id = rep.client_id;
	pthread_mutex_lock(&c->holds_lock);
	pm->next = c->pubs;
	c->pubs = pm;
	pthread_mutex_unlock(&c->holds_lock);
	/* Waiters on the old daemon's phase look again (wl_client_wait_open).
	 * The new daemon's watches are new to us. */
	__atomic_store_n(&c->kicked_gen, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&c->watched, &pm->hdr->watched[rep.slot], __ATOMIC_RELEASE);
	__atomic_store_n(&c->pub, pm->hdr, __ATOMIC_RELEASE);
	__atomic_store_n(&c->away, 0, __ATOMIC_RELEASE);
	/* The new daemon may already wait on us: tell it to look. */
	wl_client_kick(c);
	/* The names, at the indices the region has them (copied first: a
	 * hold may be destroyed meanwhile, its request then fails). */
	struct { uint32_t index; char name[WAKELOCK_NAME_MAX]; } names[WAKELOCK_MAX_HOLDS_PER_CLIENT];
	unsigned n = 0;

	pthread_mutex_lock(&c->holds_lock);
	for (uint32_t i = 0; i < WAKELOCK_MAX_HOLDS_PER_CLIENT; i++) {
		if (!wl_hold_live(c, i))
			continue;
		names[n].index = i;
		memcpy(names[n].name, c->meta[i].name, WAKELOCK_NAME_MAX);
		n++;
	}
	pthread_mutex_unlock(&c->holds_lock);
	for (unsigned i = 0; i < n; i++)
		wl_client_hold_request(c, WL_OP_HOLD_CREATE, names[i].name, (int)names[i].index);
	/* Resume notifications go on, from the new daemon's ledger. */
	wl_client_resubscribe(c);
	c->resume_seen = 0;
	return 0;
}

static int has_alarms(wakelock_client *c)
{
	int r;

	pthread_mutex_lock(&c->holds_lock);
	r = c->alarms != NULL;
	pthread_mutex_unlock(&c->holds_lock);
	return r;
}

static unsigned ms_since(uint64_t t0)
{
	return (unsigned)((wl_now_mono() - t0) / 1000000u);
}

/* The daemon hung up: retry for WL_REREGISTER_MS, and for as long as a
 * hold is held.  0 when moved over, 1 when asked to stop, negative when
 * given up. */
static int recover(wakelock_client *c)
{
	unsigned step = WL_REREGISTER_STEP_MIN_MS, tries = 0, told_long = 0;
	uint64_t t0 = wl_now_mono();
	char why[160];

	if (has_alarms(c)) {
		__atomic_store_n(&c->lost, 1, __ATOMIC_RELEASE);
		wl_note("client \"%s\": wakelockd went away; not registered again because it "
		        "has wake alarms, which a new daemon would not know: reopen it", c->name);
		return -EOPNOTSUPP;
	}
	wl_note("client \"%s\": wakelockd went away; registering again", c->name);
	for (;;) {
		tries++;
		if (reregister(c) == 0) {
			wl_note("client \"%s\": wakelockd went away and came back; registered "
			        "again after %u ms (%u tries), holds kept", c->name, ms_since(t0),
			        tries);
			return 0;
		}
		/* This thread's own last error: why the try failed. */
		snprintf(why, sizeof(why), "%s", wakelock_last_error());
		if (ms_since(t0) >= WL_REREGISTER_MS) {
			/* Nothing to lose by giving up once nothing is held;
			 * a hold held is kept for as long as it takes. */
			if (!wl_region_holding(c->region, wl_now_mono()))
				break;
			if (!told_long) {
				told_long = 1;
				wl_note("client \"%s\": wakelockd is still away after %u ms; "
				        "registering again every %u ms at most while a hold is "
				        "held (last try: %s)", c->name, ms_since(t0),
				        WL_REREGISTER_STEP_MAX_MS, why);
			}
		}
		if (stop_requested(c, (int)step))
			return 1;
		step = step * 2 < WL_REREGISTER_STEP_MAX_MS ? step * 2 : WL_REREGISTER_STEP_MAX_MS;
	}
	__atomic_store_n(&c->lost, 1, __ATOMIC_RELEASE);
	wl_note("client \"%s\": wakelockd did not come back within %u ms and nothing was "
	        "held: given up (its calls fail with ENOTCONN; reopen it); last try: %s",
	        c->name, ms_since(t0), why);
	return -ETIMEDOUT;
}

static void *watch(void *arg)
{
	wakelock_client *c = arg;

	for (;;) {
		struct pollfd p[2] = {
			{ .fd = c->sock, .events = POLLRDHUP },
			{ .fd = c->watch_stop, .events = POLLIN },
		};

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return NULL;
		}
		if (p[1].revents)
			return NULL;
		if (p[0].revents & (POLLHUP | POLLRDHUP | POLLERR)) {
			__atomic_store_n(&c->away, 1, __ATOMIC_RELEASE);
			if (recover(c) != 0)
				return NULL;
		}
	}
}

int wl_watch_start(wakelock_client *c)
{
	sigset_t all, old;
	int r;

	/* An eventfd, not a pipe: one descriptor less per client. */
	c->watch_stop = eventfd(0, EFD_CLOEXEC);
	if (c->watch_stop < 0)
		return -errno;
	/* The application's signals are for its own threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&c->watcher, NULL, watch, c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r) {
		close(c->watch_stop);
		return -r;
	}
	c->watching = 1;
	return 0;
}

void wl_watch_stop(wakelock_client *c)
{
	uint64_t one = 1;

	if (!c->watching)
		return;
	if (write(c->watch_stop, &one, sizeof(one)) < 0) {
		/* an eventfd far from full: cannot fail */
	}
	pthread_join(c->watcher, NULL);
	close(c->watch_stop);
	c->watching = 0;
}
