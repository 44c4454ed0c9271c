/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The wake ledger's ring (ledger.h, docs/ledger.md).  No I/O here. */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "ledger.h"

enum phase {
	P_IDLE,                         /* no attempt in progress */
	P_BEGUN,                        /* begun, suspend() not returned */
	P_RETURNED,                     /* returned, cause not filled in yet */
};

struct ledger {
	pthread_mutex_t m;
	unsigned cap;
	uint64_t window_ns;
	uint64_t next_seq;              /* of the next record; the first is 1 */
	int phase;                      /* of the last record: enum phase */
	struct ws_snapshot before;      /* of the open attempt */
	struct wl_ledger_record ring[]; /* record seq at ring[(seq - 1) % cap] */
};

size_t ledger_bytes(unsigned cap)
{
	return sizeof(struct ledger) + (size_t)cap * sizeof(struct wl_ledger_record);
}

struct ledger *ledger_new(unsigned cap, unsigned window_ms)
{
	struct ledger *l;

	if (cap < 1 || cap > LEDGER_MAX_CAP)
		return NULL;
	l = calloc(1, ledger_bytes(cap));
	if (!l)
		return NULL;
	pthread_mutex_init(&l->m, NULL);
	l->cap = cap;
	l->window_ns = (uint64_t)window_ms * 1000000u;
	l->next_seq = 1;
	return l;
}

void ledger_free(struct ledger *l)
{
	if (!l)
		return;
	pthread_mutex_destroy(&l->m);
	free(l);
}

void ledger_set_window(struct ledger *l, unsigned window_ms)
{
	pthread_mutex_lock(&l->m);
	l->window_ns = (uint64_t)window_ms * 1000000u;
	pthread_mutex_unlock(&l->m);
}

static struct wl_ledger_record *rec_of(struct ledger *l, uint64_t seq)
{
	return &l->ring[(seq - 1) % l->cap];
}

/* The newest record, or NULL (lock held). */
static struct wl_ledger_record *last(struct ledger *l)
{
	return l->next_seq > 1 ? rec_of(l, l->next_seq - 1) : NULL;
}

static void close_window(struct wl_ledger_record *r)
{
	if (r && r->claim_state == WL_LCS_OPEN)
		r->claim_state = r->nclaims_total ? WL_LCS_CLAIMED : WL_LCS_UNCLAIMED;
}

static void copy_name(char *dst, const char *src, size_t len);

/* The awake period's last holder into a new record: a name only with a
 * kind that has one, so that the wire form's rule holds (ledger_rec.c). */
static void set_ended_by(struct wl_ledger_record *r, const struct ledger_holder *by)
{
	r->ended_kind = WL_LEK_NONE;
	if (!by || (by->kind != WL_LEK_CLIENT && by->kind != WL_LEK_SOURCE) || !by->name[0] ||
	    !by->holders)
		return;
	r->ended_kind = by->kind;
	r->ended_holders = by->holders > UINT8_MAX ? UINT8_MAX : (uint8_t)by->holders;
	copy_name(r->ended_by, by->name, WAKELOCK_NAME_MAX);
}

/* A new record after the last (lock held). */
static struct wl_ledger_record *new_record(struct ledger *l)
{
	struct wl_ledger_record *r = last(l);

	if (l->phase == P_BEGUN && r) {
		/* Begun twice without an end: the first never finished. */
		r->outcome = WL_LO_FAILED;
		r->err = ECANCELED;
	}
	/* (P_RETURNED: its cause was never filled in and stays unknown.) */
	close_window(r);
	l->phase = P_IDLE;
	r = rec_of(l, l->next_seq);
	memset(r, 0, sizeof(*r));
	r->seq = l->next_seq++;
	return r;
}

void ledger_attempt_begin(struct ledger *l, const struct ws_snapshot *before)
{
	ledger_attempt_begin_by(l, before, NULL);
}

void ledger_attempt_begin_by(struct ledger *l, const struct ws_snapshot *before,
                             const struct ledger_holder *by)
{
	struct wl_ledger_record *r;

	pthread_mutex_lock(&l->m);
	r = new_record(l);
	r->outcome = WL_LO_OPEN;
	r->start_real_ns = before->real_ns;
	r->start_mono_ns = before->mono_ns;
	r->start_boot_ns = before->boot_ns;
	set_ended_by(r, by);
	/* The header and the sources it has: a full copy would move all
	 * WAKESRC_MAX entries (30 KiB) for every attempt. */
	memcpy(&l->before, before, offsetof(struct ws_snapshot, src));
	memcpy(l->before.src, before->src, before->nsrc * sizeof(before->src[0]));
	l->phase = P_BEGUN;
	pthread_mutex_unlock(&l->m);
}

/*
 * Time asleep (docs/ledger.md): CLOCK_BOOTTIME runs through suspend and
 * CLOCK_MONOTONIC does not, so the growth of their difference across the
 * attempt is the time the kernel accounted as asleep.  When that is below
 * LEDGER_CLOCKS_MIN_NS (a kernel that could not measure the sleep, as
 * s2idle without a suspend-capable clocksource or persistent clock) and
 * suspend_stats/total_hw_sleep moved, its increase (time in the hardware
 * sleep state, microseconds) is used instead.
 */
static void set_asleep(struct wl_ledger_record *r, const struct ws_snapshot *a,
                       const struct ws_snapshot *b)
{
	uint64_t da = a->boot_ns - a->mono_ns, db = r->end_boot_ns - r->end_mono_ns;
	uint64_t d = db > da ? db - da : 0;

	if (d >= LEDGER_CLOCKS_MIN_NS) {
		r->asleep_ns = d;
		r->asleep_src = WL_LAS_CLOCKS;
	} else if (b && (a->flags & b->flags & WS_HW_SLEEP) && b->hw_sleep_us > a->hw_sleep_us) {
		r->asleep_ns = (b->hw_sleep_us - a->hw_sleep_us) * 1000u;
		r->asleep_src = WL_LAS_HW_SLEEP;
	} else {
		r->asleep_ns = d;
		r->asleep_src = d ? WL_LAS_CLOCKS : WL_LAS_NONE;
	}
}

static void copy_name(char *dst, const char *src, size_t len)
{
	size_t n = src ? strnlen(src, len - 1) : 0;

	if (n)
		memcpy(dst, src, n);
	dst[n] = 0;
}

void ledger_attempt_returned(struct ledger *l, int sr, uint64_t mono_ns, uint64_t boot_ns)
{
	struct wl_ledger_record *r;

	pthread_mutex_lock(&l->m);
	r = last(l);
	if (l->phase != P_BEGUN || !r) {
		pthread_mutex_unlock(&l->m);
		return;
	}
	l->phase = P_RETURNED;
	r->end_mono_ns = mono_ns;
	r->end_boot_ns = boot_ns;
	r->outcome = sr == 0 ? WL_LO_RESUMED : sr == -EBUSY ? WL_LO_ABORTED : WL_LO_FAILED;
	r->err = sr < 0 ? -sr : 0;
	set_asleep(r, &l->before, NULL);     /* the clocks' word until the cause */
	/* A failed attempt woke nobody: nothing to claim (not even what was
	 * taken while it ran). */
	r->claim_state = r->outcome == WL_LO_FAILED ? WL_LCS_NONE : WL_LCS_OPEN;
	if (r->outcome == WL_LO_FAILED)
		r->nclaims = r->nclaims_total = 0;
	pthread_mutex_unlock(&l->m);
}

void ledger_attempt_cause(struct ledger *l, const struct ws_snapshot *after,
                          const struct ledger_alarm *alarm)
{
	static __thread struct ws_diff d;
	struct wl_ledger_record *r;

	pthread_mutex_lock(&l->m);
	r = last(l);
	if (l->phase != P_RETURNED || !r) {
		pthread_mutex_unlock(&l->m);
		return;
	}
	l->phase = P_IDLE;
	set_asleep(r, &l->before, after);
	wakesrc_diff(&l->before, after, r->outcome == WL_LO_RESUMED, &d);
	r->cause = d.cause;
	r->wakeup_irq = d.irq;
	r->nsources_moved = d.nmoved > UINT16_MAX ? UINT16_MAX : (uint16_t)d.nmoved;
	r->nsources = (uint8_t)d.nnamed;
	for (unsigned i = 0; i < d.nnamed; i++)
		copy_name(r->sources[i], d.names[i], WL_LEDGER_SRC_NAME);
	if (r->outcome != WL_LO_FAILED && alarm && alarm->client && alarm->name &&
	    alarm->due_boot_ns <= r->end_boot_ns + LEDGER_ALARM_SLACK_NS) {
		r->cause |= WL_LC_ALARM;
		copy_name(r->alarm_client, alarm->client, WAKELOCK_NAME_MAX);
		copy_name(r->alarm_name, alarm->name, WAKELOCK_NAME_MAX);
	}
	pthread_mutex_unlock(&l->m);
}

void ledger_attempt_state(struct ledger *l, const char *state)
{
	struct wl_ledger_record *r;

	pthread_mutex_lock(&l->m);
	r = last(l);
	if (l->phase == P_BEGUN && r)
		r->state = (uint8_t)wl_ledger_state_of(state);
	pthread_mutex_unlock(&l->m);
}

void ledger_attempt_hibernate_due(struct ledger *l)
{
	struct wl_ledger_record *r;

	pthread_mutex_lock(&l->m);
	r = last(l);
	if (l->phase == P_IDLE && r && r->outcome != WL_LO_CRITICAL && r->outcome != WL_LO_FAILED)
		r->cause |= WL_LC_HIBERNATE;
	pthread_mutex_unlock(&l->m);
}

void ledger_critical(struct ledger *l, const struct ledger_critical *c)
{
	struct wl_ledger_record *r;
	uint64_t before, after;

	pthread_mutex_lock(&l->m);
	r = new_record(l);
	r->outcome = WL_LO_CRITICAL;
	r->err = c->err;
	r->start_real_ns = c->start_real_ns;
	r->start_mono_ns = c->start_mono_ns;
	r->start_boot_ns = c->start_boot_ns;
	r->end_mono_ns = c->end_mono_ns;
	r->end_boot_ns = c->end_boot_ns;
	/* A hibernation that resumed slept as a suspend does. */
	before = c->start_boot_ns - c->start_mono_ns;
	after = c->end_boot_ns - c->end_mono_ns;
	r->asleep_ns = after > before ? after - before : 0;
	r->asleep_src = r->asleep_ns ? WL_LAS_CLOCKS : WL_LAS_NONE;
	r->critical_capacity = (int32_t)(c->capacity > 100 ? 100 : c->capacity);
	r->critical_action = (uint8_t)c->action;
	pthread_mutex_unlock(&l->m);
}

void ledger_attempt_end(struct ledger *l, int sr, const struct ws_snapshot *after,
                        const struct ledger_alarm *alarm)
{
	ledger_attempt_returned(l, sr, after->mono_ns, after->boot_ns);
	ledger_attempt_cause(l, after, alarm);
}

int ledger_claim(struct ledger *l, const char *client, const char *hold, uint64_t t)
{
	struct wl_ledger_record *r;
	struct wl_ledger_claim *c;
	uint64_t lat;
	unsigned i;

	if (!client)
		client = "";
	if (!hold)
		hold = "";
	pthread_mutex_lock(&l->m);
	r = last(l);
	if (r && l->phase == P_BEGUN) {
		/* Taken while the attempt has not returned yet (the daemon's
		 * alarm hold, taken as the timer fires during the resume, may
		 * beat the power thread): a claim of this attempt, latency 0. */
		lat = 0;
	} else if (!r || r->claim_state != WL_LCS_OPEN) {
		pthread_mutex_unlock(&l->m);
		return 0;
	} else {
		lat = t > r->end_mono_ns ? t - r->end_mono_ns : 0;
	}
	/* Too late to count; the window itself closes by time (ledger_tick),
	 * not here: another hold of the same scan may still be in time. */
	if (lat >= l->window_ns) {
		pthread_mutex_unlock(&l->m);
		return 0;
	}
	for (i = 0; i < r->nclaims; i++) {
		c = &r->claims[i];
		if (!strncmp(c->client, client, WAKELOCK_NAME_MAX - 1) &&
		    !strncmp(c->hold, hold, WAKELOCK_NAME_MAX - 1)) {
			/* The same hold again: its first time stands, unless
			 * this one is earlier (claims may be reported late). */
			if (lat < c->latency_ns) {
				c->latency_ns = lat;
				for (; i > 0 && r->claims[i - 1].latency_ns > lat; i--) {
					struct wl_ledger_claim t2 = r->claims[i - 1];
					r->claims[i - 1] = r->claims[i];
					r->claims[i] = t2;
				}
			}
			pthread_mutex_unlock(&l->m);
			return 1;
		}
	}
	if (r->nclaims_total < UINT16_MAX)
		r->nclaims_total++;
	/* Keep the earliest WL_LEDGER_CLAIMS, sorted by latency. */
	if (r->nclaims == WL_LEDGER_CLAIMS) {
		if (lat >= r->claims[WL_LEDGER_CLAIMS - 1].latency_ns) {
			pthread_mutex_unlock(&l->m);
			return 1;
		}
		r->nclaims--;
	}
	for (i = r->nclaims; i > 0 && r->claims[i - 1].latency_ns > lat; i--)
		r->claims[i] = r->claims[i - 1];
	c = &r->claims[i];
	copy_name(c->client, client, WAKELOCK_NAME_MAX);
	copy_name(c->hold, hold, WAKELOCK_NAME_MAX);
	c->latency_ns = lat;
	r->nclaims++;
	pthread_mutex_unlock(&l->m);
	return 1;
}

void ledger_tick(struct ledger *l, uint64_t now)
{
	struct wl_ledger_record *r;

	pthread_mutex_lock(&l->m);
	r = last(l);
	if (r && r->claim_state == WL_LCS_OPEN && now >= r->end_mono_ns &&
	    now - r->end_mono_ns >= l->window_ns)
		close_window(r);
	pthread_mutex_unlock(&l->m);
}

uint64_t ledger_window_end(struct ledger *l)
{
	struct wl_ledger_record *r;
	uint64_t t = 0;

	pthread_mutex_lock(&l->m);
	r = last(l);
	if (r && r->claim_state == WL_LCS_OPEN)
		t = r->end_mono_ns + l->window_ns;
	pthread_mutex_unlock(&l->m);
	return t;
}

static uint64_t oldest(const struct ledger *l)
{
	uint64_t n = l->next_seq - 1;
	return n > l->cap ? l->next_seq - l->cap : 1;
}

uint64_t ledger_next_seq(struct ledger *l)
{
	uint64_t v;

	pthread_mutex_lock(&l->m);
	v = l->next_seq;
	pthread_mutex_unlock(&l->m);
	return v;
}

uint64_t ledger_oldest_seq(struct ledger *l)
{
	uint64_t v;

	pthread_mutex_lock(&l->m);
	v = oldest(l);
	pthread_mutex_unlock(&l->m);
	return v;
}

size_t ledger_copy(struct ledger *l, uint64_t from, struct wl_ledger_record *out, size_t max)
{
	size_t n = 0;

	pthread_mutex_lock(&l->m);
	if (from < oldest(l))
		from = oldest(l);
	for (uint64_t s = from; s < l->next_seq && n < max; s++)
		out[n++] = *rec_of(l, s);
	pthread_mutex_unlock(&l->m);
	return n;
}

void ledger_foreach(struct ledger *l, int (*fn)(const struct wl_ledger_record *r, void *arg),
                    void *arg)
{
	pthread_mutex_lock(&l->m);
	for (uint64_t s = oldest(l); s < l->next_seq; s++)
		if (fn(rec_of(l, s), arg))
			break;
	pthread_mutex_unlock(&l->m);
}
