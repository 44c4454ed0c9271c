/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The wake ledger's record: names, JSON, summary, wire form (wl_ledger.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "wl_json.h"
#include "wl_ledger.h"

_Static_assert(sizeof(struct wl_ledger_record) == WL_LEDGER_RECORD_BYTES,
               "docs/ledger.md states the record's size: update both");

const char *wl_ledger_outcome_name(unsigned o)
{
	static const char *const n[] = { "open", "resumed", "aborted", "failed", "critical" };
	return o < sizeof(n) / sizeof(n[0]) ? n[o] : "?";
}

const char *wl_ledger_claim_state_name(unsigned s)
{
	static const char *const n[] = { "none", "open", "claimed", "unclaimed" };
	return s < sizeof(n) / sizeof(n[0]) ? n[s] : "?";
}

const char *wl_ledger_asleep_src_name(unsigned s)
{
	static const char *const n[] = { "none", "clocks", "hw_sleep" };
	return s < sizeof(n) / sizeof(n[0]) ? n[s] : "?";
}

const char *wl_ledger_ended_kind_name(unsigned k)
{
	static const char *const n[] = { "unknown", "none", "client", "source" };
	return k < sizeof(n) / sizeof(n[0]) ? n[k] : "?";
}

const char *wl_ledger_critical_action_name(unsigned a)
{
	static const char *const n[] = { "none", "hibernate", "poweroff" };
	return a < sizeof(n) / sizeof(n[0]) ? n[a] : "?";
}

static const char *const state_names[] = { NULL, "freeze", "mem", "disk" };

const char *wl_ledger_state_name(unsigned s)
{
	return s < sizeof(state_names) / sizeof(state_names[0]) ? state_names[s] : NULL;
}

unsigned wl_ledger_state_of(const char *word)
{
	for (unsigned i = 1; i < sizeof(state_names) / sizeof(state_names[0]); i++)
		if (!strcmp(word, state_names[i]))
			return i;
	return WL_LS_UNKNOWN;
}

void wl_ledger_cause_key(const struct wl_ledger_record *r, char *buf, size_t len)
{
	if (!len)
		return;
	if (r->outcome == WL_LO_CRITICAL)
		snprintf(buf, len, "battery %u%%: %s", (unsigned)r->critical_capacity,
		         wl_ledger_critical_action_name(r->critical_action));
	else if (r->cause & WL_LC_HIBERNATE)
		snprintf(buf, len, "hibernate_after");
	else if (r->cause & WL_LC_ALARM)
		snprintf(buf, len, "alarm %.*s/%.*s", (int)WAKELOCK_NAME_MAX, r->alarm_client,
		         (int)WAKELOCK_NAME_MAX, r->alarm_name);
	else if ((r->cause & WL_LC_SOURCES) && r->nsources)
		snprintf(buf, len, "source %.*s", (int)WL_LEDGER_SRC_NAME, r->sources[0]);
	else if (r->cause & WL_LC_IRQ)
		snprintf(buf, len, "irq %d", (int)r->wakeup_irq);
	else
		snprintf(buf, len, "unknown");
}

static unsigned long long ms(uint64_t ns)
{
	return (unsigned long long)(ns / 1000000u);
}

/* A name field as a JSON string, never past its array. */
static void json_name(FILE *f, const char *s, size_t max)
{
	char tmp[WL_LEDGER_CAUSE_MAX + 1];
	size_t n = strnlen(s, max < sizeof(tmp) - 1 ? max : sizeof(tmp) - 1);

	memcpy(tmp, s, n);
	tmp[n] = 0;
	wl_json_str(f, tmp);
}

void wl_ledger_json_record(FILE *f, const struct wl_ledger_record *r)
{
	char key[WL_LEDGER_CAUSE_MAX], nb[16];
	unsigned ns = r->nsources < WL_LEDGER_SOURCES ? r->nsources : WL_LEDGER_SOURCES;
	unsigned nc = r->nclaims < WL_LEDGER_CLAIMS ? r->nclaims : WL_LEDGER_CLAIMS;

	fprintf(f, "{\"seq\":%llu,\"outcome\":\"%s\",\"errno\":", (unsigned long long)r->seq,
	        wl_ledger_outcome_name(r->outcome));
	if (r->err)
		wl_json_str(f, wl_errno_name(r->err, nb, sizeof(nb)));
	else
		fputs("null", f);
	fprintf(f, ",\"start_realtime_ms\":%llu,\"start_boottime_ms\":%llu,\"end_boottime_ms\":%llu,"
	        "\"asleep_ms\":%llu,\"asleep_source\":\"%s\",\"cause\":",
	        ms(r->start_real_ns), ms(r->start_boot_ns), ms(r->end_boot_ns), ms(r->asleep_ns),
	        wl_ledger_asleep_src_name(r->asleep_src));
	wl_ledger_cause_key(r, key, sizeof(key));
	wl_json_str(f, key);
	fputs(",\"irq\":", f);
	if (r->cause & WL_LC_IRQ)
		fprintf(f, "%d", (int)r->wakeup_irq);
	else
		fputs((r->cause & WL_LC_NO_IRQ_FILE) ? "\"unknown\"" : "null", f);
	fputs(",\"sources\":", f);
	if (r->cause & WL_LC_NO_SOURCES) {
		fputs("\"unknown\"", f);
	} else {
		fputc('[', f);
		for (unsigned i = 0; i < ns; i++) {
			if (i)
				fputc(',', f);
			json_name(f, r->sources[i], WL_LEDGER_SRC_NAME);
		}
		fputc(']', f);
	}
	fprintf(f, ",\"sources_moved\":%u,\"sources_truncated\":%s,\"alarm\":", r->nsources_moved,
	        (r->cause & WL_LC_SRC_TRUNC) ? "true" : "false");
	if (r->cause & WL_LC_ALARM) {
		fputs("{\"client\":", f);
		json_name(f, r->alarm_client, WAKELOCK_NAME_MAX);
		fputs(",\"name\":", f);
		json_name(f, r->alarm_name, WAKELOCK_NAME_MAX);
		fputc('}', f);
	} else {
		fputs("null", f);
	}
	fprintf(f, ",\"claim\":\"%s\",\"claims_total\":%u,\"claims\":[",
	        wl_ledger_claim_state_name(r->claim_state), r->nclaims_total);
	for (unsigned i = 0; i < nc; i++) {
		fputs(i ? ",{\"client\":" : "{\"client\":", f);
		json_name(f, r->claims[i].client, WAKELOCK_NAME_MAX);
		fputs(",\"hold\":", f);
		json_name(f, r->claims[i].hold, WAKELOCK_NAME_MAX);
		fprintf(f, ",\"latency_us\":%llu}", (unsigned long long)(r->claims[i].latency_ns / 1000u));
	}
	/* The name is null when no holder is named (none, unknown): a
	 * client may be called "none". */
	fputs("],\"ended_by\":", f);
	if (r->ended_kind == WL_LEK_CLIENT || r->ended_kind == WL_LEK_SOURCE)
		json_name(f, r->ended_by, WAKELOCK_NAME_MAX);
	else
		fputs("null", f);
	fprintf(f, ",\"ended_by_kind\":\"%s\",\"ended_holders\":%u,\"state\":",
	        wl_ledger_ended_kind_name(r->ended_kind), r->ended_holders);
	if (r->outcome != WL_LO_CRITICAL && wl_ledger_state_name(r->state))
		fprintf(f, "\"%s\"}", wl_ledger_state_name(r->state));
	else
		fputs("null}", f);
}

/* --- summary -------------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

uint64_t wl_ledger_percentile(uint64_t *v, size_t n, unsigned p)
{
	size_t rank;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_u64);
	if (p > 100)
		p = 100;
	rank = (size_t)(((unsigned long long)p * n + 99) / 100);   /* ceil(p n / 100) */
	return v[rank ? rank - 1 : 0];
}

static int cmp_stat(const void *a, const void *b)
{
	const struct wl_ledger_cause_stat *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->cause, y->cause);
}

int wl_ledger_summarize(const struct wl_ledger_record *r, size_t n, struct wl_ledger_summary *out)
{
	/* Per record: the index of its cause in out->c, or -1. */
	int *idx = n ? malloc(n * sizeof(*idx)) : NULL;
	uint64_t *lat = n ? malloc(n * sizeof(*lat)) : NULL;
	uint64_t *slp = n ? malloc(n * sizeof(*slp)) : NULL;

	memset(out, 0, sizeof(*out));
	if (n && (!idx || !lat || !slp)) {
		free(idx);
		free(lat);
		free(slp);
		return -ENOMEM;
	}
	out->records = (uint32_t)n;
	for (size_t i = 0; i < n; i++) {
		char key[WL_LEDGER_CAUSE_MAX];
		struct wl_ledger_cause_stat *c;
		uint32_t k;

		idx[i] = -1;
		if (r[i].outcome == WL_LO_FAILED) {
			out->failed++;
			continue;
		}
		if (r[i].outcome != WL_LO_RESUMED && r[i].outcome != WL_LO_ABORTED &&
		    r[i].outcome != WL_LO_CRITICAL) {
			out->open++;
			continue;
		}
		wl_ledger_cause_key(&r[i], key, sizeof(key));
		for (k = 0; k < out->ncauses; k++)
			if (!strcmp(out->c[k].cause, key))
				break;
		if (k == out->ncauses) {
			if (out->ncauses >= WL_LEDGER_SUMMARY_MAX - 1) {
				/* The last slot collects every cause that did not fit
				 * (no key is spelt "(other)"). */
				for (k = 0; k < out->ncauses; k++)
					if (!strcmp(out->c[k].cause, "(other)"))
						break;
				if (k == out->ncauses)
					snprintf(out->c[out->ncauses++].cause, WL_LEDGER_CAUSE_MAX, "(other)");
			} else {
				snprintf(out->c[out->ncauses++].cause, WL_LEDGER_CAUSE_MAX, "%s", key);
			}
		}
		c = &out->c[k];
		idx[i] = (int)k;
		c->count++;
		if (r[i].outcome == WL_LO_RESUMED)
			c->resumed++;
		else if (r[i].outcome == WL_LO_ABORTED)
			c->aborted++;
		if (r[i].claim_state == WL_LCS_CLAIMED)
			c->claimed++;
		else if (r[i].claim_state == WL_LCS_UNCLAIMED)
			c->unclaimed++;
	}
	for (uint32_t k = 0; k < out->ncauses; k++) {
		size_t nl = 0, ns = 0;

		for (size_t i = 0; i < n; i++) {
			if (idx[i] != (int)k)
				continue;
			if (r[i].claim_state == WL_LCS_CLAIMED && r[i].nclaims)
				lat[nl++] = r[i].claims[0].latency_ns;
			if (r[i].outcome == WL_LO_RESUMED)
				slp[ns++] = r[i].asleep_ns;
		}
		out->c[k].claim_p50_ns = wl_ledger_percentile(lat, nl, 50);
		out->c[k].claim_p99_ns = wl_ledger_percentile(lat, nl, 99);
		out->c[k].asleep_p50_ns = wl_ledger_percentile(slp, ns, 50);
	}
	qsort(out->c, out->ncauses, sizeof(out->c[0]), cmp_stat);
	free(idx);
	free(lat);
	free(slp);
	return 0;
}

void wl_ledger_json_summary(FILE *f, const struct wl_ledger_summary *s)
{
	fprintf(f, "{\"records\":%u,\"failed\":%u,\"open\":%u,\"causes\":[", s->records, s->failed,
	        s->open);
	for (uint32_t k = 0; k < s->ncauses && k < WL_LEDGER_SUMMARY_MAX; k++) {
		const struct wl_ledger_cause_stat *c = &s->c[k];

		fputs(k ? ",{\"cause\":" : "{\"cause\":", f);
		json_name(f, c->cause, WL_LEDGER_CAUSE_MAX);
		fprintf(f, ",\"count\":%u,\"resumed\":%u,\"aborted\":%u,\"claimed\":%u,"
		        "\"unclaimed\":%u,\"claim_p50_us\":", c->count, c->resumed, c->aborted,
		        c->claimed, c->unclaimed);
		if (c->claimed)
			fprintf(f, "%llu,\"claim_p99_us\":%llu",
			        (unsigned long long)(c->claim_p50_ns / 1000u),
			        (unsigned long long)(c->claim_p99_ns / 1000u));
		else
			fputs("null,\"claim_p99_us\":null", f);
		fputs(",\"asleep_p50_ms\":", f);
		if (c->resumed)
			fprintf(f, "%llu}", ms(c->asleep_p50_ns));
		else
			fputs("null}", f);
	}
	fputs("]}", f);
}

/* --- wire form ------------------------------------------------------------ */

struct wbuf {
	uint8_t *p;
	size_t len, off;
	int bad;
};

static void put(struct wbuf *w, uint64_t v, unsigned bytes)
{
	if (w->off + bytes > w->len) {
		w->bad = 1;
		return;
	}
	for (unsigned i = 0; i < bytes; i++)
		w->p[w->off++] = (uint8_t)(v >> (8 * i));
}

static void put_name(struct wbuf *w, const char *s, size_t max)
{
	size_t n = strnlen(s, max - 1);

	put(w, n, 1);
	if (w->bad || w->off + n > w->len) {
		w->bad = 1;
		return;
	}
	memcpy(w->p + w->off, s, n);
	w->off += n;
}

size_t wl_ledger_encode_version(const struct wl_ledger_record *r, unsigned version, uint8_t *buf,
                                size_t len)
{
	struct wbuf w = { buf, len, 0, 0 };
	unsigned ns = r->nsources < WL_LEDGER_SOURCES ? r->nsources : WL_LEDGER_SOURCES;
	unsigned nc = r->nclaims < WL_LEDGER_CLAIMS ? r->nclaims : WL_LEDGER_CLAIMS;
	int old;

	if (version < 1 || version > WL_LEDGER_WIRE_VERSION)
		return 0;
	/* A reader older than the critical record (version 3) would refuse
	 * its outcome: it gets the nearest it knows. */
	old = version < 3 && r->outcome == WL_LO_CRITICAL;
	put(&w, version, 1);
	put(&w, old ? WL_LO_FAILED : r->outcome, 1);
	put(&w, r->asleep_src, 1);
	put(&w, r->claim_state, 1);
	put(&w, r->seq, 8);
	put(&w, r->start_real_ns, 8);
	put(&w, r->start_mono_ns, 8);
	put(&w, r->start_boot_ns, 8);
	put(&w, r->end_mono_ns, 8);
	put(&w, r->end_boot_ns, 8);
	put(&w, r->asleep_ns, 8);
	put(&w, (uint32_t)(old && !r->err ? ECANCELED : r->err), 4);
	put(&w, (uint32_t)r->wakeup_irq, 4);
	put(&w, r->cause, 4);
	put(&w, r->nsources_moved, 2);
	put(&w, r->nclaims_total, 2);
	put(&w, ns, 1);
	for (unsigned i = 0; i < ns; i++)
		put_name(&w, r->sources[i], WL_LEDGER_SRC_NAME);
	put_name(&w, r->alarm_client, WAKELOCK_NAME_MAX);
	put_name(&w, r->alarm_name, WAKELOCK_NAME_MAX);
	put(&w, nc, 1);
	for (unsigned i = 0; i < nc; i++) {
		put_name(&w, r->claims[i].client, WAKELOCK_NAME_MAX);
		put_name(&w, r->claims[i].hold, WAKELOCK_NAME_MAX);
		put(&w, r->claims[i].latency_ns, 8);
	}
	if (version >= 2) {
		put(&w, r->ended_kind, 1);
		put(&w, r->ended_holders, 1);
		put_name(&w, r->ended_by, WAKELOCK_NAME_MAX);
	}
	if (version >= 3)
		put(&w, r->outcome == WL_LO_CRITICAL ? r->critical_action : 0, 1);
	if (version >= 4)
		put(&w, r->outcome == WL_LO_CRITICAL ? 0 : r->state, 1);
	return w.bad ? 0 : w.off;
}

size_t wl_ledger_encode(const struct wl_ledger_record *r, uint8_t *buf, size_t len)
{
	return wl_ledger_encode_version(r, WL_LEDGER_WIRE_VERSION, buf, len);
}

static uint64_t get(struct wbuf *w, unsigned bytes)
{
	uint64_t v = 0;

	if (w->off + bytes > w->len) {
		w->bad = 1;
		return 0;
	}
	for (unsigned i = 0; i < bytes; i++)
		v |= (uint64_t)w->p[w->off++] << (8 * i);
	return v;
}

/* A name of at most max - 1 bytes, without NUL bytes inside. */
static void get_name(struct wbuf *w, char *out, size_t max)
{
	size_t n = (size_t)get(w, 1);

	if (w->bad || n >= max || w->off + n > w->len || memchr(w->p + w->off, 0, n)) {
		w->bad = 1;
		return;
	}
	memcpy(out, w->p + w->off, n);
	out[n] = 0;
	w->off += n;
}

/* Version 2's tail: a holder is named exactly when the kind says one
 * held (at least one holder then), so a reader never shows a name
 * without its kind or a kind without its name. */
static int decode_ended(struct wbuf *w, struct wl_ledger_record *r)
{
	int named;

	r->ended_kind = (uint8_t)get(w, 1);
	r->ended_holders = (uint8_t)get(w, 1);
	get_name(w, r->ended_by, WAKELOCK_NAME_MAX);
	if (w->bad || r->ended_kind > WL_LEK_SOURCE)
		return -EBADMSG;
	named = r->ended_kind == WL_LEK_CLIENT || r->ended_kind == WL_LEK_SOURCE;
	if (named != (r->ended_by[0] != 0) || named != (r->ended_holders != 0))
		return -EBADMSG;
	return 0;
}

/* Version 3's tail: the action of a critical record, 0 for any other;
 * a critical record's capacity is a percentage. */
static int decode_critical(struct wbuf *w, struct wl_ledger_record *r)
{
	r->critical_action = (uint8_t)get(w, 1);
	if (w->bad)
		return -EBADMSG;
	if (r->outcome != WL_LO_CRITICAL)
		return r->critical_action ? -EBADMSG : 0;
	if (r->critical_action < 1 || r->critical_action > 2 || r->critical_capacity < 0 ||
	    r->critical_capacity > 100)
		return -EBADMSG;
	return 0;
}

/* Version 4's tail: the state written, none for a critical record. */
static int decode_state(struct wbuf *w, struct wl_ledger_record *r)
{
	unsigned st = (unsigned)get(w, 1);

	if (w->bad || st > WL_LS_DISK || (st && r->outcome == WL_LO_CRITICAL))
		return -EBADMSG;
	if (r->outcome != WL_LO_CRITICAL)
		r->state = (uint8_t)st;
	return 0;
}

int wl_ledger_decode(const uint8_t *buf, size_t len, struct wl_ledger_record *r)
{
	struct wbuf w = { (uint8_t *)buf, len, 0, 0 };
	unsigned version;

	memset(r, 0, sizeof(*r));
	version = (unsigned)get(&w, 1);
	if (version < 1 || version > WL_LEDGER_WIRE_VERSION)
		return -EBADMSG;
	r->outcome = (uint8_t)get(&w, 1);
	r->asleep_src = (uint8_t)get(&w, 1);
	r->claim_state = (uint8_t)get(&w, 1);
	r->seq = get(&w, 8);
	r->start_real_ns = get(&w, 8);
	r->start_mono_ns = get(&w, 8);
	r->start_boot_ns = get(&w, 8);
	r->end_mono_ns = get(&w, 8);
	r->end_boot_ns = get(&w, 8);
	r->asleep_ns = get(&w, 8);
	r->err = (int32_t)(uint32_t)get(&w, 4);
	r->wakeup_irq = (int32_t)(uint32_t)get(&w, 4);
	r->cause = (uint32_t)get(&w, 4);
	r->nsources_moved = (uint16_t)get(&w, 2);
	r->nclaims_total = (uint16_t)get(&w, 2);
	r->nsources = (uint8_t)get(&w, 1);
	if (w.bad || r->outcome > (version >= 3 ? WL_LO_CRITICAL : WL_LO_FAILED) ||
	    r->asleep_src > WL_LAS_HW_SLEEP ||
	    r->claim_state > WL_LCS_UNCLAIMED || r->nsources > WL_LEDGER_SOURCES)
		return -EBADMSG;
	for (unsigned i = 0; i < r->nsources; i++)
		get_name(&w, r->sources[i], WL_LEDGER_SRC_NAME);
	get_name(&w, r->alarm_client, WAKELOCK_NAME_MAX);
	get_name(&w, r->alarm_name, WAKELOCK_NAME_MAX);
	r->nclaims = (uint8_t)get(&w, 1);
	if (w.bad || r->nclaims > WL_LEDGER_CLAIMS)
		return -EBADMSG;
	for (unsigned i = 0; i < r->nclaims; i++) {
		get_name(&w, r->claims[i].client, WAKELOCK_NAME_MAX);
		get_name(&w, r->claims[i].hold, WAKELOCK_NAME_MAX);
		r->claims[i].latency_ns = get(&w, 8);
	}
	if (w.bad || (version >= 2 && decode_ended(&w, r) < 0))
		return -EBADMSG;
	if (version >= 3 && decode_critical(&w, r) < 0)
		return -EBADMSG;
	if (version >= 4 && decode_state(&w, r) < 0)
		return -EBADMSG;
	return (int)w.off;
}
