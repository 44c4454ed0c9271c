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
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>
#include "../../daemon/log.h"
#include "../../daemon/powerloop.h"
#include "fake_power.h"
#include "harness.h"

struct fx {
	struct wl_shm_header *h;
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
	powerloop_init(&f->pl, f->h, &f->fp.pub, &f->clk.pub, &f->p);
	f->slot = wl_table_slot_alloc(f->h, 1, 0, "app", 1, &id);
	f->hold = wl_table_hold_alloc(f->h, f->slot, "job");
	F = f;
	*st = f;
	return 0;
}

static int teardown(void **st)
{
	struct fx *f = *st;

	powerloop_destroy(&f->pl);
	munmap(f->h, wl_shm_total_size(8));
	free(f);
	return 0;
}

static void acquire(struct fx *f, uint64_t timeout_ns)
{
	assert_int_equal(wl_lock(f->h), 0);
	assert_int_equal(wl_table_acquire(f->h, f->slot, f->hold, timeout_ns, wl_now_mono()), 0);
	wl_unlock(f->h);
}

static void release(struct fx *f)
{
	assert_int_equal(wl_lock(f->h), 0);
	assert_int_equal(wl_table_release(f->h, f->slot, f->hold, 0, wl_now_mono()), 0);
	wl_unlock(f->h);
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
	assert_int_equal(wl_lock(f->h), 0);
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
	assert_int_equal(f->h->slots[f->slot].expire_count, 1);
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
	assert_int_equal(f->h->counter, 1);
	f->fp.on_suspend = NULL;
}

/* --- the untimed wait: no wake-ups while held, and every event that
 * must end or change the wait does wake it (without the old 1 s safety
 * timeout, a missed notification would hang these tests past 500 ms). */

static int parked(void *arg)
{
	struct fx *f = arg;
	return __atomic_load_n(&f->h->dstate, __ATOMIC_RELAXED) == WL_D_WAITING &&
	       __atomic_load_n(&f->h->waiters, __ATOMIC_SEQ_CST) > 0;
}

static unsigned long loop_wakeups(struct fx *f)
{
	unsigned long n;

	assert_int_equal(wl_lock(f->h), 0);
	n = f->pl.wakeups;
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
	assert_int_equal(wl_lock(f->h), 0);
	wl_table_slot_free(f->h, f->slot, wl_now_mono());
	wl_unlock(f->h);
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
	assert_int_equal(wl_lock(f->h), 0);
	wl_table_set_allowed(f->h, f->slot, 0, wl_now_mono());
	wl_unlock(f->h);
	pthread_join(t, NULL);
	assert_true(hd_now_ns() - t0 < 500000000ull);
	assert_int_equal(f->fp.suspends, 1);
	assert_int_equal(f->h->counter, 0);
	/* Allowing it again counts its hold again. */
	assert_int_equal(wl_lock(f->h), 0);
	wl_table_set_allowed(f->h, f->slot, 1, wl_now_mono());
	wl_unlock(f->h);
	assert_int_equal(f->h->counter, 1);
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
	int k2 = wl_table_hold_alloc(f->h, f->slot, "timed");
	pthread_t t;
	uint64_t t0;

	acquire(f, 0);
	pthread_create(&t, NULL, cycle_thread, f);
	assert_true(hd_wait_for(parked, f, 2000));
	/* The loop sleeps untimed; a timed hold must re-arm it. */
	t0 = hd_now_ns();
	assert_int_equal(wl_lock(f->h), 0);
	assert_int_equal(wl_table_acquire(f->h, f->slot, k2, 50000000ull, wl_now_mono()), 0);
	wl_unlock(f->h);
	release(f);                         /* counter 2 -> 1: no notify */
	pthread_join(t, NULL);
	assert_true(hd_now_ns() - t0 >= 50000000ull);
	assert_true(hd_now_ns() - t0 < 500000000ull);
	assert_int_equal(f->fp.suspends, 1);
	assert_int_equal(f->h->slots[f->slot].expire_count, 1);
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
		cmocka_unit_test_setup_teardown(test_reload_wakes_waiter, setup, teardown),
		cmocka_unit_test_setup_teardown(test_earlier_timed_hold_rearms, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
