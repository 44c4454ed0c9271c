/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Wake-cause snapshots and their difference (wakesrc.h, docs/ledger.md). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "wakesrc.h"

#define WAKEUP_DIR "/sys/class/wakeup"

static int read_attr(struct power_backend *be, const char *rel, char *buf, size_t len)
{
	if (!be->read_attr)
		return -ENOENT;
	return be->read_attr(be, rel, buf, len);
}

/* A decimal number filling the whole file ("123"): 0 or -EBADMSG. */
static int read_u64(struct power_backend *be, const char *rel, uint64_t *v)
{
	char buf[32], *end;
	int r = read_attr(be, rel, buf, sizeof(buf));

	if (r < 0)
		return r;
	if (buf[0] < '0' || buf[0] > '9')
		return -EBADMSG;
	errno = 0;
	*v = strtoull(buf, &end, 10);
	if (errno || *end)
		return -EBADMSG;
	return 0;
}

struct ids {
	uint32_t id[WAKESRC_MAX];
	uint64_t ino[WAKESRC_MAX];           /* of each id's directory, 0: unknown */
	unsigned n;
	int truncated;
};

/*
 * The names of the sources listed last time, by id and directory inode:
 * a name does not change while its directory lives, so a source listed
 * again with the same nonzero inode keeps its name without a read (one
 * file in three of a scan).  The kernel reuses wakeupN numbers, but a
 * re-created directory has a new inode, so a new source under an old
 * number is read.  The power loop's thread only (both its snapshots
 * share it), bounded like a snapshot.
 */
struct name_cache {
	const struct power_backend *be;      /* whose listing it is */
	uint32_t id[WAKESRC_MAX];
	uint64_t ino[WAKESRC_MAX];
	char name[WAKESRC_MAX][WL_LEDGER_SRC_NAME];
	unsigned n;                          /* sorted by id */
};

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

/* The cached name of id if its directory is the one named before (*k: a
 * cursor, the cache being walked in id order); NULL if it must be read. */
static const char *cached_name(const struct name_cache *c, unsigned *k, uint32_t id, uint64_t ino)
{
	while (*k < c->n && c->id[*k] < id)
		(*k)++;
	if (!ino || *k >= c->n || c->id[*k] != id || c->ino[*k] != ino)
		return NULL;
	return c->name[*k];
}

/* The cache becomes what this snapshot listed (sorted by id, as s is). */
static void cache_names(struct name_cache *c, const struct ws_snapshot *s, const uint64_t *ino)
{
	c->n = 0;
	for (unsigned i = 0; i < s->nsrc; i++) {
		if (!ino[i])
			continue;
		c->id[c->n] = s->src[i].id;
		c->ino[c->n] = ino[i];
		memcpy(c->name[c->n], s->src[i].name, WL_LEDGER_SRC_NAME);
		c->n++;
	}
}

void wakesrc_take(struct power_backend *be, struct ws_snapshot *s)
{
	static __thread struct ids ids;
	static __thread struct name_cache names;
	static __thread uint64_t ino[WAKESRC_MAX];     /* of s->src[i] */
	char rel[96], buf[32];
	unsigned k = 0;
	uint64_t v;
	int r;

	s->flags = 0;
	s->irq = 0;
	s->nsrc = 0;
	s->success = s->fail = s->hw_sleep_us = 0;

	/* -ENODATA: the file exists and no wakeup IRQ is recorded. */
	r = read_attr(be, "/sys/power/pm_wakeup_irq", buf, sizeof(buf));
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

	if (read_u64(be, "/sys/power/suspend_stats/success", &s->success) == 0 &&
	    read_u64(be, "/sys/power/suspend_stats/fail", &s->fail) == 0)
		s->flags |= WS_STATS;
	if (read_u64(be, "/sys/power/suspend_stats/total_hw_sleep", &v) == 0) {
		s->flags |= WS_HW_SLEEP;
		s->hw_sleep_us = v;
	}

	ids.n = 0;
	ids.truncated = 0;
	if (!be->list_dir || be->list_dir(be, WAKEUP_DIR, collect_id, &ids) < 0)
		return;
	s->flags |= WS_SOURCES | (ids.truncated ? WS_TRUNCATED : 0);
	sort_ids(&ids);
	for (unsigned i = 0; i < ids.n; i++) {
		struct ws_source *src = &s->src[s->nsrc];
		const char *known;

		if (i && ids.id[i] == ids.id[i - 1])
			continue;
		src->id = ids.id[i];
		/* A source that goes away while we read is skipped. */
		snprintf(rel, sizeof(rel), WAKEUP_DIR "/wakeup%u/event_count", src->id);
		if (read_u64(be, rel, &src->events) < 0)
			continue;
		snprintf(rel, sizeof(rel), WAKEUP_DIR "/wakeup%u/wakeup_count", src->id);
		if (read_u64(be, rel, &src->wakeups) < 0)
			src->wakeups = 0;
		known = names.be == be ? cached_name(&names, &k, src->id, ids.ino[i]) : NULL;
		snprintf(rel, sizeof(rel), WAKEUP_DIR "/wakeup%u/name", src->id);
		ino[s->nsrc] = ids.ino[i];
		if (known) {
			memcpy(src->name, known, sizeof(src->name));
		} else if (read_attr(be, rel, src->name, sizeof(src->name)) <= 0) {
			/* Not kept: the next scan tries to read it again. */
			snprintf(src->name, sizeof(src->name), "wakeup%u", src->id);
			ino[s->nsrc] = 0;
		}
		s->nsrc++;
	}
	cache_names(&names, s, ino);
	names.be = be;
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
