/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Wake alarms, the client side.  Creating, setting and cancelling go to
 * the daemon over the client's socket (it owns the timer); waiting reads
 * the daemon's published segment and the alarm's doorbell (a pipe the
 * daemon rings), wakelock_alarm_done() writes
 * the client's own region and wakes the daemon, which ends the alarm's
 * hold (a daemon-owned one).
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "wl_client.h"

/* fd: where the reply's descriptor goes (NULL: none expected). */
static int alarm_request(wakelock_client *c, struct wl_msg_arg *m, uint32_t *index, int *fd)
{
	struct wl_msg_rep rep;
	int r;

	pthread_mutex_lock(&c->sock_lock);
	r = fd ? wl_request_arg_fd(c->sock, m, &rep, fd) : wl_request_arg(c->sock, m, -1, &rep);
	pthread_mutex_unlock(&c->sock_lock);
	if (r == 0 && index)
		*index = rep.slot;
	return r;
}

int wakelock_alarm_create(wakelock_client *c, const char *name, wakelock_alarm **out)
{
	struct wl_msg_arg m;
	wakelock_alarm *a;
	int r;

	if (!c || !out)
		return -EINVAL;
	*out = NULL;
	r = wl_name_check(name);
	if (r < 0) {
		wl_set_error("invalid alarm name");
		return r;
	}
	if (strlen(name) >= WAKELOCK_ALARM_NAME_MAX) {
		wl_set_error("alarm names have at most %d characters", WAKELOCK_ALARM_NAME_MAX - 1);
		return -ENAMETOOLONG;
	}
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	memset(&m, 0, sizeof(m));
	m.req.op = WL_OP_ALARM_CREATE;
	strncpy(m.req.name, name, WAKELOCK_NAME_MAX - 1);
	/* The doorbell is the daemon's pipe: we get its read end
	 * (non-blocking, so draining it here never blocks). */
	a->efd = -1;
	r = alarm_request(c, &m, &a->index, &a->efd);
	if (r == 0 && a->efd < 0) {
		wl_set_error("wakelockd did not pass the alarm's doorbell");
		r = -EPROTO;
	}
	if (r == 0 && a->index >= WAKELOCK_MAX_ALARMS_PER_CLIENT) {
		wl_set_error("wakelockd assigned an impossible alarm");
		r = -EBADMSG;
	}
	if (r < 0) {
		if (a->efd >= 0)
			close(a->efd);
		free(a);
		return r;
	}
	/* The entry may have served an earlier alarm: no fire of this one
	 * is done yet (none can have come: it is not set). */
	__atomic_store_n(&c->region->alarm_done[a->index], 0, __ATOMIC_RELEASE);
	pthread_mutex_init(&a->lock, NULL);
	a->c = c;
	pthread_mutex_lock(&c->holds_lock);
	a->next = c->alarms;
	if (a->next)
		a->next->pprev = &a->next;
	a->pprev = &c->alarms;
	c->alarms = a;
	pthread_mutex_unlock(&c->holds_lock);
	*out = a;
	return 0;
}

static int simple_request(wakelock_alarm *a, uint16_t op, uint64_t first_ms, uint32_t period_ms,
                          uint32_t window_ms)
{
	struct wl_msg_arg m;

	memset(&m, 0, sizeof(m));
	m.req.op = op;
	m.index = a->index;
	m.first_ms = first_ms;
	m.period_ms = period_ms;
	m.window_ms = window_ms;
	return alarm_request(a->c, &m, NULL, NULL);
}

int wakelock_alarm_set(wakelock_alarm *a, uint64_t first_ms, uint32_t period_ms, uint32_t window_ms)
{
	if (!a)
		return -EINVAL;
	/* The daemon checks again (against its clock); refusing the obvious
	 * here saves a round trip and gives the reason. */
	if (period_ms && window_ms > period_ms) {
		wl_set_error("the window of a periodic alarm may not exceed its period");
		return -EINVAL;
	}
	if (first_ms > (uint64_t)INT64_MAX / 1000000u) {
		wl_set_error("alarm time out of range");
		return -EOVERFLOW;
	}
	return simple_request(a, WL_OP_ALARM_SET, first_ms, period_ms, window_ms);
}

int wakelock_alarm_cancel(wakelock_alarm *a)
{
	if (!a)
		return -EINVAL;
	return simple_request(a, WL_OP_ALARM_CANCEL, 0, 0, 0);
}

int wakelock_alarm_fd(const wakelock_alarm *a)
{
	return a ? a->efd : -EINVAL;
}

/* Take note of fires not seen yet: their number, 0 if none. */
static int acknowledge(wakelock_alarm *a)
{
	const struct wl_shm_header *pub;
	const struct wl_shm_alarm *al;
	uint64_t n, fired;
	char buf[64];

	if (__atomic_load_n(&a->c->lost, __ATOMIC_ACQUIRE)) {
		wl_set_error("wakelockd has exited or been replaced");
		return -ENOTCONN;
	}
	pub = __atomic_load_n(&a->c->pub, __ATOMIC_ACQUIRE);
	/* Drain first: the daemon bumps fired_seq before it signals, so a
	 * signal drained here is always covered by the fired_seq read next.
	 * A later signal leaves the fd readable and costs one spurious
	 * wake-up at most. */
	while (read(a->efd, buf, sizeof(buf)) > 0)
		;
	al = &pub->slots[a->c->slot].alarms[a->index];
	if (!__atomic_load_n(&al->in_use, __ATOMIC_ACQUIRE)) {
		wl_set_error("wakelockd no longer knows this alarm");
		return -ESTALE;
	}
	fired = __atomic_load_n(&al->fired_seq, __ATOMIC_ACQUIRE);
	pthread_mutex_lock(&a->lock);
	n = fired > a->seen ? fired - a->seen : 0;
	if (n) {
		a->seen = fired;
		a->pending = 1;
	}
	pthread_mutex_unlock(&a->lock);
	return n > 0x7fffffff ? 0x7fffffff : (int)n;
}

int wakelock_alarm_wait(wakelock_alarm *a, int timeout_ms)
{
	uint64_t end = 0;
	int r;

	if (!a)
		return -EINVAL;
	if (timeout_ms > 0)
		end = wl_now_mono() + (uint64_t)timeout_ms * 1000000u;
	for (;;) {
		/* The socket reports POLLHUP when the daemon exits: an alarm
		 * of a dead daemon never fires. */
		struct pollfd p[2] = {
			{ .fd = a->efd, .events = POLLIN },
			{ .fd = a->c->sock, .events = 0 },
		};
		int left = timeout_ms;

		r = acknowledge(a);
		if (r != 0)
			return r;
		if (timeout_ms > 0) {
			uint64_t now = wl_now_mono();

			if (now >= end)
				return 0;
			left = (int)((end - now + 999999u) / 1000000u);
		} else if (timeout_ms == 0) {
			return 0;
		}
		r = poll(p, 2, left);
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r > 0 && (p[1].revents & (POLLHUP | POLLERR))) {
			wl_set_error("wakelockd has exited");
			return -ENOTCONN;
		}
	}
}

int wakelock_alarm_done(wakelock_alarm *a)
{
	uint64_t seen;

	if (!a)
		return -EINVAL;
	pthread_mutex_lock(&a->lock);
	if (!a->pending) {
		pthread_mutex_unlock(&a->lock);
		wl_set_error("no fire of this alarm awaits wakelock_alarm_done");
		return -EINVAL;
	}
	a->pending = 0;
	seen = a->seen;
	pthread_mutex_unlock(&a->lock);
	/* The daemon ends the alarm's hold, or renews it if the alarm fired
	 * again since wakelock_alarm_wait (table.c, alarms_ack). */
	__atomic_store_n(&a->c->region->alarm_done[a->index], seen, __ATOMIC_RELEASE);
	wl_client_kick(a->c);
	return 0;
}

static void unlink_alarm(wakelock_alarm *a)
{
	pthread_mutex_lock(&a->c->holds_lock);
	*a->pprev = a->next;
	if (a->next)
		a->next->pprev = a->pprev;
	pthread_mutex_unlock(&a->c->holds_lock);
}

void wakelock_alarm_destroy(wakelock_alarm *a)
{
	if (!a)
		return;
	unlink_alarm(a);
	/* The daemon frees the entry and its hold; if it is gone there is
	 * nothing left to free. */
	simple_request(a, WL_OP_ALARM_DESTROY, 0, 0, 0);
	close(a->efd);
	pthread_mutex_destroy(&a->lock);
	free(a);
}

void wl_alarm_forget_all(wakelock_client *c)
{
	while (c->alarms) {
		wakelock_alarm *a = c->alarms;

		unlink_alarm(a);
		close(a->efd);
		pthread_mutex_destroy(&a->lock);
		free(a);
	}
}
