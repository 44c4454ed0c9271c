/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef WLD_POWERLOOP_H
#define WLD_POWERLOOP_H

#include <limits.h>
#include <pthread.h>
#include "lib/wl_shm.h"
#include "backoff.h"
#include "hibernate_after.h"
#include "ledger.h"
#include "power.h"

/*
 * Every start stays awake this long before its first suspend (the
 * default of [suspend] start_grace_ms), so that clients that held under
 * the previous daemon can re-register their holds: the library retries
 * for as long as a hold is held, at most WL_REREGISTER_STEP_MAX_MS apart
 * (lib/watch.c).  Not only after an unclean exit found in the run dir: a
 * `systemctl stop` removes the run dir, the pid file with it, and its
 * clients come back all the same.  After an unclean exit the grace is
 * never shorter than this, whatever the configuration says.  One place.
 */
#define WLD_RESTART_GRACE_MS 3000u

struct power_params {
	char state[8];
	unsigned min_awake_ms;
	unsigned backoff_initial_ms, backoff_factor, backoff_max_ms;
	unsigned short_suspend_ms;
	unsigned hibernate_after_s;     /* hibernate_after.h; 0: off */
	char pre_hook[PATH_MAX], post_hook[PATH_MAX];
	unsigned hook_timeout_ms;       /* a hook still running then is killed */
	/* dstats.last_wake filled in ([suspend] wake_reasons): from the
	 * ledger's record when there is a ledger, else by the backend. */
	int wake_reasons;
};

struct wl_region;
struct ledger;
struct ws_snapshot;

struct powerloop {
	struct wl_shm_header *hdr;
	/* The clients' regions by slot (NULL = none), read under hdr's
	 * lock; the main thread changes them under it. */
	const struct wl_region *const *regions;
	int kick_fd;                    /* eventfd: re-evaluate (see powerloop.c) */
	int resume_fd;                  /* eventfd: an attempt is recorded (server.c) */
	uint32_t watch_gen;             /* the last generation of hdr->watched */
	/* Set by the main thread when a client kicks (WL_OP_KICK), read and
	 * cleared by the loop at its next look: it tells busy clients. */
	uint8_t kicked[WL_MAX_CLIENTS];
	uint8_t busy[WL_MAX_CLIENTS];   /* the loop's scratch (under hdr's lock) */
	/* The wake ledger (docs/ledger.md), NULL: none.  The snapshots are
	 * the loop's own (32 KiB each, not on the stack). */
	struct ledger *ledger;
	struct ws_snapshot *ws_before, *ws_after;
	/* ws_after is the last snapshot taken, after the attempt that began
	 * with wakeup_count ws_count (see step_read_count). */
	int ws_after_fresh;
	unsigned ws_count;
	uint32_t claim_epoch;           /* the open attempt's hdr->attempt_epoch */
	/* The daemon alarm due first, for the ledger's cause (under hdr's
	 * lock; alarms.c): slot and index, or -1. */
	int alarm_slot, alarm_index;
	/* When the alarm timer expires next (CLOCK_BOOTTIME ns, 0: disarmed;
	 * under hdr's lock; alarms.c). */
	uint64_t alarm_next_boot;
	struct power_backend *be;
	struct power_clock *clk;
	pthread_mutex_t plock;          /* guards pending */
	struct power_params params;     /* used by the loop thread only */
	struct power_params pending;
	int have_pending;
	struct backoff bo;              /* failed and short suspends */
	struct backoff abort_bo;        /* refused count writes in a row */
	unsigned aborts_in_row;
	int stop;                       /* set before a kick */
	/* Returns from the wait of step 3: 0 while held and nothing happens. */
	unsigned long wakeups;
	/* Awake time before the first cycle (set before the loop starts). */
	uint64_t start_grace_ns;
	/* Tests only (NULL otherwise): runs in the wait between the look that
	 * found holders and the choice of the one to watch, where a holder
	 * may end its hold unwatched (test_powerloop.c). */
	void (*before_watch)(void *arg);
	void *before_watch_arg;
	/* Awake sources (awake.h): what keeps the system awake besides the
	 * clients' regions and daemon-owned holds.  The imminent alarm is
	 * always there (powerloop_init); logind's last look and the display
	 * are added by main.c. */
	struct awake_source *sources[WL_MAX_SOURCES];
	unsigned nsources;
	unsigned sources_held;          /* how many held at the last look */
	/* Who held at the last look that found anyone since the last
	 * attempt began: the next record's ended_by (powerloop.c). */
	struct ledger_holder last_holder;
	struct awake_source *alarm_src;
	/* Suspend-then-hibernate's spell of sleep (loop thread only). */
	struct hib_spell spell;
	/* Step 6 by another way than the backend's state write (logind's
	 * Suspend, logind.c): called like be->suspend by the loop thread,
	 * lock held.  NULL: the backend. */
	int (*suspend_via)(void *arg, const char *state);
	void *suspend_via_arg;
	/* Called by the loop thread after each suspend attempt (stats file). */
	void (*after_cycle)(struct powerloop *pl, void *arg);
	void *arg;
};

/* 0, or -errno when no eventfd could be created. */
int powerloop_init(struct powerloop *pl, struct wl_shm_header *hdr,
                   const struct wl_region *const *regions, struct power_backend *be,
                   struct power_clock *clk, const struct power_params *p);
void powerloop_destroy(struct powerloop *pl);
/* Any thread: the loop re-evaluates (a client went, the policy changed). */
void powerloop_kick(struct powerloop *pl);
/* The main thread: registered client slot kicked (WL_OP_KICK). */
void powerloop_client_kick(struct powerloop *pl, uint32_t slot);
/* Keep a wake ledger: one record per attempt (powerloop_init first;
 * allocates the snapshots: -ENOMEM). */
int powerloop_set_ledger(struct powerloop *pl, struct ledger *l);
/* The loop thread: if the ledger's claim window has ended, record the
 * claims (holds that became active since the attempt) and close it.
 * Called by the loop itself; public for tests. */
void powerloop_ledger_poll(struct powerloop *pl, int force);
/* The main thread, lock held: a client (hold -1) or one of its holds is
 * about to go; record its claims now, while its region is still there. */
void powerloop_ledger_forget(struct powerloop *pl, uint32_t slot, int hold);
/* Takes effect at the start of the next cycle (any thread). */
void powerloop_set_params(struct powerloop *pl, const struct power_params *p);
/* One cycle of the loop: 0 to go on, 1 when stopping, <0 on a fatal error. */
int powerloop_cycle(struct powerloop *pl);
/* Cycles until stopped; returns 0 or the fatal error. */
int powerloop_run(struct powerloop *pl);
/* Any thread: no suspend starts after this returns. */
void powerloop_request_stop(struct powerloop *pl);

/*
 * hooks.c: run a hook program as `path phase` with WAKELOCKD_PHASE=phase
 * in its environment, stdin on /dev/null, a clean signal mask and default
 * signal actions, in a process group of its own, and wait for it at most
 * timeout_ms (then it is killed and reaped).  Returns 0 if it exited 0,
 * its wait status (> 0) if it exited non-zero or died of a signal,
 * -ETIMEDOUT if it had to be killed, -errno if it could not be started.
 * Every outcome but 0 is logged.
 */
int run_hook(const char *path, const char *phase, unsigned timeout_ms);
/* Tests: wait by polling instead of with a pidfd (as on kernels < 5.3). */
extern int hooks_no_pidfd;

#endif
