/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A client's region: the only memory a client writes that the daemon
 * reads.  The client creates it (a memfd sealed against shrinking, so the
 * daemon's read-only mapping can never fault), owns it for its whole
 * life and hands it to each daemon it registers with, the successor of a
 * crashed daemon included: holds live here, not in the daemon, so they
 * survive a daemon restart without being moved.
 *
 * Everything in it is untrusted input to the daemon.  The daemon reads
 * the depths and `timed_until` to decide whether it may suspend, copies
 * what it shows, and uses no index, size or count from here.  A client
 * that scribbles over its region can keep the system awake under its own
 * name (the deny policy stops that)
 * or lose its own holds: nothing else.
 *
 * The handshake with the daemon (Dekker's, in both directions):
 *   acquire:  client  holds[i].depth += 1 (seq_cst); read hdr->phase
 *             daemon  phase = CLOSED (seq_cst); read every depth
 *     Either the daemon sees the hold, or the client sees CLOSED and
 *     waits for OPEN: its acquire returns once the attempt is over.
 *   release:  client  holds[i].depth -= 1 (seq_cst); read hdr->watched[slot]
 *             daemon  hdr->watched[slot] = gen (seq_cst); read that client's depths
 *     Either the daemon sees the release, or the client sees `watched`
 *     and kicks it (WL_OP_KICK on its connection), once per generation.
 *     The daemon watches every holder, so a client stopped between its
 *     release and its kick holds up no one else's release; one that
 *     kicked and holds again is left unwatched while others are watched,
 *     so a busy client does not wake the daemon at each of its pairs.
 */
#ifndef WL_REGION_H
#define WL_REGION_H

#include <stdint.h>
#include "wl_shm.h"

#define WL_REGION_MAGIC 0x52474c57u     /* "WLGR" little-endian */
/* Untimed nesting of one hold stops here (-EOVERFLOW). */
#define WL_DEPTH_MAX 0x7fffffffu

/*
 * One hold: everything the fast path touches, on one cache line of its
 * own.  The depth sits with the hold's statistics so that a pair costs
 * one line of one page whatever the number of holds and clients (a
 * layout with the depths side by side and the statistics elsewhere costs
 * two pages a pair, and page walks once there are many clients:
 * bench/README.md, figure 2).
 */
struct wl_region_hold {
	uint32_t depth;         /* untimed nesting: what the daemon decides on */
	/* Its first activation in the daemon's attempt_epoch first_epoch:
	 * what the wake ledger counts as a claim. */
	uint32_t first_epoch;
	uint64_t deadline;      /* CLOCK_MONOTONIC ns of a timed hold, 0 = none */
	uint64_t activations;   /* times it became active (statistics) */
	uint64_t held_ns;       /* time active, CLOCK_MONOTONIC_COARSE */
	uint64_t since;         /* COARSE ns it became active */
	uint64_t first_since;   /* COARSE ns */
	/* The library's own word, never read by the daemon: the address of
	 * the wakelock_client this hold belongs to (the hold handle is the
	 * address of this line, lib/hold.c). */
	uint64_t owner;
	uint64_t reserved;
} __attribute__((aligned(64)));
_Static_assert(sizeof(struct wl_region_hold) == 64, "a hold is one cache line");

struct wl_region {
	uint32_t magic;
	uint16_t abi_major;
	uint16_t abi_minor;
	uint32_t size;
	uint32_t nholds;
	uint8_t pad0[48];
	/* The latest deadline of the timed holds (0 = none): one word for
	 * all of them, so that the daemon need not look at each. */
	uint64_t timed_until;
	uint8_t pad1[56];
	/* Per alarm (index as the daemon assigned it): the fires whose work
	 * the client has finished (wakelock_alarm_done). */
	uint64_t alarm_done[WAKELOCK_MAX_ALARMS_PER_CLIENT];
	struct wl_region_hold holds[WAKELOCK_MAX_HOLDS_PER_CLIENT];
};

/* Whether no untimed hold of the region is held. */
static inline int wl_region_untimed_idle(const struct wl_region *rg)
{
	for (uint32_t j = 0; j < WAKELOCK_MAX_HOLDS_PER_CLIENT; j++)
		if (__atomic_load_n(&rg->holds[j].depth, __ATOMIC_SEQ_CST))
			return 0;
	return 1;
}

/* Whether the region keeps the system awake at `now` (the daemon's
 * reading; also the client's, to decide whether to kick). */
static inline int wl_region_holding(const struct wl_region *rg, uint64_t now)
{
	return __atomic_load_n(&rg->timed_until, __ATOMIC_SEQ_CST) > now ||
	       !wl_region_untimed_idle(rg);
}

/* region.c */
/* Client: a new sealed memfd region, mapped read-write. */
int wl_region_create(struct wl_region **rg, int *fd);
/* Daemon: map a client's region read-only after checking that it is a
 * memfd sealed against shrinking and large enough (-EBADF otherwise).
 * fd stays the caller's: a descriptor that is not a memfd may block in
 * close() (daemon/closer.c).  Its content is not checked: it is read as
 * untrusted data, never relied on. */
int wl_region_map(int fd, const struct wl_region **rg);
void wl_region_unmap(const struct wl_region *rg);

#endif
