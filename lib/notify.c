/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The segment's condition variable, built on a futex sequence word (see
 * wl_shm.h for why not pthread_cond_t).  Protocol:
 *   notifier (lock held): wake_seq++, then FUTEX_WAKE if a waiter exists;
 *   waiter  (lock held): read wake_seq, set waiters, unlock, FUTEX_WAIT
 *   while wake_seq still has the value read, relock.
 * Because wake_seq only changes under the lock, a notification that
 * happens after the waiter read it makes FUTEX_WAIT return at once: no
 * lost wake-up.  Nothing here can be left "locked" by a dying process.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "wl_shm.h"

void wl_notify(struct wl_shm_header *hdr)
{
	__atomic_add_fetch(&hdr->wake_seq, 1, __ATOMIC_SEQ_CST);
	/* Skip the system call when nobody sleeps: the common case. */
	if (__atomic_load_n(&hdr->waiters, __ATOMIC_SEQ_CST))
		syscall(SYS_futex, &hdr->wake_seq, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

int wl_wait(struct wl_shm_header *hdr, uint64_t timeout_ns)
{
	uint32_t seq = __atomic_load_n(&hdr->wake_seq, __ATOMIC_SEQ_CST);
	struct timespec ts = {
		.tv_sec = (time_t)(timeout_ns / 1000000000u),
		.tv_nsec = (long)(timeout_ns % 1000000000u),
	};

	__atomic_add_fetch(&hdr->waiters, 1, __ATOMIC_SEQ_CST);
	wl_unlock(hdr);
	/* Relative timeout (none when 0); EAGAIN/EINTR/ETIMEDOUT all mean
	 * "re-check". */
	syscall(SYS_futex, &hdr->wake_seq, FUTEX_WAIT, seq, timeout_ns ? &ts : NULL, NULL, 0);
	__atomic_sub_fetch(&hdr->waiters, 1, __ATOMIC_SEQ_CST);
	return wl_lock(hdr);
}
