/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The display as an awake source (docs/policy.md): the system stays awake
 * while any DRM connector a CRTC drives (`enabled`) has `dpms` On, or any
 * backlight has
 * `bl_power` 0 with `brightness` above 0, and for off_delay_ms after the
 * last of them went off.
 *
 * How it wakes the loop: DPMS changes send no uevent, so while a display
 * is on the source asks to be looked at again within a second; while
 * every display is off it asks for nothing and costs no wake-up.  A
 * kernel uevent socket (backlight changes, DRM hot-plug) makes the next
 * look re-read at once.  The last look, after the count is written,
 * re-reads the display: one turned on after the look aborts the attempt.
 *
 * What cannot be read counts as on (logged once): a garbled `dpms`, an
 * unreadable `brightness`, a connector we may not open.  A connector or
 * backlight that vanishes between the listing and the read is gone, not
 * on.  No /sys/class/drm and no backlight at all: nothing to keep awake
 * for (said once at start).
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
#include "presence.h"

#define RECHECK_NS 1000000000ull      /* while on: look again within 1 s */
#define CACHE_NS 100000000ull         /* looks closer than this reuse a sample */

struct display {
	struct awake_source src;
	char drm[PATH_MAX], backlight[PATH_MAX];
	uint64_t off_delay_ns;
	int on;                  /* a display was on at the last sample */
	char which[64];          /* the first one on, for status */
	uint64_t off_since;      /* when the last one went off (mono ns), 0: none */
	uint64_t seen_on;        /* the last sample that saw one on */
	uint64_t sampled;        /* when sampled last */
	int dirty;               /* a uevent came: re-read at the next look */
	int warned;              /* unreadable state logged */
	int any;                 /* a display exists */
};

static void unreadable(struct display *d, const char *what, const char *name, const char *why)
{
	if (!d->warned)
		log_warn("display: %s of %s %s: counted as on", what, name, why);
	d->warned = 1;
}

/* Whether a connector whose dpms reads On is driven by a CRTC: 1 yes (or
 * unreadable: on), 0 no, -1 gone.  The kernel starts every connector at
 * DPMS On (0) and sets it from its CRTC's state only at a modeset that
 * routes it to one, so an unplugged HDMI port or a writeback connector
 * reads On forever: "enabled" (an encoder attached) tells them apart. */
static int connector_driven(struct display *d, const char *name)
{
	char w[32];
	int r = awake_read_line(d->drm, name, "enabled", w, sizeof(w), 1);

	if (r == -ENOENT || r == -ENOTDIR)
		return -1;
	if (r >= 0 && !strcmp(w, "enabled"))
		return 1;
	if (r >= 0 && !strcmp(w, "disabled"))
		return 0;
	unreadable(d, "enabled", name, r < 0 ? strerror(-r) : "is garbled");
	return 1;
}

/* 1 on, 0 off, -1 gone; garbage or an error is on. */
static int connector_on(struct display *d, const char *name)
{
	char w[32];
	int r = awake_read_line(d->drm, name, "dpms", w, sizeof(w), 1);

	if (r == -ENOENT || r == -ENOTDIR)
		return -1;            /* not a connector, or gone */
	if (r < 0) {
		unreadable(d, "dpms", name, strerror(-r));
		return 1;
	}
	if (!strcmp(w, "On"))
		return connector_driven(d, name);
	if (!strcmp(w, "Off") || !strcmp(w, "Standby") || !strcmp(w, "Suspend"))
		return 0;
	unreadable(d, "dpms", name, "is garbled");
	return 1;
}

static int parse_num(const char *w, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(w, &end, 10);
	return !*w || *end || errno ? -EINVAL : 0;
}

static int backlight_on(struct display *d, const char *name)
{
	char w[32];
	long power, bright;
	int r = awake_read_line(d->backlight, name, "bl_power", w, sizeof(w), 1);

	if (r == -ENOENT || r == -ENOTDIR)
		return -1;
	if (r < 0 || parse_num(w, &power) < 0) {
		unreadable(d, "bl_power", name, r < 0 ? strerror(-r) : "is garbled");
		return 1;
	}
	if (power != 0)
		return 0;             /* FB_BLANK_* other than unblank */
	r = awake_read_line(d->backlight, name, "brightness", w, sizeof(w), 1);
	if (r == -ENOENT)
		return -1;
	if (r < 0 || parse_num(w, &bright) < 0 || bright < 0) {
		unreadable(d, "brightness", name, r < 0 ? strerror(-r) : "is garbled");
		return 1;
	}
	return bright > 0;
}

/* Walk one class directory: whether an entry is on (its name in which). */
static int scan(struct display *d, const char *dir, int (*on)(struct display *, const char *))
{
	DIR *dp = opendir(dir);
	struct dirent *e;
	int any_on = 0;

	if (!dp)
		return 0;
	while ((e = readdir(dp)) != NULL) {
		int r;

		if (e->d_name[0] == '.')
			continue;
		r = on(d, e->d_name);
		if (r < 0)
			continue;
		d->any = 1;
		if (r && !any_on) {
			any_on = 1;
			snprintf(d->which, sizeof(d->which), "%s", e->d_name);
		}
	}
	closedir(dp);
	return any_on;
}

static void sample(struct awake_source *s, uint64_t now, int force)
{
	struct display *d = s->priv;
	int was = d->on;

	if (!force && !d->dirty && d->sampled && now - d->sampled < CACHE_NS)
		return;
	d->dirty = 0;
	d->sampled = now;
	d->any = 0;
	d->on = scan(d, d->drm, connector_on);
	if (!d->on)
		d->on = scan(d, d->backlight, backlight_on);
	/* The delay counts from the last sample that saw a display on: it
	 * went off between that one and this, and DPMS sends no event to
	 * say when.  So the first attempt comes at most off_delay_ms after
	 * the display really went off (up to one re-check earlier), never
	 * a re-check later. */
	if (was && !d->on)
		d->off_since = d->seen_on ? d->seen_on : now;
	if (d->on) {
		d->off_since = 0;
		d->seen_on = now;
	}
}

static int in_delay(const struct display *d, uint64_t now)
{
	return d->off_since && now < d->off_since + d->off_delay_ns;
}

static int holding(struct awake_source *s, uint64_t now, uint64_t *until)
{
	struct display *d = s->priv;

	/* A closed lid: nobody looks at it (laptop, presence.h). */
	if (presence_suppressed)
		return 0;
	if (d->on) {
		*until = now + RECHECK_NS;
		return 1;
	}
	if (in_delay(d, now)) {
		*until = d->off_since + d->off_delay_ns;
		return 1;
	}
	return 0;
}

static int last_look(struct awake_source *s)
{
	struct display *d = s->priv;
	uint64_t now = wl_now_mono();

	sample(s, now, 1);
	if (d->on)
		log_debug("display %s turned on at the last look: not suspending", d->which);
	return !presence_suppressed && (d->on || in_delay(d, now));
}

static void event(struct awake_source *s)
{
	struct display *d = s->priv;

	if (awake_uevent_drain(s->fd, "drm", "backlight"))
		d->dirty = 1;
}

static void describe(struct awake_source *s, uint64_t now, char *buf, size_t len)
{
	struct display *d = s->priv;

	if (d->on)
		snprintf(buf, len, "display %s on", d->which);
	else if (in_delay(d, now))
		snprintf(buf, len, "display off, awake %llu ms more",
		         (unsigned long long)((d->off_since + d->off_delay_ns - now) / 1000000u));
	else if (d->any)
		snprintf(buf, len, "display off");
	else
		snprintf(buf, len, "no display");
	if (presence_suppressed && (d->on || in_delay(d, now)))
		snprintf(buf + strlen(buf), len - strlen(buf), " (lid closed: not holding)");
}

static int uevent_socket(void)
{
	int fd = awake_uevent_socket();

	if (fd < 0)
		log_info("display: no kernel uevents (%s): backlight changes are seen at "
		         "the next look", strerror(errno));
	return fd;
}

struct awake_source *display_source_new(const char *root, unsigned off_delay_ms)
{
	struct display *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	snprintf(d->drm, sizeof(d->drm), "%s/sys/class/drm", root);
	snprintf(d->backlight, sizeof(d->backlight), "%s/sys/class/backlight", root);
	d->off_delay_ns = (uint64_t)off_delay_ms * 1000000u;
	d->src.name = "display";
	d->src.sample = sample;
	d->src.holding = holding;
	d->src.last_look = last_look;
	d->src.event = event;
	d->src.describe = describe;
	d->src.priv = d;
	/* Only where there is something to watch (a root of tests: none). */
	d->src.fd = root[0] && strcmp(root, "/") ? -1 : uevent_socket();
	sample(&d->src, wl_now_mono(), 1);
	if (!d->any)
		log_info("display: no DRM connector or backlight under %s/sys/class: "
		         "nothing keeps the system awake for a display", root);
	return &d->src;
}

void display_source_free(struct awake_source *s)
{
	if (!s)
		return;
	if (s->fd >= 0)
		close(s->fd);
	free(s->priv);
}
