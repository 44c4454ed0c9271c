/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The registry of awake sources and the loop's walks over it (awake.h).
 * A handful of sources at most: every walk is a short array.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include "awake.h"
#include "powerloop.h"

int awake_add(struct powerloop *pl, struct awake_source *s)
{
	struct wl_shm_source *pub;

	if (pl->nsources >= WL_MAX_SOURCES)
		return -ENOSPC;
	pl->sources[pl->nsources] = s;
	pub = &pl->hdr->sources[pl->nsources];
	memset(pub, 0, sizeof(*pub));
	snprintf(pub->name, sizeof(pub->name), "%s", s->name);
	pl->nsources++;
	pl->hdr->nsources = pl->nsources;
	return 0;
}

void awake_sample(struct powerloop *pl, int force)
{
	uint64_t now = wl_now_mono();

	for (unsigned i = 0; i < pl->nsources; i++)
		if (pl->sources[i]->sample)
			pl->sources[i]->sample(pl->sources[i], now, force);
}

unsigned awake_holding(struct powerloop *pl, uint64_t now, uint64_t *next)
{
	unsigned n = 0;

	for (unsigned i = 0; i < pl->nsources; i++) {
		struct awake_source *s = pl->sources[i];
		struct wl_shm_source *pub = &pl->hdr->sources[i];
		uint64_t until = 0;
		int h = s->holding ? s->holding(s, now, &until) : 0;

		if (h && until && (!*next || until < *next))
			*next = until;
		n += h != 0;
		pub->holding = h != 0;
		if (s->describe)
			s->describe(s, now, pub->state, sizeof(pub->state));
	}
	return n;
}

struct awake_source *awake_last_look(struct powerloop *pl)
{
	for (unsigned i = 0; i < pl->nsources; i++) {
		struct awake_source *s = pl->sources[i];

		if (s->last_look && s->last_look(s) > 0)
			return s;
	}
	return NULL;
}

void awake_resumed(struct powerloop *pl, const struct wl_ledger_record *r)
{
	uint64_t now = wl_now_mono();

	for (unsigned i = 0; i < pl->nsources; i++)
		if (pl->sources[i]->resumed)
			pl->sources[i]->resumed(pl->sources[i], r, now);
}

unsigned awake_pollfds(struct powerloop *pl, struct pollfd *p, unsigned max)
{
	unsigned n = 0;

	for (unsigned i = 0; i < pl->nsources && n < max; i++) {
		if (pl->sources[i]->fd < 0)
			continue;
		p[n].fd = pl->sources[i]->fd;
		p[n].events = POLLIN;
		p[n].revents = 0;
		n++;
	}
	return n;
}

void awake_events(struct powerloop *pl, const struct pollfd *p, unsigned n)
{
	for (unsigned i = 0, k = 0; i < pl->nsources && k < n; i++) {
		struct awake_source *s = pl->sources[i];

		if (s->fd < 0)
			continue;
		if ((p[k].revents & (POLLIN | POLLERR | POLLHUP)) && s->event)
			s->event(s);
		k++;
	}
}
