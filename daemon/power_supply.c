/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The power supply as an awake source (docs/policy.md): with
 * `on_ac = never`, the system stays awake while any mains or USB supply
 * under /sys/class/power_supply is online (Sailfish's "no suspend on
 * charger"); with `opportunistic` (the default) the supply changes
 * nothing.  The batteries' capacity and status are shown either way.
 *
 * How it wakes the loop: the kernel sends a uevent when a supply changes
 * (plugged, unplugged, a step of capacity), so the source re-reads on the
 * uevent socket and never polls; without uevents it re-reads at each look,
 * and while it holds it asks for a look every second.
 * A supply whose `online` cannot be read counts as online (awake), logged
 * once; a battery without `capacity` is shown as such.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/wl_shm.h"
#include "awake.h"
#include "log.h"

struct supply {
	struct awake_source src;
	char dir[PATH_MAX];
	int never_on_ac;
	int ac;                  /* a mains/USB supply is online */
	int capacity;            /* of the first battery, -1: none or unknown */
	char battery[32];
	int dirty, sampled, warned;
};

static void sample(struct awake_source *s, uint64_t now, int force)
{
	struct supply *p = s->priv;
	struct dirent *e;
	DIR *dp;

	(void)now;
	/* Uevents tell of every change; without them, every look reads. */
	if (!force && p->sampled && !p->dirty && s->fd >= 0)
		return;
	p->dirty = 0;
	p->sampled = 1;
	p->ac = 0;
	p->capacity = -1;
	p->battery[0] = 0;
	dp = opendir(p->dir);
	if (!dp)
		return;
	while ((e = readdir(dp)) != NULL) {
		char type[32], w[32];
		int r;

		if (e->d_name[0] == '.' || awake_read_line(p->dir, e->d_name, "type", type,
		                                           sizeof(type), 0) < 0)
			continue;        /* gone, or not a supply */
		if (!strcmp(type, "Battery")) {
			if (p->battery[0])
				continue;
			snprintf(p->battery, sizeof(p->battery), "%s", e->d_name);
			if (awake_read_line(p->dir, e->d_name, "capacity", w, sizeof(w), 0) == 0) {
				char *end;
				long c = strtol(w, &end, 10);

				p->capacity = !*end && c >= 0 && c <= 100 ? (int)c : -1;
			}
			continue;
		}
		if (strcmp(type, "Mains") && strncmp(type, "USB", 3))
			continue;
		r = awake_read_line(p->dir, e->d_name, "online", w, sizeof(w), 0);
		if (r == -ENOENT)
			continue;
		if (r < 0 || (strcmp(w, "0") && strcmp(w, "1"))) {
			if (!p->warned)
				log_warn("power supply %s: online %s: counted as online", e->d_name,
				         r < 0 ? strerror(-r) : "is garbled");
			p->warned = 1;
			p->ac = 1;
			continue;
		}
		p->ac |= w[0] == '1';
	}
	closedir(dp);
}

/* Without uevents (no netlink socket: a sandbox, a test root) nothing
 * tells of the charger going: look again within a second while holding. */
#define RECHECK_NS 1000000000ull

static int holding(struct awake_source *s, uint64_t now, uint64_t *until)
{
	struct supply *p = s->priv;

	if (!(p->never_on_ac && p->ac))
		return 0;
	if (s->fd < 0)
		*until = now + RECHECK_NS;
	return 1;
}

static int last_look(struct awake_source *s)
{
	struct supply *p = s->priv;

	if (!p->never_on_ac)
		return 0;
	sample(s, 0, 1);
	return p->ac;
}

static void event(struct awake_source *s)
{
	struct supply *p = s->priv;

	if (awake_uevent_drain(s->fd, "power_supply", NULL))
		p->dirty = 1;
}

static void describe(struct awake_source *s, uint64_t now, char *buf, size_t len)
{
	struct supply *p = s->priv;
	char bat[64] = "";

	(void)now;
	if (p->battery[0] && p->capacity >= 0)
		snprintf(bat, sizeof(bat), ", battery %s %d %%", p->battery, p->capacity);
	else if (p->battery[0])
		snprintf(bat, sizeof(bat), ", battery %s (no capacity)", p->battery);
	snprintf(buf, len, "ac %s%s%s", p->ac ? "online" : "offline", bat,
	         p->never_on_ac && p->ac ? " (on_ac = never)" : "");
}


struct awake_source *power_supply_source_new(const char *root, int never_on_ac)
{
	struct supply *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	snprintf(p->dir, sizeof(p->dir), "%s/sys/class/power_supply", root);
	p->never_on_ac = never_on_ac;
	p->src.name = "power";
	p->src.sample = sample;
	p->src.holding = holding;
	p->src.last_look = last_look;
	p->src.event = event;
	p->src.describe = describe;
	p->src.priv = p;
	p->src.fd = root[0] && strcmp(root, "/") ? -1 : awake_uevent_socket();
	sample(&p->src, 0, 1);
	return &p->src;
}

void power_supply_source_free(struct awake_source *s)
{
	if (!s)
		return;
	if (s->fd >= 0)
		close(s->fd);
	free(s->priv);
}
