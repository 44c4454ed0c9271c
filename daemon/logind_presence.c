/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What logind knows of a person, as awake sources (docs/policy.md, "logind
 * sessions and idle inhibitors"):
 *   "session"       an active session that sets IdleHint and is not idle;
 *   "idle-inhibit"  logind "idle" inhibitors in block mode (a video
 *                   player, a presentation).
 * Both are presence: a closed lid stops them at once (presence.h), as it
 * stops the display and the activity.
 *
 * Why a state here and not a client slot (as logind's sleep inhibitors
 * are): the main thread owns the system bus connection (logind.c,
 * logind_session.c) and learns of changes from signals; the sources run
 * on the power thread.  The main thread writes the few numbers and the
 * line for `wakelock status` below under the segment lock, which the
 * power thread holds in holding() and describe() (awake.h), then kicks
 * the loop: no second connection, no polling, and a source that lets go
 * is seen at once.  This file has no sd-bus in it: in a build without
 * sd-bus (logind_none.c) nothing writes the state and the sources say so.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "daemon.h"
#include "logind.h"
#include "presence.h"

struct logind_presence {
	struct daemon *d;
	struct awake_source session_src, inhibit_src;
	int sessions_on, inhibitors_on;   /* [policy] session_idle, idle_inhibitors */
	/* Under the segment lock: */
	int bus;                 /* enum logind_presence_bus */
	unsigned holding;        /* sessions that count, active and not idle */
	unsigned counted;        /* sessions that count */
	unsigned seen;           /* sessions logind listed */
	char first[64];          /* the first that holds, for status */
	unsigned inhibitors;     /* idle block inhibitors (policy allows) */
	struct logind_inhibitor inh;   /* the first of them */
};

static const char *bus_words(int bus)
{
	switch (bus) {
	case LP_BUS_FOLLOWING:
		return NULL;
	case LP_BUS_ABSENT:
		return "logind is not on the bus";
	case LP_BUS_NONE:
		return "logind not followed (no system bus, or [logind] mode = off)";
	default:
		return "logind not followed (built without sd-bus)";
	}
}

static int session_holding(struct awake_source *s, uint64_t now, uint64_t *until)
{
	struct logind_presence *p = s->priv;

	(void)now;
	*until = 0;   /* the main thread kicks the loop at every change */
	return p->holding && !presence_suppressed;
}

static void session_describe(struct awake_source *s, uint64_t now, char *buf, size_t len)
{
	struct logind_presence *p = s->priv;
	const char *b = bus_words(p->bus);

	(void)now;
	if (b)
		snprintf(buf, len, "%s", b);
	else if (p->holding)
		snprintf(buf, len, "%s%s%s", presence_suppressed ? "lid closed: not holding, " : "",
		         p->first, p->holding > 1 ? " and others" : "");
	else if (p->counted)
		snprintf(buf, len, "%u of %u session%s set%s IdleHint: idle, locked or not active",
		         p->counted, p->seen, p->seen == 1 ? "" : "s", p->counted == 1 ? "s" : "");
	else
		snprintf(buf, len, "no session that sets IdleHint (%u session%s)", p->seen,
		         p->seen == 1 ? "" : "s");
}

static int inhibit_holding(struct awake_source *s, uint64_t now, uint64_t *until)
{
	struct logind_presence *p = s->priv;

	(void)now;
	*until = 0;
	return p->inhibitors && !presence_suppressed;
}

static void inhibit_describe(struct awake_source *s, uint64_t now, char *buf, size_t len)
{
	struct logind_presence *p = s->priv;
	const char *b = bus_words(p->bus);
	char more[24] = "";

	(void)now;
	if (b) {
		snprintf(buf, len, "%s", b);
		return;
	}
	if (!p->inhibitors) {
		snprintf(buf, len, "no idle inhibitor");
		return;
	}
	if (p->inhibitors > 1)
		snprintf(more, sizeof(more), ", +%u more", p->inhibitors - 1);
	/* Names are cleaned (logind_clean_name): no quotes or controls. */
	snprintf(buf, len, "%s%s \"%s\" uid %u pid %u%s",
	         presence_suppressed ? "lid closed: not holding, " : "", p->inh.name, p->inh.hold,
	         p->inh.uid, p->inh.pid, more);
}

static void source_init(struct awake_source *s, struct logind_presence *p, const char *name,
                        int (*holding)(struct awake_source *, uint64_t, uint64_t *),
                        void (*describe)(struct awake_source *, uint64_t, char *, size_t))
{
	s->name = name;
	s->holding = holding;
	s->describe = describe;
	s->fd = -1;
	s->priv = p;
}

struct logind_presence *logind_presence_new(struct daemon *d, int sessions, int inhibitors)
{
	struct logind_presence *p;

	if (!sessions && !inhibitors)
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->d = d;
	p->sessions_on = sessions;
	p->inhibitors_on = inhibitors;
	p->bus = LP_BUS_NONE;
	source_init(&p->session_src, p, "session", session_holding, session_describe);
	source_init(&p->inhibit_src, p, "idle-inhibit", inhibit_holding, inhibit_describe);
	return p;
}

struct awake_source *logind_presence_session_source(struct logind_presence *p)
{
	return p && p->sessions_on ? &p->session_src : NULL;
}

struct awake_source *logind_presence_inhibit_source(struct logind_presence *p)
{
	return p && p->inhibitors_on ? &p->inhibit_src : NULL;
}

int logind_presence_wants_sessions(const struct logind_presence *p)
{
	return p && p->sessions_on;
}

int logind_presence_wants_inhibitors(const struct logind_presence *p)
{
	return p && p->inhibitors_on;
}

void logind_presence_free(struct logind_presence *p)
{
	free(p);
}

/* --- main thread ------------------------------------------------------- */

void logind_presence_bus(struct logind_presence *p, int bus)
{
	if (!p)
		return;
	wl_lock(p->d->seg.hdr);
	p->bus = bus;
	if (bus != LP_BUS_FOLLOWING) {
		/* Nothing known is nothing held: the activity source still
		 * sees the person (docs/policy.md). */
		p->holding = p->counted = p->seen = p->inhibitors = 0;
	}
	wl_unlock(p->d->seg.hdr);
	powerloop_kick(&p->d->pl);
}

void logind_presence_sessions(struct logind_presence *p, unsigned holding, unsigned counted,
                              unsigned seen, const char *first)
{
	if (!p)
		return;
	wl_lock(p->d->seg.hdr);
	p->holding = holding;
	p->counted = counted;
	p->seen = seen;
	snprintf(p->first, sizeof(p->first), "%s", first ? first : "");
	wl_unlock(p->d->seg.hdr);
	/* Also when only the line for status changed: changes are rare
	 * (a session's IdleHint, a player starting), a kick is a write. */
	powerloop_kick(&p->d->pl);
}

void logind_presence_inhibitors(struct logind_presence *p, const struct logind_inhibitor *first,
                                unsigned n)
{
	if (!p || !p->inhibitors_on)
		return;
	wl_lock(p->d->seg.hdr);
	p->inhibitors = n;
	if (n && first)
		p->inh = *first;
	wl_unlock(p->d->seg.hdr);
	powerloop_kick(&p->d->pl);
}
