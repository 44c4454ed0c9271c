/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The wake ledger (docs/ledger.md): one record per suspend attempt in a
 * ring of fixed size, allocated once by ledger_new() and never again.
 *
 *   ledger_new(cap, window_ms)       cap records, claim window
 *   ledger_attempt_begin(l, before)  right before suspend(): before is
 *                                    stamped (wakesrc_stamp) and read
 *                                    (wakesrc_take); it is copied
 *   ledger_attempt_begin_by(l, before, by)
 *                                    the same, with who held last in the
 *                                    awake period before it
 *   ledger_attempt_end(l, sr, after, alarm)
 *                                    right after suspend() returned sr;
 *                                    after stamped at once, then read;
 *                                    alarm: the daemon alarm due, or NULL
 *     or, to read the files outside a lock, in two steps:
 *   ledger_attempt_returned(l, sr, mono, boot)   at once (claims count)
 *   ledger_attempt_cause(l, after, alarm)        once after is read
 *   ledger_claim(l, client, hold, t) a hold taken at t (CLOCK_MONOTONIC)
 *   ledger_tick(l, now)              close a claim window that ran out
 *   ledger_copy / ledger_foreach     readers, by sequence number
 *
 * Memory: ledger_bytes(cap) = sizeof(struct ledger) + cap * 624 bytes,
 * where struct ledger is 32 904 bytes on x86-64 (mostly the snapshot of
 * the open attempt; 32 912 on aarch64, whose mutex is larger):
 * 2 588 808 bytes (2.47 MiB) for the default 4096 on x86-64.
 *
 * No I/O.  Every function takes the ledger's own mutex: the power loop
 * writes, the server thread claims and reads.
 */
#ifndef WLD_LEDGER_H
#define WLD_LEDGER_H

#include <stddef.h>
#include <stdint.h>
#include "lib/wl_ledger.h"
#include "wakesrc.h"

#define LEDGER_DEFAULT_CAP 4096u
#define LEDGER_DEFAULT_WINDOW_MS 1000u
#define LEDGER_MAX_CAP (1u << 20)
/* An alarm counts as the cause if it was due no later than this after
 * the resume: the RTC wakes with a granularity of one second. */
#define LEDGER_ALARM_SLACK_NS 1000000000ull
/* Below this, CLOCK_BOOTTIME - CLOCK_MONOTONIC "does not tell" and
 * suspend_stats/total_hw_sleep is used if it moved. */
#define LEDGER_CLOCKS_MIN_NS 1000000ull

struct ledger;

/* The alarm the daemon had armed for this attempt. */
struct ledger_alarm {
	const char *client, *name;
	uint64_t due_boot_ns;            /* CLOCK_BOOTTIME */
};

/*
 * Who held last in the awake period before an attempt (the record's
 * ended_by, docs/ledger.md): the loop fills it at every look that finds
 * a holder, in place (no allocation), and starts it again as "none" at
 * each attempt.
 */
struct ledger_holder {
	uint8_t kind;                    /* WL_LEK_NONE, _CLIENT or _SOURCE */
	uint32_t holders;                /* how many held at that look */
	char name[WAKELOCK_NAME_MAX];
};

size_t ledger_bytes(unsigned cap);
/* cap 1..LEDGER_MAX_CAP; NULL on a bad cap or no memory. */
struct ledger *ledger_new(unsigned cap, unsigned window_ms);
void ledger_free(struct ledger *l);
void ledger_set_window(struct ledger *l, unsigned window_ms);

/* Starts record number ledger_next_seq(); closes the previous record's
 * claim window (no claim yet: unclaimed). */
void ledger_attempt_begin(struct ledger *l, const struct ws_snapshot *before);
/* The same, recording by as the awake period's last holder (NULL, or a
 * kind other than CLIENT or SOURCE: none). */
void ledger_attempt_begin_by(struct ledger *l, const struct ws_snapshot *before,
                             const struct ledger_holder *by);
/* sr: suspend()'s return: 0 resumed, -EBUSY aborted, else failed.  Does
 * nothing without a begun attempt. */
void ledger_attempt_end(struct ledger *l, int sr, const struct ws_snapshot *after,
                        const struct ledger_alarm *alarm);
/* ledger_attempt_end() in two steps.  returned: the clocks right after
 * suspend() returned; from then on claims count and the record shows its
 * outcome (its cause still empty).  cause: the after-snapshot (its stamps
 * are not used) and the alarm.  Each does nothing out of order. */
void ledger_attempt_returned(struct ledger *l, int sr, uint64_t mono_ns, uint64_t boot_ns);
void ledger_attempt_cause(struct ledger *l, const struct ws_snapshot *after,
                          const struct ledger_alarm *alarm);
/* The state the begun attempt writes ("freeze", "mem", "disk"), for its
 * record.  Nothing out of order. */
void ledger_attempt_state(struct ledger *l, const char *state);
/* The last attempt, its cause filled in, was woken for the hibernation
 * of suspend-then-hibernate (hibernate_after.h): WL_LC_HIBERNATE.  Not
 * for a failed attempt, which woke nobody. */
void ledger_attempt_hibernate_due(struct ledger *l);
/* The critical battery action (daemon/critical.c), a record of its own
 * (outcome critical, no claim window): from start to end (the clocks
 * before the action and after it returned: a hibernate that resumed, a
 * power off that failed or was only recorded), capacity in percent, the
 * action finally taken (enum critical_action), err its errno or 0.  An
 * attempt of the loop whose cause was not in yet keeps it unknown. */
struct ledger_critical {
	uint64_t start_real_ns, start_mono_ns, start_boot_ns, end_mono_ns, end_boot_ns;
	int err;
	unsigned capacity, action;
};
void ledger_critical(struct ledger *l, const struct ledger_critical *c);
/* A hold taken at t_mono_ns: counted for the last record if it resumed
 * or aborted and t is within its window.  The first WL_LEDGER_CLAIMS by
 * time are kept (one per client and hold); the rest only counted.
 * 1 if counted, 0 if no window was open (a late claim closes it). */
int ledger_claim(struct ledger *l, const char *client, const char *hold, uint64_t t_mono_ns);
void ledger_tick(struct ledger *l, uint64_t now_mono_ns);
/* When the open claim window ends (CLOCK_MONOTONIC), 0 if none is open:
 * the loop calls ledger_tick then (or at its next attempt). */
uint64_t ledger_window_end(struct ledger *l);

/* Sequence numbers: records [oldest, next) are in the ring (oldest ==
 * next when empty); older ones were overwritten. */
uint64_t ledger_next_seq(struct ledger *l);
uint64_t ledger_oldest_seq(struct ledger *l);
/* Copy up to max records from sequence number from on (raised to the
 * oldest still held: a reader compares out[0].seq with what it asked for
 * to count what it lost).  Returns the number copied. */
size_t ledger_copy(struct ledger *l, uint64_t from, struct wl_ledger_record *out, size_t max);
/* fn for each record, oldest first, under the ledger's lock (no calls
 * back into the ledger); stops when fn returns nonzero. */
void ledger_foreach(struct ledger *l, int (*fn)(const struct wl_ledger_record *r, void *arg),
                    void *arg);

#endif
