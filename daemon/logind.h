/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef WLD_LOGIND_H
#define WLD_LOGIND_H

/*
 * logind's sleep inhibitors as holds (docs/logind.md).
 *
 * While logind (systemd-logind or elogind) holds an inhibitor whose
 * "what" includes sleep in block mode, the program that took it keeps the
 * system awake exactly as a libwakelock client does: each such inhibitor
 * is mirrored into a client slot of its own, named "logind:WHO", with one
 * daemon-owned hold named after WHY, and logind's uid and pid.  The main
 * thread follows logind's PropertiesChanged signals (sent at every
 * inhibitor start and stop) and re-reads ListInhibitors; the power thread
 * asks logind once more, on a connection of its own, after arming the
 * kernel and just before suspending (logind_last_look), so an inhibitor
 * taken after the main thread's last news still stops the attempt.
 *
 * In mode suspend, the suspend itself goes through logind too
 * (logind_suspend), so that its delay inhibitors and PrepareForSleep work.
 *
 * Everything logind reports is chosen by its clients: names are cleaned
 * (logind_clean_name) and the number of mirrored inhibitors is bounded.
 */

#include <stddef.h>
#include <stdint.h>
#include "wakelock.h"

struct daemon;

/* At most this many inhibitors become slots; more are counted in the log
 * (one line) but keep the system awake through the one marked overflow. */
#define LOGIND_MAX_INHIBITORS 64u
#define LOGIND_CLIENT_PREFIX "logind:"  /* WL_LOGIND_PREFIX: refused to clients */

enum logind_mode { LOGIND_OFF = 0, LOGIND_INHIBITORS = 1, LOGIND_SUSPEND = 2 };

/* One inhibitor as logind lists it (already filtered: sleep, block). */
struct logind_inhibitor {
	char name[WAKELOCK_NAME_MAX];   /* "logind:" + cleaned who */
	char hold[WAKELOCK_NAME_MAX];   /* cleaned why */
	uint32_t uid, pid;
};

/*
 * Copy src into dst (size bytes, >= 2) as a valid client or hold name
 * (lib/names.c): characters a name may not have become '_', the result is
 * truncated, and an empty or NULL src gives "unnamed".
 */
void logind_clean_name(char *dst, size_t size, const char *src);
/* Fill inh from one ListInhibitors entry; 1 if it keeps the system awake
 * (what has "sleep" among its colon-separated words, mode is "block"),
 * 0 if it does not (inh then untouched). */
int logind_inhibitor_from(struct logind_inhibitor *inh, const char *what, const char *who,
                          const char *why, const char *mode, uint32_t uid, uint32_t pid);
/* Whether a colon-separated list of "what"s (BlockInhibited) has sleep. */
int logind_what_has_sleep(const char *what);
/* Fill inh from one entry like logind_inhibitor_from, for "idle" in
 * block mode instead of "sleep". */
int logind_idle_inhibitor_from(struct logind_inhibitor *inh, const char *what, const char *who,
                               const char *why, const char *mode, uint32_t uid, uint32_t pid);

/*
 * Main thread.  logind_open connects to the system bus when the mode asks
 * for it (never fatal: without a bus or logind nothing changes, and one
 * line says so); logind_close drops every mirrored inhibitor.
 * logind_fd is the descriptor to watch (-1: none), logind_dispatch
 * processes what arrived and re-arms it; logind_timeout_ms is the wait
 * sd-bus needs for its own timeouts (-1: none).
 */
int logind_open(struct daemon *d);
void logind_close(struct daemon *d);
void logind_dispatch(struct daemon *d);
int logind_timeout_ms(struct daemon *d);

/*
 * Power thread, lock held, after the count was written and before the
 * suspend: asks logind's ListInhibitors on the thread's own connection.
 * 1 if a sleep inhibitor in block mode is there that policy does not deny
 * (one not mirrored yet counts), 0 if none, or if logind cannot be asked
 * (logged once).  arg is the daemon.
 */
int logind_last_look(void *arg);

/*
 * Power thread, step 6 (powerloop's suspend_via; arg is the daemon).  In
 * mode suspend: the kernel is armed already (the count written); ask
 * logind to Suspend, so that it sends PrepareForSleep(true), waits for its
 * delay inhibitors and writes the sleep state itself (its own SuspendState
 * setting, not [suspend] state), and wait for its PrepareForSleep(false).
 * 0 if the kernel counted a successful suspend meanwhile, else its
 * last_failed_errno (negative), -EIO if it counted a failure without one,
 * or -errno of the call.  Without logind on the bus, or in another mode:
 * the backend's own state write.
 */
int logind_suspend(void *arg, const char *state);

/*
 * logind's word on a person (logind_presence.c, docs/policy.md): an
 * active session that sets IdleHint and is not idle ("session"), and
 * "idle" inhibitors in block mode ("idle-inhibit"), both awake sources
 * that a closed lid stops.  The main thread follows them on its bus
 * connection (logind_session.c, logind.c) and writes the state with the
 * calls below (they take the segment lock and kick the loop); the power
 * thread reads it in the sources' holding() and describe().
 */
struct logind_presence;
enum logind_presence_bus {
	LP_BUS_BUILT_WITHOUT = 0, LP_BUS_NONE = 1, LP_BUS_ABSENT = 2, LP_BUS_FOLLOWING = 3,
};
/* NULL if neither is wanted ([policy] session_idle, idle_inhibitors). */
struct logind_presence *logind_presence_new(struct daemon *d, int sessions, int inhibitors);
/* The sources to register, NULL for one not wanted. */
struct awake_source *logind_presence_session_source(struct logind_presence *p);
struct awake_source *logind_presence_inhibit_source(struct logind_presence *p);
int logind_presence_wants_sessions(const struct logind_presence *p);
int logind_presence_wants_inhibitors(const struct logind_presence *p);
void logind_presence_free(struct logind_presence *p);
/* Main thread (p may be NULL).  bus: enum logind_presence_bus; anything
 * but FOLLOWING forgets every session and inhibitor. */
void logind_presence_bus(struct logind_presence *p, int bus);
/* holding: sessions that count and are active and not idle; counted:
 * those that count; seen: all listed; first: the first that holds, in
 * words (cleaned). */
void logind_presence_sessions(struct logind_presence *p, unsigned holding, unsigned counted,
                              unsigned seen, const char *first);
/* n idle block inhibitors that policy allows; first: one of them. */
void logind_presence_inhibitors(struct logind_presence *p, const struct logind_inhibitor *first,
                                unsigned n);
/* Main thread: deny or allow changed; the idle inhibitors, which are
 * not slots, are listed again (nothing without a bus). */
void logind_policy_changed(struct daemon *d);
/* Whether a colon-separated list of "what"s has "idle" (logind_names.c). */
int logind_what_has_idle(const char *what);

#endif
