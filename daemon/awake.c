/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The registry of awake sources and the loop's walks over it (awake.h).
 * A handful of sources at most: every walk is a short array.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/netlink.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "awake.h"
#include "power.h"
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
	/* Shown from the start: `wakelock status` of a daemon whose first
	 * look waits (a kernel wake lock blocks its count read) still says
	 * what each source saw when it was made. */
	if (s->describe)
		s->describe(s, wl_now_mono(), pub->state, sizeof(pub->state));
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

unsigned awake_holding(struct powerloop *pl, uint64_t now, uint64_t *next,
                       struct awake_source **first)
{
	unsigned n = 0;

	*first = NULL;
	for (unsigned i = 0; i < pl->nsources; i++) {
		struct awake_source *s = pl->sources[i];
		struct wl_shm_source *pub = &pl->hdr->sources[i];
		uint64_t until = 0;
		int h = s->holding ? s->holding(s, now, &until) : 0;

		if (h && until && (!*next || until < *next))
			*next = until;
		if (h && !*first)
			*first = s;
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

int awake_read_line(const char *dir, const char *name, const char *file, char *buf,
                    size_t len, int word)
{
	char path[PATH_MAX * 2];
	int r;

	snprintf(path, sizeof(path), "%s/%s/%s", dir, name, file);
	r = sysfs_read_small(path, buf, len, O_NOFOLLOW);
	if (r < 0)
		return r;
	if (word)
		buf[strcspn(buf, " \t")] = 0;
	return 0;
}

int awake_uevent_socket(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = 1 };
	int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	                NETLINK_KOBJECT_UEVENT);

	if (fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
		return fd;
	if (fd >= 0)
		close(fd);
	return -1;
}

int awake_uevent_drain(int fd, const char *subsystem, const char *subsystem2)
{
	char buf[4096], want[64], want2[64];
	int hit = 0;
	ssize_t n;

	snprintf(want, sizeof(want), "SUBSYSTEM=%s", subsystem);
	snprintf(want2, sizeof(want2), "SUBSYSTEM=%s", subsystem2 ? subsystem2 : subsystem);
	while ((n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT)) > 0) {
		buf[n] = 0;
		for (ssize_t i = 0; i < n; i += (ssize_t)strlen(buf + i) + 1)
			hit |= !strcmp(buf + i, want) || !strcmp(buf + i, want2);
	}
	return hit;
}
