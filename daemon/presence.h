/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef WLD_PRESENCE_H
#define WLD_PRESENCE_H

/*
 * A closed lid (activity.c, [policy] lid_closed = suspend) stops the
 * presence sources from holding at once: the display, the activity, and
 * logind's sessions and idle inhibitors (logind_presence.c).
 * Client holds, alarms and logind's sleep inhibitors still hold: a lid
 * says nobody looks at the machine, not that nobody needs it.
 *
 * Written and read on the power loop's thread only (every source
 * callback runs there, awake.h); the activity source updates it in
 * event() and sample(), which come before every source's holding().
 */
extern int presence_suppressed;
/* A mains or USB supply is online (power_supply.c, atomic: its main
 * thread and the loop write it; activity.c reads it for on_ac = idle). */
extern int presence_on_ac;

struct awake_source;

/* activity.c: input activity for idle_ms after the last event (on AC:
 * idle_ac_ms; idle_ms 0: activity counts on AC only), and the lid
 * (lid_action: enum lid_action).  activity_lid_source is the lid's line
 * in `wakelock status` (it holds nothing itself): register both. */
struct awake_source *activity_source_new(const char *root, unsigned idle_ms,
                                         unsigned idle_ac_ms, int lid_action);
struct awake_source *activity_lid_source(struct awake_source *activity);
void activity_source_free(struct awake_source *activity);

#endif
