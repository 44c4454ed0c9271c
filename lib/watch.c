/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Holds survive a restart of the daemon.
 *
 * Every client has a thread that sleeps in poll() on its connection.
 * When the daemon hangs up (kill -9, crash, restart), the thread connects
 * again, for up to WL_REREGISTER_MS, registers under the same name, and
 * moves every hold (depth and timeout) from the old segment to the new
 * one.  A daemon that starts after an unclean exit stays awake for a
 * grace period first (WLD_RESTART_GRACE_MS, daemon/powerloop.h), shorter
 * than this window, so that no suspend happens while a client holds.
 *
 * Meanwhile the application goes on using the old segment: acquires and
 * releases there are what gets moved.  The move itself happens with the
 * registration lock held for writing, so no call is half on one segment
 * and half on the other.  The connection keeps its descriptor number
 * (dup2), so wl_client_fd() stays valid.
 *
 * Not moved: wake alarms (the new daemon knows nothing of their
 * schedule).  A client with alarms is not re-registered; its calls fail
 * with -ENOTCONN as before and it must reopen.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include "wl_client.h"

/* Sleep up to ms, or until wl_client_close; 1 if asked to stop. */
static int stop_requested(wl_client *c, int ms)
{
	struct pollfd p = { .fd = c->watch_stop[0], .events = POLLIN };

	return poll(&p, 1, ms) > 0;
}

/* Move the holds of c to the new registration (reg_lock held for
 * writing, new segment locked). */
static void move_holds(wl_client *c, struct wl_shm_header *nh, uint32_t nslot)
{
	const struct wl_shm_slot *os = &c->seg.hdr->slots[c->slot];
	uint64_t now = wl_now_mono();

	pthread_mutex_lock(&c->holds_lock);
	for (wl_hold *h = c->holds; h; h = h->next) {
		const struct wl_shm_hold *oh = &os->holds[h->index];
		uint32_t depth = oh->depth;
		uint64_t deadline = oh->deadline;
		int r = wl_table_hold_alloc(nh, nslot, oh->name);

		if (r < 0)      /* cannot happen: same table size as before */
			continue;
		h->index = (uint32_t)r;
		if (depth) {
			wl_table_acquire(nh, nslot, h->index, 0, now);
			nh->slots[nslot].holds[h->index].depth = depth;
		}
		if (deadline > now)
			wl_table_acquire(nh, nslot, h->index, deadline - now, now);
	}
	pthread_mutex_unlock(&c->holds_lock);
}

/* One attempt to register with the (new) daemon and move over. */
static int reregister(wl_client *c)
{
	struct wl_msg_rep rep;
	struct wl_seg seg;
	int sock, fd = -1, r;

	sock = wl_connect(c->sock_path, 200);
	if (sock < 0)
		return sock;
	r = wl_request(sock, WL_OP_REGISTER, c->name, &rep, &fd);
	if (r == 0 && fd < 0)
		r = -EPROTO;
	if (r == 0)
		r = wl_seg_map_fd(fd, &seg);
	if (r == 0 && rep.slot >= seg.hdr->nslots) {
		wl_seg_unmap(&seg);
		r = -EBADMSG;
	}
	if (r < 0) {
		close(sock);
		return r;
	}
	close(seg.fd);
	seg.fd = -1;

	pthread_rwlock_wrlock(&c->reg_lock);
	r = wl_lock(seg.hdr);
	if (r == 0) {
		move_holds(c, seg.hdr, rep.slot);
		wl_unlock(seg.hdr);
		wl_seg_unmap(&c->seg);
		c->seg = seg;
		c->slot = rep.slot;
		c->client_id = rep.client_id;
		/* Same descriptor number: what the application has of
		 * wl_client_fd() stays valid. */
		if (dup2(sock, c->sock) < 0)
			r = -errno;
	}
	pthread_rwlock_unlock(&c->reg_lock);
	close(sock);
	if (r < 0 && seg.hdr != c->seg.hdr)
		wl_seg_unmap(&seg);
	return r;
}

static int has_alarms(wl_client *c)
{
	int r;

	pthread_mutex_lock(&c->holds_lock);
	r = c->alarms != NULL;
	pthread_mutex_unlock(&c->holds_lock);
	return r;
}

/* The daemon hung up: retry for WL_REREGISTER_MS.  0 when moved over,
 * 1 when asked to stop, negative when given up. */
static int recover(wl_client *c)
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
	wl_client *c = arg;

	for (;;) {
		struct pollfd p[2] = {
			{ .fd = c->sock, .events = POLLRDHUP },
			{ .fd = c->watch_stop[0], .events = POLLIN },
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

int wl_watch_start(wl_client *c)
{
	sigset_t all, old;
	int r;

	if (pipe2(c->watch_stop, O_CLOEXEC) < 0)
		return -errno;
	/* The application's signals are for its own threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&c->watcher, NULL, watch, c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r) {
		close(c->watch_stop[0]);
		close(c->watch_stop[1]);
		return -r;
	}
	c->watching = 1;
	return 0;
}

void wl_watch_stop(wl_client *c)
{
	if (!c->watching)
		return;
	if (write(c->watch_stop[1], "x", 1) < 0) {
		/* a pipe with room for one byte: cannot fail */
	}
	pthread_join(c->watcher, NULL);
	close(c->watch_stop[0]);
	close(c->watch_stop[1]);
	c->watching = 0;
}
