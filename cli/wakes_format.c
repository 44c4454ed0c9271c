/* SPDX-License-Identifier: GPL-2.0-or-later */
/* `wakelock wakes` and `wakelock wakes --summary`: formatting (wakes.h). */
#include <string.h>
#include <time.h>
#include "lib/wl_json.h"
#include "wakes.h"

/* A bounded name field, escaped for a terminal. */
static const char *esc(char *out, size_t len, const char *s, size_t max)
{
	char tmp[WL_LEDGER_CAUSE_MAX + 1];
	size_t n = strnlen(s, max < sizeof(tmp) - 1 ? max : sizeof(tmp) - 1);

	memcpy(tmp, s, n);
	tmp[n] = 0;
	wl_escape(out, len, tmp);
	return out;
}

/* "12.345" milliseconds from nanoseconds. */
static const char *msec(char *out, size_t len, uint64_t ns)
{
	snprintf(out, len, "%llu.%03llu", (unsigned long long)(ns / 1000000u),
	         (unsigned long long)(ns / 1000u % 1000u));
	return out;
}

static const char *when(char *out, size_t len, uint64_t real_ns)
{
	time_t t = (time_t)(real_ns / 1000000000u);
	struct tm tm;
	char base[32];

	if (!gmtime_r(&t, &tm) || !strftime(base, sizeof(base), "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(base, sizeof(base), "?");
	snprintf(out, len, "%s.%03u", base, (unsigned)(real_ns / 1000000u % 1000u));
	return out;
}

/* Who held last before the attempt: the name (clients and sources alike:
 * --json tells them apart), "+N" more that held at that look, "none", or
 * "?" from a daemon that did not say. */
static const char *ended_by(char *out, size_t len, const struct wl_ledger_record *r)
{
	char name[4 * WAKELOCK_NAME_MAX];

	if (r->ended_kind != WL_LEK_CLIENT && r->ended_kind != WL_LEK_SOURCE) {
		snprintf(out, len, "%s", r->ended_kind == WL_LEK_NONE ? "none" : "?");
		return out;
	}
	esc(name, sizeof(name), r->ended_by, WAKELOCK_NAME_MAX);
	if (r->ended_holders > 1)
		snprintf(out, len, "%s (+%u)", name, r->ended_holders - 1u);
	else
		snprintf(out, len, "%s", name);
	return out;
}

void wakes_print_table(FILE *f, const struct wl_ledger_record *r, size_t n)
{
	fprintf(f, "%8s %-23s %-24s %-16s %12s %-32s %-9s %-32s %10s\n", "SEQ", "START (UTC)",
	        "ENDED BY", "OUTCOME", "ASLEEP_MS", "CAUSE", "CLAIM", "FIRST CLAIM", "LATENCY_MS");
	for (size_t i = 0; i < n; i++) {
		char w[48], out[32], nb[16], key[WL_LEDGER_CAUSE_MAX], cause[4 * WL_LEDGER_CAUSE_MAX + 16];
		char a[16], cl[4 * WAKELOCK_NAME_MAX], ho[4 * WAKELOCK_NAME_MAX], who[8 * WAKELOCK_NAME_MAX + 2];
		char slp[32], lat[32] = "-", by[4 * WAKELOCK_NAME_MAX + 16];

		if (r[i].outcome == WL_LO_ABORTED || r[i].outcome == WL_LO_FAILED ||
		    (r[i].outcome == WL_LO_CRITICAL && r[i].err))
			snprintf(out, sizeof(out), "%s %s", wl_ledger_outcome_name(r[i].outcome),
			         wl_errno_name(r[i].err, nb, sizeof(nb)));
		else
			snprintf(out, sizeof(out), "%s", wl_ledger_outcome_name(r[i].outcome));
		wl_ledger_cause_key(&r[i], key, sizeof(key));
		esc(cause, sizeof(cause), key, sizeof(key));
		if (r[i].nsources_moved > 1) {
			snprintf(a, sizeof(a), " (+%u)", r[i].nsources_moved - 1u);
			if (strlen(cause) + strlen(a) < sizeof(cause))
				strcat(cause, a);
		}
		if (r[i].nclaims) {
			esc(cl, sizeof(cl), r[i].claims[0].client, WAKELOCK_NAME_MAX);
			esc(ho, sizeof(ho), r[i].claims[0].hold, WAKELOCK_NAME_MAX);
			snprintf(who, sizeof(who), "%s/%s", cl, ho);
			msec(lat, sizeof(lat), r[i].claims[0].latency_ns);
		} else {
			snprintf(who, sizeof(who), "-");
		}
		fprintf(f, "%8llu %-23s %-24s %-16s %12s %-32s %-9s %-32s %10s\n",
		        (unsigned long long)r[i].seq, when(w, sizeof(w), r[i].start_real_ns),
		        ended_by(by, sizeof(by), &r[i]), out,
		        r[i].outcome == WL_LO_RESUMED ? msec(slp, sizeof(slp), r[i].asleep_ns) : "-",
		        cause, wl_ledger_claim_state_name(r[i].claim_state), who, lat);
	}
	if (!n)
		fprintf(f, "(no suspend attempts recorded)\n");
}

void wakes_print_json(FILE *f, const struct wl_ledger_record *r, size_t n)
{
	fputc('[', f);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc(',', f);
		wl_ledger_json_record(f, &r[i]);
	}
	fputs("]\n", f);
}

void wakes_print_summary(FILE *f, const struct wl_ledger_summary *s)
{
	fprintf(f, "%u attempts: %u failed, %u still open\n", s->records, s->failed, s->open);
	fprintf(f, "%-40s %7s %7s %9s %12s %12s %13s\n", "CAUSE", "WAKES", "ABORTED", "UNCLAIMED",
	        "CLAIM_P50_MS", "CLAIM_P99_MS", "ASLEEP_P50_MS");
	for (uint32_t k = 0; k < s->ncauses && k < WL_LEDGER_SUMMARY_MAX; k++) {
		const struct wl_ledger_cause_stat *c = &s->c[k];
		char cause[4 * WL_LEDGER_CAUSE_MAX], p50[32] = "-", p99[32] = "-", slp[32] = "-";

		esc(cause, sizeof(cause), c->cause, sizeof(c->cause));
		if (c->claimed) {
			msec(p50, sizeof(p50), c->claim_p50_ns);
			msec(p99, sizeof(p99), c->claim_p99_ns);
		}
		if (c->resumed)
			msec(slp, sizeof(slp), c->asleep_p50_ns);
		fprintf(f, "%-40s %7u %7u %9u %12s %12s %13s\n", cause, c->count, c->aborted,
		        c->unclaimed, p50, p99, slp);
	}
	if (!s->ncauses)
		fprintf(f, "(no wakes recorded)\n");
}
