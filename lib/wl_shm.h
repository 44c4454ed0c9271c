/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The daemon's published state (ABI 7): a memfd that only wakelockd
 * writes.  It maps it read-write, then seals it (F_SEAL_FUTURE_WRITE,
 * SHRINK, GROW): every client and the CLI get the descriptor over the
 * socket and can map it read-only, nothing more.  Clients write nothing
 * here; what they write is their own region (wl_region.h), which the
 * daemon maps read-only in turn.  So no byte is writable by two parties,
 * and no lock is shared: `lock` below is the daemon's own (its main and
 * power threads), process-private.
 *
 * Primary state, all written by the daemon:
 *   slot.state, slot.allowed, identity (pid, uid, name from SO_PEERCRED
 *   and the registration), hold names (one request per hold), alarms.
 * Mirrored from the clients' regions (wl_table_sync), for display and
 * statistics only, never trusted for anything else:
 *   hold.depth, hold.deadline, hold.active of client holds, slot.active,
 *   the client-counted statistics (acquire_count, total_held_ns).
 * Daemon-owned holds (an alarm's hold, owner WL_HOLD_DAEMON) live here
 * alone and are acquired and released by the daemon.
 *
 * The live-slot list: hdr->order[] is a permutation of the slot indices
 * whose first hdr->nlive entries are the LIVE slots (slot.pos is a slot's
 * index in it).  Registration takes order[nlive], reaping swaps the slot
 * with the last live entry: both O(1).  Everything the daemon does while
 * clients exist walks order[0..nlive) only.
 */
#ifndef WL_SHM_H
#define WL_SHM_H

#include <pthread.h>
#include <stdint.h>
#include <stddef.h>
#include <time.h>
#include "wakelock.h"

#define WL_SHM_MAGIC 0x444b4c57u        /* "WLKD" little-endian */
#define WL_ABI_MAJOR 7u                 /* incompatible layout changes */
/* Awake sources published (daemon/awake.h): laptop policy with logind
 * and a wake grace uses 9. */
#define WL_MAX_SOURCES 16u
#define WL_ABI_MINOR 0u                 /* compatible additions */
/*
 * Sizing: 1024 clients x 128 holds.  A published hold entry is 64 bytes;
 * the memfd is ~10 MiB of address space but only the header and the slots
 * in use are ever touched (wl_seg_init writes the header alone), so a
 * daemon with few clients pays a few pages.
 */
#define WL_MAX_CLIENTS 1024u
#define WAKELOCK_MAX_HOLDS_PER_CLIENT 128u
#define WL_ERRNO_BUCKETS 8u
#define WL_WAKE_MAX 128u
#define WAKELOCK_MAX_ALARMS_PER_CLIENT 16u
/* An alarm holds the system awake through a hold of its own client called
 * "alarm:NAME" (see wl_shm_alarm). */
#define WL_ALARM_HOLD_PREFIX "alarm:"
/* The logind follower's slots are "logind:WHO" (daemon/logind.c). */
#define WL_LOGIND_PREFIX "logind:"
/* A policy entry naming a user rather than a client: "uid:1000". */
#define WL_UID_PREFIX "uid:"

enum wl_slot_state { WL_SLOT_FREE = 0, WL_SLOT_LIVE = 1 };
/* Who acquires and releases a hold: its client, in its own region, or
 * the daemon (an alarm's hold). */
enum wl_hold_owner { WL_HOLD_CLIENT = 0, WL_HOLD_DAEMON = 1 };
/*
 * hdr->phase, the daemon's half of the handshake with the clients' fast
 * path (lib/hold.c): CLOSED from just before its last look at the
 * regions until the suspend attempt is over.  A client that sees CLOSED
 * after publishing a hold waits on this futex word for OPEN.
 */
enum wl_phase { WL_PHASE_OPEN = 0, WL_PHASE_CLOSED = 1 };
enum wl_daemon_state {
	WL_D_STARTING = 0,
	WL_D_READING,      /* step 1: reading wakeup_count */
	WL_D_WAITING,      /* step 3: holds present */
	WL_D_SUSPENDING,   /* steps 5-6 */
	WL_D_GRACE,        /* awake after resume / backing off */
	WL_D_STOPPED,
};

struct wl_shm_hold {
	char name[WAKELOCK_NAME_MAX];
	uint32_t in_use;        /* entry allocated by its client */
	uint32_t depth;         /* untimed nesting */
	uint64_t deadline;      /* CLOCK_MONOTONIC ns of a timed hold, 0 = none */
	uint64_t since;         /* CLOCK_MONOTONIC ns it became active */
	uint32_t active;        /* derived: depth > 0 || deadline > now */
	uint32_t owner;         /* enum wl_hold_owner */
};

/*
 * The schedule of one wake alarm, in CLOCK_BOOTTIME ns (it counts time
 * asleep, as the alarm must).  The alarm is due at `due` and may be
 * delayed until due + window so that alarms whose windows overlap share
 * one wake-up (daemon/alarm_sched.c).
 */
struct wl_alarm_times {
	uint64_t due;           /* next nominal expiry, 0 = disarmed */
	uint64_t period;        /* between expiries, 0 = one-shot */
	uint64_t window;        /* how late it may fire */
};

/*
 * A wake alarm, written by the daemon (the client asks over its socket),
 * except done_seq.  When it fires, the daemon bumps fired_seq, signals
 * the client's eventfd, and before that, if the client has finished every
 * earlier fire (done_seq == fired_seq), acquires the hold `hold`, timed by
 * the safety timeout.  In wakelock_alarm_done the client sets done_seq to the
 * fires it has seen and then releases the hold, unless the alarm fired
 * again meanwhile: then it renews the hold for that fire instead, so a
 * fire is never released by the work of an earlier one.  A client that
 * stops calling wakelock_alarm_done loses its hold once, after the timeout, and
 * gets no new one until it calls it again.
 */
struct wl_shm_alarm {
	char name[WAKELOCK_NAME_MAX]; /* as given, without the hold's prefix */
	uint32_t in_use;
	uint32_t hold;          /* index of its hold in the same slot */
	struct wl_alarm_times t;
	uint64_t fired_seq;     /* expiries so far */
	uint64_t done_seq;      /* by the client: expiries whose work is done */
	uint64_t last_fired;    /* CLOCK_BOOTTIME ns of the last one, 0 = never */
	uint32_t signal;        /* the daemon's: fired, client not told yet */
	uint32_t pad;
};

struct wl_shm_slot {
	uint32_t state;         /* enum wl_slot_state */
	uint32_t allowed;       /* 0 when denied by policy */
	uint64_t client_id;     /* assigned by the daemon, never reused */
	int32_t pid;            /* from SO_PEERCRED, for display */
	uint32_t uid;
	char name[WAKELOCK_NAME_MAX];
	uint32_t active;        /* derived: number of active holds */
	uint32_t dactive;       /* of which daemon-owned (exact, not mirrored) */
	uint32_t holding;       /* at the daemon's last look: keeps the system awake */
	uint32_t alarm_count;   /* alarms in use */
	uint32_t pad;
	uint32_t pos;           /* derived: index in hdr->order while LIVE */
	uint64_t registered_rt; /* CLOCK_REALTIME ns */
	/* CLOCK_MONOTONIC ns of the registration: no hold of the slot is
	 * shown as held since before it (wl_table_sync). */
	uint64_t registered_mono;
	uint64_t active_since;  /* CLOCK_MONOTONIC ns when active became > 0 */
	/* derived: 0, or <= the earliest deadline of the slot's holds (it may
	 * be stale-early after a cancel: expiry then rescans this slot). */
	uint64_t next_deadline;
	/* statistics, as the kernel keeps them per wakeup source.  The
	 * first two are the client's own count (its region) plus the
	 * daemon-owned holds' (d_*), summed at each wl_table_sync. */
	uint64_t acquire_count;     /* hold activations */
	uint64_t total_held_ns;     /* time holds were active, summed per hold */
	uint64_t max_held_ns;       /* longest daemon-owned activation */
	uint64_t d_acquire_count;
	uint64_t d_total_held_ns;
	/* Last activation: CLOCK_MONOTONIC ns and hdr->rt_offset as it was
	 * then; wall time for display is last_acquired_mono +
	 * last_acquired_off (wl_slot_last_acquired_rt). */
	uint64_t last_acquired_mono;
	int64_t last_acquired_off;
	uint64_t prevented_count;   /* suspend attempts it held off */
	uint64_t denied_count;      /* attempts it would have held off, denied */
	uint64_t expire_count;      /* timed holds that lapsed */
	uint64_t alarm_fires;       /* alarm expiries delivered */
	uint64_t alarm_late_ns;     /* sum of (fire time - due time) */
	uint64_t alarm_late_max_ns;
	struct wl_shm_hold holds[WAKELOCK_MAX_HOLDS_PER_CLIENT];
	struct wl_shm_alarm alarms[WAKELOCK_MAX_ALARMS_PER_CLIENT];
};

struct wl_errno_count {
	int32_t err;
	uint32_t pad;
	uint64_t count;
};

struct wl_shm_dstats {
	uint64_t attempts;        /* writes to /sys/power/state */
	uint64_t successes;       /* ... that returned 0 */
	uint64_t aborts;          /* wakeup_count write refused (kernel event) */
	uint64_t failures;        /* state write failed */
	uint64_t read_errors;     /* wakeup_count read failed */
	uint64_t asleep_ns;       /* sum of CLOCK_BOOTTIME - CLOCK_MONOTONIC growth */
	uint64_t last_asleep_ns;
	uint64_t last_resume_rt;  /* CLOCK_REALTIME ns */
	uint64_t waits;           /* cycles that found holds */
	uint64_t backoff_ms;      /* current backoff, 0 when none */
	uint64_t alarm_wakeups;   /* alarm timer expiries that fired alarms */
	uint64_t alarm_fires;     /* alarms fired by them (> wakeups: coalesced) */
	uint32_t alarm_wakes;     /* 1: CLOCK_BOOTTIME_ALARM, wakes a suspended system */
	uint32_t pad;
	struct wl_errno_count by_errno[WL_ERRNO_BUCKETS];
	char last_wake[WL_WAKE_MAX]; /* "irq 4; ttyS1" */
};

struct wl_shm_header {
	uint32_t magic;
	uint16_t abi_major;
	uint16_t abi_minor;
	uint32_t size;          /* bytes of the whole segment */
	uint32_t header_size;
	uint32_t slot_size;
	uint32_t nslots;
	uint32_t nholds;
	int32_t daemon_pid;
	uint64_t daemon_start_rt;
	uint32_t gone;          /* set when the daemon exits or is replaced */
	uint32_t dstate;        /* enum wl_daemon_state */

	pthread_mutex_t lock;   /* the daemon's threads only (see the top) */
	uint32_t phase;         /* enum wl_phase: futex word, see above */
	uint32_t waiting;       /* 1 while the daemon waits for holds to end (step 3) */

	uint32_t counter;       /* derived: active holds of live, allowed slots */
	uint32_t holders;       /* derived: allowed slots holding at the last look */
	uint64_t next_deadline; /* earliest timed-hold deadline known, 0 = none */
	uint64_t next_client_id;
	/* CLOCK_REALTIME - CLOCK_MONOTONIC in ns, refreshed by the daemon (at
	 * start, after every suspend and whenever its loop wakes), so that
	 * clients need not read the wall clock on the fast path. */
	int64_t rt_offset;
	uint32_t nlive;         /* derived: live slots = order[0..nlive) */
	uint32_t alarm_timeout_ms; /* the daemon's, for clients renewing an alarm's hold */
	struct wl_shm_dstats dstats;
	/* Suspend attempts begun.  A client stamps a hold's first
	 * activation in each epoch with it, so that the wake ledger can tell
	 * which holds were taken after an attempt, however often they were
	 * taken again before the daemon looked (docs/ledger.md). */
	uint32_t attempt_epoch;
	uint32_t policy_mode;   /* [policy] mode: 0 appliance, 1 phone */
	uint32_t nsources;      /* awake sources[0..nsources) (daemon/awake.h) */
	uint8_t reserved[244];
	/* What keeps the system awake besides clients: each awake source's
	 * name, whether it held at the daemon's last look and its state in
	 * words ("display card0-Virtual-1 on"), for `wakelock status`. */
	struct wl_shm_source {
		char name[WAKELOCK_NAME_MAX];
		char state[96];
		uint32_t holding;
		uint32_t pad;
	} sources[WL_MAX_SOURCES];
	/* watched[slot] != 0: the daemon waits for that client's last hold
	 * to end, and the client must kick it (WL_OP_KICK on its connection)
	 * when it does (lib/hold.c).  The value is a generation, new at each
	 * watch, so that a client kicks once per watch however many holds it
	 * takes and lets go of meanwhile.  Every holder is watched (but one
	 * that kicked and holds again, while others are watched): a client
	 * stopped between its release and its kick then delays nobody's
	 * release but its own.  Side by side rather than in the slots: every
	 * client's release reads its word, and one page for all keeps that
	 * read from costing a page per client. */
	uint32_t watched[WL_MAX_CLIENTS];
	uint32_t order[WL_MAX_CLIENTS];
	struct wl_shm_slot slots[];
};

static inline size_t wl_shm_total_size(uint32_t nslots)
{
	return sizeof(struct wl_shm_header) + (size_t)nslots * sizeof(struct wl_shm_slot);
}

/* Wall-clock time (CLOCK_REALTIME ns) of a slot's last activation, 0 if
 * never: derived lazily from the monotonic stamp (display only). */
static inline uint64_t wl_slot_last_acquired_rt(const struct wl_shm_slot *s)
{
	if (!s->last_acquired_mono)
		return 0;
	return s->last_acquired_mono + (uint64_t)s->last_acquired_off;
}

/* A mapped segment. */
struct wl_seg {
	struct wl_shm_header *hdr;
	size_t len;
	int fd;
};

/* segment.c */
int wl_seg_validate(const void *map, size_t maplen);
/* Map a published segment read-only (clients, CLI); takes ownership of
 * fd. */
int wl_seg_map_fd(int fd, struct wl_seg *seg);
void wl_seg_unmap(struct wl_seg *seg);
/* hdr must point to a zero-filled mapping of wl_shm_total_size(nslots)
 * bytes (a fresh ftruncate()d file, an anonymous mapping, calloc): only
 * the header is written, so unused slots are never touched. */
int wl_seg_init(struct wl_shm_header *hdr, uint32_t nslots);
/* Daemon: a new memfd segment of nslots, initialised, mapped read-write
 * here and sealed so that nobody else can ever write it. */
int wl_seg_create(struct wl_seg *seg, uint32_t nslots);
/* A copy of the header and the live slots in a new sealed memfd (the
 * CLI's snapshot, consistent because taken under the lock); returns
 * the descriptor or -errno.  Lock held. */
int wl_seg_snapshot(const struct wl_shm_header *hdr);

/* lock.c: the daemon's own lock over the published state (its threads
 * only; clients never take it). */
void wl_lock(struct wl_shm_header *hdr);
void wl_unlock(struct wl_shm_header *hdr);
/* The futex word hdr->phase (clients wait on it, the daemon wakes). */
void wl_phase_wake(struct wl_shm_header *hdr);
int wl_phase_wait(const struct wl_shm_header *hdr, uint32_t phase, uint64_t timeout_ns);

/* table.c: operations on the table; all called with the lock held.
 * `now` is CLOCK_MONOTONIC ns, or WL_NOW_LAZY: the clock is then read at
 * most once, and only if the operation needs it. */
#define WL_NOW_LAZY 0u
struct wl_region;
/* Nanoseconds on clock id (CLOCK_BOOTTIME, ...): the one conversion of a
 * timespec in the project's C code.  Inline, with the coarse clock of the
 * hold statistics: the fast path stamps both edges of a hold, and under
 * an emulator (QEMU TCG) every call and return it saves is a lookup of
 * translated code. */
static inline uint64_t wl_clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);   /* vDSO for these clocks: no system call */
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t wl_now_coarse(void)
{
	return wl_clock_ns(CLOCK_MONOTONIC_COARSE);
}

uint64_t wl_now_mono(void);
uint64_t wl_now_real(void);
/* Refresh hdr->rt_offset (daemon). */
void wl_table_update_rt_offset(struct wl_shm_header *hdr);
void wl_table_recount(struct wl_shm_header *hdr, uint64_t now);
/* Daemon-owned holds only (an alarm's): -EPERM for a client's hold. */
int wl_table_acquire(struct wl_shm_header *hdr, uint32_t slot, uint32_t hold,
                     uint64_t timeout_ns, uint64_t now);
int wl_table_release(struct wl_shm_header *hdr, uint32_t slot, uint32_t hold,
                     int all, uint64_t now);
/* Expire lapsed daemon-owned timed holds; returns the next deadline. */
uint64_t wl_table_expire(struct wl_shm_header *hdr, uint64_t now);
/*
 * The daemon's decision: how many live, allowed slots keep the system
 * awake, from each one's region (regions[slot], NULL = none) and its
 * daemon-owned holds; sets slot.holding and hdr->holders, takes note of
 * finished alarm work (alarm_done) and expires daemon-owned holds.
 * *next gets the earliest time at which the answer may change by
 * itself (a timed hold's end), 0 = none.  O(live slots).
 */
uint32_t wl_table_holders(struct wl_shm_header *hdr, const struct wl_region *const *regions,
                          uint64_t now, uint64_t *next);
/* Mirror the client holds of every live slot from its region into the
 * table, for display and statistics: O(live holds). */
void wl_table_sync(struct wl_shm_header *hdr, const struct wl_region *const *regions,
                   uint64_t now);
/*
 * A client's slot: -EPERM for a name with a prefix the daemon keeps for
 * its own slots and policy (wl_name_reserved), -EADDRINUSE for the name
 * of another live slot (a name is its owner's while it lives: deny and
 * `list` go by it), -ENOSPC when the table is full.
 */
int wl_table_slot_alloc(struct wl_shm_header *hdr, int32_t pid, uint32_t uid,
                        const char *name, int allowed, uint64_t *client_id);
/* The daemon's own slot (the logind follower's): any valid name, even
 * one taken (two inhibitors of one program are two slots). */
int wl_table_slot_alloc_own(struct wl_shm_header *hdr, int32_t pid, uint32_t uid,
                            const char *name, int allowed, uint64_t *client_id);
/* The daemon's reply text for a refusal r of wl_table_slot_alloc (or of
 * wl_table_hold_alloc, hold != 0) of name, in buf. */
const char *wl_table_refusal(int r, int hold, const char *name, char *buf, size_t len);
void wl_table_slot_free(struct wl_shm_header *hdr, uint32_t slot, uint64_t now);
void wl_table_set_allowed(struct wl_shm_header *hdr, uint32_t slot, int allowed,
                          uint64_t now);
/* A hold entry named `name`: at index `want` (-1 = the first free),
 * -EEXIST if that one is taken; a client's (owner WL_HOLD_CLIENT) may not
 * have a reserved name (-EPERM): "alarm:NAME" must be an alarm's. */
int wl_table_hold_alloc(struct wl_shm_header *hdr, uint32_t slot, const char *name,
                        uint32_t owner, int want);
void wl_table_hold_free(struct wl_shm_header *hdr, uint32_t slot, uint32_t hold,
                        uint64_t now);

/* names.c */
int wl_name_check(const char *name);
/* Whether name starts with a prefix the daemon keeps for itself
 * (WL_LOGIND_PREFIX, WL_ALARM_HOLD_PREFIX, WL_UID_PREFIX): refused as a
 * client's or a client's hold's name. */
int wl_name_reserved(const char *name);
/* A deny/allow entry in its one spelling: a valid name, or "uid:N" with
 * N decimal (leading zeros dropped) into out; -EINVAL otherwise. */
int wl_policy_key(const char *in, char out[WAKELOCK_NAME_MAX]);
/* Whether a name may contain ch (the rule wl_name_check applies). */
int wl_name_char_ok(unsigned char ch);

#endif
