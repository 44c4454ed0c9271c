/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Holds survive a restart of the daemon.
 *
 * Every client has a thread that sleeps in poll() on its connection.
 * When the daemon hangs up (kill -9, crash, restart), the thread connects
 * again, for up to WL_REREGISTER_MS, and registers under the same name
 * with the same region.  The holds never moved: they are in the region,
 * which the client owns, so the new daemon sees every one of them the
 * moment it maps it.  The thread then tells it the names of the holds,
 * at the same indices.  A daemon that starts after an unclean exit stays
 * awake for a grace period first (WLD_RESTART_GRACE_MS,
 * daemon/powerloop.h), shorter than this window, so that no suspend
 * happens before the clients that held are back.
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
	int sock, kick, r;

	if (!pm)
		return -ENOMEM;
	r = wl_client_register(c, c->sock_path, 200, &sock, &pm->hdr, &kick, &rep);
	if (r < 0) {
		free(pm);
		return r;
	}
	if (rep.slot >= pm->hdr->nslots) {
		wl_pub_put(pm->hdr);
		free(pm);
		close(sock);
		close(kick);
		return -EBADMSG;
	}
	pthread_mutex_lock(&c->sock_lock);
	/* Same descriptor numbers: what the application has of
	 * wakelock_client_fd() stays valid, and a kick in flight goes to one
	 * daemon or the other, both harmless. */
	if (dup2(sock, c->sock) < 0 || dup2(kick, c->kick_fd) < 0)
		r = -errno;
	pthread_mutex_unlock(&c->sock_lock);
	close(sock);
	close(kick);
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
	/* Waiters on the old daemon's phase look again (wl_client_wait_open). */
	__atomic_store_n(&c->watched, &pm->hdr->watched[rep.slot], __ATOMIC_RELEASE);
	__atomic_store_n(&c->pub, pm->hdr, __ATOMIC_RELEASE);
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

/* The daemon hung up: retry for WL_REREGISTER_MS.  0 when moved over,
 * 1 when asked to stop, negative when given up. */
static int recover(wakelock_client *c)
{
	unsigned waited = 0, step = 20;

	if (has_alarms(c)) {
		__atomic_store_n(&c->lost, 1, __ATOMIC_RELEASE);
		return -EOPNOTSUPP;
	}
	for (;;) {
		if (reregister(c) == 0)
			return 0;
		if (waited >= WL_REREGISTER_MS)
			break;
		if (stop_requested(c, (int)step))
			return 1;
		waited += step;
		if (step < 500)
			step *= 2;
	}
	__atomic_store_n(&c->lost, 1, __ATOMIC_RELEASE);
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
