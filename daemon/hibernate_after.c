/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Suspend-then-hibernate's spells of sleep (hibernate_after.h). */
#include <string.h>
#include "hibernate_after.h"

static uint64_t due_of(const struct hib_spell *s, unsigned after_s)
{
	return s->start + (uint64_t)after_s * 1000000000ull;
}

int hib_spell_due(const struct hib_spell *s, unsigned after_s, uint64_t now)
{
	return after_s && s->start && now + HIBERNATE_ALARM_LEAD_NS >= due_of(s, after_s);
}

const char *hib_spell_choose(struct hib_spell *s, const char *state, unsigned after_s,
                             uint64_t now, uint64_t *wake_at)
{
	*wake_at = 0;
	if (!after_s) {
		s->start = s->resumed = 0;
		return state;
	}
	/* Awake long enough since the last suspend: in use, a new spell. */
	if (s->start && s->resumed && now >= s->resumed + HIBERNATE_SPELL_AWAKE_NS)
		s->start = 0;
	if (!s->start) {
		s->start = now ? now : 1;
		s->resumed = 0;
	}
	if (hib_spell_due(s, after_s, now))
		return "disk";
	*wake_at = due_of(s, after_s);
	return state;
}

void hib_spell_after(struct hib_spell *s, const char *used, int sr, uint64_t now)
{
	if (!strcmp(used, "disk")) {
		s->start = sr ? (now ? now : 1) : 0;
		s->resumed = sr ? now : 0;
		return;
	}
	if (s->start)
		s->resumed = now;
}
