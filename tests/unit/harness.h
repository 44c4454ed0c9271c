/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Running the real wakelockd binary against a fake /sys under a temp dir. */
#ifndef HARNESS_H
#define HARNESS_H

#include <sys/types.h>
#include "../../lib/wl_shm.h"

struct hd {
	pid_t pid;
	char dir[256];
	char sock[320];
	char shm[320];
	char stats[320];
	char conf[320];
	char log[320];
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
/* Map the daemon's segment (as the CLI does). */
int hd_observe(struct hd *d, struct wl_seg *seg);
uint64_t hd_now_ns(void);
void hd_sleep_ms(unsigned ms);
/* Poll until pred(arg) or timeout_ms; returns 1 if it became true. */
int hd_wait_for(int (*pred)(void *), void *arg, unsigned timeout_ms);

#endif
