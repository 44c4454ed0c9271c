/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The shared table without any daemon: hold semantics, accounting,
 * repair, and validation of foreign/corrupt/old segments. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "../../lib/wl_shm.h"

#define MS 1000000ull

static struct wl_shm_header *new_seg(void)
{
	size_t len = wl_shm_total_size(WL_MAX_CLIENTS);
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	assert_true(m != MAP_FAILED);
	assert_int_equal(wl_seg_init(m, WL_MAX_CLIENTS), 0);
	return m;
}

static void free_seg(struct wl_shm_header *h)
{
	munmap(h, wl_shm_total_size(WL_MAX_CLIENTS));
}

static int client(struct wl_shm_header *h, const char *name, int allowed)
{
	uint64_t id;
	int s = wl_table_slot_alloc(h, 1234, 1000, name, allowed, &id);
	assert_true(s >= 0);
	return s;
}

static void test_nesting(void **st)
{
	struct wl_shm_header *h = new_seg();
	int s = client(h, "a", 1);
	int k = wl_table_hold_alloc(h, (uint32_t)s, "k");
	(void)st;

	assert_int_equal(wl_table_acquire(h, s, k, 0, 10 * MS), 0);
	assert_int_equal(wl_table_acquire(h, s, k, 0, 11 * MS), 0);
	assert_int_equal(h->counter, 1);      /* one hold, however deep */
	assert_int_equal(h->slots[s].holds[k].depth, 2);
	assert_int_equal(wl_table_release(h, s, k, 0, 12 * MS), 0);
	assert_int_equal(h->counter, 1);
	assert_int_equal(wl_table_release(h, s, k, 0, 13 * MS), 0);
	assert_int_equal(h->counter, 0);
	assert_int_equal(wl_table_release(h, s, k, 0, 14 * MS), -EINVAL);
	assert_int_equal(h->counter, 0);
	assert_int_equal(h->slots[s].acquire_count, 1);
	assert_int_equal(h->slots[s].total_held_ns, 3 * MS);
	free_seg(h);
}

static void test_two_holds_two_clients(void **st)
{
	struct wl_shm_header *h = new_seg();
	int a = client(h, "a", 1), b = client(h, "b", 1);
	int ka = wl_table_hold_alloc(h, a, "x"), kb1 = wl_table_hold_alloc(h, b, "y"),
	    kb2 = wl_table_hold_alloc(h, b, "z");
	(void)st;

	wl_table_acquire(h, a, ka, 0, MS);
	wl_table_acquire(h, b, kb1, 0, MS);
	wl_table_acquire(h, b, kb2, 0, MS);
	assert_int_equal(h->counter, 3);
	assert_int_equal(h->slots[b].active, 2);
	wl_table_slot_free(h, b, 2 * MS);         /* reaping */
	assert_int_equal(h->counter, 1);
	assert_int_equal(h->slots[b].state, WL_SLOT_FREE);
	wl_table_release(h, a, ka, 0, 3 * MS);
	assert_int_equal(h->counter, 0);
	free_seg(h);
}

static void test_timeout(void **st)
{
	struct wl_shm_header *h = new_seg();
	int s = client(h, "t", 1), k = wl_table_hold_alloc(h, s, "k");
	uint64_t t0 = wl_now_mono();
	(void)st;

	assert_int_equal(wl_table_acquire(h, s, k, 50 * MS, t0), 0);
	assert_int_equal(h->counter, 1);
	assert_int_equal(h->next_deadline, t0 + 50 * MS);
	/* A shorter timeout does not shorten it; a longer one extends it. */
	wl_table_acquire(h, s, k, 10 * MS, t0);
	assert_int_equal(h->slots[s].holds[k].deadline, t0 + 50 * MS);
	wl_table_acquire(h, s, k, 80 * MS, t0);
	assert_int_equal(wl_table_expire(h, t0 + 60 * MS), t0 + 80 * MS);
	assert_int_equal(h->counter, 1);
	assert_int_equal(wl_table_expire(h, t0 + 80 * MS), 0);
	assert_int_equal(h->counter, 0);
	assert_int_equal(h->slots[s].expire_count, 1);
	/* Timed + untimed: stays while either holds. */
	wl_table_acquire(h, s, k, 0, t0);
	wl_table_acquire(h, s, k, 5 * MS, t0);
	wl_table_expire(h, t0 + 6 * MS);
	assert_int_equal(h->counter, 1);
	wl_table_release(h, s, k, 0, t0 + 7 * MS);
	assert_int_equal(h->counter, 0);
	/* Release of a pending timed hold cancels it. */
	wl_table_acquire(h, s, k, 100 * MS, t0);
	assert_int_equal(wl_table_release(h, s, k, 0, t0 + MS), 0);
	assert_int_equal(h->counter, 0);
	free_seg(h);
}

static void test_denied(void **st)
{
	struct wl_shm_header *h = new_seg();
	int s = client(h, "bad", 0), k = wl_table_hold_alloc(h, s, "k");
	(void)st;

	wl_table_acquire(h, s, k, 0, MS);
	assert_int_equal(h->counter, 0);          /* recorded, not counted */
	assert_int_equal(h->slots[s].active, 1);
	assert_int_equal(h->slots[s].denied_count, 1);
	wl_table_set_allowed(h, s, 1, 2 * MS);
	assert_int_equal(h->counter, 1);
	wl_table_set_allowed(h, s, 0, 3 * MS);
	assert_int_equal(h->counter, 0);
	free_seg(h);
}

static void test_limits(void **st)
{
	struct wl_shm_header *h = new_seg();
	uint64_t id;
	int s = client(h, "a", 1);
	(void)st;

	for (unsigned i = 0; i < WL_MAX_HOLDS_PER_CLIENT; i++)
		assert_true(wl_table_hold_alloc(h, s, "k") >= 0);
	assert_int_equal(wl_table_hold_alloc(h, s, "k"), -ENOSPC);
	for (unsigned i = 1; i < WL_MAX_CLIENTS; i++)
		assert_true(wl_table_slot_alloc(h, 1, 1, "c", 1, &id) >= 0);
	assert_int_equal(wl_table_slot_alloc(h, 1, 1, "c", 1, &id), -ENOSPC);
	/* Freed slots keep identities unique: ids are never reused. */
	wl_table_slot_free(h, 5, MS);
	int n = wl_table_slot_alloc(h, 1, 1, "c", 1, &id);
	assert_int_equal(n, 5);
	assert_int_equal(id, WL_MAX_CLIENTS + 1);
	assert_int_equal(wl_table_acquire(h, 5, 0, 0, MS), -ESTALE); /* hold not allocated */
	free_seg(h);
}

static void test_repair(void **st)
{
	struct wl_shm_header *h = new_seg();
	int a = client(h, "a", 1), b = client(h, "b", 0);
	int ka = wl_table_hold_alloc(h, a, "x"), kb = wl_table_hold_alloc(h, b, "y");
	uint64_t now = wl_now_mono();
	(void)st;

	wl_table_acquire(h, a, ka, 0, now);
	wl_table_acquire(h, b, kb, 0, now);
	/* Simulate a client that died half way: primary state changed,
	 * derived state not. */
	h->slots[a].holds[ka].depth = 0;
	h->counter = 77;
	h->slots[b].active = 9;
	wl_table_repair(h, now);
	assert_int_equal(h->counter, 0);
	assert_int_equal(h->slots[a].active, 0);
	assert_int_equal(h->slots[b].active, 1);
	assert_int_equal(h->repairs, 1);
	free_seg(h);
}

static void test_names(void **st)
{
	(void)st;
	assert_int_equal(wl_name_check("ok-name_1.x"), 0);
	assert_int_equal(wl_name_check(""), -EINVAL);
	assert_int_equal(wl_name_check(NULL), -EINVAL);
	assert_int_equal(wl_name_check("has space"), -EINVAL);
	assert_int_equal(wl_name_check("a,b"), -EINVAL);
	assert_int_equal(wl_name_check("0123456789012345678901234567890123"), -ENAMETOOLONG);
}

/* --- validation of what a client is handed ----------------------------- */

static int file_with(const void *data, size_t len)
{
	char path[] = "/tmp/wl-seg-XXXXXX";
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	return fd;
}

static void check_map(struct wl_shm_header *h, size_t len, int expect)
{
	struct wl_seg seg;
	int r = wl_seg_map_fd(file_with(h, len), &seg);

	assert_int_equal(r, expect);
	if (r == 0)
		wl_seg_unmap(&seg);
}

static void test_validation(void **st)
{
	size_t len = wl_shm_total_size(WL_MAX_CLIENTS);
	struct wl_shm_header *h = new_seg();
	char junk[4096];
	(void)st;

	check_map(h, len, 0);
	check_map(h, len / 2, -EBADMSG);            /* truncated */
	h->abi_major = WL_ABI_MAJOR + 1;
	check_map(h, len, -EPROTONOSUPPORT);        /* newer daemon */
	h->abi_major = WL_ABI_MAJOR;
	h->abi_minor = WL_ABI_MINOR + 3;
	check_map(h, len, 0);                       /* compatible addition */
	h->nslots = 100000;
	check_map(h, len, -EBADMSG);                /* corrupt */
	h->nslots = WL_MAX_CLIENTS;
	h->slot_size = 12;
	check_map(h, len, -EBADMSG);
	h->slot_size = sizeof(struct wl_shm_slot);
	h->magic = 0x12345678;
	check_map(h, len, -EPROTO);                 /* foreign */
	memset(junk, 'x', sizeof(junk));
	check_map((void *)junk, sizeof(junk), -EPROTO);
	check_map((void *)junk, 3, -EBADMSG);
	free_seg(h);
}

static void *lock_then_unlock(void *arg)
{
	struct wl_shm_header *h = arg;

	if (wl_lock(h) == 0)
		wl_unlock(h);
	return NULL;
}

/*
 * A lost hand-off of the robust mutex: the owner's unlock woke a waiter
 * that died before it took the lock, so the lock is free while others
 * sleep on.  Simulated by an owner process that clears the lock word
 * without waking anyone and exits.  The waiter must still get the lock
 * (it sleeps at most WL_LOCK_RETRY_MS at a time); before, it slept forever.
 */
static void test_lost_handoff(void **st)
{
	struct wl_shm_header *h = new_seg();
	int go[2], ready[2], status;
	struct timespec end;
	pthread_t waiter;
	char b = 0;
	pid_t pid;

	(void)st;
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(ready), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (wl_lock(h) < 0)
			_exit(1);
		if (write(ready[1], &b, 1) != 1 || read(go[0], &b, 1) != 1)
			_exit(2);
		/* Free, as after a wake-up that nobody took: no FUTEX_WAKE. */
		__atomic_store_n(&h->lock.__data.__lock, 0, __ATOMIC_SEQ_CST);
		_exit(0);
	}
	assert_int_equal(read(ready[0], &b, 1), 1);
	assert_int_equal(pthread_create(&waiter, NULL, lock_then_unlock, h), 0);
	usleep(200000);                  /* the waiter is asleep on the futex */
	assert_int_equal(write(go[1], &b, 1), 1);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	clock_gettime(CLOCK_REALTIME, &end);
	end.tv_sec += 2;
	if (pthread_timedjoin_np(waiter, NULL, &end) != 0)
		fail_msg("the waiter still sleeps 2 s after the lock was freed");
	close(go[0]);
	close(go[1]);
	close(ready[0]);
	close(ready[1]);
	free_seg(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nesting),
		cmocka_unit_test(test_two_holds_two_clients),
		cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_denied),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_repair),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_validation),
		cmocka_unit_test(test_lost_handoff),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
