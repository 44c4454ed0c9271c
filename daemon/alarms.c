/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Wake alarms, the daemon side (main thread).  One timerfd serves every
 * alarm of every client: it is set to the next fire time alarm_sched.c
 * computes, on CLOCK_BOOTTIME_ALARM so that it wakes a suspended system.
 *
 * The guarantee "the work runs before the system suspends again" rests on
 * two hand-offs, each made while the previous keeper still holds:
 *   kernel -> daemon: the timerfd is polled with EPOLLWAKEUP, so the
 *     kernel keeps the system awake from the expiry until this thread
 *     calls epoll_wait() again, i.e. until the holds below are taken;
 *   daemon -> client: the alarm's hold ("alarm:NAME", timed by
 *     alarm_timeout_ms, owned by the daemon) is acquired BEFORE the
 *     client's doorbell is rung; it ends when the client reports the
 *     work done in its region (wakelock_alarm_done, lib/table.c alarms_ack).
 * Each alarm's doorbell is a pipe the daemon made: the client has the
 * read end, the daemon the write end, non-blocking in a file description
 * of its own, so no client can make the ring block (server_doorbell).
 * The rings happen after the segment lock is released.
 * Deny covers alarms: a denied client's alarms do not arm the timer (nor
 * count as imminent in the power loop) until it is allowed again; then
 * those overdue fire at once.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include "lib/wl_proto.h"
#include "alarm_sched.h"
#include "daemon.h"
#include "ledger.h"
#include "log.h"

int alarms_open(struct daemon *d, char *err, size_t errlen)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLWAKEUP, .data.u32 = IDX_ALARM };
	struct timespec res;
	const char *why = NULL;

	/*
	 * An alarm timer without an RTC that can wake the system would be
	 * created all the same and silently never wake it: the kernel tells
	 * by refusing clock_getres() on the alarm clock.  EPERM below means
	 * no CAP_WAKE_ALARM.
	 */
	if (clock_getres(CLOCK_BOOTTIME_ALARM, &res) < 0) {
		why = "no RTC with alarm support";
	} else {
		d->alarm_fd = timerfd_create(CLOCK_BOOTTIME_ALARM, TFD_CLOEXEC | TFD_NONBLOCK);
		if (d->alarm_fd < 0)
			why = errno == EPERM ? "no CAP_WAKE_ALARM" : strerror(errno);
	}
	if (why) {
		/* Alarms still fire while the system is awake, and after any
		 * other wake-up. */
		log_warn("CLOCK_BOOTTIME_ALARM unavailable (%s): wake alarms cannot wake a "
		         "suspended system", why);
		d->alarm_fd = timerfd_create(CLOCK_BOOTTIME, TFD_CLOEXEC | TFD_NONBLOCK);
	}
	if (d->alarm_fd < 0) {
		/* A kernel without timerfd (CONFIG_TIMERFD=n): holds matter
		 * more than alarms, run without them. */
		log_error("timerfd: %s: wake alarms unavailable", strerror(errno));
		return 0;
	}
	/* Without CAP_BLOCK_SUSPEND the kernel ignores EPOLLWAKEUP; the
	 * daemon normally has it (it runs as root). */
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, d->alarm_fd, &ev) < 0) {
		snprintf(err, errlen, "epoll (alarm timer): %s", strerror(errno));
		return -errno;
	}
	d->seg.hdr->dstats.alarm_wakes = why ? 0 : 1;
	alarms_set_timeout(d);
	return 0;
}

void alarms_set_timeout(struct daemon *d)
{
	wl_lock(d->seg.hdr);
	d->seg.hdr->alarm_timeout_ms = d->cfg.alarm_timeout_ms;
	wl_unlock(d->seg.hdr);
}

void alarms_close(struct daemon *d)
{
	if (d->alarm_fd >= 0)
		close(d->alarm_fd);
	d->alarm_fd = -1;
}

void alarms_conn_closed(struct conn *c)
{
	for (unsigned j = 0; j < WAKELOCK_MAX_ALARMS_PER_CLIENT; j++) {
		if (c->alarm_wfd[j] >= 0)
			close(c->alarm_wfd[j]);
		c->alarm_wfd[j] = -1;
	}
}

/* O(live clients x alarms per client). */
void alarms_rearm(struct daemon *d)
{
	struct wl_shm_header *hdr = d->seg.hdr;
	struct itimerspec its;
	uint64_t next = 0, first = 0;

	if (d->alarm_fd < 0)
		return;
	d->pl.alarm_slot = d->pl.alarm_index = -1;
	d->pl.alarm_next_boot = 0;
	for (uint32_t k = 0; k < hdr->nlive; k++) {
		struct wl_shm_slot *s = &hdr->slots[hdr->order[k]];

		/* Denied: its alarms wait (see the top). */
		if (!s->allowed)
			continue;
		for (uint32_t j = 0; j < WAKELOCK_MAX_ALARMS_PER_CLIENT; j++) {
			const struct wl_alarm_times *t = &s->alarms[j].t;

			if (!s->alarms[j].in_use)
				continue;
			next = alarm_sched_merge(next, t);
			/* The ledger's candidate cause: the one due first. */
			if (t->due && (!first || t->due < first)) {
				first = t->due;
				d->pl.alarm_slot = (int)hdr->order[k];
				d->pl.alarm_index = (int)j;
			}
		}
	}
	d->pl.alarm_next_boot = next;
	/* Absolute; a time already past expires at once, 0 disarms. */
	memset(&its, 0, sizeof(its));
	its.it_value.tv_sec = (time_t)(next / 1000000000u);
	its.it_value.tv_nsec = (long)(next % 1000000000u);
	if (timerfd_settime(d->alarm_fd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
		log_error("arming the alarm timer: %s", strerror(errno));
}

/* Fire one due alarm (lock held): the hold and the count; the client is
 * told by signal() once every alarm of this expiry has fired. */
static void fire(struct daemon *d, uint32_t slot, uint32_t j, uint64_t boot, uint64_t mono)
{
	struct wl_shm_header *hdr = d->seg.hdr;
	struct wl_shm_slot *s = &hdr->slots[slot];
	struct wl_shm_alarm *al = &s->alarms[j];
	uint64_t late = alarm_sched_fire(&al->t, boot);

	/*
	 * A fresh hold only for a client that finished its earlier fires:
	 * one still busy with them is covered by the hold it has (renewed by
	 * its wakelock_alarm_done), and one that stopped finishing must not keep
	 * the system awake for ever by a period shorter than the timeout.
	 * Fails only if the client freed the hold itself (it is closing).
	 */
	if (al->done_seq == al->fired_seq) {
		wl_table_acquire(hdr, slot, al->hold, (uint64_t)d->cfg.alarm_timeout_ms * 1000000u,
		                 mono);
		/* The daemon takes this hold for the client: its claim. */
		if (d->ledger)
			ledger_claim(d->ledger, s->name, s->holds[al->hold].name, mono);
	}
	al->fired_seq++;
	al->last_fired = boot;
	s->alarm_fires++;
	s->alarm_late_ns += late;
	if (late > s->alarm_late_max_ns)
		s->alarm_late_max_ns = late;
	log_debug("alarm %s of %s fired %llu ms late", al->name, s->name,
	          (unsigned long long)(late / 1000000u));
}

/* Tell the client that alarm j of slot fired: its doorbell, our own
 * non-blocking write end (a full pipe is readable already). */
static void signal_fire(struct daemon *d, uint32_t slot, uint32_t j)
{
	int ci = d->slot_conn[slot];

	if (ci >= 0)
		server_ring(d->conns[ci].alarm_wfd[j]);
}

void alarms_timer_event(struct daemon *d)
{
	struct wl_shm_header *hdr = d->seg.hdr;
	uint64_t exp, boot, mono, fired = 0;

	/* Nothing to read after a re-arm raced with the expiry: the scan
	 * below is what counts. */
	if (read(d->alarm_fd, &exp, sizeof(exp)) < 0 && errno != EAGAIN)
		log_warn("alarm timer: %s", strerror(errno));
	wl_lock(hdr);
	boot = wl_clock_ns(CLOCK_BOOTTIME);
	mono = wl_now_mono();
	/* Every due alarm first, then the signals: a client woken by one of
	 * them (it reads fired_seq without our lock) sees all the fires of
	 * this expiry, its other alarms' included. */
	for (uint32_t k = 0; k < hdr->nlive; k++) {
		uint32_t i = hdr->order[k];
		struct wl_shm_slot *s = &hdr->slots[i];

		for (uint32_t j = 0; j < WAKELOCK_MAX_ALARMS_PER_CLIENT; j++) {
			if (s->alarms[j].in_use && alarm_sched_due(&s->alarms[j].t, boot)) {
				fire(d, i, j, boot, mono);
				s->alarms[j].signal = 1;
				fired++;
			}
		}
	}
	if (fired) {
		hdr->dstats.alarm_wakeups++;
		hdr->dstats.alarm_fires += fired;
	}
	alarms_rearm(d);
	wl_unlock(hdr);
	/* The rings, outside the lock.  The slots, their order and the
	 * signal marks change in this thread only, so they hold still. */
	for (uint32_t k = 0; fired && k < hdr->nlive; k++) {
		uint32_t i = hdr->order[k];
		struct wl_shm_slot *s = &hdr->slots[i];

		for (uint32_t j = 0; j < WAKELOCK_MAX_ALARMS_PER_CLIENT; j++) {
			if (s->alarms[j].signal) {
				s->alarms[j].signal = 0;
				signal_fire(d, i, j);
			}
		}
	}
}

static void do_create(struct daemon *d, struct conn *c, const char *name)
{
	struct wl_shm_header *hdr = d->seg.hdr;
	char hold[WAKELOCK_NAME_MAX];
	struct wl_shm_slot *s;
	uint32_t j;
	int h, rfd, wfd = -1;

	if (wl_name_check(name) < 0 || strlen(name) >= WAKELOCK_ALARM_NAME_MAX) {
		server_reply(c, -EINVAL, 0, 0, -1, "invalid alarm name");
		return;
	}
	rfd = server_doorbell(&wfd);
	if (rfd < 0) {
		server_reply(c, rfd, 0, 0, -1, "cannot make a pipe for the alarm");
		return;
	}
	snprintf(hold, sizeof(hold), WL_ALARM_HOLD_PREFIX "%s", name);
	wl_lock(hdr);
	s = &hdr->slots[c->slot];
	for (j = 0; j < WAKELOCK_MAX_ALARMS_PER_CLIENT && s->alarms[j].in_use; j++)
		;
	if (j == WAKELOCK_MAX_ALARMS_PER_CLIENT) {
		wl_unlock(hdr);
		server_reply(c, -ENOSPC, 0, 0, -1, "the client has the most alarms allowed");
		goto out;
	}
	h = wl_table_hold_alloc(hdr, (uint32_t)c->slot, hold, WL_HOLD_DAEMON, -1);
	if (h < 0) {
		wl_unlock(hdr);
		server_reply(c, h, 0, 0, -1, h == -ENOSPC ? "no hold left for the alarm" : NULL);
		goto out;
	}
	memset(&s->alarms[j], 0, sizeof(s->alarms[j]));
	snprintf(s->alarms[j].name, sizeof(s->alarms[j].name), "%s", name);
	s->alarms[j].hold = (uint32_t)h;
	s->alarms[j].in_use = 1;
	s->alarm_count++;
	wl_unlock(hdr);
	if (c->alarm_wfd[j] >= 0)
		close(c->alarm_wfd[j]);
	c->alarm_wfd[j] = wfd;
	wfd = -1;
	log_debug("client %s: alarm %s created", s->name, name);
	server_reply(c, 0, j, 0, rfd, NULL);
out:
	close(rfd);
	if (wfd >= 0)
		close(wfd);
}

void alarms_request(struct daemon *d, struct conn *c, const struct wl_msg_arg *m)
{
	struct wl_shm_header *hdr = d->seg.hdr;
	struct wl_shm_alarm *al;
	const char *why = NULL;
	int r;

	/* The request table (server.c) let only a registered client with a
	 * timer get here. */
	if (m->req.op == WL_OP_ALARM_CREATE) {
		do_create(d, c, m->req.name);
		return;
	}
	r = 0;
	wl_lock(hdr);
	if (m->index >= WAKELOCK_MAX_ALARMS_PER_CLIENT ||
	    !hdr->slots[c->slot].alarms[m->index].in_use) {
		wl_unlock(hdr);
		server_reply(c, -EINVAL, 0, 0, -1, "no such alarm");
		return;
	}
	al = &hdr->slots[c->slot].alarms[m->index];
	switch (m->req.op) {
	case WL_OP_ALARM_SET:
		r = alarm_sched_set(&al->t, wl_clock_ns(CLOCK_BOOTTIME), m->first_ms, m->period_ms, m->window_ms);
		if (r == -EINVAL)
			why = "the window of a periodic alarm may not exceed its period";
		else if (r == -EOVERFLOW)
			why = "alarm time out of range";
		break;
	case WL_OP_ALARM_CANCEL:
		alarm_sched_cancel(&al->t);
		break;
	case WL_OP_ALARM_DESTROY:
		/* Releases a pending fire's hold too. */
		wl_table_hold_free(hdr, (uint32_t)c->slot, al->hold, wl_now_mono());
		memset(al, 0, sizeof(*al));
		hdr->slots[c->slot].alarm_count--;
		if (c->alarm_wfd[m->index] >= 0)
			close(c->alarm_wfd[m->index]);
		c->alarm_wfd[m->index] = -1;
		break;
	}
	alarms_rearm(d);
	wl_unlock(hdr);
	/* A destroyed alarm's hold may have been the last. */
	powerloop_kick(&d->pl);
	server_reply(c, r, 0, 0, -1, why);
}
