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
 *     client's eventfd is signalled; it ends when the client reports the
 *     work done in its region (wakelock_alarm_done, lib/table.c alarms_ack).
 * A denied client's alarms fire too, but their holds are not counted.
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
		if (c->alarm_efd[j] >= 0)
			close(c->alarm_efd[j]);
		c->alarm_efd[j] = -1;
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

/* Tell the client that alarm j of slot fired.  Non-blocking eventfd:
 * cannot stall this thread; its counter would need 2^64 fires to saturate. */
static void signal_fire(struct daemon *d, uint32_t slot, uint32_t j)
{
	int ci = d->slot_conn[slot];
	uint64_t one = 1;

	if (ci >= 0 && d->conns[ci].alarm_efd[j] >= 0 &&
	    write(d->conns[ci].alarm_efd[j], &one, sizeof(one)) < 0)
		log_debug("alarm %u of slot %u: eventfd: %s", j, slot, strerror(errno));
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
	if (fired) {
		hdr->dstats.alarm_wakeups++;
		hdr->dstats.alarm_fires += fired;
	}
	alarms_rearm(d);
	wl_unlock(hdr);
}

static void do_create(struct daemon *d, struct conn *c, const char *name, int fd)
{
	struct wl_shm_header *hdr = d->seg.hdr;
	char hold[WAKELOCK_NAME_MAX];
	struct wl_shm_slot *s;
	uint32_t j;
	int h;

	if (wl_name_check(name) < 0 || strlen(name) >= WAKELOCK_ALARM_NAME_MAX) {
		server_reply(c, -EINVAL, 0, 0, -1, "invalid alarm name");
		goto out;
	}
	if (fd < 0 || server_check_eventfd(fd) < 0) {
		/* No descriptor at all may also mean the daemon ran out of
		 * them (the kernel then drops it): say both. */
		server_reply(c, -EINVAL, 0, 0, -1, fd < 0 ?
		             "no eventfd received (none sent, or wakelockd is out of descriptors)" :
		             "an alarm needs an eventfd");
		goto out;
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
	if (c->alarm_efd[j] >= 0)
		close(c->alarm_efd[j]);
	c->alarm_efd[j] = fd;
	log_debug("client %s: alarm %s created", s->name, name);
	server_reply(c, 0, j, 0, -1, NULL);
	return;
out:
	if (fd >= 0)
		close(fd);
}

void alarms_request(struct daemon *d, struct conn *c, const struct wl_msg_arg *m, int fd)
{
	struct wl_shm_header *hdr = d->seg.hdr;
	struct wl_shm_alarm *al;
	const char *why = NULL;
	int r;

	if (c->slot < 0 || d->alarm_fd < 0) {
		if (fd >= 0)
			close(fd);
		if (c->slot < 0)
			server_reply(c, -EINVAL, 0, 0, -1, "alarms belong to a registered client");
		else
			server_reply(c, -EOPNOTSUPP, 0, 0, -1, "wakelockd has no timer for alarms "
			             "(kernel without timerfd)");
		return;
	}
	if (m->req.op == WL_OP_ALARM_CREATE) {
		do_create(d, c, m->req.name, fd);
		return;
	}
	if (fd >= 0)
		close(fd);
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
		if (c->alarm_efd[m->index] >= 0)
			close(c->alarm_efd[m->index]);
		c->alarm_efd[m->index] = -1;
		break;
	}
	alarms_rearm(d);
	wl_unlock(hdr);
	/* A destroyed alarm's hold may have been the last. */
	powerloop_kick(&d->pl);
	server_reply(c, r, 0, 0, -1, why);
}
