/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Crash safety under load: clients SIGKILLed at random moments, a quarter
 * of them deliberately in the middle of an update of their region (its
 * active count off by three).  Checks: the counter is exact afterwards,
 * nobody deadlocks (a canary client
 * keeps acquiring and releasing; a hang fails by meson test's timeout), the
 * daemon keeps suspending, and every registered victim is reaped within
 * 2 s of its SIGKILL (liveness, not speed: the reap latencies are printed
 * in the log, not judged).
 * WL_STRESS_KILLS overrides the number of kills (default 1000).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "lib/wl_client.h"
#include "harness.h"

static struct hd D;

static int setup(void **st)
{
	(void)st;
	assert_int_equal(hd_prepare(&D), 0);
	assert_int_equal(hd_start(&D, NULL), 0);
	return 0;
}

static void kill_pool(void);

static int teardown(void **st)
{
	(void)st;
	kill_pool();
	hd_cleanup(&D);
	return 0;
}

struct victim {
	pid_t pid;
	int rfd;             /* reads client id (8 bytes), then 'L' if mid-update */
	uint64_t client_id;
	int mid_update;
};

static void victim_main(int wfd, int mode, unsigned seed)
{
	char name[WAKELOCK_NAME_MAX];
	wakelock_client *c;
	wakelock_hold *h[2];

	/* A name is one live client's: the pid makes it so (seeds may share
	 * their last digits). */
	snprintf(name, sizeof(name), "victim%d", (int)getpid());
	int r = wakelock_client_open(NULL, name, &c);
	if (r < 0)
		fprintf(stderr, "victim: %s (%s)\n", wakelock_strerror(r), wakelock_last_error());
	if (r || wakelock_hold_create(c, "a", &h[0]) ||
	    wakelock_hold_create(c, "b", &h[1]))
		_exit(1);
	if (write(wfd, &c->client_id, 8) != 8)
		_exit(1);
	if (mode == 1) {
		/* Die with a half-made update of the region. */
		wakelock_hold_acquire(h[0]);
		c->region->holds[wl_hold_index(h[0])].depth += 5;
		c->region->holds[WAKELOCK_MAX_HOLDS_PER_CLIENT - 1].depth += 3;
		if (write(wfd, "L", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	for (unsigned i = 0;; i++) {
		seed = seed * 1103515245u + 12345u;
		wakelock_hold *x = h[(seed >> 16) & 1];
		switch ((seed >> 8) % 5) {
		case 0: wakelock_hold_acquire(x); break;
		case 1: wakelock_hold_release(x); break;
		case 2: wakelock_hold_acquire_timeout(x, (seed >> 4) % 50); break;
		case 3: wakelock_hold_acquire(x); wakelock_hold_release(x); break;
		default: wakelock_hold_is_held(x); break;
		}
		/* Busy but not CPU-bound, like a real client: eight processes
		 * spinning on two cores would measure the scheduler, not us. */
		if (i % 4 == 3)
			usleep((seed >> 3) % 200);
	}
}

static int slot_gone(uint64_t id)
{
	const struct wl_shm_header *h = hd_snap(&D);

	for (uint32_t i = 0; i < h->nslots; i++) {
		const struct wl_shm_slot *s = &h->slots[i];
		if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) == WL_SLOT_LIVE &&
		    __atomic_load_n(&s->client_id, __ATOMIC_ACQUIRE) == id)
			return 0;
	}
	return 1;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static struct victim pool[8];

static void kill_pool(void)
{
	for (unsigned i = 0; i < 8; i++)
		if (pool[i].pid > 0) {
			kill(pool[i].pid, SIGKILL);
			waitpid(pool[i].pid, NULL, 0);
			pool[i].pid = 0;
		}
}

static pid_t spawn(int mode, unsigned seed, int *rfd)
{
	int p[2];
	pid_t pid;

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		victim_main(p[1], mode, seed);
	}
	close(p[1]);
	*rfd = p[0];
	return pid;
}

/* The slot of a registered client, or -1. */
static int slot_of(uint64_t id)
{
	const struct wl_shm_header *h = hd_snap(&D);

	for (uint32_t i = 0; i < h->nslots; i++) {
		const struct wl_shm_slot *s = &h->slots[i];
		if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) == WL_SLOT_LIVE &&
		    __atomic_load_n(&s->client_id, __ATOMIC_ACQUIRE) == id)
			return (int)i;
	}
	return -1;
}

static int slot_still(int i, uint64_t id)
{
	const struct wl_shm_slot *s = &hd_snap(&D)->slots[i];
	return __atomic_load_n(&s->state, __ATOMIC_ACQUIRE) == WL_SLOT_LIVE &&
	       __atomic_load_n(&s->client_id, __ATOMIC_ACQUIRE) == id;
}

/* Kill v, wait for the daemon to drop its slot; returns latency or 0 if
 * it never registered. */
static uint64_t kill_and_reap(struct victim *v)
{
	/* Find the slot before the kill and poll that one alone: scanning the
	 * whole table (1024 slots) every 50 us would load the 2 CPUs the
	 * daemon needs to reap.  Client ids are never reused, so "that slot
	 * no longer holds this id" is exact. */
	int slot = v->client_id ? slot_of(v->client_id) : -1;
	uint64_t t0 = hd_now_ns();

	kill(v->pid, SIGKILL);
	waitpid(v->pid, NULL, 0);
	v->pid = 0;
	close(v->rfd);
	if (!v->client_id)
		return 0;
	while (slot >= 0 ? slot_still(slot, v->client_id) : !slot_gone(v->client_id)) {
		if (hd_now_ns() - t0 > 2000000000ull)
			fail_msg("client %llu not reaped after 2 s", (unsigned long long)v->client_id);
		usleep(50);
	}
	return hd_now_ns() - t0;
}

static void test_sigkill_storm(void **st)
{
	enum { POOL = 8 };
	int kills = getenv("WL_STRESS_KILLS") ? atoi(getenv("WL_STRESS_KILLS")) : 1000;
	uint64_t *lat = calloc((size_t)kills + 1, sizeof(uint64_t));
	unsigned nlat = 0, mid_update = 0, unregistered = 0, seed = 12345, next = 0;
	uint64_t canary_max = 0, t_start = hd_now_ns(), attempts0, l;
	wakelock_client *canary;
	wakelock_hold *ch;
	(void)st;

	assert_int_equal(wakelock_client_open(NULL, "canary", &canary), 0);
	assert_int_equal(wakelock_hold_create(canary, "c", &ch), 0);
	attempts0 = hd_snap(&D)->dstats.attempts;
	memset(pool, 0, sizeof(pool));

	for (int k = 0; k < kills; k++) {
		seed = seed * 1103515245u + 12345u;
		if (k % 4 == 0) {
			/* Dies in the middle of an update of its region. */
			struct victim v = { 0 };
			char ch1;
			v.pid = spawn(1, (unsigned)k * 2654435761u, &v.rfd);
			assert_int_equal(read(v.rfd, &v.client_id, 8), 8);
			assert_int_equal(read(v.rfd, &ch1, 1), 1);
			usleep((seed >> 8) % 1000);
			lat[nlat++] = kill_and_reap(&v);
			mid_update++;
		} else {
			/* Rotate the pool: kill the oldest at a random moment of its life,
			 * sometimes before it even registered. */
			struct victim *v = &pool[next++ % POOL];
			if (v->pid > 0) {
				if ((seed >> 4) % 8)   /* 1 in 8: at once, often mid-registration */
					usleep((seed >> 8) % 2000);
				if (read(v->rfd, &v->client_id, 8) != 8)
					v->client_id = 0;
				l = kill_and_reap(v);
				if (l)
					lat[nlat++] = l;
				else
					unregistered++;
			}
			v->pid = spawn(0, (unsigned)k * 2654435761u, &v->rfd);
			v->client_id = 0;
			fcntl(v->rfd, F_SETFL, O_NONBLOCK);
		}
		/* Canary: the system must stay usable, never deadlocked. */
		uint64_t c0 = hd_now_ns();
		assert_int_equal(wakelock_hold_acquire(ch), 0);
		assert_int_equal(wakelock_hold_release(ch), 0);
		if (hd_now_ns() - c0 > canary_max)
			canary_max = hd_now_ns() - c0;
	}
	for (unsigned i = 0; i < POOL; i++) {
		if (pool[i].pid > 0) {
			if (read(pool[i].rfd, &pool[i].client_id, 8) != 8)
				pool[i].client_id = 0;
			l = kill_and_reap(&pool[i]);
			if (l)
				lat[nlat++] = l;
			else
				unregistered++;
		}
	}

	/* Every victim gone: only the canary is registered, nothing held. */
	unsigned live = 0;
	const struct wl_shm_header *hs = hd_snap(&D);

	for (uint32_t i = 0; i < hs->nslots; i++)
		live += hs->slots[i].state == WL_SLOT_LIVE;
	assert_int_equal(live, 1);
	assert_int_equal(hs->counter, 0);
	/* Exact count: acquire once more and see exactly 1. */
	assert_int_equal(wakelock_hold_acquire(ch), 0);
	assert_int_equal(hd_snap(&D)->counter, 1);
	assert_int_equal(wakelock_hold_release(ch), 0);
	assert_int_equal(hd_snap(&D)->counter, 0);
	/* And the daemon keeps suspending. */
	hd_sleep_ms(50);
	assert_true(hd_snap(&D)->dstats.attempts > attempts0);

	assert_true(nlat > 0);
	qsort(lat, nlat, sizeof(*lat), cmp_u64);
	print_message("SIGKILL storm: %d kills in %.1f s, %u reaped after registering "
	              "(%u killed mid-update), %u killed before "
	              "registering; reap latency p50 %.2f ms, p99 %.2f ms, max %.2f ms; "
	              "canary worst acquire+release %.2f ms\n",
	              kills, (double)(hd_now_ns() - t_start) / 1e9, nlat, mid_update,
	              unregistered, (double)lat[nlat / 2] / 1e6,
	              (double)lat[nlat * 99 / 100] / 1e6, (double)lat[nlat - 1] / 1e6,
	              (double)canary_max / 1e6);
	/* Every victim that registered was reaped within 2 s: kill_and_reap()
	 * fails the test otherwise. */
	free(lat);
	wakelock_client_close(canary);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sigkill_storm),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
