/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The daemon's loop against the fake kernel and a fake clock. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "daemon/ledger.h"
#include "daemon/log.h"
#include "daemon/powerloop.h"
#include "fake_power.h"
#include "harness.h"
#include "daemon/awake.h"

struct fx {
	struct wl_shm_header *h;
	/* The one client's region, as the daemon keeps it by slot. */
	struct wl_region *rg;
	const struct wl_region *regions[8];
	struct fake_clock clk;
	struct fake_power fp;
	struct powerloop pl;
	struct power_params p;
	int slot, hold;
	/* for wrappers */
	int (*orig_read)(struct power_backend *, unsigned *);
	int (*orig_write)(struct power_backend *, unsigned);
	int bump_after_read, event_after_write;
};

static struct fx *F;

static int setup(void **st)
{
	struct fx *f = calloc(1, sizeof(*f));
	uint64_t id;

	log_setup(LOG_L_ERROR, 0);
	f->h = mmap(NULL, wl_shm_total_size(8), PROT_READ | PROT_WRITE,
	            MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	wl_seg_init(f->h, 8);
	fake_clock_init(&f->clk);
	fake_power_init(&f->fp, &f->clk);
	strcpy(f->p.state, "freeze");
	f->p.backoff_initial_ms = 100;
	f->p.backoff_factor = 2;
	f->p.backoff_max_ms = 60000;
	assert_int_equal(powerloop_init(&f->pl, f->h, f->regions, &f->fp.pub, &f->clk.pub, &f->p), 0);
	f->slot = wl_table_slot_alloc(f->h, 1, 0, "app", 1, &id);
	f->hold = wl_table_hold_alloc(f->h, f->slot, "job", WL_HOLD_CLIENT, -1);
	f->rg = hd_region_new();
	assert_non_null(f->rg);
	f->regions[f->slot] = f->rg;
	F = f;
	*st = f;
	return 0;
}

static int teardown(void **st)
{
	struct fx *f = *st;

	powerloop_destroy(&f->pl);
	munmap(f->h, wl_shm_total_size(8));
	free(f->rg);
	free(f);
	return 0;
}

/* The client's fast path on its region (harness.c). */
static void acquire(struct fx *f, uint64_t timeout_ns)
{
	hd_region_acquire(f->rg, (uint32_t)f->hold, f->h, timeout_ns);
}

static void release(struct fx *f)
{
	hd_region_release(f->rg, (uint32_t)f->slot, (uint32_t)f->hold, f->h, f->pl.kick_fd);
}

/* Whether the daemon, looking now, would see a holder. */
static uint32_t holders_now(struct fx *f)
{
	uint64_t next;
	uint32_t n;

	wl_lock(f->h);
	n = wl_table_holders(f->h, f->regions, wl_now_mono(), &next);
	wl_unlock(f->h);
	return n;
}

static void *cycle_thread(void *arg)
{
	struct fx *f = arg;
	return (void *)(intptr_t)powerloop_cycle(&f->pl);
}

static void test_suspends_without_holds(void **st)
{
	struct fx *f = *st;

	f->fp.sleep_ns = 2500000000ull;
	assert_int_equal(powerloop_cycle(&f->pl), 0);
	assert_int_equal(f->fp.suspends, 1);
	assert_string_equal(f->fp.last_state, "freeze");
	assert_int_equal(f->h->dstats.attempts, 1);
	assert_int_equal(f->h->dstats.successes, 1);
	assert_int_equal(f->h->dstats.asleep_ns, 2500000000ull);
	assert_string_equal(f->h->dstats.last_wake, "fake");
	assert_int_equal(f->clk.nslept, 0);       /* no grace configured */
}

static void test_waits_while_held(void **st)
{
	struct fx *f = *st;
	pthread_t t;
	void *ret;

	acquire(f, 0);
	pthread_create(&t, NULL, cycle_thread, f);
	hd_sleep_ms(60);
	assert_int_equal(fake_suspends(&f->fp), 0);
	assert_int_equal(__atomic_load_n(&f->h->dstate, __ATOMIC_RELAXED), WL_D_WAITING);
	release(f);
	pthread_join(t, &ret);
	assert_int_equal((intptr_t)ret, 0);
	assert_int_equal(f->fp.suspends, 1);
	assert_int_equal(f->h->slots[f->slot].prevented_count, 1);
	assert_int_equal(f->h->dstats.waits, 1);
}

/* A wakeup event reported (and over) right after a successful call, the
 * first *budget times: the race the wakeup_count handshake must catch. */
static int event_after(int r, int *budget)
{
	if (r == 0 && (*budget)-- > 0) {
		fake_event_begin(&F->fp);
		fake_event_end(&F->fp);
	}
	return r;
}

static int read_then_event(struct power_backend *be, unsigned *c)
{
	return event_after(F->orig_read(be, c), &F->bump_after_read);
}

static void test_stale_count_retries_at_once(void **st)
{
	struct fx *f = *st;

	f->orig_read = f->fp.pub.read_count;
	f->fp.pub.read_count = read_then_event;
	f->bump_after_read = 1;
	assert_int_equal(powerloop_cycle(&f->pl), 0);
	assert_int_equal(f->h->dstats.aborts, 1);
	assert_int_equal(f->fp.suspends, 0);
	assert_int_equal(f->clk.nslept, 0);       /* retried without sleeping */
	assert_int_equal(powerloop_cycle(&f->pl), 0);
	assert_int_equal(f->fp.suspends, 1);
}

static void test_read_blocks_during_event(void **st)
{
	struct fx *f = *st;
	pthread_t t;

	fake_event_begin(&f->fp);
	pthread_create(&t, NULL, cycle_thread, f);
	hd_sleep_ms(50);
	assert_int_equal(fake_suspends(&f->fp), 0);
	fake_event_end(&f->fp);
	pthread_join(t, NULL);
	assert_int_equal(f->fp.suspends, 1);
	assert_int_equal(f->h->dstats.aborts, 0);
}

static int write_then_event(struct power_backend *be, unsigned c)
{
	return event_after(F->orig_write(be, c), &F->event_after_write);
}

static void test_event_after_handshake_aborts(void **st)
{
	struct fx *f = *st;

	f->orig_write = f->fp.pub.write_count;
	f->fp.pub.write_count = write_then_event;
	f->event_after_write = 1;
	assert_int_equal(powerloop_cycle(&f->pl), 0);
	assert_int_equal(f->fp.aborts, 1);
	assert_int_equal(f->h->dstats.failures, 1);
	assert_int_equal(f->h->dstats.by_errno[0].err, EBUSY);
	assert_int_equal(f->clk.nslept, 1);
	assert_int_equal(powerloop_cycle(&f->pl), 0);
	assert_int_equal(f->fp.suspends, 1);
}

static void test_backoff_on_failures(void **st)
{
	struct fx *f = *st;
	uint64_t expect[] = { 100, 200, 400, 800, 1600 };

	f->fp.fail_times = 5;
	f->fp.fail_errno = EIO;
	for (int i = 0; i < 5; i++)
		assert_int_equal(powerloop_cycle(&f->pl), 0);
	assert_int_equal(f->clk.nslept, 5);
	for (int i = 0; i < 5; i++)
		assert_int_equal(f->clk.slept_ms[i], expect[i]);
	assert_int_equal(f->h->dstats.failures, 5);
	assert_int_equal(f->h->dstats.by_errno[0].err, EIO);
	assert_int_equal(f->h->dstats.by_errno[0].count, 5);
	assert_int_equal(f->h->dstats.backoff_ms, 1600);
	/* Success resets the backoff. */
	assert_int_equal(powerloop_cycle(&f->pl), 0);
	assert_int_equal(f->h->dstats.backoff_ms, 0);
	f->fp.fail_times = 1;
	f->fp.fail_errno = ENOMEM;
	powerloop_cycle(&f->pl);
	assert_int_equal(f->clk.slept_ms[5], 100);
	assert_int_equal(f->h->dstats.by_errno[1].err, ENOMEM);
	/* Cap. */
	f->fp.fail_times = 20;
	for (int i = 0; i < 20; i++)
		powerloop_cycle(&f->pl);
	assert_int_equal(f->clk.slept_ms[f->clk.nslept - 1], 60000);
}

static void test_min_awake_and_short_suspends(void **st)
{
	struct fx *f = *st;
	struct power_params p = f->p;

	p.min_awake_ms = 250;
	p.short_suspend_ms = 1000;
	powerloop_set_params(&f->pl, &p);
	f->fp.sleep_ns = 5000000000ull;           /* long: grace period */
	powerloop_cycle(&f->pl);
	assert_int_equal(f->clk.nslept, 1);
	assert_int_equal(f->clk.slept_ms[0], 250);
	f->fp.sleep_ns = 10000000ull;             /* 10 ms: too short, back off */
	powerloop_cycle(&f->pl);
	powerloop_cycle(&f->pl);
	assert_int_equal(f->clk.slept_ms[1], 100);
	assert_int_equal(f->clk.slept_ms[2], 200);
}

static void test_denied_does_not_block(void **st)
{
	struct fx *f = *st;

	acquire(f, 0);
	wl_lock(f->h);
	wl_table_set_allowed(f->h, f->slot, 0, wl_now_mono());
	wl_unlock(f->h);
	assert_int_equal(powerloop_cycle(&f->pl), 0);
	assert_int_equal(f->fp.suspends, 1);
	assert_int_equal(f->h->slots[f->slot].prevented_count, 0);
}

static void test_timed_hold_expires(void **st)
{
	struct fx *f = *st;
	uint64_t t0 = hd_now_ns();

	acquire(f, 40000000ull);
	assert_int_equal(powerloop_cycle(&f->pl), 0);
	assert_true(hd_now_ns() - t0 >= 40000000ull);
	assert_int_equal(f->fp.suspends, 1);
	assert_int_equal(f->h->slots[f->slot].prevented_count, 1);
}

/* Android's lesson: a hold taken while the loop is between its zero
 * check and the state write must not return before the suspend ends. */
static uint64_t suspend_end, acquired_at;

static void *late_acquirer(void *arg)
{
	struct fx *f = arg;
	acquire(f, 0);
	__atomic_store_n(&acquired_at, hd_now_ns(), __ATOMIC_SEQ_CST);
	return NULL;
}

static pthread_t late;

static void in_suspend(struct fake_power *fp, void *arg)
{
	(void)fp;
	pthread_create(&late, NULL, late_acquirer, arg);
	hd_sleep_ms(40);    /* the machine "sleeps" */
	assert_int_equal(__atomic_load_n(&acquired_at, __ATOMIC_SEQ_CST), 0);
	__atomic_store_n(&suspend_end, hd_now_ns(), __ATOMIC_SEQ_CST);
}

static void test_acquire_during_suspend_entry(void **st)
{
	struct fx *f = *st;

	acquired_at = suspend_end = 0;
	f->fp.on_suspend = in_suspend;
	f->fp.arg = f;
	assert_int_equal(powerloop_cycle(&f->pl), 0);
	pthread_join(late, NULL);
	assert_true(acquired_at >= suspend_end);
	assert_int_equal(holders_now(f), 1);
	f->fp.on_suspend = NULL;
}

/* --- the untimed wait: no wake-ups while held, and every event that
 * must end or change the wait does wake it (without the old 1 s safety
 * timeout, a missed notification would hang these tests past 500 ms). */

static int parked(void *arg)
{
	struct fx *f = arg;
	return __atomic_load_n(&f->h->dstate, __ATOMIC_RELAXED) == WL_D_WAITING &&
	       __atomic_load_n(&f->h->waiting, __ATOMIC_SEQ_CST) > 0;
}

static unsigned long loop_wakeups(struct fx *f)
{
	unsigned long n;

	wl_lock(f->h);
	n = __atomic_load_n(&f->pl.wakeups, __ATOMIC_RELAXED);
	wl_unlock(f->h);
	return n;
}

static int woke_once(void *arg)
{
	return loop_wakeups(arg) >= 1;
}

static void test_stop_while_waiting(void **st)
{
	struct fx *f = *st;
	pthread_t t;
	void *ret;

	uint64_t t0;

	acquire(f, 0);
	pthread_create(&t, NULL, cycle_thread, f);
	assert_true(hd_wait_for(parked, f, 2000));
	t0 = hd_now_ns();
	powerloop_request_stop(&f->pl);
	pthread_join(t, &ret);
	assert_true(hd_now_ns() - t0 < 500000000ull);  /* woken, not timed out */
	assert_int_equal((intptr_t)ret, 1);
	release(f);
	assert_int_equal(powerloop_cycle(&f->pl), 1);   /* never suspends again */
	assert_int_equal(f->fp.suspends, 0);
}

static void test_no_wakeups_while_held(void **st)
{
	struct fx *f = *st;
	pthread_t t;
	void *ret;

	acquire(f, 0);
	pthread_create(&t, NULL, cycle_thread, f);
	assert_true(hd_wait_for(parked, f, 2000));
	hd_sleep_ms(1500);
	assert_int_equal(loop_wakeups(f), 0);      /* not once in 1.5 s */
	assert_int_equal(fake_suspends(&f->fp), 0);
	release(f);
	pthread_join(t, &ret);
	assert_int_equal((intptr_t)ret, 0);
	assert_int_equal(f->fp.suspends, 1);
	assert_int_equal(f->pl.wakeups, 1);        /* the release, only */
}

static void test_reaping_wakes_waiter(void **st)
{
	struct fx *f = *st;
	pthread_t t;
	uint64_t t0;

	acquire(f, 0);
	pthread_create(&t, NULL, cycle_thread, f);
	assert_true(hd_wait_for(parked, f, 2000));
	t0 = hd_now_ns();
	/* What the server does when the client's connection hangs up. */
	wl_lock(f->h);
	wl_table_slot_free(f->h, f->slot, wl_now_mono());
	f->regions[f->slot] = NULL;
	wl_unlock(f->h);
	powerloop_kick(&f->pl);
	pthread_join(t, NULL);
	assert_true(hd_now_ns() - t0 < 500000000ull);
	assert_int_equal(f->fp.suspends, 1);
	assert_int_equal(f->h->nlive, 0);
}

static void test_deny_wakes_waiter(void **st)
{
	struct fx *f = *st;
	pthread_t t;
	uint64_t t0;

	acquire(f, 0);
	pthread_create(&t, NULL, cycle_thread, f);
	assert_true(hd_wait_for(parked, f, 2000));
	t0 = hd_now_ns();
	/* What server_apply_policy does. */
	wl_lock(f->h);
	wl_table_set_allowed(f->h, f->slot, 0, wl_now_mono());
	wl_unlock(f->h);
	powerloop_kick(&f->pl);
	pthread_join(t, NULL);
	assert_true(hd_now_ns() - t0 < 500000000ull);
	assert_int_equal(f->fp.suspends, 1);
	assert_int_equal(holders_now(f), 0);
	/* Allowing it again counts its hold again. */
	wl_lock(f->h);
	wl_table_set_allowed(f->h, f->slot, 1, wl_now_mono());
	wl_unlock(f->h);
	assert_int_equal(holders_now(f), 1);
}

/* A second client b holding one hold kb with the fixture's own, and the
 * cycle started and parked in its wait. */
struct second {
	struct wl_region *rg;
	int slot, hold;
	pthread_t t;
};

static void two_holders_parked(struct fx *f, const char *name, struct second *b)
{
	uint64_t id;

	b->rg = hd_region_new();
	b->slot = wl_table_slot_alloc(f->h, 2, 0, name, 1, &id);
	b->hold = wl_table_hold_alloc(f->h, b->slot, "job", WL_HOLD_CLIENT, -1);
	f->regions[b->slot] = b->rg;
	acquire(f, 0);
	hd_region_acquire(b->rg, (uint32_t)b->hold, f->h, 0);
	pthread_create(&b->t, NULL, cycle_thread, f);
	assert_true(hd_wait_for(parked, f, 2000));
	hd_sleep_ms(50);
}

/*
 * Two clients hold: the daemon watches both, each with the same new
 * generation.  One of them ends its hold and never kicks (stopped between
 * its release and its kick): the other's release still wakes the loop,
 * which finds nobody holding and suspends.  Watching one holder only, the
 * loop waited for the silent one for ever.
 */
static void test_every_holder_watched(void **st)
{
	struct fx *f = *st;
	struct second sb;
	uint32_t ga, gb;
	void *ret;

	two_holders_parked(f, "other", &sb);
	struct wl_region *rb = sb.rg;
	int b = sb.slot, kb = sb.hold;
	pthread_t t = sb.t;

	ga = __atomic_load_n(&f->h->watched[f->slot], __ATOMIC_SEQ_CST);
	gb = __atomic_load_n(&f->h->watched[b], __ATOMIC_SEQ_CST);
	assert_true(ga != 0);
	assert_int_equal(ga, gb);
	/* The first holder lets go silently (no kick). */
	__atomic_fetch_sub(&f->rg->holds[f->hold].depth, 1, __ATOMIC_SEQ_CST);
	hd_sleep_ms(100);
	assert_int_equal(loop_wakeups(f), 0);
	assert_int_equal(fake_suspends(&f->fp), 0);
	/* The other's release kicks: the loop finds nobody. */
	hd_region_release(rb, (uint32_t)b, (uint32_t)kb, f->h, f->pl.kick_fd);
	pthread_join(t, &ret);
	assert_int_equal((intptr_t)ret, 0);
	assert_int_equal(f->fp.suspends, 1);
	assert_int_equal(f->pl.wakeups, 1);
	assert_int_equal(f->h->watched[f->slot], 0);
	assert_int_equal(f->h->watched[b], 0);
	f->regions[b] = NULL;
	free(rb);
}

/*
 * A busy client (it kicked since the last look and holds again) is left
 * unwatched while another holder is watched: its next pairs cost the
 * daemon nothing.  Once it is the only holder, it is watched again.
 */
static void test_busy_client_unwatched(void **st)
{
	struct fx *f = *st;
	struct second sb;
	unsigned long w0;
	void *ret;

	two_holders_parked(f, "busy", &sb);
	struct wl_region *rb = sb.rg;
	int b = sb.slot, kb = sb.hold;
	pthread_t t = sb.t;

	assert_true(__atomic_load_n(&f->h->watched[b], __ATOMIC_SEQ_CST) != 0);
	/* b released, kicked, and holds again before the loop looks. */
	w0 = loop_wakeups(f);
	powerloop_client_kick(&f->pl, (uint32_t)b);
	for (int i = 0; i < 200 && loop_wakeups(f) == w0; i++)
		hd_sleep_ms(10);
	hd_sleep_ms(50);
	assert_int_equal(loop_wakeups(f), w0 + 1);
	assert_true(__atomic_load_n(&f->h->watched[f->slot], __ATOMIC_SEQ_CST) != 0);
	assert_int_equal(__atomic_load_n(&f->h->watched[b], __ATOMIC_SEQ_CST), 0);
	/* The other one lets go: b is all that holds, and is watched. */
	release(f);
	hd_sleep_ms(100);
	assert_int_equal(fake_suspends(&f->fp), 0);
	assert_true(__atomic_load_n(&f->h->watched[b], __ATOMIC_SEQ_CST) != 0);
	assert_int_equal(__atomic_load_n(&f->h->watched[f->slot], __ATOMIC_SEQ_CST), 0);
	hd_region_release(rb, (uint32_t)b, (uint32_t)kb, f->h, f->pl.kick_fd);
	pthread_join(t, &ret);
	assert_int_equal((intptr_t)ret, 0);
	assert_int_equal(f->fp.suspends, 1);
	f->regions[b] = NULL;
	free(rb);
}


/* A synthetic awake source (daemon/awake.h) for the loop's rules. */
struct tsrc {
	struct awake_source s;
	struct fx *f;
	int hold_ms;             /* holding for this long after the first look */
	uint64_t first;
	int object;              /* last looks still to object */
	int samples, samples_before_read, last_looks;
	int (*read_count)(struct power_backend *be, unsigned *count);
};

static struct tsrc *TS;
static int count_read;

static int tsrc_read_count(struct power_backend *be, unsigned *count)
{
	count_read = 1;
	return TS->read_count(be, count);
}

static void tsrc_sample(struct awake_source *s, uint64_t now, int force)
{
	struct tsrc *t = s->priv;

	(void)force;
	t->samples++;
	t->samples_before_read += !count_read;
	if (!t->first)
		t->first = now;
}

static int tsrc_holding(struct awake_source *s, uint64_t now, uint64_t *until)
{
	struct tsrc *t = s->priv;
	uint64_t end = t->first + (uint64_t)t->hold_ms * 1000000u;

	if (now >= end)
		return 0;
	*until = end;
	return 1;
}

static int tsrc_last_look(struct awake_source *s)
{
	struct tsrc *t = s->priv;

	t->last_looks++;
	return t->object-- > 0;
}

static void tsrc_add(struct fx *f, struct tsrc *t)
{
	t->f = f;
	t->s.name = "test";
	t->s.sample = tsrc_sample;
	t->s.holding = tsrc_holding;
	t->s.last_look = tsrc_last_look;
	t->s.fd = -1;
	t->s.priv = t;
	TS = t;
	count_read = 0;
	t->read_count = f->fp.pub.read_count;
	f->fp.pub.read_count = tsrc_read_count;
	assert_int_equal(awake_add(&f->pl, &t->s), 0);
}

/*
 * The ordering rule: the count is read before any source is sampled, and
 * a source that objects at the last look (a display turned on after the
 * look) stops the attempt there, counted as an abort; the next cycle
 * suspends.
 */
static void test_source_last_look_aborts(void **st)
{
	struct fx *f = *st;
	struct tsrc t = { .object = 1 };

	tsrc_add(f, &t);
	assert_int_equal(powerloop_cycle(&f->pl), 0);
	assert_int_equal(t.samples_before_read, 0);
	assert_true(t.samples >= 2);
	assert_int_equal(t.last_looks, 1);
	assert_int_equal(f->fp.suspends, 0);
	assert_int_equal(f->h->dstats.aborts, 1);
	assert_int_equal(f->h->dstats.attempts, 0);
	assert_int_equal(powerloop_cycle(&f->pl), 0);
	assert_int_equal(f->fp.suspends, 1);
	assert_int_equal(t.last_looks, 2);
	assert_string_equal(f->h->sources[f->pl.nsources - 1].name, "test");
}

/*
 * A source that holds until a time: the loop waits for that time, with
 * no watch and no spinning (a predicate-only input), then suspends.
 */
static void test_source_holds_until(void **st)
{
	struct fx *f = *st;
	struct tsrc t = { .hold_ms = 300 };
	uint64_t t0 = hd_now_ns();

	tsrc_add(f, &t);
	assert_int_equal(powerloop_cycle(&f->pl), 0);
	assert_true(hd_now_ns() - t0 >= 290000000ull);
	assert_int_equal(f->fp.suspends, 1);
	/* Woken by its time once or twice, not spinning. */
	assert_true(f->pl.wakeups <= 3);
	assert_true(t.samples <= 8);
}

/* The hook between the look that found holders and the watch. */
struct between {
	struct fx *f;
	int release;            /* end the client's hold there, once */
	unsigned calls;
};

static void between_look_and_watch(void *arg)
{
	struct between *b = arg;

	if (__atomic_fetch_add(&b->calls, 1, __ATOMIC_SEQ_CST) == 0 && b->release)
		release(b->f);          /* unwatched: its release kicks nobody */
}

static int suspended_once(void *arg)
{
	return fake_suspends(&((struct fx *)arg)->fp) == 1;
}

/*
 * A hold that ends after the loop counted it and before it chose whom to
 * watch: its release saw no flag and kicked nobody.  The loop must look
 * again, not wait for a kick that never comes.
 */
static void test_release_before_watch(void **st)
{
	struct fx *f = *st;
	struct between b = { .f = f, .release = 1 };
	pthread_t t;
	void *ret;
	int suspended;

	f->pl.before_watch = between_look_and_watch;
	f->pl.before_watch_arg = &b;
	acquire(f, 0);
	pthread_create(&t, NULL, cycle_thread, f);
	suspended = hd_wait_for(suspended_once, f, 2000);
	if (!suspended)
		powerloop_request_stop(&f->pl);
	pthread_join(t, &ret);
	assert_true(suspended);
	assert_int_equal((intptr_t)ret, 0);
	assert_true(__atomic_load_n(&b.calls, __ATOMIC_SEQ_CST) >= 1);
	assert_int_equal(f->h->watched[f->slot], 0);
}

/* Only a daemon-owned hold: nobody to watch, and no spinning either; it
 * ends by a kick (alarm work done, an inhibitor closed). */
static void test_daemon_hold_waits_unwatched(void **st)
{
	struct fx *f = *st;
	struct between b = { .f = f };
	pthread_t t;
	void *ret;

	f->pl.before_watch = between_look_and_watch;
	f->pl.before_watch_arg = &b;
	wl_lock(f->h);
	f->h->slots[f->slot].dactive = 1;
	wl_unlock(f->h);
	pthread_create(&t, NULL, cycle_thread, f);
	assert_true(hd_wait_for(parked, f, 2000));
	hd_sleep_ms(200);
	assert_int_equal(__atomic_load_n(&b.calls, __ATOMIC_SEQ_CST), 1);
	assert_int_equal(loop_wakeups(f), 0);
	assert_int_equal(fake_suspends(&f->fp), 0);
	for (uint32_t i = 0; i < f->h->nslots; i++)
		assert_int_equal(f->h->watched[i], 0);
	wl_lock(f->h);
	f->h->slots[f->slot].dactive = 0;
	wl_unlock(f->h);
	powerloop_kick(&f->pl);
	pthread_join(t, &ret);
	assert_int_equal((intptr_t)ret, 0);
	assert_int_equal(f->fp.suspends, 1);
}

/* --- the ledger's "ended by": who held last before each attempt --------- */

/* A ledger for the loop and a fake root with one DRM connector (dpms
 * "On", "Off", or NULL: no display source). */
struct ended {
	struct ledger *l;
	char root[64], dpms[160];
	struct awake_source *display;
};

static void set_dpms(struct ended *e, const char *v)
{
	FILE *fp = fopen(e->dpms, "w");

	assert_non_null(fp);
	fprintf(fp, "%s\n", v);
	assert_int_equal(fclose(fp), 0);
}

static void ended_setup(struct fx *f, struct ended *e, const char *dpms)
{
	char dir[128];

	e->l = ledger_new(16, LEDGER_DEFAULT_WINDOW_MS);
	assert_non_null(e->l);
	assert_int_equal(powerloop_set_ledger(&f->pl, e->l), 0);
	snprintf(e->root, sizeof(e->root), "/tmp/wl-ended-XXXXXX");
	assert_non_null(mkdtemp(e->root));
	if (!dpms)
		return;
	snprintf(dir, sizeof(dir), "%s/sys", e->root);
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(dir, sizeof(dir), "%s/sys/class", e->root);
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(dir, sizeof(dir), "%s/sys/class/drm", e->root);
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(dir, sizeof(dir), "%s/sys/class/drm/card0-Virtual-1", e->root);
	assert_int_equal(mkdir(dir, 0700), 0);
	/* Driven by a CRTC: only then does its dpms count (display.c). */
	snprintf(e->dpms, sizeof(e->dpms), "%s/enabled", dir);
	set_dpms(e, "enabled");
	snprintf(e->dpms, sizeof(e->dpms), "%s/dpms", dir);
	set_dpms(e, dpms);
	/* Off 50 ms after it went off; while on, looked at within 1 s. */
	e->display = display_source_new(e->root, 50);
	assert_non_null(e->display);
	assert_int_equal(awake_add(&f->pl, e->display), 0);
}

static void ended_teardown(struct fx *f, struct ended *e)
{
	char cmd[128];

	powerloop_destroy(&f->pl);          /* the snapshots; teardown's is a no-op */
	assert_int_equal(powerloop_init(&f->pl, f->h, f->regions, &f->fp.pub, &f->clk.pub, &f->p), 0);
	display_source_free(e->display);
	ledger_free(e->l);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", e->root);
	assert_int_equal(system(cmd), 0);
}

static struct wl_ledger_record newest(struct ended *e)
{
	struct wl_ledger_record r;

	assert_int_equal(ledger_copy(e->l, ledger_next_seq(e->l) - 1, &r, 1), 1);
	return r;
}

static void assert_ended_by(struct ended *e, unsigned kind, const char *name)
{
	struct wl_ledger_record r = newest(e);

	assert_int_equal(r.ended_kind, kind);
	assert_string_equal(r.ended_by, name);
	assert_int_equal(r.ended_holders, kind == WL_LEK_NONE ? 0 : 1);
}

static int not_holding(void *arg)
{
	struct fx *f = arg;
	int h;

	wl_lock(f->h);
	h = f->h->sources[f->pl.nsources - 1].holding;
	wl_unlock(f->h);
	return !h;
}

/* Nothing held since the last attempt: "none", the first attempt and the
 * next one alike; a client that held before an attempt does not count
 * for the one after it. */
static void test_ended_by_none(void **st)
{
	struct fx *f = *st;
	struct ended e = { 0 };
	pthread_t t;

	ended_setup(f, &e, NULL);
	assert_int_equal(powerloop_cycle(&f->pl), 0);
	assert_ended_by(&e, WL_LEK_NONE, "");
	acquire(f, 0);
	pthread_create(&t, NULL, cycle_thread, f);
	assert_true(hd_wait_for(parked, f, 2000));
	release(f);
	pthread_join(t, NULL);
	assert_ended_by(&e, WL_LEK_CLIENT, "app");
	assert_int_equal(powerloop_cycle(&f->pl), 0);
	assert_int_equal(f->fp.suspends, 3);
	assert_ended_by(&e, WL_LEK_NONE, "");
	ended_teardown(f, &e);
}

/*
 * A client and a display hold; the client lets go first: the display
 * ended the awake period.  Then the display goes off first and the client
 * lets go after: the client did.
 */
static void test_ended_by_display_or_client(void **st)
{
	struct fx *f = *st;
	struct ended e = { 0 };
	pthread_t t;

	ended_setup(f, &e, "On");
	acquire(f, 0);
	pthread_create(&t, NULL, cycle_thread, f);
	assert_true(hd_wait_for(parked, f, 2000));
	release(f);
	hd_sleep_ms(100);
	assert_int_equal(fake_suspends(&f->fp), 0);
	set_dpms(&e, "Off");
	pthread_join(t, NULL);
	assert_int_equal(f->fp.suspends, 1);
	assert_ended_by(&e, WL_LEK_SOURCE, "display");

	set_dpms(&e, "On");
	acquire(f, 0);
	pthread_create(&t, NULL, cycle_thread, f);
	assert_true(hd_wait_for(parked, f, 2000));
	set_dpms(&e, "Off");
	/* Within the 1 s re-check and the 50 ms off delay. */
	assert_true(hd_wait_for(not_holding, f, 3000));
	assert_int_equal(fake_suspends(&f->fp), 1);
	release(f);
	pthread_join(t, NULL);
	assert_int_equal(f->fp.suspends, 2);
	assert_ended_by(&e, WL_LEK_CLIENT, "app");
	ended_teardown(f, &e);
}

/* While "asleep": IRQ 42 fires and ttyS1's source counts an event. */
static void wake_by_ttys1(struct fake_power *fp, void *arg)
{
	(void)arg;
	fake_file_set(fp, "/sys/power/pm_wakeup_irq", "42");
	fake_file_set(fp, "/sys/class/wakeup/wakeup1/event_count", "6");
}

/*
 * With a ledger, `wakelock status`'s last wake comes from the attempt's
 * record (the backend's own scan of the same files is not made), in the
 * backend's words: "irq N; source"; [suspend] wake_reasons = no leaves
 * it empty.
 */
static void test_last_wake_from_ledger(void **st)
{
	struct fx *f = *st;
	struct ended e = { 0 };

	f->p.wake_reasons = 1;
	powerloop_set_params(&f->pl, &f->p);
	ended_setup(f, &e, NULL);
	fake_file_fail(&f->fp, "/sys/power/pm_wakeup_irq", ENODATA);
	fake_file_set(&f->fp, "/sys/class/wakeup/wakeup1/name", "ttyS1");
	fake_file_set(&f->fp, "/sys/class/wakeup/wakeup1/event_count", "5");
	fake_file_set(&f->fp, "/sys/class/wakeup/wakeup1/wakeup_count", "0");
	f->fp.on_suspend = wake_by_ttys1;
	assert_int_equal(powerloop_cycle(&f->pl), 0);
	assert_string_equal(f->h->dstats.last_wake, "irq 42; ttyS1");
	assert_string_equal(newest(&e).sources[0], "ttyS1");

	f->p.wake_reasons = 0;
	powerloop_set_params(&f->pl, &f->p);
	f->h->dstats.last_wake[0] = 0;
	assert_int_equal(powerloop_cycle(&f->pl), 0);
	assert_string_equal(f->h->dstats.last_wake, "");
	ended_teardown(f, &e);
}

/*
 * The snapshot an attempt starts from is the one taken after the last
 * attempt while wakeup_count has not moved since that attempt began (no
 * source can have moved: the kernel counts every deactivation), and is
 * read again once it moved.  ttyS1 counting events between two attempts,
 * with the count moving as the kernel moves it, is no cause of the next.
 */
static void test_snapshot_reused_while_count_unchanged(void **st)
{
	struct fx *f = *st;
	struct ended e = { 0 };
	struct wl_ledger_record r;
	int lists;

	ended_setup(f, &e, NULL);
	fake_file_set(&f->fp, "/sys/class/wakeup/wakeup1/name", "ttyS1");
	fake_file_set(&f->fp, "/sys/class/wakeup/wakeup1/event_count", "5");
	fake_file_set(&f->fp, "/sys/class/wakeup/wakeup1/wakeup_count", "0");
	f->fp.on_suspend = wake_by_ttys1;
	assert_int_equal(powerloop_cycle(&f->pl), 0);
	assert_int_equal(f->fp.lists, 2);
	assert_string_equal(newest(&e).sources[0], "ttyS1");

	/* Nothing moved: one listing, after the attempt. */
	f->fp.on_suspend = NULL;
	lists = f->fp.lists;
	assert_int_equal(powerloop_cycle(&f->pl), 0);
	assert_int_equal(f->fp.lists, lists + 1);
	assert_int_equal(newest(&e).nsources, 0);

	/* Events while awake move the count: read again before. */
	fake_file_set(&f->fp, "/sys/class/wakeup/wakeup1/event_count", "9");
	fake_event_begin(&f->fp);
	fake_event_end(&f->fp);
	lists = f->fp.lists;
	assert_int_equal(powerloop_cycle(&f->pl), 0);
	assert_int_equal(f->fp.lists, lists + 2);
	r = newest(&e);
	assert_int_equal(r.outcome, WL_LO_RESUMED);
	assert_int_equal(r.nsources, 0);
	assert_int_equal(f->fp.suspends, 3);
	ended_teardown(f, &e);
}

static void test_reload_wakes_waiter(void **st)
{
	struct fx *f = *st;
	struct power_params p = f->p;
	pthread_t t;

	acquire(f, 0);
	pthread_create(&t, NULL, cycle_thread, f);
	assert_true(hd_wait_for(parked, f, 2000));
	strcpy(p.state, "mem");
	powerloop_set_params(&f->pl, &p);
	assert_true(hd_wait_for(woke_once, f, 500));
	assert_int_equal(fake_suspends(&f->fp), 0);   /* still held */
	release(f);
	pthread_join(t, NULL);
	assert_int_equal(f->fp.suspends, 1);
	assert_string_equal(f->fp.last_state, "mem"); /* this cycle used it */
}

static void test_earlier_timed_hold_rearms(void **st)
{
	struct fx *f = *st;
	int k2 = wl_table_hold_alloc(f->h, f->slot, "timed", WL_HOLD_CLIENT, -1);
	pthread_t t;
	uint64_t t0;

	acquire(f, 0);
	pthread_create(&t, NULL, cycle_thread, f);
	assert_true(hd_wait_for(parked, f, 2000));
	/* The loop sleeps untimed; a timed hold must re-arm it. */
	t0 = hd_now_ns();
	hd_region_acquire(f->rg, (uint32_t)k2, f->h, 50000000ull);
	release(f);         /* wakes the loop, which finds the timed hold */
	pthread_join(t, NULL);
	assert_true(hd_now_ns() - t0 >= 50000000ull);
	assert_true(hd_now_ns() - t0 < 500000000ull);
	assert_int_equal(f->fp.suspends, 1);
}

static void test_stop_while_reading(void **st)
{
	struct fx *f = *st;
	pthread_t t;
	void *ret;

	fake_event_begin(&f->fp);
	pthread_create(&t, NULL, cycle_thread, f);
	hd_sleep_ms(20);
	powerloop_request_stop(&f->pl);
	pthread_join(t, &ret);
	assert_int_equal((intptr_t)ret, 1);
	assert_int_equal(f->fp.suspends, 0);
}


/* --- hooks ----------------------------------------------------------- */

static char tmpdir[64];

static void make_tmpdir(void)
{
	strcpy(tmpdir, "/tmp/wl-hook-XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
}

static void rm_tmpdir(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (!getenv("WL_KEEP_TMP") && system(cmd)) { /* best effort */ }
}

/* tmpdir/name (static buffer per call site: copy if kept). */
static const char *tpath(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", tmpdir, name);
	return buf;
}

/* A shell script tmpdir/name; "@" in body stands for tmpdir. */
static void make_script(char *path, size_t len, const char *name, const char *body)
{
	FILE *f;

	tpath(path, len, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("#!/bin/sh\n", f);
	for (const char *c = body; *c; c++) {
		if (*c == '@')
			fputs(tmpdir, f);
		else
			fputc(*c, f);
	}
	fputc('\n', f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, 0755), 0);
}

static int count_lines(const char *path, const char *want)
{
	char line[256];
	int n = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (!want || !strcmp(line, want))
			n++;
	}
	fclose(f);
	return n;
}

static void read_all(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, len - 1, f);
	buf[n] = 0;
	fclose(f);
}

static uint64_t ms_since(uint64_t t0)
{
	return (hd_now_ns() - t0) / 1000000u;
}

/* A pre-suspend hook that causes a wakeup event every time it runs (it
 * reports one to the fake kernel).  Those events must not abort the
 * attempt it prepares, or the loop would run it again and again and never
 * suspend: the hook runs before wakeup_count is read. */
static void test_hook_event_is_no_livelock(void **st)
{
	struct fx *f = *st;
	struct power_params p = f->p;
	char log[128];
	int cycles = 0;

	make_tmpdir();
	tpath(f->fp.event_file, sizeof(f->fp.event_file), "events");
	make_script(p.pre_hook, sizeof(p.pre_hook), "pre",
	            "printf x >>@/events; echo \"$1\" >>@/log");
	p.hook_timeout_ms = 5000;
	powerloop_set_params(&f->pl, &p);
	while (cycles < 20 && f->fp.suspends < 3) {
		assert_int_equal(powerloop_cycle(&f->pl), 0);
		cycles++;
	}
	tpath(log, sizeof(log), "log");
	assert_int_equal(f->fp.suspends, 3);
	assert_int_equal(cycles, 3);
	assert_int_equal(count_lines(log, "pre-suspend"), 3);
	assert_int_equal(count_lines(log, NULL), 3);
	/* The kernel saw each of the hook's events... */
	assert_int_equal(f->fp.event_file_seen, 3);
	/* ...and none of them aborted anything. */
	assert_int_equal(f->h->dstats.aborts, 0);
	assert_int_equal(f->fp.aborts, 0);
	assert_int_equal(f->h->dstats.successes, 3);
	rm_tmpdir();
}

/* Zero-length kernel events, one after every read of wakeup_count: the
 * read never blocks and every count write is refused.  The loop must not
 * retry at full speed: from the second refusal in a row it backs off
 * (10 ms doubling to 1 s), measured on the fake clock, which advances
 * only by the loop's sleeps. */
static void test_event_stream_backs_off(void **st)
{
	struct fx *f = *st;
	uint64_t elapsed = 0;
	int in_first_second = 0, n = 30;

	f->orig_read = f->fp.pub.read_count;
	f->fp.pub.read_count = read_then_event;
	f->bump_after_read = 1000000;
	for (int i = 0; i < n; i++)
		assert_int_equal(powerloop_cycle(&f->pl), 0);
	assert_int_equal(f->h->dstats.aborts, n);
	assert_int_equal(f->fp.suspends, 0);
	/* Every refusal but the first waited. */
	assert_int_equal(f->clk.nslept, n - 1);
	for (int i = 0; i < n - 1; i++) {
		uint64_t want = 10u << (i < 7 ? i : 7);

		assert_int_equal(f->clk.slept_ms[i], want > 1000 ? 1000 : want);
	}
	/* Attempts are spread over time: attempt k starts after the sleeps
	 * of attempts 1..k-1. */
	for (int k = 0; k < n; k++) {
		if (elapsed < 1000)
			in_first_second++;
		if (k < f->clk.nslept)
			elapsed += f->clk.slept_ms[k];
	}
	assert_true(in_first_second <= 8);
	assert_true(elapsed >= (uint64_t)(n - 8) * 1000u);
	assert_int_equal(f->h->dstats.backoff_ms, 1000);
	/* The stream ends: the next attempt suspends, and the backoff starts
	 * over (a lone refusal is retried at once again). */
	f->bump_after_read = 0;
	assert_int_equal(powerloop_cycle(&f->pl), 0);
	assert_int_equal(f->fp.suspends, 1);
	assert_int_equal(f->h->dstats.backoff_ms, 0);
	f->bump_after_read = 1;
	assert_int_equal(powerloop_cycle(&f->pl), 0);
	assert_int_equal(f->h->dstats.aborts, n + 1);
	assert_int_equal(f->clk.nslept, n - 1);
	f->bump_after_read = 1;
	assert_int_equal(powerloop_cycle(&f->pl), 0);
	assert_int_equal(f->clk.nslept, n);
	assert_int_equal(f->clk.slept_ms[n - 1], 10);
	assert_int_equal(powerloop_cycle(&f->pl), 0);
	assert_int_equal(f->fp.suspends, 2);
}

/* A hook that fails is logged and does not stop the suspend: the pre-hook
 * is told what is coming, it has no veto (a hook that wants the system
 * awake takes a hold).  The post-resume hook runs once per resume. */
static void test_failing_hooks_do_not_stop_suspend(void **st)
{
	struct fx *f = *st;
	struct power_params p = f->p;
	char log[128];

	make_tmpdir();
	make_script(p.pre_hook, sizeof(p.pre_hook), "pre", "echo \"$1\" >>@/log; exit 3");
	make_script(p.post_hook, sizeof(p.post_hook), "post", "echo \"$1\" >>@/log; exit 4");
	p.hook_timeout_ms = 5000;
	assert_int_equal(run_hook(p.pre_hook, "pre-suspend", 5000), 3 << 8);
	powerloop_set_params(&f->pl, &p);
	assert_int_equal(powerloop_cycle(&f->pl), 0);
	assert_int_equal(powerloop_cycle(&f->pl), 0);
	assert_int_equal(f->fp.suspends, 2);
	assert_int_equal(f->h->dstats.successes, 2);
	assert_int_equal(f->h->dstats.failures, 0);
	assert_int_equal(f->clk.nslept, 0);        /* no backoff either */
	tpath(log, sizeof(log), "log");
	assert_int_equal(count_lines(log, "pre-suspend"), 3);
	assert_int_equal(count_lines(log, "post-resume"), 2);
	/* A failed suspend runs no post-resume hook. */
	f->fp.fail_times = 1;
	f->fp.fail_errno = EIO;
	assert_int_equal(powerloop_cycle(&f->pl), 0);
	assert_int_equal(count_lines(log, "pre-suspend"), 4);
	assert_int_equal(count_lines(log, "post-resume"), 2);
	/* A hook that cannot be started is reported as such. */
	assert_int_equal(run_hook("/nonexistent/hook", "pre-suspend", 1000), -ENOENT);
	rm_tmpdir();
}

/* run_hook in a thread, so that a hook that is never stopped fails the
 * test instead of hanging it. */
struct hook_call {
	const char *path;
	unsigned timeout_ms;
	int blocked;          /* run with the daemon's signals blocked */
	int r;
};

static void *hook_thread(void *arg)
{
	struct hook_call *c = arg;

	if (c->blocked) {
		sigset_t ss;

		sigemptyset(&ss);
		sigaddset(&ss, SIGTERM);
		sigaddset(&ss, SIGINT);
		sigaddset(&ss, SIGHUP);
		sigaddset(&ss, SIGUSR1);
		pthread_sigmask(SIG_BLOCK, &ss, NULL);
	}
	c->r = run_hook(c->path, "pre-suspend", c->timeout_ms);
	return NULL;
}

/* 1 if the call returned within limit_ms. */
static int call_hook(struct hook_call *c, unsigned limit_ms)
{
	struct timespec ts;
	pthread_t t;

	assert_int_equal(pthread_create(&t, NULL, hook_thread, c), 0);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += limit_ms / 1000;
	ts.tv_nsec += (long)(limit_ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	if (pthread_timedjoin_np(t, NULL, &ts) == 0)
		return 1;
	pthread_detach(t);     /* the test fails; leave it behind */
	return 0;
}

/* Gone or a zombie (an orphan that init has not reaped yet). */
static int process_dead(pid_t pid)
{
	char path[64], buf[256], *rp;
	FILE *fl;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fl = fopen(path, "r");
	if (!fl)
		return 1;
	if (!fgets(buf, sizeof(buf), fl))
		buf[0] = 0;
	fclose(fl);
	rp = strrchr(buf, ')');
	return rp && rp[1] == ' ' && (rp[2] == 'Z' || rp[2] == 'X');
}

static int read_pid(const char *path)
{
	FILE *fl = fopen(path, "r");
	int pid = 0;

	if (fl) {
		if (fscanf(fl, "%d", &pid) != 1)
			pid = 0;
		fclose(fl);
	}
	return pid;
}

/* A hook that hangs and ignores SIGTERM, with a child that does too: both
 * are killed after the time limit (SIGKILL to the process group) and the
 * call returns -ETIMEDOUT.  Once with a pidfd, once by polling. */
static void hung_hook(int no_pidfd)
{
	struct hook_call c = { .timeout_ms = 300 };
	char script[128], pidf[128], kidf[128];
	uint64_t t0;
	int pid, kid;

	make_tmpdir();
	make_script(script, sizeof(script), "hang",
	            "trap '' TERM; echo $$ >@/pid; sleep 60 & echo $! >@/kid; wait; wait");
	c.path = script;
	hooks_no_pidfd = no_pidfd;
	t0 = hd_now_ns();
	assert_true(call_hook(&c, 20000));
	hooks_no_pidfd = 0;
	assert_int_equal(c.r, -ETIMEDOUT);
	/* The limit, then a second's grace before SIGKILL (SIGTERM is ignored). */
	assert_true(ms_since(t0) >= 300);
	assert_true(ms_since(t0) < 300 + 1000 + 3000);
	pid = read_pid(tpath(pidf, sizeof(pidf), "pid"));
	kid = read_pid(tpath(kidf, sizeof(kidf), "kid"));
	assert_true(pid > 0);
	assert_true(kid > 0);
	assert_true(process_dead(pid));
	/* The orphaned child is killed with the group; init reaps it. */
	for (int i = 0; i < 200 && !process_dead(kid); i++)
		hd_sleep_ms(10);
	assert_true(process_dead(kid));
	/* A hook that finishes in time is waited for and not killed. */
	make_script(script, sizeof(script), "quick", "sleep 0.2; exit 0");
	hooks_no_pidfd = no_pidfd;
	t0 = hd_now_ns();
	assert_true(call_hook(&c, 20000));
	hooks_no_pidfd = 0;
	assert_int_equal(c.r, 0);
	assert_true(ms_since(t0) >= 200);
	rm_tmpdir();
}

static void test_hung_hook_is_killed(void **st)
{
	(void)st;
	hung_hook(0);
}

static void test_hung_hook_is_killed_without_pidfd(void **st)
{
	(void)st;
	hung_hook(1);
}

/* A hook that dies of SIGTERM well within its limit: the daemon's SIGTERM
 * (blocked in all its threads) must not stay blocked in the hook. */
/*
 * The signal state a hook started with: the script reads its own
 * /proc/$$/status with shell builtins only.  (Not through a command it
 * runs: dash empties the signal mask of its children, and blocks all
 * signals for a moment around each fork.)  glibc's posix_spawn leaves its
 * own two internal signals (32 and 33, below SIGRTMIN, which no program
 * may use) ignored; they are left out.
 */
#define SIG_STATUS \
	"while read -r k v; do case $k in SigBlk:|SigIgn:) echo \"$k $v\";; esac; " \
	"done </proc/$$/status"

static void check_sig_status(const char *text)
{
	unsigned long long blk = ~0ull, ign = ~0ull, internal = 0;
	const char *b = strstr(text, "SigBlk:"), *i = strstr(text, "SigIgn:");

	assert_non_null(b);
	assert_non_null(i);
	assert_int_equal(sscanf(b, "SigBlk: %llx", &blk), 1);
	assert_int_equal(sscanf(i, "SigIgn: %llx", &ign), 1);
	assert_true(b < i);
	for (int sig = 32; sig < SIGRTMIN; sig++)
		internal |= 1ull << (sig - 1);
	assert_int_equal(blk, 0);
	assert_int_equal(ign & ~internal, 0);
}

static void test_hook_signal_state_is_clean(void **st)
{
	struct hook_call c = { .timeout_ms = 5000, .blocked = 1 };
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	char script[128], out[128], buf[512];

	(void)st;
	make_tmpdir();
	make_script(script, sizeof(script), "sig",
	            SIG_STATUS " >@/out\n"
	            "readlink /proc/$$/fd/0 >>@/out\n"
	            "echo \"$1 $WAKELOCKD_PHASE $#\" >>@/out\n"
	            "kill -TERM $$; sleep 5; echo survived >>@/out");
	c.path = script;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGPIPE, &ign, &old);               /* as the daemon does */
	setenv("WAKELOCKD_PHASE", "stale", 1);        /* replaced, not doubled */
	assert_true(call_hook(&c, 20000));
	unsetenv("WAKELOCKD_PHASE");
	sigaction(SIGPIPE, &old, NULL);
	assert_int_equal(c.r, SIGTERM);               /* wait status: killed by it */
	read_all(tpath(out, sizeof(out), "out"), buf, sizeof(buf));
	check_sig_status(buf);
	/* Then stdin, "$1 $WAKELOCKD_PHASE $#"; nothing after the kill. */
	assert_non_null(strstr(buf, "\n/dev/null\npre-suspend pre-suspend 1\n"));
	assert_null(strstr(buf, "survived"));
	rm_tmpdir();
}

/* --- suspend-then-hibernate (hibernate_after.h) ------------------------- */

#define SEC 1000000000ull

static uint64_t boot_now(struct fx *f)
{
	return f->clk.pub.boot_ns(&f->clk.pub);
}

/* The fake clock on by ns of awake time. */
static void stay_awake(struct fx *f, uint64_t ns)
{
	f->clk.pub.sleep_ns(&f->clk.pub, ns);
}

static void hibernate_after(struct fx *f, unsigned s)
{
	f->p.hibernate_after_s = s;
	powerloop_set_params(&f->pl, &f->p);
}

/*
 * A spell of 4 s suspends with hibernate_after_s 11: each suspend arms
 * the daemon's own wake for the spell's start + 11 s and disarms it on
 * return; the third is cut short by it (its record's cause
 * hibernate_after), the fourth attempt writes "disk", and the one after
 * the hibernation begins a new spell.  Each record has its state.
 */
static void test_hibernate_after_spell(void **st)
{
	struct fx *f = *st;
	struct ended e = { 0 };
	struct wl_ledger_record r;
	char key[WL_LEDGER_CAUSE_MAX];
	uint64_t start;

	ended_setup(f, &e, NULL);
	hibernate_after(f, 11);
	f->fp.sleep_ns = 4 * SEC;
	start = boot_now(f);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(powerloop_cycle(&f->pl), 0);
		assert_int_equal(f->fp.wakes_armed, i + 1);
		assert_int_equal(f->fp.wake_at, 0);         /* disarmed on return */
		r = newest(&e);
		assert_int_equal(r.state, WL_LS_FREEZE);
		assert_int_equal(!!(r.cause & WL_LC_HIBERNATE), i == 2);
	}
	assert_int_equal(f->fp.own_wakes, 1);
	assert_true(boot_now(f) == start + 11 * SEC);   /* the third slept 3 s, not 4 */
	wl_ledger_cause_key(&r, key, sizeof(key));
	assert_string_equal(key, "hibernate_after");

	assert_int_equal(powerloop_cycle(&f->pl), 0);
	assert_string_equal(f->fp.last_state, "disk");
	assert_int_equal(f->fp.wakes_armed, 3);         /* no wake for a hibernation */
	r = newest(&e);
	assert_int_equal(r.state, WL_LS_DISK);
	assert_int_equal(r.outcome, WL_LO_RESUMED);
	assert_int_equal(r.cause & WL_LC_HIBERNATE, 0);

	/* A new spell: 11 s from this suspend. */
	start = boot_now(f);
	f->fp.on_suspend = NULL;
	assert_int_equal(powerloop_cycle(&f->pl), 0);
	assert_string_equal(f->fp.states, "freeze freeze freeze disk freeze");
	assert_int_equal(f->fp.wakes_armed, 4);
	assert_int_equal(f->pl.spell.start, start);
	ended_teardown(f, &e);
}

/* Short wakes do not start a new spell; an awake stretch of 60 s (the
 * device in use) does.  Off (0), nothing is armed and the state is the
 * configured one. */
static void test_hibernate_after_awake_resets(void **st)
{
	struct fx *f = *st;
	uint64_t start;

	hibernate_after(f, 100);
	f->fp.sleep_ns = 50 * SEC;
	assert_int_equal(powerloop_cycle(&f->pl), 0);
	stay_awake(f, HIBERNATE_SPELL_AWAKE_NS - SEC);  /* 59 s: the same spell */
	assert_int_equal(powerloop_cycle(&f->pl), 0);
	assert_int_equal(f->fp.own_wakes, 0);           /* 50 + 59 s: past due already */
	assert_string_equal(f->fp.states, "freeze disk");
	assert_int_equal(f->pl.spell.start, 0);         /* the hibernation ended it */

	start = boot_now(f);
	assert_int_equal(powerloop_cycle(&f->pl), 0);   /* a spell after the hibernation */
	stay_awake(f, HIBERNATE_SPELL_AWAKE_NS);         /* in use: a new one */
	assert_int_equal(powerloop_cycle(&f->pl), 0);
	assert_true(f->pl.spell.start > start + HIBERNATE_SPELL_AWAKE_NS);
	assert_string_equal(f->fp.states, "freeze disk freeze freeze");

	hibernate_after(f, 0);
	f->fp.wakes_armed = 0;
	for (int i = 0; i < 3; i++)
		assert_int_equal(powerloop_cycle(&f->pl), 0);
	assert_int_equal(f->fp.wakes_armed, 0);
	assert_string_equal(f->fp.states, "freeze disk freeze freeze freeze freeze freeze");
	assert_int_equal(f->pl.spell.start, 0);
}

/*
 * A hibernation that fails (no swap: ENODEV) is not tried at every
 * attempt: the system suspends again, and tries again once another
 * hibernate_after_s of sleep has passed.  A backend that cannot arm the
 * wake still hibernates, at the first attempt after the time.
 */
static void test_hibernate_after_failure(void **st)
{
	struct fx *f = *st;
	uint64_t t;

	hibernate_after(f, 10);
	f->fp.sleep_ns = 30 * SEC;
	assert_int_equal(powerloop_cycle(&f->pl), 0);   /* cut at 10 s by the wake */
	assert_int_equal(f->fp.own_wakes, 1);
	f->fp.fail_times = 1;
	f->fp.fail_errno = ENODEV;
	assert_int_equal(powerloop_cycle(&f->pl), 0);
	assert_string_equal(f->fp.last_state, "disk");
	assert_int_equal(f->h->dstats.failures, 1);
	t = boot_now(f);
	assert_int_equal(powerloop_cycle(&f->pl), 0);
	assert_string_equal(f->fp.states, "freeze disk freeze");
	assert_true(f->pl.spell.start <= t && f->pl.spell.start + 10 * SEC > t);

	assert_int_equal(f->fp.own_wakes, 2);            /* that one cut by the wake too */
	assert_int_equal(powerloop_cycle(&f->pl), 0);
	assert_string_equal(f->fp.states, "freeze disk freeze disk");

	f->fp.arm_wake_errno = EPERM;
	t = boot_now(f);
	assert_int_equal(powerloop_cycle(&f->pl), 0);   /* not cut short: 30 s */
	assert_int_equal(f->fp.own_wakes, 2);
	assert_true(boot_now(f) == t + 30 * SEC);
	assert_int_equal(powerloop_cycle(&f->pl), 0);
	assert_string_equal(f->fp.states, "freeze disk freeze disk freeze disk");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_suspends_without_holds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_waits_while_held, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stale_count_retries_at_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_blocks_during_event, setup, teardown),
		cmocka_unit_test_setup_teardown(test_event_after_handshake_aborts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_backoff_on_failures, setup, teardown),
		cmocka_unit_test_setup_teardown(test_min_awake_and_short_suspends, setup, teardown),
		cmocka_unit_test_setup_teardown(test_denied_does_not_block, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timed_hold_expires, setup, teardown),
		cmocka_unit_test_setup_teardown(test_acquire_during_suspend_entry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_while_waiting, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_while_reading, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_wakeups_while_held, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reaping_wakes_waiter, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deny_wakes_waiter, setup, teardown),
		cmocka_unit_test_setup_teardown(test_every_holder_watched, setup, teardown),
		cmocka_unit_test_setup_teardown(test_busy_client_unwatched, setup, teardown),
		cmocka_unit_test_setup_teardown(test_source_last_look_aborts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_source_holds_until, setup, teardown),
		cmocka_unit_test_setup_teardown(test_release_before_watch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_daemon_hold_waits_unwatched, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reload_wakes_waiter, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ended_by_none, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ended_by_display_or_client, setup, teardown),
		cmocka_unit_test_setup_teardown(test_last_wake_from_ledger, setup, teardown),
		cmocka_unit_test_setup_teardown(test_snapshot_reused_while_count_unchanged, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_earlier_timed_hold_rearms, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hook_event_is_no_livelock, setup, teardown),
		cmocka_unit_test_setup_teardown(test_event_stream_backs_off, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failing_hooks_do_not_stop_suspend, setup, teardown),
		cmocka_unit_test(test_hung_hook_is_killed),
		cmocka_unit_test(test_hung_hook_is_killed_without_pidfd),
		cmocka_unit_test(test_hook_signal_state_is_clean),
		cmocka_unit_test_setup_teardown(test_hibernate_after_spell, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hibernate_after_awake_resets, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hibernate_after_failure, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
