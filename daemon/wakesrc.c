/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Wake-cause snapshots and their difference (wakesrc.h, docs/ledger.md). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "wakesrc.h"

#define WAKEUP_DIR "/sys/class/wakeup"

static int read_attr(struct power_backend *be, const char *rel, char *buf, size_t len)
{
	if (!be->read_attr)
		return -ENOENT;
	return be->read_attr(be, rel, buf, len);
}

/* buf as a decimal number filling it ("123"): 0 or -EBADMSG. */
static int parse_u64(const char *buf, uint64_t *v)
{
	char *end;

	if (buf[0] < '0' || buf[0] > '9')
		return -EBADMSG;
	errno = 0;
	*v = strtoull(buf, &end, 10);
	if (errno || *end)
		return -EBADMSG;
	return 0;
}

/* A decimal number filling the whole file: 0, -errno or -EBADMSG. */
static int read_u64(struct power_backend *be, const char *rel, uint64_t *v)
{
	char buf[32];
	int r = read_attr(be, rel, buf, sizeof(buf));

	return r < 0 ? r : parse_u64(buf, v);
}

/* A descriptor kept open (power.h open_attr), read again from offset 0
 * into buf as a string, its newline cut: the length, or -errno. */
static int pread_str(int fd, char *buf, size_t len)
{
	ssize_t n = pread(fd, buf, len - 1, 0);

	if (n < 0)
		return -errno;
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return (int)strlen(buf);
}

/* The same as a decimal number filling the file. */
static int pread_u64(int fd, uint64_t *v)
{
	char buf[32];
	int r = pread_str(fd, buf, sizeof(buf));

	return r < 0 ? r : parse_u64(buf, v);
}

struct ids {
	uint32_t id[WAKESRC_MAX];
	uint64_t ino[WAKESRC_MAX];           /* of each id's directory, 0: unknown */
	unsigned n;
	int truncated;
};

/*
 * The sources as the last snapshot read them, by id and directory inode,
 * so that a snapshot reads one file of a source in three when it did not
 * move, with one system call:
 *  - a name does not change while its directory lives: a source listed
 *    again with the same nonzero inode keeps it.  The kernel reuses
 *    wakeupN numbers, but a re-created directory has a new inode, so a
 *    new source under an old number is read;
 *  - the kernel raises a source's wakeup_count only with its event_count
 *    (wakeup_source_report_event(), 6.12), so an event_count that did
 *    not move means a wakeup_count that did not either;
 *  - event_count stays open (power.h open_attr) and is read again with
 *    pread() from offset 0, where the backend can: one system call, no
 *    path to walk (on a device, a symbolic link into /sys/devices).
 * One snapshot at a time (the power loop's thread in the daemon);
 * bounded like a snapshot: at most WAKESRC_MAX descriptors.
 */
static struct src_cache {
	pthread_mutex_t m;
	const struct power_backend *be;      /* whose listing it is */
	unsigned n;
	uint64_t ino[WAKESRC_MAX];           /* 0: unknown, the next listing reads it */
	int fd[WAKESRC_MAX];                 /* its event_count open, -1: none */
	struct ws_source src[WAKESRC_MAX];   /* sorted by id */
	/* The kernel's list of the sources counted since the last write of
	 * wakeup_count (take_counted): */
	int synced;                          /* a listing filled the cache, all of it */
	unsigned since_listing;              /* snapshots taken from the list since */
} cache = { .m = PTHREAD_MUTEX_INITIALIZER };

/* "wakeupN" only: the class's own naming (anything else is skipped). */
static int collect_id(void *arg, const char *entry, uint64_t ino)
{
	struct ids *ids = arg;
	unsigned long v;
	char *end;
	unsigned max = 0;

	if (strncmp(entry, "wakeup", 6) || entry[6] < '0' || entry[6] > '9')
		return 0;
	errno = 0;
	v = strtoul(entry + 6, &end, 10);
	if (errno || *end || v > UINT32_MAX)
		return 0;
	if (ids->n < WAKESRC_MAX) {
		ids->ino[ids->n] = ino;
		ids->id[ids->n++] = (uint32_t)v;
		return 0;
	}
	/* Full: keep the lowest numbers, so that two snapshots of the same
	 * sources keep the same ones whatever order the directory lists. */
	ids->truncated = 1;
	for (unsigned i = 1; i < ids->n; i++)
		if (ids->id[i] > ids->id[max])
			max = i;
	if (v < ids->id[max]) {
		ids->id[max] = (uint32_t)v;
		ids->ino[max] = ino;
	}
	return 0;
}

/* Insertion sort by id, in place and without allocating (qsort may): the
 * directory lists sources mostly in order already. */
static void sort_ids(struct ids *ids)
{
	for (unsigned i = 1; i < ids->n; i++) {
		uint32_t x = ids->id[i];
		uint64_t xi = ids->ino[i];
		unsigned j = i;

		for (; j > 0 && ids->id[j - 1] > x; j--) {
			ids->id[j] = ids->id[j - 1];
			ids->ino[j] = ids->ino[j - 1];
		}
		ids->id[j] = x;
		ids->ino[j] = xi;
	}
}

/* The index in the cache of source id as read last time, if its
 * directory is the same one (*k: a cursor, the cache being walked in id
 * order); -1 if it must be read. */
static int cached(const struct src_cache *c, unsigned *k, uint32_t id, uint64_t ino)
{
	while (*k < c->n && c->src[*k].id < id)
		(*k)++;
	if (!ino || *k >= c->n || c->src[*k].id != id || c->ino[*k] != ino)
		return -1;
	return (int)*k;
}

/* The cache becomes what this snapshot read (sorted by id, as s is):
 * what it no longer holds is closed.  A source kept with inode 0 (its
 * name could not be read) is read whole by the next listing. */
static void cache_sources(struct src_cache *c, const struct ws_snapshot *s, const uint64_t *ino,
                          int *fd)
{
	for (unsigned i = 0; i < c->n; i++)
		if (c->fd[i] >= 0)
			close(c->fd[i]);         /* not taken over: gone or re-created */
	c->n = 0;
	for (unsigned i = 0; i < s->nsrc; i++) {
		c->ino[c->n] = ino[i];
		c->fd[c->n] = fd[i];
		c->src[c->n++] = s->src[i];
	}
}

/* A source's event_count: through *fd if open (kept open for the next
 * time where the backend can), else by name.  0 or -errno.  *reopened
 * (if not NULL) is set when a kept descriptor failed and the name was
 * opened again: on sysfs, the source it was open on is gone, and one
 * found under the same name is another. */
static int read_events(struct power_backend *be, uint32_t id, int *fd, uint64_t *v,
                       int *reopened)
{
	char rel[96];
	int f, r;

	if (*fd >= 0) {
		if (pread_u64(*fd, v) == 0)
			return 0;
		close(*fd);                      /* gone (ENODEV), or garbled */
		*fd = -1;
		if (reopened)
			*reopened = 1;
	}
	snprintf(rel, sizeof(rel), WAKEUP_DIR "/wakeup%u/event_count", id);
	if (!be->open_attr)
		return read_u64(be, rel, v);
	f = be->open_attr(be, rel);
	if (f < 0)
		return f;
	r = pread_u64(f, v);
	if (r == 0)
		*fd = f;
	else
		close(f);
	return r;
}

/* src's wakeup_count, read: the kernel raises it only with event_count
 * (wakeup_source_report_event(), 6.12), so callers read it only when
 * event_count moved.  Unreadable: 0. */
static void read_wakeups(struct power_backend *be, struct ws_source *src)
{
	char rel[96];

	snprintf(rel, sizeof(rel), WAKEUP_DIR "/wakeup%u/wakeup_count", src->id);
	if (read_u64(be, rel, &src->wakeups) < 0)
		src->wakeups = 0;
}

/* One source's files into src (its id set): 0, or -1 if it went away.
 * prev: the same source as read last time, or NULL; *fd its event_count
 * if open (in and out); *named: its name was read (or known). */
static int read_source(struct power_backend *be, struct ws_source *src,
                       const struct ws_source *prev, int *fd, int *named)
{
	char rel[96];

	if (read_events(be, src->id, fd, &src->events, NULL) < 0)
		return -1;
	if (prev && prev->events == src->events)
		src->wakeups = prev->wakeups;
	else
		read_wakeups(be, src);
	*named = 1;
	if (prev) {
		memcpy(src->name, prev->name, sizeof(src->name));
		return 0;
	}
	snprintf(rel, sizeof(rel), WAKEUP_DIR "/wakeup%u/name", src->id);
	if (read_attr(be, rel, src->name, sizeof(src->name)) <= 0) {
		snprintf(src->name, sizeof(src->name), "wakeup%u", src->id);
		*named = 0;
	}
	return 0;
}

/* The sources into s, with the cache (its lock held). */
static void take_sources(struct power_backend *be, struct ws_snapshot *s, const struct ids *ids)
{
	static uint64_t ino[WAKESRC_MAX];    /* of s->src[i], 0: not to be kept */
	static int fd[WAKESRC_MAX];          /* of s->src[i], -1: none */
	unsigned k = 0;

	for (unsigned i = 0; i < ids->n; i++) {
		struct ws_source *src = &s->src[s->nsrc];
		int c = -1, named;

		if (i && ids->id[i] == ids->id[i - 1])
			continue;
		src->id = ids->id[i];
		fd[s->nsrc] = -1;
		if (cache.be == be && (c = cached(&cache, &k, src->id, ids->ino[i])) >= 0) {
			fd[s->nsrc] = cache.fd[c];       /* taken over */
			cache.fd[c] = -1;
		}
		/* A source that goes away while we read is skipped. */
		if (read_source(be, src, c >= 0 ? &cache.src[c] : NULL, &fd[s->nsrc], &named) < 0) {
			if (fd[s->nsrc] >= 0)
				close(fd[s->nsrc]);
			continue;
		}
		/* A name that could not be read is not kept: the next
		 * snapshot tries again. */
		ino[s->nsrc++] = named ? ids->ino[i] : 0;
	}
	cache_sources(&cache, s, ino, fd);
	cache.be = be;
}

/*
 * The files of /sys/power a snapshot reads, kept open like the sources'
 * event_count (one pread() each instead of open, read, close), for the
 * backend that opened them: the four of take_globals, and the kernel's
 * list of counted sources (take_counted).  pm_wakeup_irq reads -ENODATA
 * when no IRQ is recorded, the list -EOVERFLOW when it does not fit in a
 * page: the descriptor is kept, the file is there.
 */
enum { G_IRQ, G_SUCCESS, G_FAIL, G_HW_SLEEP, G_COUNTED, G_N };
static const char *const global_rel[G_N] = {
	"/sys/power/pm_wakeup_irq", "/sys/power/suspend_stats/success",
	"/sys/power/suspend_stats/fail", "/sys/power/suspend_stats/total_hw_sleep",
	"/sys/power/wakeup_count_sources",
};
static struct {
	const struct power_backend *be;
	int fd[G_N];                          /* -1: not open */
} globals = { NULL, { -1, -1, -1, -1, -1 } };

static void globals_close(void)
{
	for (unsigned i = 0; i < G_N; i++) {
		if (globals.fd[i] >= 0)
			close(globals.fd[i]);
		globals.fd[i] = -1;
	}
	globals.be = NULL;
}

/* Global file i into buf, whole (NUL-terminated, newlines kept), through
 * its kept descriptor: its length, or -errno (-ENOSYS: the backend keeps
 * no descriptors). */
static int read_global_raw(struct power_backend *be, unsigned i, char *buf, size_t len)
{
	ssize_t n;

	if (globals.be != be) {
		globals_close();
		globals.be = be;
	}
	if (!be->open_attr)
		return -ENOSYS;
	if (globals.fd[i] < 0) {
		int fd = be->open_attr(be, global_rel[i]);

		if (fd < 0)
			return fd;               /* absent: asked again next time */
		globals.fd[i] = fd;
	}
	n = pread(globals.fd[i], buf, len - 1, 0);
	if (n < 0) {
		int e = errno;

		if (e != ENODATA && e != EOVERFLOW) {    /* gone or broken: opened again */
			close(globals.fd[i]);
			globals.fd[i] = -1;
		}
		return -e;
	}
	buf[n] = 0;
	return (int)n;
}

/* Global file i into buf (a string, newline cut): its length, or -errno. */
static int read_global(struct power_backend *be, unsigned i, char *buf, size_t len)
{
	int r = read_global_raw(be, i, buf, len);

	if (r == -ENOSYS)
		return read_attr(be, global_rel[i], buf, len);
	if (r < 0)
		return r;
	buf[strcspn(buf, "\n")] = 0;
	return (int)strlen(buf);
}

/*
 * /sys/power/wakeup_count_sources (kernel/patches/pm, 0004): the wakeupN
 * of every source active or deactivated since the last successful write
 * of wakeup_count.  Every event since that write moved one of them, so a
 * snapshot taken after the count was read, as the power loop takes its
 * own (wakesrc.h), needs to read only those: the others are as the last
 * snapshot left them.  A full listing is still taken every COUNTED_RELIST
 * snapshots, so that sources removed since are forgotten (the list names
 * only sources that exist) and their descriptors closed.
 */
#define COUNTED_RELIST 1024u

/* The list into buf, newlines kept: its length, or -errno (-EOVERFLOW:
 * more than a page, the kernel's or ours).  A kernel without the file
 * costs a failed open each time. */
static int read_counted(struct power_backend *be, char *buf, size_t len)
{
	int n = read_global_raw(be, G_COUNTED, buf, len);

	if (n == -ENOSYS)
		n = be->read_lines ? be->read_lines(be, global_rel[G_COUNTED], buf, len) : -ENOENT;
	if (n < 0)
		return n;
	return (size_t)n + 1 >= len ? -EOVERFLOW : n;
}

/* The list's ids, sorted: 0, -EBADMSG for a line that is not "wakeupN",
 * -ENOSPC for more than WAKESRC_MAX. */
static int parse_counted(char *buf, struct ids *ids)
{
	ids->n = 0;
	ids->truncated = 0;
	for (char *line = buf, *end; *line; line = end + 1) {
		unsigned had = ids->n;

		end = strchr(line, '\n');
		if (!end)
			return -EBADMSG;         /* the kernel ends every line */
		*end = 0;
		collect_id(ids, line, 0);
		if (ids->truncated)
			return -ENOSPC;
		if (ids->n == had)
			return -EBADMSG;
	}
	sort_ids(ids);
	return 0;
}

/* The index of source id in the cache, or where it would go (*at). */
static int cache_find(uint32_t id, unsigned *at)
{
	unsigned lo = 0, hi = cache.n;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;

		if (cache.src[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	*at = lo;
	return lo < cache.n && cache.src[lo].id == id ? (int)lo : -1;
}

/* Entries from..n-1 of the cache's three arrays moved to start at to. */
static void cache_move(unsigned to, unsigned from)
{
	unsigned n = cache.n - from;

	memmove(&cache.src[to], &cache.src[from], n * sizeof(cache.src[0]));
	memmove(&cache.ino[to], &cache.ino[from], n * sizeof(cache.ino[0]));
	memmove(&cache.fd[to], &cache.fd[from], n * sizeof(cache.fd[0]));
}

static void cache_remove(unsigned k)
{
	if (cache.fd[k] >= 0)
		close(cache.fd[k]);
	cache_move(k, k + 1);
	cache.n--;
}

/* Source id, listed, read into the cache: again if known there, as new
 * if not.  0, or -ENOSPC if the cache is full. */
static int refresh_source(struct power_backend *be, uint32_t id)
{
	unsigned at;
	int k = cache_find(id, &at), named, reopened = 0;
	struct ws_source *src;

	if (k >= 0) {
		uint64_t events = cache.src[k].events;
		/* Without a kept descriptor, a source re-created under the same
		 * number cannot be told from the old one: all of it is read. */
		int fresh = cache.fd[k] < 0;

		src = &cache.src[k];
		if (read_events(be, id, &cache.fd[k], &src->events, &reopened) < 0) {
			cache_remove((unsigned)k);   /* gone */
			return 0;
		}
		if (!fresh && !reopened) {
			if (src->events != events)
				read_wakeups(be, src);
			return 0;
		}
		cache_remove((unsigned)k);
	}
	if (cache.n >= WAKESRC_MAX)
		return -ENOSPC;
	cache_move(at + 1, at);
	cache.n++;
	src = &cache.src[at];
	src->id = id;
	cache.ino[at] = 0;                   /* the next listing reads its name again */
	cache.fd[at] = -1;
	if (read_source(be, src, NULL, &cache.fd[at], &named) < 0)
		cache_remove(at);
	return 0;
}

/* The sources into s from the kernel's list (cache lock held): 0, or
 * -errno if a full listing must be taken instead. */
static int take_counted(struct power_backend *be, struct ws_snapshot *s)
{
	static char buf[8192];
	static struct ids ids;
	int r;

	if (cache.be != be || !cache.synced || cache.since_listing + 1 >= COUNTED_RELIST)
		return -ESTALE;
	r = read_counted(be, buf, sizeof(buf));
	if (r >= 0)
		r = parse_counted(buf, &ids);
	for (unsigned i = 0; r == 0 && i < ids.n; i++)
		if (!i || ids.id[i] != ids.id[i - 1])
			r = refresh_source(be, ids.id[i]);
	if (r < 0)
		return r;                        /* half refreshed: the caller lists them all */
	cache.since_listing++;
	s->flags |= WS_SOURCES;
	s->nsrc = cache.n;
	memcpy(s->src, cache.src, cache.n * sizeof(s->src[0]));
	return 0;
}

static int read_global_u64(struct power_backend *be, unsigned i, uint64_t *v)
{
	char buf[32];
	int r = read_global(be, i, buf, sizeof(buf));

	return r < 0 ? r : parse_u64(buf, v);
}

void wakesrc_forget(void)
{
	pthread_mutex_lock(&cache.m);
	for (unsigned i = 0; i < cache.n; i++)
		if (cache.fd[i] >= 0)
			close(cache.fd[i]);
	cache.n = 0;
	cache.be = NULL;
	cache.synced = 0;
	globals_close();
	pthread_mutex_unlock(&cache.m);
}

void wakesrc_take_globals(struct power_backend *be, struct ws_snapshot *s)
{
	char buf[32];
	uint64_t v;
	int r;

	s->flags &= WS_SOURCES | WS_TRUNCATED;
	s->irq = 0;
	s->success = s->fail = s->hw_sleep_us = 0;
	pthread_mutex_lock(&cache.m);
	/* -ENODATA: the file exists and no wakeup IRQ is recorded. */
	r = read_global(be, G_IRQ, buf, sizeof(buf));
	if (r >= 0 || r == -ENODATA) {
		char *end;
		long irq;

		s->flags |= WS_IRQ_FILE;
		errno = 0;
		irq = r > 0 ? strtol(buf, &end, 10) : 0;
		if (r > 0 && !errno && !*end && irq > 0 && irq <= INT32_MAX) {
			s->flags |= WS_IRQ_SET;
			s->irq = (int32_t)irq;
		}
	}
	if (read_global_u64(be, G_SUCCESS, &s->success) == 0 &&
	    read_global_u64(be, G_FAIL, &s->fail) == 0)
		s->flags |= WS_STATS;
	else
		s->success = s->fail = 0;
	if (read_global_u64(be, G_HW_SLEEP, &v) == 0) {
		s->flags |= WS_HW_SLEEP;
		s->hw_sleep_us = v;
	}
	pthread_mutex_unlock(&cache.m);
}

void wakesrc_take(struct power_backend *be, struct ws_snapshot *s)
{
	static __thread struct ids ids;

	s->flags = 0;
	s->nsrc = 0;
	wakesrc_take_globals(be, s);

	pthread_mutex_lock(&cache.m);
	if (take_counted(be, s) == 0)
		goto out;
	cache.synced = 0;
	ids.n = 0;
	ids.truncated = 0;
	if (!be->list_dir || be->list_dir(be, WAKEUP_DIR, collect_id, &ids) < 0)
		goto out;
	s->flags |= WS_SOURCES | (ids.truncated ? WS_TRUNCATED : 0);
	sort_ids(&ids);
	take_sources(be, s, &ids);
	/* With more than WAKESRC_MAX, a listed source may be one not kept. */
	cache.synced = !ids.truncated;
	cache.since_listing = 0;
out:
	pthread_mutex_unlock(&cache.m);
}

void wakesrc_stamp(struct ws_snapshot *s, struct power_clock *clk)
{
	struct timespec ts;

	s->mono_ns = clk->mono_ns(clk);
	s->boot_ns = clk->boot_ns(clk);
	clock_gettime(CLOCK_REALTIME, &ts);
	s->real_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct moved {
	const struct ws_source *s;
	uint64_t dev;     /* event_count increase */
	int woke;         /* wakeup_count increased */
};

/* Does a come before b among the moved sources? */
static int before(const struct moved *a, const struct moved *b)
{
	if (a->woke != b->woke)
		return a->woke;
	if (a->dev != b->dev)
		return a->dev > b->dev;
	return a->s->id < b->s->id;
}

void wakesrc_diff(const struct ws_snapshot *a, const struct ws_snapshot *b, int resumed,
                  struct ws_diff *d)
{
	static __thread struct moved mv[WAKESRC_MAX];
	unsigned i = 0, j = 0, n = 0;

	memset(d, 0, sizeof(*d));
	if (!(b->flags & WS_IRQ_FILE))
		d->cause |= WL_LC_NO_IRQ_FILE;
	else if ((b->flags & WS_IRQ_SET) &&
	         (resumed || !(a->flags & WS_IRQ_SET) || a->irq != b->irq)) {
		d->cause |= WL_LC_IRQ;
		d->irq = b->irq;
	}
	if (!(a->flags & WS_SOURCES) || !(b->flags & WS_SOURCES)) {
		d->cause |= WL_LC_NO_SOURCES;
		return;
	}
	if ((a->flags | b->flags) & WS_TRUNCATED)
		d->cause |= WL_LC_SRC_TRUNC;
	/* Both sorted by id: merge. */
	for (j = 0; j < b->nsrc && j < WAKESRC_MAX; j++) {
		const struct ws_source *y = &b->src[j];
		const struct ws_source *x = NULL;

		while (i < a->nsrc && a->src[i].id < y->id)
			i++;
		if (i < a->nsrc && a->src[i].id == y->id && !strcmp(a->src[i].name, y->name) &&
		    a->src[i].events <= y->events && a->src[i].wakeups <= y->wakeups)
			x = &a->src[i];
		if (x ? (y->events == x->events && y->wakeups == x->wakeups)
		      : (!y->events && !y->wakeups))
			continue;
		mv[n].s = y;
		mv[n].dev = y->events - (x ? x->events : 0);
		mv[n].woke = y->wakeups != (x ? x->wakeups : 0);
		n++;
	}
	/* Insertion sort (no allocation; usually few moved). */
	for (unsigned k = 1; k < n; k++) {
		struct moved x = mv[k];
		unsigned m = k;

		for (; m > 0 && before(&x, &mv[m - 1]); m--)
			mv[m] = mv[m - 1];
		mv[m] = x;
	}
	d->nmoved = n;
	for (unsigned k = 0; k < n && k < WL_LEDGER_SOURCES; k++)
		snprintf(d->names[d->nnamed++], WL_LEDGER_SRC_NAME, "%s", mv[k].s->name);
	if (n)
		d->cause |= WL_LC_SOURCES;
}
