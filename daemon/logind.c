// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * logind's sleep inhibitors as holds, over sd-bus (logind.h explains the
 * model, docs/logind.md the guarantees).
 *
 * Main thread: one connection to the system bus, driven by the daemon's
 * epoll loop.  It matches logind's PropertiesChanged on the Manager (sent
 * at every inhibitor start and stop, BlockInhibited or DelayInhibited)
 * and NameOwnerChanged of org.freedesktop.login1 (logind starting,
 * restarting, leaving), and after each one asks ListInhibitors again.  A
 * list that arrives replaces the mirrored set: inhibitors that are gone
 * free their slot, new ones get one, the power loop is kicked.  No timer
 * and no polling: a system held by an inhibitor costs nothing.
 *
 * The same list's "idle" block inhibitors are presence, not slots
 * (logind_presence.c), and the same connection follows the sessions and
 * holds the handle-lid-switch inhibitor (logind_session.c).
 *
 * Power thread: a connection of its own (sd-bus objects are not shared
 * between threads), opened at its first attempt, used for the last look.
 *
 * Method calls are sent with NO_AUTO_START: Debian's elogind is not
 * bus-activatable (its service file runs /bin/true), and a logind that is
 * not running must mean "no inhibitors", at once.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <systemd/sd-bus.h>
#include "daemon.h"
#include "ledger.h"
#include "log.h"
#include "logind.h"
#include "logind_bus.h"
/* A logind that does not answer within this long is taken as having no
 * inhibitor in the last look (logged): the lock is held meanwhile. */
#define LAST_LOOK_TIMEOUT_US 1000000u
/* How long logind may take from Suspend to PrepareForSleep(false), time
 * asleep not counted (CLOCK_MONOTONIC stands still then): its delay
 * inhibitors' wait (InhibitDelayMaxSec, 5 s by default) and the suspend
 * and resume themselves. */
#define SUSPEND_TIMEOUT_US 60000000u

struct mirrored {
	struct logind_inhibitor inh;
	int slot;
};

struct logind {
	enum logind_mode mode;          /* read by the power thread too */
	sd_bus *bus;                    /* main thread */
	sd_bus_slot *list_call;         /* ListInhibitors in flight */
	int relist;                     /* news arrived while it was */
	uint32_t epoll_events;          /* as registered, 0: not yet */
	struct mirrored m[LOGIND_MAX_INHIBITORS];
	unsigned n;
	unsigned overflow_logged;
	int followed;                   /* main thread has its bus (atomic) */
	sd_bus *probe;                  /* power thread */
	int probe_failed;               /* logged once */
	sd_bus_slot *sleep_match;       /* power thread: PrepareForSleep */
	unsigned prepared[2];           /* PrepareForSleep(false), (true) seen */
	int fallback_logged;
};

int logind_is_absent(const sd_bus_error *e)
{
	return sd_bus_error_has_name(e, SD_BUS_ERROR_SERVICE_UNKNOWN) ||
	       sd_bus_error_has_name(e, SD_BUS_ERROR_NAME_HAS_NO_OWNER);
}

int logind_call_async(sd_bus *bus, sd_bus_slot **slot, const char *path, const char *iface,
                      const char *member, sd_bus_message_handler_t cb, void *ud,
                      const char *types, ...)
{
	sd_bus_message *m = NULL;
	va_list ap;
	int r;

	r = sd_bus_message_new_method_call(bus, &m, LOGIN1, path, iface, member);
	if (r >= 0)
		r = sd_bus_message_set_auto_start(m, 0);
	if (r >= 0 && types) {
		va_start(ap, types);
		r = sd_bus_message_appendv(m, types, ap);
		va_end(ap);
	}
	if (r >= 0)
		r = sd_bus_call_async(bus, slot, m, cb, ud, 0);
	sd_bus_message_unref(m);
	return r;
}

/* Free mirrored entry k's slot (lock held). */
static void unmirror(struct daemon *d, unsigned k)
{
	struct logind *l = d->logind;
	uint32_t slot = (uint32_t)l->m[k].slot;

	log_debug("logind inhibitor %s \"%s\" (pid %u) released", l->m[k].inh.name,
	          l->m[k].inh.hold, l->m[k].inh.pid);
	/* Its claims of the last wake first, while the slot still has them. */
	powerloop_ledger_forget(&d->pl, slot, -1);
	wl_table_slot_free(d->seg.hdr, slot, wl_now_mono());
	l->m[k] = l->m[--l->n];
}

static int mirror(struct daemon *d, const struct logind_inhibitor *inh)
{
	struct wl_shm_header *hdr = d->seg.hdr;
	struct logind *l = d->logind;
	uint64_t id;
	int slot, hold;

	/* The daemon's own slot: its "logind:" name is refused to clients,
	 * and two inhibitors of one program may share it. */
	slot = wl_table_slot_alloc_own(hdr, (int32_t)inh->pid, inh->uid, inh->name,
	                               !policy_denied_client(&d->pol, &d->cfg, inh->name,
	                                                     inh->uid), &id);
	if (slot < 0)
		return slot;
	hold = wl_table_hold_alloc(hdr, (uint32_t)slot, inh->hold, WL_HOLD_DAEMON, -1);
	if (hold < 0 || wl_table_acquire(hdr, (uint32_t)slot, (uint32_t)hold, 0,
	                                 wl_now_mono()) < 0) {
		wl_table_slot_free(hdr, (uint32_t)slot, wl_now_mono());
		return -ENOSPC;
	}
	l->m[l->n].inh = *inh;
	l->m[l->n].slot = slot;
	l->n++;
	/* A wake's claim, if one is open: timed when we learnt of it, which
	 * is after the program's Inhibit call by a message or two. */
	if (d->ledger)
		ledger_claim(d->ledger, inh->name, inh->hold, wl_now_mono());
	log_debug("logind inhibitor %s \"%s\" (uid %u, pid %u) holds, slot %d", inh->name,
	          inh->hold, inh->uid, inh->pid, slot);
	return 0;
}

static int same(const struct logind_inhibitor *a, const struct logind_inhibitor *b)
{
	return a->uid == b->uid && a->pid == b->pid && !strcmp(a->name, b->name) &&
	       !strcmp(a->hold, b->hold);
}

/* Make the mirrored set the given one: keep what is in both, free what
 * left, add what came (up to LOGIND_MAX_INHIBITORS). */
static void reconcile(struct daemon *d, const struct logind_inhibitor *now, unsigned nnow)
{
	struct logind *l = d->logind;
	unsigned char used[LOGIND_MAX_INHIBITORS] = { 0 };
	unsigned changed = 0, dropped = 0;

	wl_lock(d->seg.hdr);
	for (unsigned k = 0; k < l->n;) {
		unsigned j;

		for (j = 0; j < nnow; j++)
			if (!used[j] && same(&l->m[k].inh, &now[j]))
				break;
		if (j < nnow) {
			used[j] = 1;
			k++;
		} else {
			unmirror(d, k);
			changed++;
		}
	}
	for (unsigned j = 0; j < nnow; j++) {
		if (used[j])
			continue;
		if (l->n >= LOGIND_MAX_INHIBITORS || mirror(d, &now[j]) < 0)
			dropped++;
		else
			changed++;
	}
	wl_unlock(d->seg.hdr);
	if (dropped && !l->overflow_logged++)
		log_warn("logind: %u sleep inhibitor(s) not shown as clients (at most %u, or the "
		         "client table is full); the last look before each suspend still sees them",
		         dropped, LOGIND_MAX_INHIBITORS);
	if (changed)
		powerloop_kick(&d->pl);
}

static void drop_all(struct daemon *d)
{
	if (d->logind->n)
		reconcile(d, NULL, 0);
	logind_presence_inhibitors(d->presence, NULL, 0);
}

/* The "idle" block inhibitors of one list, as presence
 * (logind_presence.c): counted, not mirrored; the first allowed one is
 * shown.  A deny or allow lists them again (logind_policy_changed). */
static void idle_inhibitors(struct daemon *d, sd_bus_message *reply)
{
	struct logind_inhibitor inh, first;
	const char *what, *who, *why, *mode;
	uint32_t uid, pid;
	unsigned n = 0;
	int r;

	if (!logind_presence_wants_inhibitors(d->presence))
		return;
	if (sd_bus_message_rewind(reply, 1) < 0)
		return;
	r = sd_bus_message_enter_container(reply, 'a', "(ssssuu)");
	while (r > 0 &&
	       (r = sd_bus_message_read(reply, "(ssssuu)", &what, &who, &why, &mode, &uid, &pid)) > 0)
		if (logind_idle_inhibitor_from(&inh, what, who, why, mode, uid, pid) &&
		    !policy_denied_client(&d->pol, &d->cfg, inh.name, inh.uid) && !n++)
			first = inh;
	if (r < 0)
		return;   /* the sleep pass said so */
	logind_presence_inhibitors(d->presence, n ? &first : NULL, n);
}

static void request_list(struct daemon *d);

static int on_list(sd_bus_message *reply, void *userdata, sd_bus_error *ret)
{
	struct daemon *d = userdata;
	struct logind *l = d->logind;
	static struct logind_inhibitor now[LOGIND_MAX_INHIBITORS + 1];
	const sd_bus_error *e = sd_bus_message_get_error(reply);
	const char *what, *who, *why, *mode;
	uint32_t uid, pid;
	unsigned n = 0;
	int r;

	(void)ret;
	l->list_call = sd_bus_slot_unref(l->list_call);
	if (e) {
		if (logind_is_absent(e)) {
			drop_all(d);
			logind_presence_bus(d->presence, LP_BUS_ABSENT);
		} else {
			log_warn("logind: ListInhibitors: %s", e->message ? e->message : e->name);
		}
		goto again;
	}
	r = sd_bus_message_enter_container(reply, 'a', "(ssssuu)");
	while (r > 0 &&
	       (r = sd_bus_message_read(reply, "(ssssuu)", &what, &who, &why, &mode, &uid, &pid)) > 0) {
		/* One over the bound is kept, so that reconcile reports it. */
		if (n <= LOGIND_MAX_INHIBITORS &&
		    logind_inhibitor_from(&now[n], what, who, why, mode, uid, pid))
			n++;
	}
	if (r < 0) {
		log_warn("logind: ListInhibitors reply not understood: %s", strerror(-r));
		goto again;
	}
	reconcile(d, now, n > LOGIND_MAX_INHIBITORS ? LOGIND_MAX_INHIBITORS : n);
	if (n > LOGIND_MAX_INHIBITORS && !l->overflow_logged++)
		log_warn("logind: more than %u sleep inhibitors; the last look before each "
		         "suspend still sees the others", LOGIND_MAX_INHIBITORS);
	idle_inhibitors(d, reply);
again:
	if (l->relist) {
		l->relist = 0;
		request_list(d);
	}
	return 1;
}

static void request_list(struct daemon *d)
{
	struct logind *l = d->logind;
	sd_bus_message *m = NULL;
	int r;

	if (l->list_call) {
		l->relist = 1;   /* the list in flight may predate the news */
		return;
	}
	r = sd_bus_message_new_method_call(l->bus, &m, LOGIN1, LOGIN1_PATH, LOGIN1_MANAGER,
	                                   "ListInhibitors");
	if (r >= 0)
		r = sd_bus_message_set_auto_start(m, 0);
	if (r >= 0)
		r = sd_bus_call_async(l->bus, &l->list_call, m, on_list, d, 0);
	sd_bus_message_unref(m);
	if (r < 0)
		log_warn("logind: cannot ask ListInhibitors: %s", strerror(-r));
}

void logind_policy_changed(struct daemon *d)
{
	if (d->logind && d->logind->bus && logind_presence_wants_inhibitors(d->presence))
		request_list(d);
}

static int on_properties(sd_bus_message *m, void *userdata, sd_bus_error *ret)
{
	const char *iface = NULL;

	(void)ret;
	if (sd_bus_message_read(m, "s", &iface) > 0 && !strcmp(iface, LOGIN1_MANAGER))
		request_list(userdata);
	return 0;
}

static int on_owner(sd_bus_message *m, void *userdata, sd_bus_error *ret)
{
	const char *name, *old, *new;

	(void)ret;
	if (sd_bus_message_read(m, "sss", &name, &old, &new) <= 0 || strcmp(name, LOGIN1))
		return 0;
	if (!*new) {
		log_info("logind left the bus: its inhibitors and sessions are gone (user "
		         "activity still counts)");
		drop_all(userdata);
		logind_sessions_owner(userdata, 0);
		logind_presence_bus(((struct daemon *)userdata)->presence, LP_BUS_ABSENT);
	} else {
		log_info("logind is on the bus (%s): following its inhibitors", new);
		logind_presence_bus(((struct daemon *)userdata)->presence, LP_BUS_FOLLOWING);
		request_list(userdata);
		logind_sessions_owner(userdata, 1);
	}
	return 0;
}

static void update_epoll(struct daemon *d)
{
	struct logind *l = d->logind;
	struct epoll_event ev = { .data.u32 = IDX_LOGIND };
	int want = sd_bus_get_events(l->bus), fd = sd_bus_get_fd(l->bus);

	if (want < 0 || fd < 0)
		return;
	ev.events = ((want & POLLIN) ? EPOLLIN : 0) | ((want & POLLOUT) ? EPOLLOUT : 0);
	if (l->epoll_events == ev.events + 1)
		return;
	if (epoll_ctl(d->epfd, l->epoll_events ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &ev) < 0)
		log_warn("logind: epoll: %s", strerror(errno));
	else
		l->epoll_events = ev.events + 1;   /* +1: 0 means "not added" */
}

static void close_bus(struct daemon *d)
{
	struct logind *l = d->logind;

	if (!l->bus)
		return;
	if (l->epoll_events)
		epoll_ctl(d->epfd, EPOLL_CTL_DEL, sd_bus_get_fd(l->bus), NULL);
	l->epoll_events = 0;
	l->list_call = sd_bus_slot_unref(l->list_call);
	/* Before the connection goes: the lid inhibitor is released at
	 * once, not when the bus is freed. */
	logind_sessions_close(d);
	l->bus = sd_bus_flush_close_unref(l->bus);
	__atomic_store_n(&l->followed, 0, __ATOMIC_RELAXED);
	drop_all(d);
	logind_presence_bus(d->presence, LP_BUS_NONE);
}

int logind_open(struct daemon *d)
{
	struct logind *l;
	int r;

	if (!d->logind) {
		d->logind = calloc(1, sizeof(*d->logind));
		if (!d->logind)
			return -ENOMEM;
	}
	l = d->logind;
	__atomic_store_n(&l->mode, d->cfg.logind_mode, __ATOMIC_RELAXED);
	if (d->cfg.logind_mode == LOGIND_OFF) {
		close_bus(d);
		return 0;
	}
	if (l->bus)
		return 0;
	r = sd_bus_open_system(&l->bus);
	if (r < 0) {
		log_info("logind: no system bus (%s): logind's inhibitors are not followed",
		         strerror(-r));
		l->bus = NULL;
		return 0;
	}
	r = sd_bus_match_signal_async(l->bus, NULL, LOGIN1, LOGIN1_PATH,
	                              "org.freedesktop.DBus.Properties", "PropertiesChanged",
	                              on_properties, NULL, d);
	if (r >= 0)
		r = sd_bus_add_match_async(l->bus, NULL,
		                           "type='signal',sender='org.freedesktop.DBus',"
		                           "path='/org/freedesktop/DBus',"
		                           "interface='org.freedesktop.DBus',"
		                           "member='NameOwnerChanged',arg0='" LOGIN1 "'",
		                           on_owner, NULL, d);
	if (r < 0) {
		log_warn("logind: cannot subscribe to its signals: %s", strerror(-r));
		l->bus = sd_bus_flush_close_unref(l->bus);
		return 0;
	}
	/* The matches are queued before this call: no change between the
	 * list and the subscription can be missed. */
	request_list(d);
	logind_presence_bus(d->presence, LP_BUS_FOLLOWING);
	r = logind_sessions_open(d, l->bus);
	if (r < 0)
		log_warn("logind: sessions not followed: %s", strerror(-r));
	update_epoll(d);
	__atomic_store_n(&l->followed, 1, __ATOMIC_RELAXED);
	log_info("logind: following sleep inhibitors on the system bus");
	return 0;
}

void logind_dispatch(struct daemon *d)
{
	struct logind *l = d->logind;
	int r;

	if (!l || !l->bus)
		return;
	while ((r = sd_bus_process(l->bus, NULL)) > 0)
		;
	if (r < 0) {
		log_warn("logind: system bus connection lost (%s): logind's inhibitors are no "
		         "longer followed (until a reload)", strerror(-r));
		close_bus(d);
		return;
	}
	update_epoll(d);
}

int logind_timeout_ms(struct daemon *d)
{
	struct logind *l = d->logind;
	uint64_t at, now;

	/* sd-bus counts CLOCK_MONOTONIC microseconds. */
	if (!l || !l->bus || sd_bus_get_timeout(l->bus, &at) < 0 || at == UINT64_MAX)
		return -1;
	now = wl_now_mono() / 1000u;
	if (at <= now)
		return 0;
	return (at - now) / 1000u > 60000u ? 60000 : (int)((at - now) / 1000u) + 1;
}

void logind_close(struct daemon *d)
{
	if (!d->logind)
		return;
	close_bus(d);
	logind_sessions_free(d);
	/* The power thread has been joined: its connection is ours now. */
	d->logind->sleep_match = sd_bus_slot_unref(d->logind->sleep_match);
	d->logind->probe = sd_bus_flush_close_unref(d->logind->probe);
	free(d->logind);
	d->logind = NULL;
}

static void probe_failed(struct logind *l, const char *what, const char *why)
{
	if (!l->probe_failed++)
		log_warn("logind: last look before suspend %s (%s): an inhibitor taken after the "
		         "last signal may not stop a suspend", what, why);
}

/* The power thread's connection, opened at its first use (and again
 * after it broke). */
static int probe_open(struct logind *l)
{
	int r;

	if (l->probe)
		return 0;
	r = sd_bus_open_system(&l->probe);
	if (r < 0)
		l->probe = NULL;
	return r;
}

static void probe_close(struct logind *l)
{
	l->sleep_match = sd_bus_slot_unref(l->sleep_match);
	l->probe = sd_bus_flush_close_unref(l->probe);
}

/* Whether a listed inhibitor keeps the system awake: yes unless the
 * main thread mirrors it already in a slot that policy denies (lock held:
 * the mirror changes under it). */
static int keeps_awake(struct daemon *d, const struct logind_inhibitor *inh)
{
	struct logind *l = d->logind;

	for (unsigned k = 0; k < l->n; k++)
		if (same(&l->m[k].inh, inh))
			return d->seg.hdr->slots[l->m[k].slot].allowed != 0;
	return 1;   /* taken since the last news: not mirrored yet */
}

int logind_last_look(void *arg)
{
	struct daemon *d = arg;
	struct logind *l = d->logind;
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *m = NULL, *reply = NULL;
	struct logind_inhibitor inh;
	const char *what, *who, *why, *mode;
	uint32_t uid, pid;
	int r, held = 0;

	if (!l || __atomic_load_n(&l->mode, __ATOMIC_RELAXED) == LOGIND_OFF)
		return 0;
	/* Only while logind is followed: with no system bus (logind_open
	 * said so, and tries again at a reload) there is nothing the look
	 * could compare with, and trying to connect before every attempt
	 * cost each cycle a socket, eight socket options and a connect.
	 * Followed with logind away, the call is still made: logind may be
	 * starting, and its inhibitors count from its first instant. */
	if (!__atomic_load_n(&l->followed, __ATOMIC_RELAXED))
		return 0;
	if (probe_open(l) < 0)
		return 0;
	r = sd_bus_message_new_method_call(l->probe, &m, LOGIN1, LOGIN1_PATH, LOGIN1_MANAGER,
	                                   "ListInhibitors");
	if (r >= 0)
		r = sd_bus_message_set_auto_start(m, 0);
	if (r >= 0)
		r = sd_bus_call(l->probe, m, LAST_LOOK_TIMEOUT_US, &e, &reply);
	if (r < 0) {
		if (!logind_is_absent(&e))
			probe_failed(l, "failed", e.message ? e.message : strerror(-r));
		/* A broken connection is opened again next time. */
		if (!sd_bus_is_open(l->probe))
			probe_close(l);
		goto out;
	}
	r = sd_bus_message_enter_container(reply, 'a', "(ssssuu)");
	while (r > 0 && !held &&
	       (r = sd_bus_message_read(reply, "(ssssuu)", &what, &who, &why, &mode, &uid, &pid)) > 0)
		if (logind_inhibitor_from(&inh, what, who, why, mode, uid, pid))
			held = keeps_awake(d, &inh);
	if (r < 0)
		probe_failed(l, "got a reply it does not understand", strerror(-r));
out:
	sd_bus_error_free(&e);
	sd_bus_message_unref(m);
	sd_bus_message_unref(reply);
	return held;
}

/* --- mode suspend: step 6 through logind ----------------------------------- */

static int on_prepare(sd_bus_message *m, void *userdata, sd_bus_error *ret)
{
	struct logind *l = userdata;
	int start;

	(void)ret;
	if (sd_bus_message_read(m, "b", &start) > 0)
		l->prepared[start ? 1 : 0]++;
	return 0;
}

/* A counter of /sys/power/suspend_stats, or -1 if the kernel has none. */
static long long stat_of(struct daemon *d, const char *name)
{
	char rel[96], buf[32];

	snprintf(rel, sizeof(rel), "/sys/power/suspend_stats/%s", name);
	if (!d->be->read_attr || d->be->read_attr(d->be, rel, buf, sizeof(buf)) <= 0)
		return -1;
	return strtoll(buf, NULL, 10);
}

static int own_write(struct daemon *d, const char *state, const char *why)
{
	struct logind *l = d->logind;

	if (!l->fallback_logged++)
		log_warn("logind: %s: suspending by writing the state as in mode inhibitors", why);
	return d->be->suspend(d->be, state);
}

int logind_suspend(void *arg, const char *state)
{
	struct daemon *d = arg;
	struct logind *l = d->logind;
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *m = NULL;
	long long ok0, fail0, ok1, fail1, err;
	uint64_t end, now;
	int r;

	if (!l || __atomic_load_n(&l->mode, __ATOMIC_RELAXED) != LOGIND_SUSPEND)
		return d->be->suspend(d->be, state);
	if (probe_open(l) < 0)
		return own_write(d, state, "no system bus");
	if (!l->sleep_match &&
	    (r = sd_bus_match_signal(l->probe, &l->sleep_match, LOGIN1, LOGIN1_PATH, LOGIN1_MANAGER,
	                             "PrepareForSleep", on_prepare, l)) < 0)
		return own_write(d, state, strerror(-r));
	/* Signals of an earlier attempt, if any were left: not this one's. */
	while (sd_bus_process(l->probe, NULL) > 0)
		;
	l->prepared[0] = l->prepared[1] = 0;
	ok0 = stat_of(d, "success");
	fail0 = stat_of(d, "fail");
	/* logind picks the suspend state itself (SuspendState=): only a
	 * hibernation is another call. */
	r = sd_bus_message_new_method_call(l->probe, &m, LOGIN1, LOGIN1_PATH, LOGIN1_MANAGER,
	                                   strcmp(state, "disk") ? "Suspend" : "Hibernate");
	if (r >= 0)
		r = sd_bus_message_set_auto_start(m, 0);
	if (r >= 0)
		r = sd_bus_message_append(m, "b", 0);   /* not interactive */
	if (r >= 0)
		r = sd_bus_call(l->probe, m, SUSPEND_TIMEOUT_US, &e, NULL);
	sd_bus_message_unref(m);
	if (r < 0) {
		int absent = logind_is_absent(&e);

		if (!absent)
			log_warn("logind: Suspend: %s", e.message ? e.message : strerror(-r));
		sd_bus_error_free(&e);
		if (!sd_bus_is_open(l->probe))
			probe_close(l);
		if (absent)
			return own_write(d, state, "logind is not running");
		return r == -EACCES || r == -EPERM ? -EPERM : -EBUSY;
	}
	/* logind answers at once; PrepareForSleep(false) follows the resume,
	 * or the failure, as the last thing logind does for this attempt. */
	end = wl_now_mono() / 1000u + SUSPEND_TIMEOUT_US;
	while (!l->prepared[0]) {
		r = sd_bus_process(l->probe, NULL);
		if (r > 0)
			continue;
		if (r >= 0) {
			now = wl_now_mono() / 1000u;
			r = now < end ? sd_bus_wait(l->probe, end - now) : -ETIMEDOUT;
		}
		if (r < 0) {
			log_error("logind: no PrepareForSleep(false) after Suspend: %s", strerror(-r));
			if (!sd_bus_is_open(l->probe))
				probe_close(l);
			return r == -ETIMEDOUT ? -ETIMEDOUT : -EIO;
		}
	}
	log_debug("logind: PrepareForSleep true %u, false %u", l->prepared[1], l->prepared[0]);
	ok1 = stat_of(d, "success");
	fail1 = stat_of(d, "fail");
	if (ok0 < 0 || ok1 < 0)
		return 0;   /* no statistics: logind's word that it resumed */
	if (ok1 > ok0)
		return 0;
	err = stat_of(d, "last_failed_errno");
	if (fail1 > fail0 && err < 0 && err > -4096)
		return (int)err;
	return -EIO;
}
