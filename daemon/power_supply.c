/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The power supply as an awake source (docs/policy.md), and the battery's
 * critical level.
 *
 * [policy] on_ac: with `never`, the system stays awake while any mains or
 * USB supply under /sys/class/power_supply is online (Sailfish's "no
 * suspend on charger"); with `idle`, the activity source keeps the system
 * awake idle_timeout_ac_ms instead of idle_timeout_ms while one is
 * (presence_on_ac, presence.h); with `opportunistic` AC changes nothing.
 *
 * The critical level: a system battery (scope not Device: a mouse's or a
 * keyboard's battery powers off nothing) that is discharging, with no
 * mains or USB online, at critical_percent or below: the main thread takes
 * the critical action (critical.c), once per discharge episode.  The
 * episode ends when AC comes back, the battery charges or is full, or its
 * capacity rises above the level + CRITICAL_HYST.  What cannot be read is
 * not critical: a battery without `capacity`, or with garbage in it or in
 * `status`, never triggers (logged once).
 *
 * Where it runs: the main thread reads the supplies, on the uevent socket
 * in its epoll (daemon/main.c), never by polling.  Not the power thread:
 * that one sits for long in the kernel (the wakeup_count read blocks while
 * any wakeup source is active, a stuck driver's for ever), in the backoff
 * (up to a minute), in a pre-suspend hook or in the suspend itself; a
 * battery running out must be seen through all of those.  The main thread
 * publishes what it read (under p->m) and kicks the loop when it changed;
 * the loop's holding() and describe() read the published state.  Without
 * uevents (a sandbox without AF_NETLINK, a test root) the main thread's
 * descriptor is a timer that looks once a second instead.
 * A supply whose `online` cannot be read counts as online (awake), logged
 * once.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include "lib/wl_shm.h"
#include "awake.h"
#include "config.h"
#include "log.h"
#include "presence.h"

/* Capacity points above the level that end a discharge episode: a fuel
 * gauge's reading wobbles by one around the level. */
#define CRITICAL_HYST 2

int presence_on_ac;

enum bat_status { ST_UNKNOWN, ST_DISCHARGING, ST_CHARGING, ST_FULL, ST_NOT_CHARGING };
static const char *const status_names[] = { "", "discharging", "charging", "full",
                                            "not charging" };

/* What one read of the supplies found. */
struct ps_state {
	int ac;                  /* a mains/USB supply online (or unreadable) */
	char battery[32];        /* the system battery, "" none */
	int capacity;            /* 0..100, -1: none or unreadable */
	int status;              /* enum bat_status */
};

/* Logged once each (either thread may read: atomic). */
enum { W_ONLINE = 1, W_NO_CAPACITY = 2, W_CAPACITY = 4, W_STATUS = 8 };

struct supply {
	struct awake_source src;
	char dir[PATH_MAX];
	int on_ac;               /* enum on_ac_mode */
	unsigned critical;       /* percent, 0: off */
	int action;              /* enum critical_action */
	int fd;                  /* the main thread's: uevents or a 1 s timer */
	int uevents;             /* fd is the uevent socket */
	pthread_mutex_t m;       /* guards cur */
	struct ps_state cur;
	int warned;              /* W_* logged */
	int episode;             /* main thread: the critical action was taken */
};

/* 1 the first time only. */
static int first(struct supply *p, int bit)
{
	return !(__atomic_fetch_or(&p->warned, bit, __ATOMIC_RELAXED) & bit);
}

static int parse_status(const char *w)
{
	for (int i = ST_DISCHARGING; i <= ST_NOT_CHARGING; i++)
		if (!strcasecmp(w, status_names[i]))
			return i;
	return -1;
}

/* Capacity and status of the chosen battery; a battery gone meanwhile
 * (every file ENOENT) is no battery. */
static void read_battery(struct supply *p, struct ps_state *st)
{
	char w[32];
	int r, status;

	r = awake_read_line(p->dir, st->battery, "capacity", w, sizeof(w), 0);
	if (r == -ENOENT && awake_read_line(p->dir, st->battery, "type", w, sizeof(w), 0) == -ENOENT) {
		log_debug("power supply %s vanished while read", st->battery);
		st->battery[0] = 0;
		return;
	}
	if (r == -ENOENT) {
		if (first(p, W_NO_CAPACITY))
			log_warn("battery %s has no capacity: the critical level is not watched",
			         st->battery);
	} else {
		char *end = w;
		long c = r < 0 ? -1 : strtol(w, &end, 10);

		if (r == 0 && w[0] >= '0' && w[0] <= '9' && !*end && c <= 100)
			st->capacity = (int)c;
		else if (first(p, W_CAPACITY))
			log_warn("battery %s: capacity %s: not counted as critical", st->battery,
			         r < 0 ? strerror(-r) : "is garbled");
	}
	r = awake_read_line(p->dir, st->battery, "status", w, sizeof(w), 0);
	if (r == 0 && !strcmp(w, "Unknown"))
		return;
	status = r == 0 ? parse_status(w) : -1;
	if (status > 0)
		st->status = status;
	else if (first(p, W_STATUS))
		log_warn("battery %s: status %s: not counted as discharging", st->battery,
		         r < 0 ? strerror(-r) : "is garbled");
}

/* One supply of the listing: AC or a candidate battery. */
static void read_supply(struct supply *p, const char *name, struct ps_state *st)
{
	char type[32], w[32];
	int r;

	if (awake_read_line(p->dir, name, "type", type, sizeof(type), 0) < 0)
		return;          /* gone, or not a supply */
	if (!strcmp(type, "Battery")) {
		/* A peripheral's battery (a mouse, a headset) is not the
		 * system's; the first system battery by name is shown. */
		if (awake_read_line(p->dir, name, "scope", w, sizeof(w), 0) == 0 &&
		    !strcmp(w, "Device"))
			return;
		if (strlen(name) >= sizeof(st->battery)) {
			log_debug("battery %.31s...: name too long, not looked at", name);
			return;
		}
		if (!st->battery[0] || strcmp(name, st->battery) < 0)
			snprintf(st->battery, sizeof(st->battery), "%s", name);
		return;
	}
	if (strcmp(type, "Mains") && strncmp(type, "USB", 3))
		return;
	r = awake_read_line(p->dir, name, "online", w, sizeof(w), 0);
	if (r == -ENOENT)
		return;
	if (r < 0 || (strcmp(w, "0") && strcmp(w, "1"))) {
		if (first(p, W_ONLINE))
			log_warn("power supply %s: online %s: counted as online", name,
			         r < 0 ? strerror(-r) : "is garbled");
		st->ac = 1;
		return;
	}
	st->ac |= w[0] == '1';
}

static void read_state(struct supply *p, struct ps_state *st)
{
	struct dirent *e;
	DIR *dp;

	memset(st, 0, sizeof(*st));
	st->capacity = -1;
	dp = opendir(p->dir);
	if (!dp)
		return;
	while ((e = readdir(dp)) != NULL)
		if (e->d_name[0] != '.')
			read_supply(p, e->d_name, st);
	closedir(dp);
	if (st->battery[0])
		read_battery(p, st);
}

/* Publish st; 1 if it differs from what was there. */
static int publish(struct supply *p, const struct ps_state *st)
{
	int changed;

	pthread_mutex_lock(&p->m);
	changed = memcmp(&p->cur, st, sizeof(*st)) != 0;
	p->cur = *st;
	pthread_mutex_unlock(&p->m);
	__atomic_store_n(&presence_on_ac, st->ac, __ATOMIC_RELAXED);
	return changed;
}

static int holding(struct awake_source *s, uint64_t now, uint64_t *until)
{
	struct supply *p = s->priv;
	int ac;

	(void)now;
	(void)until;            /* the main thread kicks the loop on a change */
	if (p->on_ac != ON_AC_NEVER)
		return 0;
	pthread_mutex_lock(&p->m);
	ac = p->cur.ac;
	pthread_mutex_unlock(&p->m);
	return ac;
}

/* A charger plugged in after the decision stops the attempt. */
static int last_look(struct awake_source *s)
{
	struct supply *p = s->priv;
	struct ps_state st;

	if (p->on_ac != ON_AC_NEVER)
		return 0;
	read_state(p, &st);
	publish(p, &st);
	return st.ac;
}

/* The critical level (main thread): 1 when it was just reached. */
static int critical_check(struct supply *p, const struct ps_state *st)
{
	if (!p->critical || !st->battery[0])
		return 0;
	if (p->episode) {
		if (st->ac || st->status == ST_CHARGING || st->status == ST_FULL ||
		    st->capacity > (int)p->critical + CRITICAL_HYST) {
			p->episode = 0;
			log_info("battery %s: above its critical level again (%s)", st->battery,
			         st->ac ? "on AC" : st->status == ST_CHARGING ? "charging" :
			         st->status == ST_FULL ? "full" : "capacity rose");
		}
		return 0;
	}
	if (st->ac || st->status != ST_DISCHARGING || st->capacity < 0 ||
	    st->capacity > (int)p->critical)
		return 0;
	p->episode = 1;
	return 1;
}

int power_supply_update(struct awake_source *s, int force, struct power_critical *crit)
{
	struct supply *p = s->priv;
	struct ps_state st;
	int r = 0;

	if (p->fd >= 0 && p->uevents) {
		if (!awake_uevent_drain(p->fd, "power_supply", NULL) && !force)
			return 0;
	} else if (p->fd >= 0) {
		uint64_t n;

		if (read(p->fd, &n, sizeof(n)) < 0) { /* nothing expired yet */ }
	}
	read_state(p, &st);
	if (publish(p, &st))
		r |= PS_CHANGED;
	if (critical_check(p, &st)) {
		snprintf(crit->battery, sizeof(crit->battery), "%s", st.battery);
		crit->capacity = st.capacity;
		crit->action = p->action;
		r |= PS_CRITICAL;
	}
	return r;
}

int power_supply_fd(struct awake_source *s)
{
	return ((struct supply *)s->priv)->fd;
}

static void describe(struct awake_source *s, uint64_t now, char *buf, size_t len)
{
	struct supply *p = s->priv;
	struct ps_state st;
	char bat[80] = "", crit[40] = "";

	(void)now;
	pthread_mutex_lock(&p->m);
	st = p->cur;
	pthread_mutex_unlock(&p->m);
	if (st.battery[0] && st.capacity >= 0)
		snprintf(bat, sizeof(bat), ", battery %s %d%%%s%s", st.battery, st.capacity,
		         st.status ? " " : "", status_names[st.status]);
	else if (st.battery[0])
		snprintf(bat, sizeof(bat), ", battery %s (no capacity)", st.battery);
	if (st.battery[0] && p->critical && p->action != CRITICAL_NONE)
		snprintf(crit, sizeof(crit), ", critical at %u%%: %s", p->critical,
		         config_critical_action_name(p->action));
	snprintf(buf, len, "ac %s%s%s%s", st.ac ? "online" : "offline", bat, crit,
	         p->on_ac == ON_AC_NEVER && st.ac ? " (on_ac = never)" :
	         p->on_ac == ON_AC_IDLE && st.ac ? " (on_ac = idle)" : "");
}

/* Without uevents: a look once a second (a sandbox, a test root). */
static int timer_fd(void)
{
	struct itimerspec its = { .it_interval = { 1, 0 }, .it_value = { 1, 0 } };
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);

	if (fd >= 0 && timerfd_settime(fd, 0, &its, NULL) < 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

struct awake_source *power_supply_source_new(const char *root,
                                             const struct power_supply_params *pp)
{
	struct supply *p = calloc(1, sizeof(*p));
	struct ps_state st;

	if (!p)
		return NULL;
	snprintf(p->dir, sizeof(p->dir), "%s/sys/class/power_supply", root);
	pthread_mutex_init(&p->m, NULL);
	p->on_ac = pp->on_ac;
	p->critical = pp->critical_percent;
	p->action = pp->critical_action;
	p->src.name = "power";
	p->src.holding = holding;
	p->src.last_look = last_look;
	p->src.describe = describe;
	p->src.priv = p;
	p->src.fd = -1;          /* the loop is kicked by the main thread */
	p->fd = root[0] && strcmp(root, "/") ? -1 : awake_uevent_socket();
	p->uevents = p->fd >= 0;
	if (p->fd < 0) {
		p->fd = timer_fd();
		if (!root[0] || !strcmp(root, "/"))
			log_warn("power supply: no kernel uevents: looking every second");
	}
	read_state(p, &st);
	publish(p, &st);
	return &p->src;
}

void power_supply_source_free(struct awake_source *s)
{
	struct supply *p;

	if (!s)
		return;
	p = s->priv;
	if (p->fd >= 0)
		close(p->fd);
	pthread_mutex_destroy(&p->m);
	__atomic_store_n(&presence_on_ac, 0, __ATOMIC_RELAXED);
	free(p);
}
