/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Running the real wakelockd binary against a fake /sys under a temp dir. */
#ifndef HARNESS_H
#define HARNESS_H

#include <sys/types.h>
#include "lib/wl_region.h"

struct hd {
	pid_t pid;
	char dir[256];
	char sock[320];
	char stats[320];
	char conf[320];
	char log[320];
	/* Set after hd_prepare to start with the daemon's own start grace
	 * (3 s, WLD_RESTART_GRACE_MS); the harness otherwise passes
	 * --start-grace-ms 0, so that a test's first suspend need not wait. */
	int keep_grace;
	/* hd_snap's recent snapshots (older pointers stay valid a while). */
	struct wl_seg snaps[32];
	unsigned nsnap;
};

/* Path of a program built next to the tests (wakelockd, wakelock). */
const char *hd_bin(const char *name);
/* Temp dir with sys/power/{wakeup_count,state,mem_sleep}. */
int hd_prepare(struct hd *d);
/* Start wakelockd (prepare first); extra args NULL-terminated; waits until
 * the socket answers; sets $WAKELOCK_SOCKET.  0 or -1. */
int hd_start(struct hd *d, const char *const *extra);
/* SIGTERM and reap; returns the exit status or -1. */
int hd_stop(struct hd *d);
void hd_cleanup(struct hd *d);
/* Map a snapshot of the daemon's segment (as the CLI does). */
int hd_observe(struct hd *d, struct wl_seg *seg);
/* A fresh snapshot, valid for the next 31 calls (then unmapped); the
 * last good one if the daemon does not answer. */
const struct wl_shm_header *hd_snap(struct hd *d);

/*
 * A client's side of the handshake on a region, for tests that drive the
 * daemon's loop in-process (what lib/hold.c does, without a connection):
 * acquire hold i (timeout_ns 0: untimed) and wait while the phase is
 * closed; release it, writing kick_fd if the daemon watches the slot.
 */
void hd_region_acquire(struct wl_region *rg, uint32_t i, const struct wl_shm_header *pub,
                       uint64_t timeout_ns);
void hd_region_release(struct wl_region *rg, uint32_t slot, uint32_t i,
                       const struct wl_shm_header *pub, int kick_fd);
/* A zeroed region (page-aligned, like a mapping); free with free(). */
struct wl_region *hd_region_new(void);
/* Write data to the file rel under the fake root (d->dir), making its
 * directories; fails the test if it cannot. */
void hd_put(struct hd *d, const char *rel, const char *data);
/* Whether the daemon's log (d->log) has what. */
int hd_log_has(struct hd *d, const char *what);
uint64_t hd_now_ns(void);
void hd_sleep_ms(unsigned ms);
/* Poll until pred(arg) or timeout_ms; returns 1 if it became true. */
int hd_wait_for(int (*pred)(void *), void *arg, unsigned timeout_ms);

#endif
