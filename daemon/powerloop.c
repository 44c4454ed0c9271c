/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The power manager's loop (docs/design.md §3):
 *   1 read wakeup_count   2 lock   3 wait while the counter is nonzero
 *   4 unlock              5 write the count back (failed: back to 1)
 *   6 suspend, back to 1
 * (with a pre-suspend hook, it runs before step 1 once no hold is active;
 * the post-resume hook after step 4 of an attempt that suspended)
 * with one deliberate change: steps 5 and 6 run with the lock still held
 * and step 4 moves after them.  Reason (Android's lesson): if we unlocked
 * after seeing zero, a client could take a hold between our check and the
 * write to /sys/power/state and the system would suspend under it,
 * silently.  Holding the lock makes such a client block in its acquire
 * until the suspend attempt is over; its acquire returns only when the
 * system is awake again, so no hold is ever reported taken while the
 * system goes to sleep.  The cost is that acquires block for the length
 * of one suspend entry (they would be frozen anyway).
 */
#include <errno.h>
#include <string.h>
#include "log.h"
#include "powerloop.h"

/*
 * Step 3 sleeps on the segment's futex word without a timeout unless a
 * timed hold is pending (then until the earliest expiry): no periodic
 * wake-ups while the system is held awake.  Every event that can end or
 * change the wait bumps wake_seq under the segment lock (wl_notify):
 *   last allowed hold released / cancelled  hold_sync (counter -> 0)
 *   earlier timed hold                      wl_table_acquire
 *   client reaped                           wl_table_slot_free
 *   deny/allow change                       wl_table_set_allowed
 *   EOWNERDEAD repair                       wl_table_recount
 *   config reload                           powerloop_set_params
 *   stop                                    powerloop_request_stop
 *   daemon replaced                         segfile (mark_gone)
 */

/*
 * Refused count writes (step 5, EINVAL) mean a kernel wakeup event came
 * after step 1.  The first is retried at once: step 1 blocks while the
 * event is in progress, and a lone event is over by then.  But events
 * may come in a stream (one per read, or zero-length ones that never make
 * step 1 block), and a retry at once would then spin at full speed for as
 * long as the stream lasts.  So the second refusal in a row and every
 * further one wait first: 10 ms, doubling to 1 s.  Short, and separate
 * from the configured backoff (up to a minute by default, for suspends
 * that fail): the events are a reason to stay awake, not a fault, and the
 * system should suspend soon after they stop.  A count accepted resets it.
 */
#define ABORT_BACKOFF_INITIAL_MS 10u
#define ABORT_BACKOFF_MAX_MS 1000u

void powerloop_init(struct powerloop *pl, struct wl_shm_header *hdr, struct power_backend *be,
                    struct power_clock *clk, const struct power_params *p)
{
	memset(pl, 0, sizeof(*pl));
	pl->hdr = hdr;
	pl->be = be;
	pl->clk = clk;
	pl->params = *p;
	pthread_mutex_init(&pl->plock, NULL);
	backoff_init(&pl->bo, p->backoff_initial_ms, p->backoff_factor, p->backoff_max_ms);
	backoff_init(&pl->abort_bo, ABORT_BACKOFF_INITIAL_MS, 2, ABORT_BACKOFF_MAX_MS);
}

void powerloop_destroy(struct powerloop *pl)
{
	pthread_mutex_destroy(&pl->plock);
}

void powerloop_set_params(struct powerloop *pl, const struct power_params *p)
{
	pthread_mutex_lock(&pl->plock);
	pl->pending = *p;
	pl->have_pending = 1;
	pthread_mutex_unlock(&pl->plock);
	/* Wake a waiting loop so that this cycle already uses them (it takes
	 * them in wait_for_zero).  Notify under the segment lock: the loop
	 * checks for pending parameters under it, so the wake-up cannot fall
	 * between its check and its sleep.  Without the lock (a client stuck
	 * inside it for a second), notify anyway: the loop is then not
	 * between check and sleep, as it would need that lock. */
	if (wl_lock_timeout(pl->hdr, 1000) == 0) {
		wl_notify(pl->hdr);
		wl_unlock(pl->hdr);
	} else {
		wl_notify(pl->hdr);
	}
}

static void take_params(struct powerloop *pl)
{
	pthread_mutex_lock(&pl->plock);
	if (pl->have_pending) {
		pl->params = pl->pending;
		pl->have_pending = 0;
		pl->bo.initial_ms = pl->params.backoff_initial_ms;
		pl->bo.factor = pl->params.backoff_factor ? pl->params.backoff_factor : 1;
		pl->bo.max_ms = pl->params.backoff_max_ms;
		if (pl->bo.cur_ms > pl->bo.max_ms)
			pl->bo.cur_ms = pl->bo.max_ms;
	}
	pthread_mutex_unlock(&pl->plock);
}

static int stopping(struct powerloop *pl)
{
	return __atomic_load_n(&pl->stop, __ATOMIC_ACQUIRE);
}

static void set_dstate(struct powerloop *pl, enum wl_daemon_state s)
{
	__atomic_store_n(&pl->hdr->dstate, s, __ATOMIC_RELAXED);
}

/* Count a failure by errno (lock held). */
static void count_errno(struct wl_shm_dstats *st, int err)
{
	unsigned i;

	for (i = 0; i < WL_ERRNO_BUCKETS - 1; i++) {
		if (st->by_errno[i].err == err || st->by_errno[i].count == 0)
			break;
	}
	/* The last bucket collects whatever did not fit (err = -1). */
	if (i == WL_ERRNO_BUCKETS - 1 && st->by_errno[i].err != err)
		err = -1;
	st->by_errno[i].err = err;
	st->by_errno[i].count++;
}

/* Published under the segment lock like every other statistic: readers
 * (the stats file, `wakelock status`) copy the statistics as a whole. */
static void set_backoff_ms(struct wl_shm_header *hdr, uint64_t ms)
{
	if (wl_lock(hdr) == 0) {
		hdr->dstats.backoff_ms = ms;
		wl_unlock(hdr);
	}
}

static void backoff_sleep(struct powerloop *pl, struct backoff *bo)
{
	uint64_t ms = backoff_next(bo);

	set_backoff_ms(pl->hdr, ms);
	set_dstate(pl, WL_D_GRACE);
	log_debug("backing off %llu ms", (unsigned long long)ms);
	pl->clk->sleep_ns(pl->clk, ms * 1000000u);
}

/* Step 3 (lock held): wait until no allowed hold is active, expiring timed
 * holds on the way.  Returns 0, 1 when stopping, <0 on lock failure. */
static int wait_for_zero(struct powerloop *pl)
{
	struct wl_shm_header *hdr = pl->hdr;
	int counted = 0, r;

	for (;;) {
		uint64_t now, next;

		if (stopping(pl))
			return 1;
		/* A reload while we wait applies to this cycle (lock order:
		 * segment lock, then plock; set_params never nests them). */
		take_params(pl);
		wl_table_update_rt_offset(hdr);
		now = wl_now_mono();
		next = wl_table_expire(hdr, now);
		if (hdr->counter == 0)
			return 0;
		if (!counted) {
			/* Credit every holder with this prevented attempt once:
			 * live slots only. */
			for (uint32_t k = 0; k < hdr->nlive; k++) {
				struct wl_shm_slot *s = &hdr->slots[hdr->order[k]];
				if (s->state == WL_SLOT_LIVE && s->allowed && s->active)
					s->prevented_count++;
			}
			hdr->dstats.waits++;
			counted = 1;
			set_dstate(pl, WL_D_WAITING);
		}
		/* Untimed unless a timed hold is pending (expire() removed
		 * those due, so next > now).  See the top of this file. */
		r = wl_wait(hdr, next ? next - now : 0);
		if (r < 0)
			return r;
		pl->wakeups++;
	}
}

int powerloop_cycle(struct powerloop *pl)
{
	struct wl_shm_header *hdr = pl->hdr;
	struct power_params *p = &pl->params;
	uint64_t m0, b0, m1, b1, asleep = 0;
	unsigned count;
	int r, sr;

	take_params(pl);
	if (stopping(pl))
		return 1;

	/*
	 * The pre-suspend hook runs before step 1, once no hold is active,
	 * not between steps 1 and 5.  The handshake makes every wakeup event
	 * after the read of step 1 abort the attempt.  A hook run after that
	 * read would put whatever events the hook itself causes (it touches a
	 * device, talks to the network, arms the RTC, is a wakeup source's
	 * user) inside that window: the count write would be refused, the
	 * retry would run the hook again, which would cause the event again,
	 * and the system would never suspend.  Run before the read, the
	 * hook's own events are part of the count we read (the read waits for
	 * any it left in progress), and the attempt is aborted only by events
	 * that come later, which is what race-freedom asks for: no event
	 * after the snapshot is missed.  Holds are checked again under the
	 * lock after the read, so a hold taken by the hook, or by someone it
	 * told, still keeps the system awake.  A hook that leaves something
	 * behind that keeps causing events meets the abort backoff above.
	 * Never under the lock: hooks may take holds.
	 */
	if (p->pre_hook[0]) {
		r = wl_lock(hdr);
		if (r < 0)
			return r;
		r = wait_for_zero(pl);
		if (r) {
			if (r > 0)
				wl_unlock(hdr);
			return r;
		}
		wl_unlock(hdr);
		set_dstate(pl, WL_D_SUSPENDING);
		/* A failed or killed hook (logged) does not stop the suspend:
		 * a hook that wants the system awake takes a hold. */
		run_hook(p->pre_hook, "pre-suspend", p->hook_timeout_ms);
		if (stopping(pl))
			return 1;
	}

	/* 1. Blocks while the kernel has wakeup events in progress. */
	set_dstate(pl, WL_D_READING);
	r = pl->be->read_count(pl->be, &count);
	if (stopping(pl))
		return 1;
	if (r == -EINTR)
		return 0;
	if (r < 0) {
		log_error("reading wakeup_count: %s", strerror(-r));
		if (wl_lock(hdr) == 0) {
			hdr->dstats.read_errors++;
			wl_unlock(hdr);
		}
		backoff_sleep(pl, &pl->bo);
		return 0;
	}

	/* 2, 3. */
	r = wl_lock(hdr);
	if (r < 0)
		return r;
	r = wait_for_zero(pl);
	if (r) {
		if (r > 0)
			wl_unlock(hdr);
		return r;
	}

	/* 5. Still under the lock (see the top of this file). */
	r = pl->be->write_count(pl->be, count);
	if (r == -EINVAL) {
		/* A kernel event happened since step 1 (or one is in progress):
		 * this is the handshake doing its job.  Retry, at once the first
		 * time; step 1 blocks for as long as the event needs.  Further
		 * refusals in a row back off (see the top of this file). */
		hdr->dstats.aborts++;
		wl_unlock(hdr);
		log_debug("wakeup_count %u stale, retrying", count);
		if (++pl->aborts_in_row > 1)
			backoff_sleep(pl, &pl->abort_bo);
		return stopping(pl);
	}
	pl->aborts_in_row = 0;
	backoff_reset(&pl->abort_bo);
	if (r < 0) {
		/* EBUSY here means kernel autosleep is active: not ours to fight. */
		hdr->dstats.failures++;
		count_errno(&hdr->dstats, -r);
		wl_unlock(hdr);
		log_error("writing wakeup_count: %s%s", strerror(-r),
		          r == -EBUSY ? " (kernel autosleep is active?)" : "");
		backoff_sleep(pl, &pl->bo);
		return 0;
	}
	/* The stop flag is set under the lock, so this check is exact: no
	 * suspend starts once a stop was requested. */
	if (stopping(pl)) {
		wl_unlock(hdr);
		return 1;
	}

	/* 6. */
	set_dstate(pl, WL_D_SUSPENDING);
	if (pl->be->before_suspend)
		pl->be->before_suspend(pl->be);
	hdr->dstats.attempts++;
	m0 = pl->clk->mono_ns(pl->clk);
	b0 = pl->clk->boot_ns(pl->clk);
	sr = pl->be->suspend(pl->be, p->state);
	m1 = pl->clk->mono_ns(pl->clk);
	b1 = pl->clk->boot_ns(pl->clk);
	/* Time asleep: CLOCK_BOOTTIME runs during suspend, MONOTONIC does not. */
	if (b1 - m1 > b0 - m0)
		asleep = (b1 - m1) - (b0 - m0);
	if (sr == 0) {
		hdr->dstats.successes++;
		hdr->dstats.asleep_ns += asleep;
		hdr->dstats.last_asleep_ns = asleep;
		hdr->dstats.last_resume_rt = wl_now_real();
		/* CLOCK_MONOTONIC stood still while asleep: re-derive the
		 * offset clients stamp their activations with. */
		wl_table_update_rt_offset(hdr);
		if (pl->be->wake_reason)
			pl->be->wake_reason(pl->be, hdr->dstats.last_wake, WL_WAKE_MAX);
	} else {
		hdr->dstats.failures++;
		count_errno(&hdr->dstats, -sr);
	}
	/* 4. */
	wl_unlock(hdr);

	if (sr == 0)
		log_debug("resumed after %llu ms asleep (%s)",
		          (unsigned long long)(asleep / 1000000u), hdr->dstats.last_wake);
	else
		log_warn("suspend to %s failed: %s", p->state, strerror(-sr));
	if (pl->after_cycle)
		pl->after_cycle(pl, pl->arg);
	if (sr == 0 && p->post_hook[0])
		run_hook(p->post_hook, "post-resume", p->hook_timeout_ms);

	if (sr < 0 || (p->short_suspend_ms && asleep < (uint64_t)p->short_suspend_ms * 1000000u)) {
		backoff_sleep(pl, &pl->bo);
	} else {
		backoff_reset(&pl->bo);
		set_backoff_ms(hdr, 0);
		if (p->min_awake_ms) {
			/* Grace period: let user space react to whatever woke us. */
			set_dstate(pl, WL_D_GRACE);
			pl->clk->sleep_ns(pl->clk, (uint64_t)p->min_awake_ms * 1000000u);
		}
	}
	return stopping(pl);
}

int powerloop_run(struct powerloop *pl)
{
	int r;

	if (pl->start_grace_ns) {
		set_dstate(pl, WL_D_GRACE);
		pl->clk->sleep_ns(pl->clk, pl->start_grace_ns);
	}
	while ((r = powerloop_cycle(pl)) == 0)
		;
	set_dstate(pl, WL_D_STOPPED);
	return r > 0 ? 0 : r;
}

void powerloop_request_stop(struct powerloop *pl)
{
	if (wl_lock_timeout(pl->hdr, 1000) == 0) {
		__atomic_store_n(&pl->stop, 1, __ATOMIC_RELEASE);
		wl_notify(pl->hdr);
		wl_unlock(pl->hdr);
	} else {
		/* A client stuck in the lock: the loop cannot be between its
		 * stop check and its sleep (it would need the lock), so an
		 * unlocked notify is enough to end an untimed wait.  Callers
		 * repeat this until the loop has left anyway. */
		__atomic_store_n(&pl->stop, 1, __ATOMIC_RELEASE);
		wl_notify(pl->hdr);
	}
	if (pl->be->interrupt)
		pl->be->interrupt(pl->be);
	pl->clk->wake(pl->clk);
}
