/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A wake that needs time to deliver (docs/policy.md): on a phone the ring
 * line (a gpio-keys key) or a USB remote wakeup resumes the system seconds
 * before the modem's data arrives, and with nothing held the daemon would
 * suspend again at once: the phone wakes but does not ring.  A rule
 * `NAME = MS` in [wake_grace] keeps the system awake MS after a wake whose
 * ledger record names NAME among the wakeup sources that moved (or whose
 * wakeup IRQ is N, for "irq/N").  The grace is claimed in the ledger as
 * "wakelockd/grace:NAME", so `wakelock wakes` shows who kept it awake.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/wl_ledger.h"
#include "lib/wl_shm.h"
#include "awake.h"
#include "ledger.h"
#include "log.h"

struct grace {
	struct awake_source src;
	struct wake_grace_rule rules[WAKE_GRACE_MAX];
	unsigned n;
	struct ledger *ledger;
	uint64_t until;          /* CLOCK_MONOTONIC ns; 0: none */
	char why[32];            /* the rule that holds */
};

/* The rule the record matches, or NULL. */
static const struct wake_grace_rule *match(const struct grace *g,
                                           const struct wl_ledger_record *r)
{
	for (unsigned k = 0; k < g->n; k++) {
		const struct wake_grace_rule *rule = &g->rules[k];
		int irq;

		if (sscanf(rule->name, "irq/%d", &irq) == 1) {
			if ((r->cause & WL_LC_IRQ) && r->wakeup_irq == irq)
				return rule;
			continue;
		}
		for (unsigned i = 0; i < r->nsources && i < WL_LEDGER_SOURCES; i++)
			if (!strncmp(r->sources[i], rule->name, WL_LEDGER_SRC_NAME))
				return rule;
	}
	return NULL;
}

static void resumed(struct awake_source *s, const struct wl_ledger_record *r, uint64_t now)
{
	struct grace *g = s->priv;
	const struct wake_grace_rule *rule;
	char hold[WAKELOCK_NAME_MAX];

	if (r->outcome != WL_LO_RESUMED || !(rule = match(g, r)))
		return;
	if (now + (uint64_t)rule->ms * 1000000u > g->until) {
		g->until = now + (uint64_t)rule->ms * 1000000u;
		snprintf(g->why, sizeof(g->why), "%s", rule->name);
	}
	snprintf(hold, sizeof(hold), "grace:%.24s", rule->name);
	if (g->ledger)
		ledger_claim(g->ledger, "wakelockd", hold, now);
	log_debug("woken by %s: awake %u ms for its data", rule->name, rule->ms);
}

static int holding(struct awake_source *s, uint64_t now, uint64_t *until)
{
	struct grace *g = s->priv;

	if (now >= g->until)
		return 0;
	*until = g->until;
	return 1;
}

static void describe(struct awake_source *s, uint64_t now, char *buf, size_t len)
{
	struct grace *g = s->priv;

	if (now < g->until)
		snprintf(buf, len, "woken by %s: awake %llu ms more", g->why,
		         (unsigned long long)((g->until - now) / 1000000u));
	else
		snprintf(buf, len, "%u rule%s, none holding", g->n, g->n == 1 ? "" : "s");
}

struct awake_source *wake_grace_source_new(const struct wake_grace_rule *rules, unsigned n,
                                           struct ledger *ledger)
{
	struct grace *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->n = n < WAKE_GRACE_MAX ? n : WAKE_GRACE_MAX;
	memcpy(g->rules, rules, g->n * sizeof(*rules));
	g->ledger = ledger;
	g->src.name = "wake-grace";
	g->src.holding = holding;
	g->src.resumed = resumed;
	g->src.describe = describe;
	g->src.fd = -1;
	g->src.priv = g;
	return &g->src;
}

void wake_grace_source_free(struct awake_source *s)
{
	if (s)
		free(s->priv);
}
