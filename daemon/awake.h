/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef WLD_AWAKE_H
#define WLD_AWAKE_H

/*
 * Awake sources: the daemon's one extension point for "something keeps
 * the system awake" besides the clients' holds (docs/design.md §3).  A
 * source answers "holding? until when?", says how it wakes the loop (a
 * descriptor in the loop's wait, or a time to be looked at again, or a
 * kick from the main thread), gives a last look just before the state
 * write, and names itself for `wakelock status` and the ledger.  Adding
 * an input is one file that fills a struct awake_source, plus its
 * registration (awake_add, daemon/main.c).
 *
 * Every callback runs on the power loop's thread.  Order of one look:
 *   sample(now)              no lock held: read the inputs (sysfs, ...)
 *   holding(now, &until)     segment lock held, no I/O: decide from the sample
 * and, once per attempt, after the count is written (kernel armed):
 *   last_look()              segment lock held: sample again, > 0 aborts
 */
#include <stddef.h>
#include <stdint.h>

struct powerloop;
struct wl_ledger_record;
struct ledger;

struct awake_source {
	const char *name;       /* a valid client name: it is shown like one */
	/* Read the inputs (may be NULL).  force: the last look, or the fd
	 * said something changed: no cached answer. */
	void (*sample)(struct awake_source *s, uint64_t now, int force);
	/* 1 if it keeps the system awake at now (may be NULL: never).
	 * *until: when to look again at the latest, 0 for "only when
	 * something wakes the loop" (a source that holds with 0 must have
	 * an fd or be kicked when it lets go). */
	int (*holding)(struct awake_source *s, uint64_t now, uint64_t *until);
	/* The last look (may be NULL): > 0 stops the attempt. */
	int (*last_look)(struct awake_source *s);
	/* Readable: something changed (may be -1).  event() drains it. */
	int fd;
	void (*event)(struct awake_source *s);
	/* An attempt ended and its ledger record has its cause (may be
	 * NULL; called without the lock): a source may hold for what woke
	 * the system (wake_grace.c). */
	void (*resumed)(struct awake_source *s, const struct wl_ledger_record *r, uint64_t now);
	/* Its state in words, for `wakelock status` (may be NULL). */
	void (*describe)(struct awake_source *s, uint64_t now, char *buf, size_t len);
	void *priv;
};

/* Register s with the loop (before the loop thread starts): 0, or
 * -ENOSPC beyond WL_MAX_SOURCES. */
int awake_add(struct powerloop *pl, struct awake_source *s);

/* For sources reading sysfs (display.c, power_supply.c): the first line
 * of dir/name/file, its trailing newline cut (words: cut at the first
 * blank too), or -errno (-ENOENT: gone).  No link followed. */
int awake_read_line(const char *dir, const char *name, const char *file, char *buf,
                    size_t len, int word);
/* A kernel uevent socket (non-blocking), or -1 (logged once by the
 * caller if it matters): where it fails (a sandbox without AF_NETLINK)
 * sources fall back to looking again while they hold. */
int awake_uevent_socket(void);
/* Drain a uevent socket: 1 if a message of subsystem came. */
int awake_uevent_drain(int fd, const char *subsystem, const char *subsystem2);

/* The loop's side (powerloop.c). */
/* Sample every source (no lock held). */
void awake_sample(struct powerloop *pl, int force);
/* How many hold at now; *next lowered to the earliest until; *first:
 * the first that holds, in registration order (NULL: none); their
 * states published (segment lock held). */
unsigned awake_holding(struct powerloop *pl, uint64_t now, uint64_t *next,
                       struct awake_source **first);
/* The last look of every source (lock held): the first that objects, or
 * NULL. */
struct awake_source *awake_last_look(struct powerloop *pl);
/* The wait's descriptors: fills up to max pollfds, returns how many. */
struct pollfd;
unsigned awake_pollfds(struct powerloop *pl, struct pollfd *p, unsigned max);
/* After poll: call event() of the sources whose fd is readable. */
void awake_events(struct powerloop *pl, const struct pollfd *p, unsigned n);

/* After an attempt: each source's resumed() with the record (no lock). */
void awake_resumed(struct powerloop *pl, const struct wl_ledger_record *r);

/* wake_grace.c: a wake whose cause is a configured wakeup source or IRQ
 * keeps the system awake that source's hold_after_wake_ms ([wake_grace]
 * in wakelockd.conf), claimed in the ledger as "wakelockd/grace:NAME". */
#define WAKE_GRACE_MAX 16
struct wake_grace_rule {
	char name[32];          /* a wakeup source's name, or "irq/N" */
	unsigned ms;
};
struct awake_source *wake_grace_source_new(const struct wake_grace_rule *rules, unsigned n,
                                           struct ledger *ledger);
void wake_grace_source_free(struct awake_source *s);

/* power_supply.c: mains/USB online keeps the system awake with on_ac =
 * never, or makes the activity use its AC timeout with idle (presence.h);
 * the system battery is shown in status, and its critical level found. */
struct power_supply_params {
	int on_ac;                   /* enum on_ac_mode */
	unsigned critical_percent;   /* 0: off */
	int critical_action;         /* enum critical_action */
};
/* The critical level was just reached (a discharge episode began). */
struct power_critical {
	char battery[32];
	int capacity;                /* percent */
	int action;                  /* enum critical_action */
};
struct awake_source *power_supply_source_new(const char *root,
                                             const struct power_supply_params *pp);
void power_supply_source_free(struct awake_source *s);
/* The main thread's side: a descriptor for its epoll (the uevent socket,
 * or without one a timer a second apart), and what to do when it is
 * readable (force: read even without news, as at start).  Returns
 * PS_CHANGED (the loop should look again: powerloop_kick) and PS_CRITICAL
 * (*crit filled: take the action, critical.c), or 0. */
#define PS_CHANGED 1
#define PS_CRITICAL 2
int power_supply_fd(struct awake_source *s);
int power_supply_update(struct awake_source *s, int force, struct power_critical *crit);

/* display.c: the display as a source (phone policy, docs/policy.md). */
struct awake_source *display_source_new(const char *root, unsigned off_delay_ms);
void display_source_free(struct awake_source *s);

#endif
