/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef WLD_HIBERNATE_AFTER_H
#define WLD_HIBERNATE_AFTER_H

#include <stdint.h>

/*
 * Suspend-then-hibernate ([suspend] hibernate_after_s, docs/policy.md):
 * a device that sleeps in a suspend state (freeze or mem) for long
 * enough hibernates, so that a forgotten phone or laptop stops draining
 * its battery in a suspend that still costs power.
 *
 * A spell of sleep begins with the first suspend after the system was
 * awake for HIBERNATE_SPELL_AWAKE_NS or more in one stretch (the device
 * in use), or after the daemon started or hibernated.  Opportunistic
 * suspend wakes often and briefly (an alarm, a message, a glance at the
 * clock): those short wakes do not start a new spell, or the device
 * would never hibernate.  Once the spell is hibernate_after_s old, the
 * next attempt writes "disk".  So that this happens while the device
 * sleeps, each suspend of the spell arms the daemon's own wake alarm at
 * that time; the resume it causes goes through the loop like any other
 * (holds, the handshake), then the attempt hibernates.  Hibernating
 * within ALARM_LEAD_NS of that time: the kernel refuses to suspend with
 * an alarm that close (alarmtimer_suspend), and the RTC, counting whole
 * seconds, often wakes the system a little early.
 *
 * Pure functions of the times they are given (CLOCK_BOOTTIME ns), so
 * every rule is unit-tested directly; the loop owns the state.
 */
#define HIBERNATE_SPELL_AWAKE_NS (60ull * 1000000000ull)
#define HIBERNATE_ALARM_LEAD_NS 2000000000ull

struct hib_spell {
	uint64_t start;         /* the spell's first suspend; 0: no spell */
	uint64_t resumed;       /* the end of its last suspend; 0: none yet */
};

/* The state for an attempt at now: "disk" once the spell is
 * after_s old, else state; *wake_at set to the time to arm the
 * daemon's own wake for (0: none).  Starts a spell if none is under
 * way.  after_s 0: state, no wake, no spell. */
const char *hib_spell_choose(struct hib_spell *s, const char *state, unsigned after_s,
                             uint64_t now, uint64_t *wake_at);
/* After the attempt: used is the state written, sr its result, now the
 * time it returned.  A hibernation, resumed or failed, ends the spell
 * (a failed one starts the next spell now: it is tried again only after
 * another hibernate_after_s, not at every attempt). */
void hib_spell_after(struct hib_spell *s, const char *used, int sr, uint64_t now);
/* Whether an attempt returning at now was woken for the hibernation:
 * the spell's time had come (within the lead). */
int hib_spell_due(const struct hib_spell *s, unsigned after_s, uint64_t now);

#endif
