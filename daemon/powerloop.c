/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The power manager's loop (docs/design.md §3):
 *   1 read wakeup_count   2 close the phase   3 wait while a client holds
 *   5 write the count back (failed: back to 1)   6 suspend   4 open the phase
 * (with a pre-suspend hook, it runs before step 1 once no hold is active;
 * the post-resume hook after an attempt that suspended).
 *
 * Step 2 is the daemon's half of the handshake with the clients' fast path
 * (lib/wl_region.h): hdr->phase goes CLOSED before the last look at the
 * regions, and stays CLOSED through steps 5 and 6.  A client that takes a
 * hold after that look sees CLOSED and waits in its acquire until the
 * attempt is over, so no hold is ever reported taken while the system
 * goes to sleep (Android's lesson: unlocking after the check would let a
 * hold slip in between the check and the write to /sys/power/state).
 * The cost is that such an acquire blocks for one suspend entry (it would
 * be frozen anyway).  The phase is a word in the published segment that
 * clients only read: the daemon never waits for a client.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <time.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <stdlib.h>
#include "lib/wl_region.h"
#include "ledger.h"
#include "log.h"
#include "awake.h"
#include "powerloop.h"
#include "wakesrc.h"

/*
 * Step 3 sleeps in poll() on the loop's eventfd, without a timeout unless
 * a timed hold is pending (then until the earliest end): no periodic
 * wake-ups while the system is held awake.  The eventfd is the daemon's
 * own, never handed to a client.  Every event that can end or change the
 * wait writes it (powerloop_kick):
 *   a watched client's last hold ends   the main thread, on the client's
 *   an alarm's work done                  WL_OP_KICK (powerloop_client_kick)
 *   client reaped, deny/allow change    the main thread (server.c)
 *   a CLI's look (wakelock list)        the main thread (server.c)
 *   config reload, stop                 powerloop_set_params / _request_stop
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
static int alarm_holding(struct awake_source *src, uint64_t now, uint64_t *until);
static void alarm_describe(struct awake_source *src, uint64_t now, char *buf, size_t len);

#define ABORT_BACKOFF_INITIAL_MS 10u
#define ABORT_BACKOFF_MAX_MS 1000u

int powerloop_init(struct powerloop *pl, struct wl_shm_header *hdr,
                   const struct wl_region *const *regions, struct power_backend *be,
                   struct power_clock *clk, const struct power_params *p)
{
	memset(pl, 0, sizeof(*pl));
	pl->kick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	pl->resume_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (pl->kick_fd < 0 || pl->resume_fd < 0) {
		int r = -errno;

		if (pl->kick_fd >= 0)
			close(pl->kick_fd);
		return r;
	}
	pl->hdr = hdr;
	pl->regions = regions;
	/* Generations of hdr->watched: from a random start, so that a
	 * client coming from our predecessor cannot have kicked for one of
	 * ours already (lib/hold.c). */
	pl->watch_gen = (uint32_t)wl_clock_ns(CLOCK_REALTIME) ^ (uint32_t)getpid() << 16;
	pl->alarm_slot = pl->alarm_index = -1;
	pl->last_holder.kind = WL_LEK_NONE;
	pl->alarm_src = calloc(1, sizeof(*pl->alarm_src));
	if (!pl->alarm_src) {
		close(pl->kick_fd);
		close(pl->resume_fd);
		return -ENOMEM;
	}
	pl->alarm_src->name = "alarm";
	pl->alarm_src->holding = alarm_holding;
	pl->alarm_src->describe = alarm_describe;
	pl->alarm_src->fd = -1;
	pl->alarm_src->priv = pl;
	awake_add(pl, pl->alarm_src);
	pl->be = be;
	pl->clk = clk;
	pl->params = *p;
	pthread_mutex_init(&pl->plock, NULL);
	backoff_init(&pl->bo, p->backoff_initial_ms, p->backoff_factor, p->backoff_max_ms);
	backoff_init(&pl->abort_bo, ABORT_BACKOFF_INITIAL_MS, 2, ABORT_BACKOFF_MAX_MS);
	return 0;
}

int powerloop_set_ledger(struct powerloop *pl, struct ledger *l)
{
	pl->ws_before = calloc(1, sizeof(*pl->ws_before));
	pl->ws_after = calloc(1, sizeof(*pl->ws_after));
	if (!pl->ws_before || !pl->ws_after) {
		free(pl->ws_before);
		free(pl->ws_after);
		pl->ws_before = pl->ws_after = NULL;
		return -ENOMEM;
	}
	pl->ledger = l;
	return 0;
}

/*
 * Claims: holds that became active after the attempt began.  A client
 * stamps each hold's first activation in an attempt epoch
 * (hdr->attempt_epoch, raised as each attempt begins) with the epoch and
 * the time (CLOCK_MONOTONIC_COARSE; an acquire that waited on the closed
 * phase stamped it before the resume: latency 0), so a hold taken again
 * and again before the daemon looks still counts from its first time.
 * Read once the window is over, or when the next attempt begins, so that
 * each hold counts once.  A client's stamps are its word about itself.  The daemon's own alarm holds are claimed when
 * they are taken (alarms.c).  Lock held.
 */
static void claims_of(struct powerloop *pl, uint32_t i, int hold, uint64_t until)
{
	const struct wl_shm_slot *s = &pl->hdr->slots[i];
	const struct wl_region *rg = pl->regions[i];

	if (!rg || !s->allowed || s->state != WL_SLOT_LIVE)
		return;
	for (uint32_t j = hold < 0 ? 0 : (uint32_t)hold;
	     j < (hold < 0 ? WAKELOCK_MAX_HOLDS_PER_CLIENT : (uint32_t)hold + 1); j++) {
		uint64_t since;

		if (!s->holds[j].in_use || s->holds[j].owner != WL_HOLD_CLIENT)
			continue;
		if (__atomic_load_n(&rg->holds[j].first_epoch, __ATOMIC_RELAXED) != pl->claim_epoch)
			continue;
		since = __atomic_load_n(&rg->holds[j].first_since, __ATOMIC_RELAXED);
		if (since < until &&
		    __atomic_load_n(&rg->holds[j].activations, __ATOMIC_RELAXED))
			ledger_claim(pl->ledger, s->name, s->holds[j].name, since);
	}
}

static void scan_claims(struct powerloop *pl, uint64_t until)
{
	for (uint32_t k = 0; k < pl->hdr->nlive; k++)
		claims_of(pl, pl->hdr->order[k], -1, until);
}

void powerloop_ledger_forget(struct powerloop *pl, uint32_t slot, int hold)
{
	if (pl->ledger && ledger_window_end(pl->ledger) && slot < pl->hdr->nslots)
		claims_of(pl, slot, hold, wl_now_mono());
}

void powerloop_ledger_poll(struct powerloop *pl, int force)
{
	uint64_t end, now;

	if (!pl->ledger)
		return;
	end = ledger_window_end(pl->ledger);
	now = wl_now_mono();
	if (!end || (now < end && !force))
		return;
	wl_lock(pl->hdr);
	scan_claims(pl, end < now ? end : now);
	wl_unlock(pl->hdr);
	ledger_tick(pl->ledger, now > end ? now : end);
}

/*
 * Resume notifications: the attempt is recorded.  The main thread rings
 * every subscriber's doorbell (server.c), outside the lock; the client
 * fetches the record (wakelock_resume_read).
 */
static void notify_resume(struct powerloop *pl)
{
	uint64_t one = 1;

	if (write(pl->resume_fd, &one, sizeof(one)) < 0) {
		/* EAGAIN: the counter is full, so it is readable already */
	}
}

/* The daemon alarm due first, as the ledger's candidate cause; lock held. */
static int armed_alarm(struct powerloop *pl, struct ledger_alarm *la, char *client, char *name)
{
	const struct wl_shm_slot *s;
	const struct wl_shm_alarm *al;

	if (pl->alarm_slot < 0 || (uint32_t)pl->alarm_slot >= pl->hdr->nslots ||
	    pl->alarm_index < 0 || pl->alarm_index >= (int)WAKELOCK_MAX_ALARMS_PER_CLIENT)
		return 0;
	s = &pl->hdr->slots[pl->alarm_slot];
	al = &s->alarms[pl->alarm_index];
	if (s->state != WL_SLOT_LIVE || !al->in_use || !al->t.due)
		return 0;
	memcpy(client, s->name, WAKELOCK_NAME_MAX);
	memcpy(name, al->name, WAKELOCK_NAME_MAX);
	client[WAKELOCK_NAME_MAX - 1] = name[WAKELOCK_NAME_MAX - 1] = 0;
	la->client = client;
	la->name = name;
	la->due_boot_ns = al->t.due;
	return 1;
}

void powerloop_destroy(struct powerloop *pl)
{
	free(pl->ws_before);
	free(pl->ws_after);
	pl->ws_before = pl->ws_after = NULL;
	pthread_mutex_destroy(&pl->plock);
	free(pl->alarm_src);
	pl->alarm_src = NULL;
	if (pl->kick_fd >= 0)
		close(pl->kick_fd);
	if (pl->resume_fd >= 0)
		close(pl->resume_fd);
	pl->kick_fd = pl->resume_fd = -1;
}

void powerloop_kick(struct powerloop *pl)
{
	uint64_t one = 1;

	if (write(pl->kick_fd, &one, sizeof(one)) < 0) {
		/* EAGAIN: the counter is full, so the loop wakes anyway */
	}
}

void powerloop_client_kick(struct powerloop *pl, uint32_t slot)
{
	if (slot < WL_MAX_CLIENTS)
		__atomic_store_n(&pl->kicked[slot], 1, __ATOMIC_RELAXED);
	powerloop_kick(pl);
}

/* Sleep until kicked, an awake source's descriptor is readable, or
 * timeout_ns (0: no timeout). */
static void wait_kick(struct powerloop *pl, uint64_t timeout_ns)
{
	struct pollfd p[1 + WL_MAX_SOURCES] = { { .fd = pl->kick_fd, .events = POLLIN } };
	unsigned n = 1 + awake_pollfds(pl, p + 1, WL_MAX_SOURCES);
	uint64_t cnt;
	int ms = -1;

	if (timeout_ns)
		ms = timeout_ns / 1000000u >= INT_MAX ? INT_MAX : (int)((timeout_ns + 999999u) / 1000000u);
	if (poll(p, n, ms) > 0) {
		/* Many kicks, one look. */
		if ((p[0].revents & POLLIN) && read(pl->kick_fd, &cnt, sizeof(cnt)) < 0) {
			/* EAGAIN: another reader drained it */
		}
		awake_events(pl, p + 1, n - 1);
	}
}

void powerloop_set_params(struct powerloop *pl, const struct power_params *p)
{
	pthread_mutex_lock(&pl->plock);
	pl->pending = *p;
	pl->have_pending = 1;
	pthread_mutex_unlock(&pl->plock);
	/* Wake a waiting loop so that this cycle already uses them (it takes
	 * them in wait_for_zero).  The eventfd keeps the kick until the loop
	 * reads it, so it cannot fall between its check and its sleep. */
	powerloop_kick(pl);
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

/* Step 4: acquires that saw CLOSED go on. */
static void open_phase(struct powerloop *pl)
{
	__atomic_store_n(&pl->hdr->phase, WL_PHASE_OPEN, __ATOMIC_SEQ_CST);
	wl_phase_wake(pl->hdr);
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

/* Published under the lock like every other statistic: readers (the
 * stats file, `wakelock status`) copy the statistics as a whole. */
static void set_backoff_ms(struct wl_shm_header *hdr, uint64_t ms)
{
	wl_lock(hdr);
	hdr->dstats.backoff_ms = ms;
	wl_unlock(hdr);
}

static void backoff_sleep(struct powerloop *pl, struct backoff *bo)
{
	uint64_t ms = backoff_next(bo);

	set_backoff_ms(pl->hdr, ms);
	set_dstate(pl, WL_D_GRACE);
	log_debug("backing off %llu ms", (unsigned long long)ms);
	pl->clk->sleep_ns(pl->clk, ms * 1000000u);
}

/*
 * Statistics of one look (lock held).  n > 0 and the first look of this
 * wait: every allowed holder prevented this attempt.  n == 0 and the
 * phase closed (the attempt goes ahead): every denied client that holds
 * would have prevented it.
 */
static void count_look(struct wl_shm_header *hdr, uint32_t n, int first, int final)
{
	if (n && !first)
		return;
	if (!n && !final)
		return;
	for (uint32_t k = 0; k < hdr->nlive; k++) {
		struct wl_shm_slot *s = &hdr->slots[hdr->order[k]];

		if (n && s->holding && s->allowed)
			s->prevented_count++;
		else if (!n && s->holding && !s->allowed)
			s->denied_count++;
	}
	if (n)
		hdr->dstats.waits++;
}

/* How many clients hold now.  Takes the lock, and keeps it if nobody
 * holds and keep is set. */
/*
 * Whether the alarm timer expires within ALARM_IMMINENT_NS (lock held).
 * The kernel refuses to suspend with an alarm timer due within 2 s
 * (alarmtimer_suspend: -EBUSY, and a 2 s wakeup event), and the RTC that
 * wakes the system for an alarm counts whole seconds, so the system often
 * resumes a little before the timer expires: an attempt then costs a
 * cycle that fails or is aborted, and the wake is claimed by nobody.  The
 * loop waits for the fire instead, as for a hold that ends at that time;
 * the fire's hold then keeps it awake.  One overdue by as much is no
 * longer waited for.
 */
#define ALARM_IMMINENT_NS 2000000000ull

static int alarm_imminent(struct powerloop *pl, uint64_t *next)
{
	uint64_t at = pl->alarm_next_boot, boot, wake;

	if (!at)
		return 0;
	boot = pl->clk->boot_ns(pl->clk);
	if (at > boot + ALARM_IMMINENT_NS || boot > at + ALARM_IMMINENT_NS)
		return 0;
	wake = pl->clk->mono_ns(pl->clk) + (at > boot ? at - boot : 0) + 1000000u;
	if (!*next || wake < *next)
		*next = wake;
	return 1;
}

/* The imminent alarm as an awake source: it ends by time (the fire,
 * whose hold then keeps the system awake). */
static int alarm_holding(struct awake_source *src, uint64_t now, uint64_t *until)
{
	(void)now;
	return alarm_imminent(src->priv, until);
}

static void alarm_describe(struct awake_source *src, uint64_t now, char *buf, size_t len)
{
	struct powerloop *pl = src->priv;
	uint64_t at = 0;

	(void)now;
	if (alarm_imminent(pl, &at))
		snprintf(buf, len, "alarm due within 2 s");
	else
		snprintf(buf, len, pl->alarm_next_boot ? "alarm armed" : "no alarm armed");
}

/*
 * One look: how many hold now (clients' regions and daemon-owned holds,
 * wl_table_holders, and the awake sources).  The sources are sampled
 * first, without the lock.  Takes the lock, and keeps it if nobody holds
 * and keep is set.
 */
static void set_holder(struct ledger_holder *h, uint8_t kind, const char *name)
{
	size_t len = strnlen(name, WAKELOCK_NAME_MAX - 1);

	h->kind = kind;
	memcpy(h->name, name, len);
	h->name[len] = 0;
}

/*
 * Who holds at this look, for the ledger's "ended by" of the next
 * attempt (docs/ledger.md): every look that finds anyone replaces it, so
 * at the attempt it names who held at the last look that found anyone:
 * the holder whose letting go allowed the attempt.  Several at that
 * look: the first allowed client in the table's order, else the first
 * source that holds.  Lock held; a name copied in place, no allocation,
 * and the clients are walked only when one of them holds.
 */
static void note_holder(struct powerloop *pl, uint32_t n, const struct awake_source *src)
{
	struct wl_shm_header *hdr = pl->hdr;

	if (!n)
		return;
	pl->last_holder.holders = n;
	for (uint32_t k = 0; n > pl->sources_held && k < hdr->nlive; k++) {
		const struct wl_shm_slot *s = &hdr->slots[hdr->order[k]];

		if (s->holding && s->allowed) {
			set_holder(&pl->last_holder, WL_LEK_CLIENT, s->name);
			return;
		}
	}
	if (src)
		set_holder(&pl->last_holder, WL_LEK_SOURCE, src->name);
}

static uint32_t holders(struct powerloop *pl, uint64_t *next, int first, int keep)
{
	struct wl_shm_header *hdr = pl->hdr;
	struct awake_source *src;
	uint64_t now;
	uint32_t n;

	awake_sample(pl, 0);
	wl_lock(hdr);
	now = wl_now_mono();
	wl_table_update_rt_offset(hdr);
	n = wl_table_holders(hdr, pl->regions, now, next);
	pl->sources_held = awake_holding(pl, now, next, &src);
	n += pl->sources_held;
	note_holder(pl, n, src);
	count_look(hdr, n, first, keep);
	if (n || !keep)
		wl_unlock(hdr);
	return n;
}

/* Stop watching anyone (lock held). */
static void unwatch(struct powerloop *pl)
{
	struct wl_shm_header *hdr = pl->hdr;

	for (uint32_t k = 0; k < hdr->nlive; k++) {
		uint32_t i = hdr->order[k];

		if (__atomic_load_n(&hdr->watched[i], __ATOMIC_RELAXED))
			__atomic_store_n(&hdr->watched[i], 0, __ATOMIC_SEQ_CST);
	}
}

/* Set or clear one client's watch (lock held); 1 if set. */
static int watch_set(struct wl_shm_header *hdr, uint32_t i, uint32_t gen)
{
	if (gen || __atomic_load_n(&hdr->watched[i], __ATOMIC_RELAXED))
		__atomic_store_n(&hdr->watched[i], gen, __ATOMIC_SEQ_CST);
	return gen != 0;
}

/*
 * Watch the allowed clients whose regions hold: set their words to a new
 * generation, then look at their regions again (the daemon's half of the
 * release handshake, wl_region.h).  Returns 1 if one of them stopped
 * holding meanwhile (look again now), 0 otherwise.
 *
 * Every holder is watched, so that the wait ends at the first release to
 * zero whoever makes it: a client stopped between its release and its
 * kick (or one that never kicks) then delays only itself, never the
 * release of another.  But a client that kicked since the last look and
 * holds again is busy (short holds, one after the other): it is left
 * unwatched while someone else is watched, so that its pairs do not wake
 * the daemon one by one.  Each client kicks at most once per generation.
 *
 * Daemon-owned holds need no watch: they end by their timeout (a timed
 * wait) or by a kick (alarm work done), as does the wait for an imminent
 * alarm.  With none of those and no region holding, the holds the last
 * look counted ended before one could be watched, their releases saw no
 * watch and kicked nobody: look again.
 */
static int watch_holders(struct powerloop *pl)
{
	struct wl_shm_header *hdr = pl->hdr;
	uint64_t now = wl_now_mono();
	uint32_t gen, watched = 0, busy = 0;
	int daemon_held = 0, again = 0;

	if (++pl->watch_gen == 0)
		pl->watch_gen = 1;
	gen = pl->watch_gen;
	wl_lock(hdr);
	for (uint32_t k = 0; k < hdr->nlive; k++) {
		uint32_t i = hdr->order[k];
		const struct wl_region *rg = pl->regions[i];
		int kicked = __atomic_exchange_n(&pl->kicked[i], 0, __ATOMIC_RELAXED);
		int holds = hdr->slots[i].allowed && rg && wl_region_holding(rg, now);

		daemon_held |= hdr->slots[i].allowed && hdr->slots[i].dactive > 0;
		pl->busy[i] = holds && kicked;
		busy += pl->busy[i];
		watched += watch_set(hdr, i, holds && !kicked ? gen : 0);
	}
	for (uint32_t k = 0; busy && k < hdr->nlive; k++) {
		uint32_t i = hdr->order[k];

		/* Nobody else to wait for: the busy ones are. */
		if (pl->busy[i] && !watched)
			watch_set(hdr, i, gen);
		pl->busy[i] = 0;
	}
	watched += watched ? 0 : busy;
	for (uint32_t k = 0; watched && k < hdr->nlive; k++) {
		uint32_t i = hdr->order[k];

		if (__atomic_load_n(&hdr->watched[i], __ATOMIC_RELAXED) &&
		    !wl_region_holding(pl->regions[i], now))
			again = 1;
	}
	/* Sources wake the loop by time, descriptor or kick: no watch. */
	if (!watched)
		again = !(daemon_held | (pl->sources_held > 0));
	wl_unlock(hdr);
	return again;
}

/*
 * Steps 2 and 3: wait until no allowed client holds.  Returns 0 with the
 * phase CLOSED and the lock held (the caller releases both when the
 * attempt is over), 1 when stopping (phase open, lock free).
 *
 * The lock is the daemon's own (its main thread's registrations, alarms
 * and snapshots), never a client's.  Holding it through the attempt means
 * the main thread fires an alarm, or answers the CLI, only once the
 * attempt and its statistics are complete: a client woken by an alarm
 * after a resume sees the resume counted, by the kernel and by us.
 *
 * While clients hold, they are watched (watch_holders): the first whose
 * last hold ends kicks us, we look again and watch those that still
 * hold.  Most looks happen with the
 * phase open (an acquire meanwhile does not wait); only when nobody held
 * does the phase close, and a second look decides.
 */
static int wait_for_zero(struct powerloop *pl)
{
	struct wl_shm_header *hdr = pl->hdr;
	int counted = 0;

	__atomic_store_n(&hdr->waiting, 1, __ATOMIC_SEQ_CST);
	for (;;) {
		uint64_t next = 0, now;

		if (stopping(pl))
			break;
		/* A reload while we wait applies to this cycle. */
		take_params(pl);
		if (holders(pl, &next, !counted, 0) == 0) {
			__atomic_store_n(&hdr->phase, WL_PHASE_CLOSED, __ATOMIC_SEQ_CST);
			if (holders(pl, &next, !counted, 1) == 0) {
				unwatch(pl);
				__atomic_store_n(&hdr->waiting, 0, __ATOMIC_SEQ_CST);
				return 0;
			}
			open_phase(pl);
		}
		if (!counted) {
			counted = 1;
			set_dstate(pl, WL_D_WAITING);
		}
		if (pl->before_watch)
			pl->before_watch(pl->before_watch_arg);
		if (watch_holders(pl))
			continue;
		/* A claim window that ended is closed here, when the CLI asks
		 * (server.c) or at the next attempt: never by a timed wake-up,
		 * so a system held awake costs the daemon nothing. */
		powerloop_ledger_poll(pl, 0);
		now = wl_now_mono();
		/* Untimed unless a timed hold is pending.  See the top. */
		wait_kick(pl, next > now ? next - now : next ? 1 : 0);
		__atomic_fetch_add(&pl->wakeups, 1, __ATOMIC_RELAXED);
	}
	wl_lock(hdr);
	unwatch(pl);
	wl_unlock(hdr);
	__atomic_store_n(&hdr->waiting, 0, __ATOMIC_SEQ_CST);
	return 1;
}

/*
 * One cycle is the steps below, each a function named after its step,
 * and one way out of an attempt that does not suspend (end_attempt).
 * Each step returns CONTINUE to go on to the next, or the cycle's result
 * (0: cycle again, 1: stopping).
 */
#define CONTINUE (-1000)

/* Why an attempt ends before the state write. */
enum attempt_end {
	END_STALE,         /* step 5 refused the count: an event since step 1 */
	END_OBJECTED,      /* an awake source objected at the last look */
	END_WRITE_FAILED,  /* step 5 failed otherwise (EBUSY: kernel autosleep) */
	END_STOPPING,      /* a stop was requested */
};

/*
 * The one end of an attempt that does not suspend: lock held and phase
 * closed on entry (wait_for_zero's return), both released here.  Refusals
 * and objections are the handshake doing its job: the first is retried at
 * once, the next ones in a row back off (see the top of this file).
 */
static int end_attempt(struct powerloop *pl, enum attempt_end why, int err)
{
	struct wl_shm_header *hdr = pl->hdr;

	if (why == END_STALE || why == END_OBJECTED)
		hdr->dstats.aborts++;
	if (why == END_WRITE_FAILED) {
		hdr->dstats.failures++;
		count_errno(&hdr->dstats, err);
	}
	wl_unlock(hdr);
	open_phase(pl);
	switch (why) {
	case END_STALE:
	case END_OBJECTED:
		if (++pl->aborts_in_row > 1)
			backoff_sleep(pl, &pl->abort_bo);
		return stopping(pl);
	case END_WRITE_FAILED:
		pl->aborts_in_row = 0;
		backoff_reset(&pl->abort_bo);
		log_error("writing wakeup_count: %s%s", strerror(err),
		          err == EBUSY ? " (kernel autosleep is active?)" : "");
		backoff_sleep(pl, &pl->bo);
		return 0;
	case END_STOPPING:
		break;
	}
	return 1;
}

/*
 * The pre-suspend hook runs before step 1, once no hold is active, not
 * between steps 1 and 5.  The handshake makes every wakeup event after the
 * read of step 1 abort the attempt.  A hook run after that read would put
 * whatever events the hook itself causes (it touches a device, talks to
 * the network, arms the RTC, is a wakeup source's user) inside that
 * window: the count write would be refused, the retry would run the hook
 * again, which would cause the event again, and the system would never
 * suspend.  Run before the read, the hook's own events are part of the
 * count we read (the read waits for any it left in progress), and the
 * attempt is aborted only by events that come later, which is what
 * race-freedom asks for.  Holds are checked again under the lock after
 * the read, so a hold taken by the hook, or by someone it told, still
 * keeps the system awake.  Never under the lock: hooks may take holds.
 */
static int step_pre_suspend_hook(struct powerloop *pl)
{
	const struct power_params *p = &pl->params;
	int r;

	if (!p->pre_hook[0])
		return CONTINUE;
	r = wait_for_zero(pl);
	if (r)
		return r;
	wl_unlock(pl->hdr);
	open_phase(pl);
	set_dstate(pl, WL_D_SUSPENDING);
	/* A failed or killed hook (logged) does not stop the suspend: a hook
	 * that wants the system awake takes a hold. */
	run_hook(p->pre_hook, "pre-suspend", p->hook_timeout_ms);
	return stopping(pl) ? 1 : CONTINUE;
}

/*
 * The snapshot an attempt starts from, read right after wakeup_count.
 * When the count read now is the count the last attempt began with, and
 * the snapshot taken after that attempt is the last one taken, its
 * sources are still exact and are not read again (a phone's 100 to 300
 * sources are a system call each): wakeup_count grows by one at each
 * deactivation of a wakeup source and the read returns only with none
 * active, so an event on any source since the last read (the first one
 * activates it) would have moved the count by this read.  The files of
 * /sys/power are read again: another writer of /sys/power/state moves
 * them without a wakeup event.
 */
static void take_before(struct powerloop *pl, unsigned count)
{
	if (pl->ws_after_fresh && count == pl->ws_count) {
		struct ws_snapshot *s = pl->ws_before;

		pl->ws_before = pl->ws_after;
		pl->ws_after = s;
		wakesrc_take_globals(pl->be, pl->ws_before);
	} else {
		wakesrc_take(pl->be, pl->ws_before);
	}
	pl->ws_after_fresh = 0;
	pl->ws_count = count;
}

/* 1. Blocks while the kernel has wakeup events in progress.  Then what
 * the kernel says of its wakeup sources: the state the attempt starts
 * from (docs/ledger.md). */
static int step_read_count(struct powerloop *pl, unsigned *count)
{
	int r;

	set_dstate(pl, WL_D_READING);
	r = pl->be->read_count(pl->be, count);
	if (stopping(pl))
		return 1;
	if (r == -EINTR)
		return 0;
	if (r < 0) {
		log_error("reading wakeup_count: %s", strerror(-r));
		wl_lock(pl->hdr);
		pl->hdr->dstats.read_errors++;
		wl_unlock(pl->hdr);
		backoff_sleep(pl, &pl->bo);
		return 0;
	}
	if (pl->ledger)
		take_before(pl, *count);
	return CONTINUE;
}

/* 5. The count back, with the phase still closed (see the top of this
 * file); then the last look of the awake sources, where nothing later
 * can be missed by the kernel's side of the handshake. */
static int step_write_count(struct powerloop *pl, unsigned count)
{
	struct awake_source *src;
	int r = pl->be->write_count(pl->be, count);

	if (r == -EINVAL) {
		log_debug("wakeup_count %u stale, retrying", count);
		return end_attempt(pl, END_STALE, 0);
	}
	if (r < 0)
		return end_attempt(pl, END_WRITE_FAILED, -r);
	/* No suspend starts once a stop was requested (it is set before the
	 * kick that ends any wait). */
	if (stopping(pl))
		return end_attempt(pl, END_STOPPING, 0);
	/* A source that changed since the look (a display turned on, a
	 * logind inhibitor the main thread has not heard of yet) stops the
	 * attempt; its news follows, and refusals in a row back off. */
	src = awake_last_look(pl);
	if (src) {
		log_debug("%s objected at the last look: not suspending", src->name);
		return end_attempt(pl, END_OBJECTED, 0);
	}
	pl->aborts_in_row = 0;
	backoff_reset(&pl->abort_bo);
	return CONTINUE;
}

/* What one state write did. */
struct attempt {
	const char *state;          /* the state written */
	int hib_due;                /* woken for the hibernation (hibernate_after.h) */
	int sr;                     /* 0 or -errno of the state write */
	uint64_t asleep;            /* ns */
	int have_alarm;
	struct ledger_alarm la;
	char la_client[WAKELOCK_NAME_MAX], la_name[WAKELOCK_NAME_MAX];
	struct wl_ledger_record rec;    /* its record, once the cause is in */
};

/* The attempt's statistics once the state write returned (lock held). */
static void count_attempt(struct powerloop *pl, struct attempt *at)
{
	struct wl_shm_header *hdr = pl->hdr;

	if (at->sr == 0) {
		hdr->dstats.successes++;
		hdr->dstats.asleep_ns += at->asleep;
		hdr->dstats.last_asleep_ns = at->asleep;
		hdr->dstats.last_resume_rt = wl_now_real();
		/* CLOCK_MONOTONIC stood still while asleep: re-derive the
		 * offset clients stamp their activations with. */
		wl_table_update_rt_offset(hdr);
		if (pl->be->wake_reason && !pl->ledger)
			pl->be->wake_reason(pl->be, hdr->dstats.last_wake, WL_WAKE_MAX);
	} else {
		hdr->dstats.failures++;
		count_errno(&hdr->dstats, -at->sr);
	}
	if (pl->ledger)
		at->have_alarm = armed_alarm(pl, &at->la, at->la_client, at->la_name);
}

/*
 * The state of this attempt: the configured one, or "disk" once a spell
 * of sleep is hibernate_after_s old (hibernate_after.h).  A suspend of
 * the spell arms the daemon's own wake for that time (*wake_at, to be
 * disarmed once it returned); a backend that cannot leaves the
 * hibernation to the next wake that comes after it.
 */
static const char *choose_state(struct powerloop *pl, uint64_t now, uint64_t *wake_at)
{
	const struct power_params *p = &pl->params;
	const char *state = hib_spell_choose(&pl->spell, p->state, p->hibernate_after_s, now,
	                                     wake_at);

	if (*wake_at && (!pl->be->arm_wake || pl->be->arm_wake(pl->be, *wake_at) < 0))
		*wake_at = 0;
	if (state != p->state)
		log_info("asleep for %llu s in this spell (hibernate_after_s %u): hibernating",
		         (unsigned long long)((now - pl->spell.start) / 1000000000u),
		         p->hibernate_after_s);
	return state;
}

/* 6. The state write (lock held, phase closed), then 4: the phase opens
 * and acquires that waited go on. */
static void step_suspend(struct powerloop *pl, struct attempt *at)
{
	struct wl_shm_header *hdr = pl->hdr;
	uint64_t m0, b0, m1, b1, wake_at = 0;

	set_dstate(pl, WL_D_SUSPENDING);
	/* With a ledger, its snapshots tell the wake reason: the backend's
	 * own scan of the same files would read every source twice more. */
	if (pl->be->before_suspend && !pl->ledger)
		pl->be->before_suspend(pl->be);
	hdr->dstats.attempts++;
	if (pl->ledger) {
		/* Claims of the last attempt first: this one closes its window. */
		scan_claims(pl, wl_now_mono());
		wakesrc_stamp(pl->ws_before, pl->clk);
		ledger_attempt_begin_by(pl->ledger, pl->ws_before, &pl->last_holder);
	}
	/* A new awake period begins with this attempt: nothing held yet. */
	pl->last_holder.kind = WL_LEK_NONE;
	pl->last_holder.holders = 0;
	pl->last_holder.name[0] = 0;
	pl->claim_epoch = hdr->attempt_epoch + 1;
	__atomic_store_n(&hdr->attempt_epoch, pl->claim_epoch, __ATOMIC_SEQ_CST);
	m0 = pl->clk->mono_ns(pl->clk);
	b0 = pl->clk->boot_ns(pl->clk);
	at->state = choose_state(pl, b0, &wake_at);
	if (pl->ledger)
		ledger_attempt_state(pl->ledger, at->state);
	at->sr = pl->suspend_via ? pl->suspend_via(pl->suspend_via_arg, at->state) :
	         pl->be->suspend(pl->be, at->state);
	m1 = pl->clk->mono_ns(pl->clk);
	b1 = pl->clk->boot_ns(pl->clk);
	if (wake_at)
		pl->be->arm_wake(pl->be, 0);
	at->hib_due = strcmp(at->state, "disk") &&
	              hib_spell_due(&pl->spell, pl->params.hibernate_after_s, b1);
	hib_spell_after(&pl->spell, at->state, at->sr, b1);
	if (pl->ledger)
		ledger_attempt_returned(pl->ledger, at->sr, m1, b1);
	/* Time asleep: CLOCK_BOOTTIME runs during suspend, MONOTONIC does not. */
	at->asleep = b1 - m1 > b0 - m0 ? (b1 - m1) - (b0 - m0) : 0;
	count_attempt(pl, at);
	wl_unlock(hdr);
	open_phase(pl);
}

/* `wakelock status`'s last wake from the attempt's record, as the
 * backend's own scan put it: "irq N; source; source" (the first named
 * of those that moved), raw bytes like the backend's. */
static void set_last_wake(struct powerloop *pl, const struct wl_ledger_record *r)
{
	char *out = pl->hdr->dstats.last_wake;
	size_t used = 0;

	wl_lock(pl->hdr);
	out[0] = 0;
	if (r->cause & WL_LC_IRQ)
		used = (size_t)snprintf(out, WL_WAKE_MAX, "irq %d", (int)r->wakeup_irq);
	for (unsigned i = 0; i < r->nsources && i < WL_LEDGER_SOURCES && used + 2 < WL_WAKE_MAX;
	     i++)
		used += (size_t)snprintf(out + used, WL_WAKE_MAX - used, "%s%.*s", used ? "; " : "",
		                         (int)WL_LEDGER_SRC_NAME, r->sources[i]);
	wl_unlock(pl->hdr);
}

/* After the attempt: its cause in the ledger (read outside the lock, up
 * to 512 sources, one file each if none moved), the resume notifications,
 * the hooks and the statistics file, then the grace period or the
 * backoff. */
static int step_after_attempt(struct powerloop *pl, struct attempt *at)
{
	const struct power_params *p = &pl->params;

	if (pl->ledger) {
		uint64_t seq;

		wakesrc_take(pl->be, pl->ws_after);
		pl->ws_after_fresh = 1;
		ledger_attempt_cause(pl->ledger, pl->ws_after, at->have_alarm ? &at->la : NULL);
		if (at->hib_due)
			ledger_attempt_hibernate_due(pl->ledger);
		/* Sources that hold for what woke us see the record first, so
		 * that their claim counts for this wake. */
		seq = ledger_next_seq(pl->ledger);
		if (seq > 1 && ledger_copy(pl->ledger, seq - 1, &at->rec, 1) == 1) {
			if (at->sr == 0 && p->wake_reasons)
				set_last_wake(pl, &at->rec);
			awake_resumed(pl, &at->rec);
		}
		notify_resume(pl);
	}
	if (at->sr == 0)
		log_debug("resumed after %llu ms asleep (%s)",
		          (unsigned long long)(at->asleep / 1000000u), pl->hdr->dstats.last_wake);
	else
		log_warn("suspend to %s failed: %s%s", at->state, strerror(-at->sr),
		         strcmp(at->state, p->state) ? " (suspend-then-hibernate: suspending again, "
		         "the next hibernation after another hibernate_after_s)" : "");
	if (pl->after_cycle)
		pl->after_cycle(pl, pl->arg);
	if (at->sr == 0 && p->post_hook[0])
		run_hook(p->post_hook, "post-resume", p->hook_timeout_ms);
	if (at->sr < 0 || (p->short_suspend_ms && at->asleep < (uint64_t)p->short_suspend_ms * 1000000u)) {
		backoff_sleep(pl, &pl->bo);
	} else {
		backoff_reset(&pl->bo);
		set_backoff_ms(pl->hdr, 0);
		if (p->min_awake_ms) {
			/* Grace period: let user space react to whatever woke us. */
			set_dstate(pl, WL_D_GRACE);
			pl->clk->sleep_ns(pl->clk, (uint64_t)p->min_awake_ms * 1000000u);
			powerloop_ledger_poll(pl, 0);
		}
	}
	return stopping(pl);
}

int powerloop_cycle(struct powerloop *pl)
{
	struct attempt at;
	unsigned count;
	int r;

	take_params(pl);
	if (stopping(pl))
		return 1;
	if ((r = step_pre_suspend_hook(pl)) != CONTINUE ||
	    (r = step_read_count(pl, &count)) != CONTINUE)
		return r;
	/* 2, 3: returns with the lock held and the phase closed. */
	if ((r = wait_for_zero(pl)) != 0)
		return r;
	if ((r = step_write_count(pl, count)) != CONTINUE)
		return r;
	memset(&at, 0, sizeof(at));
	step_suspend(pl, &at);
	return step_after_attempt(pl, &at);
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
	__atomic_store_n(&pl->stop, 1, __ATOMIC_SEQ_CST);
	powerloop_kick(pl);
	if (pl->be->interrupt)
		pl->be->interrupt(pl->be);
	pl->clk->wake(pl->clk);
}
