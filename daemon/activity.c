/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * User activity and the lid as awake sources (laptop policy,
 * docs/policy.md).  Key, touch, pointer and switch events from evdev
 * (/dev/input/event*) restart an idle_timeout_ms hold: the source holds
 * while now < last event + idle timeout.  With on_ac = idle the timeout
 * is idle_timeout_ac_ms while a mains or USB supply is online
 * (presence_on_ac, power_supply.c), and a change of it counts as activity;
 * in phone mode the battery timeout is 0 (activity counts on AC only).  The start counts as activity:
 * a laptop just booted or a daemon just restarted does not suspend under
 * the hands of whoever is at it.  A closed lid (SW_LID 1 on any device)
 * stops the presence sources from holding at once (presence.h), unless
 * [policy] lid_closed = ignore.
 *
 * The devices are opened read-only and never grabbed (no EVIOCGRAB): the
 * compositor and everyone else still get every event.  A device that
 * reports none of the types that count (a PC speaker, an accelerometer,
 * whose tilt is not a person) is not kept open.  What cannot be asked
 * (EVIOCGBIT on a FIFO, as the tests use) reports everything.
 *
 * How it wakes the loop: src.fd is an epoll descriptor of ours holding
 * every device and an inotify on the input directory (hot-plug).  The
 * devices are EPOLLONESHOT: a drain reads each ready device in batches
 * of struct input_event, and while the source holds anyway the devices
 * stay disarmed ("parked") for PARK_NS: a flood of events then costs at
 * most one wake-up and a few batched reads per PARK_NS, never a syscall
 * or a log line per event.  While it does not hold every device is
 * armed, so the first event wakes the loop at once; while not holding and
 * no input comes, it costs no wake-up at all.  The last look reads every
 * device directly: an event after the look aborts the attempt.
 *
 * An unplugged device (ENODEV, or gone from the directory) is closed
 * quietly and dropped; one that cannot be opened is logged once.  End of
 * file (only a FIFO: its writer went away) reopens it by name.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/input.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "lib/wl_shm.h"
#include "awake.h"
#include "config.h"
#include "log.h"
#include "presence.h"

#define MAX_DEVS 64
#define MAX_WARNED 32
#define PARK_NS 200000000ull          /* devices disarmed this long while holding */
#define BATCH 128                     /* events per read (3 KiB) */
#define INO_TAG 0                     /* epoll data of the inotify; devices: index + 1 */

#define LONG_BITS (sizeof(long) * 8)
#define NLONGS(n) (((n) + LONG_BITS - 1) / LONG_BITS)
#define COUNTS_ALL (1u << EV_KEY | 1u << EV_REL | 1u << EV_ABS | 1u << EV_SW)

int presence_suppressed;

struct dev {
	int fd;                  /* -1: a free slot */
	char name[32];           /* "event3" */
	unsigned counts;         /* 1 << EV_*: the types that are a person */
	int lid;                 /* -1: no lid switch seen, 0 open, 1 closed */
	int armed;               /* in the epoll set (EPOLLONESHOT not yet fired) */
	int warned;              /* a short record logged */
};

struct activity {
	struct awake_source src, lid_src;
	char dir[PATH_MAX];
	int ino;                 /* inotify on dir, -1: no hot-plug */
	uint64_t idle_ns;
	uint64_t idle_ac_ns;     /* while on AC (the same unless on_ac = idle) */
	int ac_seen;             /* presence_on_ac at the last sample */
	int lid_action;          /* enum lid_action */
	int lid_closed;          /* any device's lid reads closed */
	uint64_t last;           /* last activity (mono ns) */
	uint64_t park_until;     /* disarmed devices re-armed then, 0: none */
	struct dev dev[MAX_DEVS];
	unsigned ndev;
	char warned[MAX_WARNED][32];  /* devices whose open failed, logged */
	unsigned nwarned;
	int full_warned;
};

static int bit(const unsigned long *a, unsigned b)
{
	return (a[b / LONG_BITS] >> (b % LONG_BITS)) & 1;
}

static int is_event_name(const char *n)
{
	return !strncmp(n, "event", 5) && n[5] >= '0' && n[5] <= '9' && strlen(n) < 32;
}

static void lid_update(struct activity *a)
{
	int closed = 0;

	for (unsigned i = 0; i < MAX_DEVS; i++)
		if (a->dev[i].fd >= 0 && a->dev[i].lid == 1)
			closed = 1;
	if (closed != a->lid_closed)
		log_info("lid %s%s", closed ? "closed" : "open",
		         a->lid_action != LID_SUSPEND ? " (lid_closed = ignore)" :
		         closed ? ": the display and activity no longer hold" : "");
	a->lid_closed = closed;
	presence_suppressed = closed && a->lid_action == LID_SUSPEND;
}

/* Once per device name: a node we may not open stays so. */
static void open_failed(struct activity *a, const char *name, int err)
{
	if (err == ENOENT) {
		log_debug("activity: %s vanished before it was opened", name);
		return;
	}
	for (unsigned i = 0; i < a->nwarned; i++)
		if (!strcmp(a->warned[i], name))
			return;
	if (a->nwarned < MAX_WARNED)
		snprintf(a->warned[a->nwarned++], sizeof(a->warned[0]), "%s", name);
	log_warn("activity: cannot watch %s/%s: %s: its events keep nothing awake", a->dir,
	         name, strerror(err));
}

static struct dev *dev_find(struct activity *a, const char *name)
{
	for (unsigned i = 0; i < MAX_DEVS; i++)
		if (a->dev[i].fd >= 0 && !strcmp(a->dev[i].name, name))
			return &a->dev[i];
	return NULL;
}

static void dev_close(struct activity *a, struct dev *d)
{
	int had_lid = d->lid >= 0;

	epoll_ctl(a->src.fd, EPOLL_CTL_DEL, d->fd, NULL);
	close(d->fd);
	d->fd = -1;
	a->ndev--;
	if (had_lid)
		lid_update(a);
}

/* Which event types of the device count, and its lid; on a file that is
 * no evdev device (EVIOCGBIT fails) everything counts. */
static void dev_probe(int fd, struct dev *d)
{
	unsigned long types[NLONGS(EV_MAX + 1)] = { 0 }, sw[NLONGS(SW_MAX + 1)] = { 0 };
	unsigned long props[NLONGS(INPUT_PROP_MAX + 1)] = { 0 };

	d->counts = COUNTS_ALL;
	d->lid = -1;
	if (ioctl(fd, EVIOCGBIT(0, sizeof(types)), types) < 0)
		return;
	d->counts = 0;
	for (unsigned t = EV_KEY; t <= EV_SW; t++)
		if ((COUNTS_ALL >> t & 1) && bit(types, t))
			d->counts |= 1u << t;
	if (ioctl(fd, EVIOCGPROP(sizeof(props)), props) >= 0 &&
	    bit(props, INPUT_PROP_ACCELEROMETER))
		d->counts &= ~(1u << EV_ABS);
	if ((d->counts & 1u << EV_SW) && ioctl(fd, EVIOCGBIT(EV_SW, sizeof(sw)), sw) >= 0 &&
	    bit(sw, SW_LID)) {
		memset(sw, 0, sizeof(sw));
		/* The state now: a lid closed before we started is closed. */
		d->lid = ioctl(fd, EVIOCGSW(sizeof(sw)), sw) >= 0 ? bit(sw, SW_LID) : 0;
	}
}

static void dev_open(struct activity *a, const char *name)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT };
	char path[PATH_MAX + 40];
	struct dev *d = NULL;
	int fd;

	if (!is_event_name(name) || dev_find(a, name))
		return;
	for (unsigned i = 0; i < MAX_DEVS && !d; i++)
		if (a->dev[i].fd < 0)
			d = &a->dev[i];
	if (!d) {
		if (!a->full_warned)
			log_warn("activity: more than %u input devices: %s and later ones are "
			         "not watched", MAX_DEVS, name);
		a->full_warned = 1;
		return;
	}
	snprintf(path, sizeof(path), "%s/%s", a->dir, name);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		open_failed(a, name, errno);
		return;
	}
	dev_probe(fd, d);
	if (!d->counts) {
		log_debug("activity: %s reports no key, pointer, touch or switch: not watched",
		          name);
		close(fd);
		return;
	}
	ev.data.u64 = (uint64_t)(d - a->dev) + 1;
	/* A regular file cannot be polled (EPERM): not an input device. */
	if (epoll_ctl(a->src.fd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		open_failed(a, name, errno);
		close(fd);
		return;
	}
	d->fd = fd;
	d->armed = 1;
	d->warned = 0;
	snprintf(d->name, sizeof(d->name), "%s", name);
	a->ndev++;
	log_debug("activity: watching %s%s", name, d->lid >= 0 ? " (a lid switch)" : "");
	if (d->lid >= 0)
		lid_update(a);
}

/* End of file: only a FIFO's writer going away; what is there now. */
static void dev_reopen(struct activity *a, struct dev *d)
{
	char name[sizeof(d->name)];

	snprintf(name, sizeof(name), "%s", d->name);
	dev_close(a, d);
	dev_open(a, name);
}

static void scan(struct activity *a)
{
	DIR *dp = opendir(a->dir);
	struct dirent *e;

	if (!dp)
		return;
	while ((e = readdir(dp)) != NULL)
		dev_open(a, e->d_name);
	closedir(dp);
}

/* Read what one device has, in batches; 1 if a person said something. */
static int dev_drain(struct activity *a, struct dev *d)
{
	struct input_event buf[BATCH];
	int seen = 0, lid = 0;

	for (;;) {
		ssize_t n = read(d->fd, buf, sizeof(buf));
		size_t k;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n < 0) {
			/* ENODEV: unplugged, the normal end of a device. */
			if (errno != ENODEV)
				log_warn("activity: %s: %s: no longer watched", d->name,
				         strerror(errno));
			else
				log_debug("activity: %s unplugged", d->name);
			dev_close(a, d);
			break;
		}
		if (n == 0) {
			dev_reopen(a, d);
			break;
		}
		k = (size_t)n / sizeof(buf[0]);
		if ((size_t)n % sizeof(buf[0]) && !d->warned) {
			/* evdev returns whole records only: this is no evdev. */
			log_warn("activity: %s: a short record of %zu bytes: ignored", d->name,
			         (size_t)n % sizeof(buf[0]));
			d->warned = 1;
		}
		for (size_t i = 0; i < k; i++) {
			const struct input_event *e = &buf[i];

			if (e->type == EV_SW && e->code == SW_LID) {
				d->lid = e->value != 0;
				lid = 1;
			} else if (e->type == EV_SYN && e->code == SYN_DROPPED && d->lid >= 0) {
				/* The queue overflowed: the switch may have moved unseen. */
				unsigned long sw[NLONGS(SW_MAX + 1)] = { 0 };

				if (ioctl(d->fd, EVIOCGSW(sizeof(sw)), sw) >= 0)
					d->lid = bit(sw, SW_LID);
				lid = 1;
			}
			if (e->type < 32 && (d->counts >> e->type & 1))
				seen = 1;
		}
		if ((size_t)n < sizeof(buf))
			break;        /* it had no more: spare the read that says EAGAIN */
	}
	if (lid)
		lid_update(a);
	return seen;
}

static void ino_drain(struct activity *a)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	int gone = 0;
	ssize_t n;

	if (a->ino < 0)
		return;
	while ((n = read(a->ino, buf, sizeof(buf))) > 0) {
		const struct inotify_event *e;

		for (char *p = buf; p < buf + n; p += sizeof(*e) + e->len) {
			e = (const struct inotify_event *)p;
			if (e->mask & IN_Q_OVERFLOW) {
				scan(a);
			} else if (e->mask & (IN_DELETE | IN_MOVED_FROM)) {
				struct dev *d = e->len ? dev_find(a, e->name) : NULL;

				if (d) {
					log_debug("activity: %s removed", d->name);
					dev_close(a, d);
				}
			} else if ((e->mask & (IN_CREATE | IN_MOVED_TO)) && e->len) {
				dev_open(a, e->name);
			}
			if (e->mask & IN_IGNORED)
				gone = 1;
		}
	}
	if (gone) {
		log_warn("activity: %s removed: hot-plugged input devices are no longer seen",
		         a->dir);
		close(a->ino);
		a->ino = -1;
	}
}

/* The idle timeout of the power source now (on_ac = idle). */
static uint64_t idle_of(struct activity *a)
{
	return __atomic_load_n(&presence_on_ac, __ATOMIC_RELAXED) ? a->idle_ac_ns : a->idle_ns;
}

static int holds(struct activity *a, uint64_t now)
{
	return !presence_suppressed && now < a->last + idle_of(a);
}

static void rearm(struct activity *a)
{
	for (unsigned i = 0; i < MAX_DEVS; i++) {
		struct dev *d = &a->dev[i];
		struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT,
		                          .data.u64 = (uint64_t)i + 1 };

		if (d->fd < 0 || d->armed)
			continue;
		if (epoll_ctl(a->src.fd, EPOLL_CTL_MOD, d->fd, &ev) == 0)
			d->armed = 1;
	}
	a->park_until = 0;
}

/* After a drain: while the source holds anyway, news can wait PARK_NS
 * (a closed lid is seen that much later at most); else every device is
 * armed, for the first event to wake the loop. */
static void settle(struct activity *a, uint64_t now)
{
	if (!holds(a, now))
		rearm(a);
	else if (!a->park_until)
		a->park_until = now + PARK_NS;
}

static void event(struct awake_source *s)
{
	struct activity *a = s->priv;
	struct epoll_event evs[16];
	int n, seen = 0;
	uint64_t now;

	while ((n = epoll_wait(s->fd, evs, 16, 0)) > 0) {
		for (int i = 0; i < n; i++) {
			struct dev *d;

			if (evs[i].data.u64 == INO_TAG) {
				ino_drain(a);
				continue;
			}
			d = &a->dev[evs[i].data.u64 - 1];
			if (d->fd < 0)
				continue;
			d->armed = 0;
			seen |= dev_drain(a, d);
		}
		if (n < 16)
			break;
	}
	now = wl_now_mono();
	if (seen)
		a->last = now;
	settle(a, now);
}

static void sample(struct awake_source *s, uint64_t now, int force)
{
	struct activity *a = s->priv;

	(void)force;
	/* With on_ac = idle, plugging or pulling the charger is a person at
	 * the machine (ChromeOS counts it as activity too): without this, a
	 * laptop idle 7 min on AC would suspend the moment it is unplugged. */
	if (__atomic_load_n(&presence_on_ac, __ATOMIC_RELAXED) != a->ac_seen) {
		a->ac_seen = !a->ac_seen;
		if (a->idle_ac_ns != a->idle_ns)
			a->last = now;
	}
	/* Parked devices come back once the wait is over, or at once when
	 * the hold ended or the lid closed meanwhile. */
	if (a->park_until && (now >= a->park_until || !holds(a, now)))
		rearm(a);
}

static int holding(struct awake_source *s, uint64_t now, uint64_t *until)
{
	struct activity *a = s->priv;
	uint64_t end = a->last + idle_of(a);

	if (!holds(a, now))
		return 0;
	*until = a->park_until && a->park_until < end ? a->park_until : end;
	return 1;
}

/* Every device read directly, parked or not: a key pressed or the lid
 * opened after the look stops the attempt. */
static int last_look(struct awake_source *s)
{
	struct activity *a = s->priv;
	int seen = 0;

	ino_drain(a);
	for (unsigned i = 0; i < MAX_DEVS; i++)
		if (a->dev[i].fd >= 0)
			seen |= dev_drain(a, &a->dev[i]);
	if (!seen)
		return 0;
	a->last = wl_now_mono();
	if (!presence_suppressed)
		log_debug("activity: input at the last look: not suspending");
	return !presence_suppressed;
}

static void describe(struct awake_source *s, uint64_t now, char *buf, size_t len)
{
	struct activity *a = s->priv;
	const char *plural = a->ndev == 1 ? "" : "s";

	if (presence_suppressed)
		snprintf(buf, len, "lid closed: not holding, %u input device%s", a->ndev, plural);
	else if (holds(a, now))
		snprintf(buf, len, "idle in %llu s, %u input device%s",
		         (unsigned long long)((a->last + idle_of(a) - now + 999999999u) / 1000000000u),
		         a->ndev, plural);
	else if (a->ndev)
		snprintf(buf, len, "idle, %u input device%s", a->ndev, plural);
	else
		snprintf(buf, len, "idle, no input device");
}

static void lid_describe(struct awake_source *s, uint64_t now, char *buf, size_t len)
{
	struct activity *a = s->priv;
	int any = 0;

	(void)now;
	for (unsigned i = 0; i < MAX_DEVS; i++)
		if (a->dev[i].fd >= 0 && a->dev[i].lid >= 0)
			any = 1;
	if (!any)
		snprintf(buf, len, "no lid switch seen");
	else if (!a->lid_closed)
		snprintf(buf, len, "lid open");
	else
		snprintf(buf, len, "lid closed%s", a->lid_action == LID_SUSPEND ?
		         ": the display and activity do not hold" : " (ignored)");
}

struct awake_source *activity_source_new(const char *root, unsigned idle_ms,
                                         unsigned idle_ac_ms, int lid_action)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = INO_TAG };
	struct activity *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	for (unsigned i = 0; i < MAX_DEVS; i++)
		a->dev[i].fd = -1;
	snprintf(a->dir, sizeof(a->dir), "%s/dev/input", strcmp(root, "/") ? root : "");
	a->idle_ns = (uint64_t)idle_ms * 1000000u;
	a->idle_ac_ns = (uint64_t)idle_ac_ms * 1000000u;
	a->ac_seen = __atomic_load_n(&presence_on_ac, __ATOMIC_RELAXED);
	a->lid_action = lid_action;
	a->last = wl_now_mono();
	a->src.name = "activity";
	a->src.sample = sample;
	a->src.holding = holding;
	a->src.last_look = last_look;
	a->src.event = event;
	a->src.describe = describe;
	a->src.priv = a;
	a->src.fd = epoll_create1(EPOLL_CLOEXEC);
	if (a->src.fd < 0) {
		log_error("activity: epoll_create1: %s", strerror(errno));
		free(a);
		return NULL;
	}
	/* The lid's own line in `wakelock status`; it holds nothing itself. */
	a->lid_src.name = "lid";
	a->lid_src.describe = lid_describe;
	a->lid_src.fd = -1;
	a->lid_src.priv = a;
	/* Before the listing: a device plugged in between is not missed. */
	a->ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (a->ino >= 0 && (inotify_add_watch(a->ino, a->dir, IN_CREATE | IN_DELETE |
	                                      IN_MOVED_TO | IN_MOVED_FROM | IN_ONLYDIR) < 0 ||
	                    epoll_ctl(a->src.fd, EPOLL_CTL_ADD, a->ino, &ev) < 0)) {
		log_warn("activity: cannot watch %s (%s): input devices plugged in later are "
		         "not seen", a->dir, strerror(errno));
		close(a->ino);
		a->ino = -1;
	}
	scan(a);
	if (!a->ndev)
		log_info("activity: no input device under %s: only the idle timeout after the "
		         "start keeps the system awake for a person", a->dir);
	else
		log_info("activity: %u input device%s under %s; idle after %u ms on battery, "
		         "%u ms on AC", a->ndev, a->ndev == 1 ? "" : "s", a->dir, idle_ms,
		         idle_ac_ms);
	return &a->src;
}

struct awake_source *activity_lid_source(struct awake_source *s)
{
	return &((struct activity *)s->priv)->lid_src;
}

void activity_source_free(struct awake_source *s)
{
	struct activity *a;

	if (!s)
		return;
	a = s->priv;
	for (unsigned i = 0; i < MAX_DEVS; i++)
		if (a->dev[i].fd >= 0)
			close(a->dev[i].fd);
	if (a->ino >= 0)
		close(a->ino);
	close(a->src.fd);
	presence_suppressed = 0;
	free(a);
}
