/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Wake alarms end to end: library <-> the real wakelockd (against a fake
 * /sys), over the socket, the segment and the alarm's eventfd. */
#include <errno.h>
#include <poll.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <linux/capability.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "lib/wl_client.h"
#include "harness.h"

#define MS 1000000ull

struct env {
	struct hd d;
	struct wl_seg seg;
};

static int start_with(void **st, const char *const *extra)
{
	struct env *e = calloc(1, sizeof(*e));

	assert_int_equal(hd_prepare(&e->d), 0);
	if (hd_start(&e->d, extra) < 0)
		fail_msg("daemon did not start (log in %s)", e->d.log);
	assert_int_equal(hd_observe(&e->d, &e->seg), 0);
	*st = e;
	return 0;
}

static int setup(void **st)
{
	return start_with(st, NULL);
}

/* A short safety timeout, for the test of a client that never finishes. */
static int setup_short_timeout(void **st)
{
	static const char *const extra[] = { "--alarm-timeout-ms", "1500", NULL };
	return start_with(st, extra);
}

static int setup_deny(void **st)
{
	static const char *const extra[] = { "--deny", "lazy", NULL };
	return start_with(st, extra);
}

static int teardown(void **st)
{
	struct env *e = *st;

	wl_seg_unmap(&e->seg);
	hd_cleanup(&e->d);
	free(e);
	return 0;
}

static uint32_t counter(struct env *e)
{
	return __atomic_load_n(&hd_snap(&e->d)->counter, __ATOMIC_SEQ_CST);
}

static int counter_zero(void *arg)
{
	return counter(arg) == 0;
}

static unsigned live_slots(struct env *e)
{
	unsigned n = 0;
	const struct wl_shm_header *h = hd_snap(&e->d);

	for (uint32_t i = 0; i < h->nslots; i++)
		n += h->slots[i].state == WL_SLOT_LIVE;
	return n;
}

static int no_live_slots(void *arg)
{
	return live_slots(arg) == 0;
}

static const struct wl_shm_slot *slot_of(struct env *e, wakelock_client *c)
{
	return &hd_snap(&e->d)->slots[c->slot];
}

/* The hold the daemon took for the alarm, found by name. */
static const struct wl_shm_hold *alarm_hold(struct env *e, wakelock_client *c, const char *name)
{
	const struct wl_shm_slot *s = slot_of(e, c);
	char want[WAKELOCK_NAME_MAX];

	snprintf(want, sizeof(want), "alarm:%s", name);
	for (uint32_t j = 0; j < WAKELOCK_MAX_HOLDS_PER_CLIENT; j++)
		if (s->holds[j].in_use && !strcmp(s->holds[j].name, want))
			return &s->holds[j];
	return NULL;
}

static uint64_t attempts(struct env *e)
{
	return __atomic_load_n(&hd_snap(&e->d)->dstats.attempts, __ATOMIC_SEQ_CST);
}

static void test_api_errors(void **st)
{
	struct env *e = *st;
	wakelock_alarm *a, *many[WAKELOCK_MAX_ALARMS_PER_CLIENT];
	wakelock_client *c;
	(void)e;

	assert_int_equal(wakelock_client_open(NULL, "errors", &c), 0);
	assert_int_equal(wakelock_alarm_create(NULL, "x", &a), -EINVAL);
	assert_int_equal(wakelock_alarm_create(c, "x", NULL), -EINVAL);
	assert_int_equal(wakelock_alarm_create(c, NULL, &a), -EINVAL);
	assert_null(a);
	assert_int_equal(wakelock_alarm_create(c, "", &a), -EINVAL);
	assert_int_equal(wakelock_alarm_create(c, "two words", &a), -EINVAL);
	assert_int_equal(wakelock_alarm_create(c, "a,b", &a), -EINVAL);
	/* "alarm:" + 25 characters is the longest hold name. */
	assert_int_equal(wakelock_alarm_create(c, "abcdefghijklmnopqrstuvwxyz", &a), -ENAMETOOLONG);
	assert_non_null(strstr(wakelock_last_error(), "25"));
	assert_int_equal(wakelock_alarm_create(c, "abcdefghijklmnopqrstuvwxy", &a), 0);
	assert_non_null(alarm_hold(e, c, "abcdefghijklmnopqrstuvwxy"));
	assert_int_equal(wakelock_alarm_set(NULL, 1, 0, 0), -EINVAL);
	assert_int_equal(wakelock_alarm_cancel(NULL), -EINVAL);
	assert_int_equal(wakelock_alarm_fd(NULL), -EINVAL);
	assert_int_equal(wakelock_alarm_wait(NULL, 0), -EINVAL);
	assert_int_equal(wakelock_alarm_done(NULL), -EINVAL);
	wakelock_alarm_destroy(NULL);
	assert_true(wakelock_alarm_fd(a) >= 0);
	assert_int_equal(wakelock_alarm_set(a, 10, 100, 101), -EINVAL);     /* window > period */
	assert_non_null(strstr(wakelock_last_error(), "window"));
	assert_int_equal(wakelock_alarm_set(a, UINT64_MAX, 0, 0), -EOVERFLOW);
	assert_int_equal(wakelock_alarm_set(a, (uint64_t)INT64_MAX / 1000000u, 0, 0), -EOVERFLOW);
	assert_int_equal(wakelock_alarm_set(a, 100000, 100, 100), 0);      /* window == period */
	assert_int_equal(wakelock_alarm_set(a, 100000, 0, UINT32_MAX), 0); /* one-shot: any window */
	assert_int_equal(wakelock_alarm_wait(a, 0), 0);                    /* not fired */
	assert_int_equal(wakelock_alarm_done(a), -EINVAL);                 /* nothing to finish */
	assert_int_equal(wakelock_alarm_cancel(a), 0);
	/* 16 per client. */
	for (unsigned i = 1; i < WAKELOCK_MAX_ALARMS_PER_CLIENT; i++)
		assert_int_equal(wakelock_alarm_create(c, "many", &many[i]), 0);
	assert_int_equal(wakelock_alarm_create(c, "one-more", &many[0]), -ENOSPC);
	wakelock_alarm_destroy(many[1]);
	assert_int_equal(wakelock_alarm_create(c, "one-more", &many[1]), 0);
	wakelock_alarm_destroy(a);
	assert_null(alarm_hold(e, c, "abcdefghijklmnopqrstuvwxy"));  /* its hold went too */
	wakelock_client_close(c);                                          /* frees the rest */
	assert_true(hd_wait_for(no_live_slots, e, 2000));
}

/* What the library never sends: the daemon checks for itself. */
static void test_daemon_validates_requests(void **st)
{
	struct env *e = *st;
	struct wl_msg_arg m;
	struct wl_msg_rep rep;
	wakelock_client *c;
	wakelock_alarm *a;
	int p[2], s;

	assert_int_equal(wakelock_client_open(NULL, "raw", &c), 0);
	assert_int_equal(wakelock_alarm_create(c, "r", &a), 0);
	memset(&m, 0, sizeof(m));
	m.req.op = WL_OP_ALARM_SET;
	m.index = a->index;
	m.first_ms = 10;
	m.period_ms = 5;
	m.window_ms = 6;
	assert_int_equal(wl_request_arg(c->sock, &m, -1, &rep), -EINVAL);
	m.window_ms = 0;
	m.first_ms = UINT64_MAX / 2;
	assert_int_equal(wl_request_arg(c->sock, &m, -1, &rep), -EOVERFLOW);
	m.first_ms = 10;
	m.index = 99;
	assert_int_equal(wl_request_arg(c->sock, &m, -1, &rep), -EINVAL);
	m.index = (a->index + 1) % WAKELOCK_MAX_ALARMS_PER_CLIENT;   /* not created */
	assert_int_equal(wl_request_arg(c->sock, &m, -1, &rep), -EINVAL);
	/* Creation carries no descriptor of ours: the doorbell is the
	 * daemon's.  One we pass anyway is not kept: once we close our
	 * write end, the pipe has no writer left (POLLHUP), the daemon's
	 * copy included. */
	memset(&m, 0, sizeof(m));
	m.req.op = WL_OP_ALARM_CREATE;
	strcpy(m.req.name, "x");
	assert_int_equal(pipe(p), 0);
	assert_int_equal(wl_request_arg(c->sock, &m, p[1], &rep), 0);
	close(p[1]);
	{
		struct pollfd pf = { .fd = p[0], .events = POLLIN };

		assert_int_equal(poll(&pf, 1, 2000), 1);
		assert_true(pf.revents & POLLHUP);
	}
	close(p[0]);
	m.req.op = WL_OP_ALARM_DESTROY;
	m.index = rep.slot;
	assert_int_equal(wl_request_arg(c->sock, &m, -1, &rep), 0);
	/* Nothing changed by the refusals: the alarm still works. */
	assert_int_equal(wakelock_alarm_set(a, 0, 0, 0), 0);
	assert_int_equal(wakelock_alarm_wait(a, 5000), 1);
	assert_int_equal(wakelock_alarm_done(a), 0);
	/* Alarms belong to a registered client. */
	s = wl_connect(e->d.sock, 2000);
	assert_true(s >= 0);
	memset(&m, 0, sizeof(m));
	m.req.op = WL_OP_ALARM_CANCEL;
	assert_int_equal(wl_request_arg(s, &m, -1, &rep), -EINVAL);
	/* A client of another ABI gets a readable refusal, not a hang-up. */
	struct wl_msg_req old;
	memset(&old, 0, sizeof(old));
	old.magic = WL_MSG_MAGIC;
	old.abi_major = 2;
	old.op = WL_OP_REGISTER;
	strcpy(old.name, "old");
	assert_int_equal(wl_send_msg(s, &old, sizeof(old), -1), 0);
	assert_int_equal(wl_recv_msg(s, &rep, sizeof(rep), NULL), 0);
	assert_int_equal(rep.status, -EPROTONOSUPPORT);
	assert_non_null(strstr(rep.msg, "ABI 7, client 2"));
	close(s);
	wakelock_alarm_destroy(a);
	wakelock_client_close(c);
}

static void test_fire_hold_done(void **st)
{
	struct env *e = *st;
	uint64_t t0, frozen;
	wakelock_client *c;
	wakelock_alarm *a;

	assert_int_equal(wakelock_client_open(NULL, "worker", &c), 0);
	assert_int_equal(wakelock_alarm_create(c, "tick", &a), 0);
	assert_non_null(alarm_hold(e, c, "tick"));
	t0 = wl_clock_ns(CLOCK_BOOTTIME);
	assert_int_equal(wakelock_alarm_set(a, 40, 0, 0), 0);
	assert_int_equal(counter(e), 0);
	assert_int_equal(wakelock_alarm_wait(a, 5000), 1);
	assert_true(wl_clock_ns(CLOCK_BOOTTIME) - t0 >= 40 * MS);           /* never early */
	/* The daemon held before it told us. */
	assert_int_equal(alarm_hold(e, c, "tick")->active, 1);
	assert_int_equal(counter(e), 1);
	assert_int_equal(slot_of(e, c)->alarm_fires, 1);
	assert_true(hd_snap(&e->d)->dstats.alarm_fires >= 1);
	/* While the work runs, the daemon does not suspend. */
	frozen = attempts(e);
	hd_sleep_ms(30);
	assert_int_equal(attempts(e), frozen);
	assert_int_equal(wakelock_alarm_done(a), 0);
	assert_int_equal(counter(e), 0);
	assert_int_equal(alarm_hold(e, c, "tick")->active, 0);
	assert_int_equal(wakelock_alarm_done(a), -EINVAL);      /* once per fire */
	assert_int_equal(wakelock_alarm_wait(a, 0), 0);         /* one-shot: no more */
	assert_int_equal(slot_of(e, c)->expire_count, 0);
	wakelock_alarm_destroy(a);
	wakelock_client_close(c);
}

/*
 * An alarm that expires within 2 s: the daemon waits for it rather than
 * suspend (the kernel refuses a suspend that close to an alarm timer, and
 * the RTC that wakes a real system counts whole seconds, so the system
 * resumes a little early; sleeping again would cost a cycle and leave the
 * wake unclaimed).  Further away, it suspends as usual.
 */
static void test_imminent_alarm_is_waited_for(void **st)
{
	struct env *e = *st;
	wakelock_client *c;
	wakelock_alarm *a;
	uint64_t before;

	assert_int_equal(wakelock_client_open(NULL, "soon", &c), 0);
	assert_int_equal(wakelock_alarm_create(c, "tick", &a), 0);
	assert_int_equal(wakelock_alarm_set(a, 4000, 0, 0), 0);
	/* 4 s away: the loop goes on (the fake kernel returns at once). */
	before = attempts(e);
	hd_sleep_ms(200);
	assert_true(attempts(e) > before + 2);
	assert_int_equal(wakelock_alarm_set(a, 1200, 0, 0), 0);
	hd_sleep_ms(100);            /* an attempt under way may end */
	before = attempts(e);
	hd_sleep_ms(800);
	assert_int_equal(attempts(e), before);
	assert_int_equal(wakelock_alarm_wait(a, 5000), 1);
	assert_int_equal(wakelock_alarm_done(a), 0);
	wakelock_alarm_destroy(a);
	wakelock_client_close(c);
}

static void test_timeout_releases_hold(void **st)
{
	struct env *e = *st;
	wakelock_client *c;
	wakelock_alarm *a;

	assert_int_equal(wakelock_client_open(NULL, "forgetful", &c), 0);
	assert_int_equal(wakelock_alarm_create(c, "t", &a), 0);
	assert_non_null(alarm_hold(e, c, "t"));
	assert_int_equal(wakelock_alarm_set(a, 10, 0, 0), 0);
	assert_int_equal(wakelock_alarm_wait(a, 5000), 1);
	assert_int_equal(counter(e), 1);
	/* No wakelock_alarm_done: the daemon's timeout (1.5 s here) releases it
	 * although this process does nothing. */
	assert_true(hd_wait_for(counter_zero, e, 10000));
	assert_int_equal(alarm_hold(e, c, "t")->active, 0);
	assert_int_equal(slot_of(e, c)->expire_count, 1);
	assert_int_equal(wakelock_alarm_done(a), 0);            /* late, but not an error */
	assert_int_equal(counter(e), 0);
	wakelock_alarm_destroy(a);
	wakelock_client_close(c);
}

static int counter_one(void *arg)
{
	return counter(arg) == 1;
}

struct fires_arg { struct env *e; wakelock_client *c; uint64_t above; };

static int fires_above(void *arg)
{
	struct fires_arg *f = arg;
	return __atomic_load_n(&slot_of(f->e, f->c)->alarm_fires, __ATOMIC_SEQ_CST) > f->above;
}

/* A periodic alarm shorter than the timeout must not let a client that
 * stopped finishing its work keep the system awake for ever. */
static void test_stuck_client_loses_hold(void **st)
{
	struct env *e = *st;
	struct fires_arg fa;
	wakelock_client *c;
	wakelock_alarm *a;

	assert_int_equal(wakelock_client_open(NULL, "stuck", &c), 0);
	assert_int_equal(wakelock_alarm_create(c, "p", &a), 0);
	assert_int_equal(wakelock_alarm_set(a, 10, 100, 0), 0);   /* period << 1.5 s timeout */
	assert_true(wakelock_alarm_wait(a, 5000) >= 1);
	assert_int_equal(counter(e), 1);
	/* No wakelock_alarm_done: held until the timeout, then no more, although
	 * the alarm goes on firing. */
	assert_true(hd_wait_for(counter_zero, e, 10000));
	fa = (struct fires_arg){ e, c, slot_of(e, c)->alarm_fires + 2 };
	assert_true(hd_wait_for(fires_above, &fa, 5000));
	assert_int_equal(counter(e), 0);
	assert_int_equal(slot_of(e, c)->expire_count, 1);
	/* Back to work: the next fire holds again. */
	assert_true(wakelock_alarm_wait(a, 0) >= 1);
	assert_int_equal(wakelock_alarm_done(a), 0);
	assert_true(hd_wait_for(counter_one, e, 5000));
	assert_int_equal(wakelock_alarm_cancel(a), 0);
	assert_true(wakelock_alarm_wait(a, 0) >= 1);
	assert_int_equal(wakelock_alarm_done(a), 0);
	assert_int_equal(counter(e), 0);
	wakelock_alarm_destroy(a);
	wakelock_client_close(c);
}

struct seq_arg { struct env *e; wakelock_client *c; wakelock_alarm *a; uint64_t above; };

static int fired_beyond(void *arg)
{
	struct seq_arg *s = arg;
	return __atomic_load_n(&slot_of(s->e, s->c)->alarms[s->a->index].fired_seq,
	                       __ATOMIC_SEQ_CST) > s->above;
}

static void test_periodic_on_grid_and_refire_keeps_hold(void **st)
{
	struct env *e = *st;
	const struct wl_shm_alarm *al;
	struct seq_arg sa;
	uint64_t first;
	wakelock_client *c;
	wakelock_alarm *a;
	int n = 0;

	assert_int_equal(wakelock_client_open(NULL, "periodic", &c), 0);
	assert_int_equal(wakelock_alarm_create(c, "p", &a), 0);
	assert_int_equal(wakelock_alarm_set(a, 30, 30, 0), 0);
	al = &slot_of(e, c)->alarms[a->index];
	first = al->t.due;
	assert_true(first != 0);
	while (n < 3) {
		int r = wakelock_alarm_wait(a, 5000);
		assert_true(r >= 1);
		n += r;
		assert_int_equal(wakelock_alarm_done(a), 0);
	}
	/* Re-armed on the grid of the first expiry, however late it fired. */
	al = &slot_of(e, c)->alarms[a->index];
	assert_true(al->t.due > first);
	assert_int_equal((al->t.due - first) % (30 * MS), 0);
	assert_true(slot_of(e, c)->alarm_fires >= 3);
	/* A fire that comes after wakelock_alarm_wait() and before wakelock_alarm_done()
	 * keeps its hold: its work has not been done. */
	assert_true(wakelock_alarm_wait(a, 5000) >= 1);
	sa = (struct seq_arg){ e, c, a, a->seen };
	assert_true(hd_wait_for(fired_beyond, &sa, 5000));
	assert_int_equal(wakelock_alarm_cancel(a), 0);
	assert_int_equal(wakelock_alarm_done(a), 0);
	assert_int_equal(counter(e), 1);
	assert_true(wakelock_alarm_wait(a, 0) >= 1);            /* the fd said so */
	assert_int_equal(wakelock_alarm_done(a), 0);
	assert_int_equal(counter(e), 0);
	wakelock_alarm_destroy(a);
	wakelock_client_close(c);
}

static void test_overlapping_windows_share_a_wakeup(void **st)
{
	struct env *e = *st;
	uint64_t wakeups, fires;
	wakelock_client *c;
	wakelock_alarm *a, *b;

	assert_int_equal(wakelock_client_open(NULL, "batch", &c), 0);
	assert_int_equal(wakelock_alarm_create(c, "a", &a), 0);
	assert_int_equal(wakelock_alarm_create(c, "b", &b), 0);
	wakeups = hd_snap(&e->d)->dstats.alarm_wakeups;
	fires = hd_snap(&e->d)->dstats.alarm_fires;
	/* [100, 500] and [200, 600] ms: both fire at 500 (as long as the two
	 * requests are less than 300 ms apart). */
	assert_int_equal(wakelock_alarm_set(a, 100, 0, 400), 0);
	assert_int_equal(wakelock_alarm_set(b, 200, 0, 400), 0);
	assert_int_equal(wakelock_alarm_wait(a, 5000), 1);
	assert_int_equal(wakelock_alarm_wait(b, 0), 1);          /* in the same wake-up */
	assert_int_equal(hd_snap(&e->d)->dstats.alarm_wakeups, wakeups + 1);
	assert_int_equal(hd_snap(&e->d)->dstats.alarm_fires, fires + 2);
	assert_int_equal(counter(e), 2);
	assert_int_equal(wakelock_alarm_done(a), 0);
	assert_int_equal(wakelock_alarm_done(b), 0);
	assert_int_equal(counter(e), 0);
	/* As late as a's window allows (400 ms); b late too, by 300 ms less
	 * the time between the two requests. */
	assert_true(slot_of(e, c)->alarm_late_max_ns >= 400 * MS);
	assert_true(slot_of(e, c)->alarm_late_ns > slot_of(e, c)->alarm_late_max_ns);
	wakelock_alarm_destroy(a);
	wakelock_alarm_destroy(b);
	wakelock_client_close(c);
}

static void test_cancel_and_destroy(void **st)
{
	struct env *e = *st;
	wakelock_client *c;
	wakelock_alarm *a;

	assert_int_equal(wakelock_client_open(NULL, "canceller", &c), 0);
	assert_int_equal(wakelock_alarm_create(c, "x", &a), 0);
	assert_int_equal(wakelock_alarm_set(a, 50, 0, 0), 0);
	assert_int_equal(wakelock_alarm_cancel(a), 0);
	assert_int_equal(slot_of(e, c)->alarms[a->index].t.due, 0);
	assert_int_equal(wakelock_alarm_wait(a, 200), 0);
	assert_int_equal(slot_of(e, c)->alarm_fires, 0);
	/* Destroying an alarm whose work is pending releases its hold. */
	assert_int_equal(wakelock_alarm_set(a, 0, 0, 0), 0);
	assert_int_equal(wakelock_alarm_wait(a, 5000), 1);
	assert_int_equal(counter(e), 1);
	wakelock_alarm_destroy(a);
	assert_int_equal(counter(e), 0);
	wakelock_client_close(c);
}

static void test_client_dies_with_pending_alarm(void **st)
{
	struct env *e = *st;
	int p[2], status;
	char ch;
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	if (pid == 0) {
		wakelock_client *c;
		wakelock_alarm *a;
		if (wakelock_client_open(NULL, "doomed", &c) || wakelock_alarm_create(c, "a", &a) ||
		    wakelock_alarm_set(a, 10, 20, 0) || wakelock_alarm_wait(a, 5000) < 1)
			_exit(1);
		if (write(p[1], "f", 1) != 1)
			_exit(1);
		pause();       /* no done, no close */
		_exit(0);
	}
	assert_int_equal(read(p[0], &ch, 1), 1);
	assert_int_equal(counter(e), 1);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	assert_true(hd_wait_for(no_live_slots, e, 2000));
	assert_int_equal(counter(e), 0);
	close(p[0]);
	close(p[1]);
}

static int policy(struct env *e, uint16_t op, const char *name)
{
	struct wl_msg_rep rep;
	int fd = -1, s = wl_connect(e->d.sock, 2000), r;

	assert_true(s >= 0);
	r = wl_request(s, op, name, &rep, &fd);
	if (fd >= 0)
		close(fd);
	close(s);
	return r;
}

/*
 * Deny covers alarms: a denied client's alarm neither fires nor keeps the
 * system awake (an imminent alarm counts as a hold), so the daemon goes
 * on suspending; allowed again, the overdue alarm fires at once and its
 * hold counts.  Before, a denied client's periodic alarm of 2 s or less
 * kept the system awake for ever, unlisted.
 */
static void test_denied_client_alarm_waits(void **st)
{
	struct env *e = *st;
	wakelock_client *c;
	wakelock_alarm *a;
	uint64_t before;

	assert_int_equal(wakelock_client_open(NULL, "lazy", &c), 0);
	assert_int_equal(wakelock_alarm_create(c, "a", &a), 0);
	assert_non_null(alarm_hold(e, c, "a"));
	assert_int_equal(wakelock_alarm_set(a, 10, 1000, 0), 0);
	assert_int_equal(wakelock_alarm_wait(a, 1500), 0);            /* no fire */
	assert_int_equal(alarm_hold(e, c, "a")->active, 0);
	before = attempts(e);
	hd_sleep_ms(300);
	assert_true(attempts(e) > before);                /* suspends go on */
	assert_int_equal(policy(e, WL_OP_ALLOW, "lazy"), 0);
	assert_true(wakelock_alarm_wait(a, 2000) >= 1);
	assert_int_equal(alarm_hold(e, c, "a")->active, 1);
	assert_int_equal(counter(e), 1);
	/* Denied again: its hold no longer counts. */
	assert_int_equal(policy(e, WL_OP_DENY, "lazy"), 0);
	assert_true(hd_wait_for(counter_zero, e, 2000));
	assert_int_equal(wakelock_alarm_done(a), 0);
	wakelock_alarm_destroy(a);
	wakelock_client_close(c);
}

static void test_daemon_exit_ends_wait(void **st)
{
	struct env *e = *st;
	wakelock_client *c;
	wakelock_alarm *a;

	assert_int_equal(wakelock_client_open(NULL, "orphan", &c), 0);
	assert_int_equal(wakelock_alarm_create(c, "a", &a), 0);
	assert_int_equal(wakelock_alarm_set(a, 60000, 0, 0), 0);
	/* SIGTERM with an alarm armed: a clean exit, status 0 (hd_stop gives
	 * 128 + N for a death by signal N, -1 if the daemon was not running). */
	assert_int_equal(hd_stop(&e->d), 0);
	assert_int_equal(wakelock_alarm_wait(a, 5000), -ENOTCONN);
	assert_int_equal(wakelock_alarm_set(a, 1, 0, 0), -ENOTCONN);
	wakelock_alarm_destroy(a);
	wakelock_client_close(c);
}

struct worker {
	wakelock_client *c;
	int errors;
	int fires;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	wakelock_alarm *a;

	if (wakelock_alarm_create(w->c, "thread", &a) < 0) {
		w->errors++;
		return NULL;
	}
	for (int i = 0; i < 5; i++) {
		int r;

		if (wakelock_alarm_set(a, 5, 0, 5) < 0)
			w->errors++;
		r = wakelock_alarm_wait(a, 5000);
		if (r < 1 || wakelock_alarm_done(a) < 0)
			w->errors++;
		else
			w->fires += r;
	}
	wakelock_alarm_destroy(a);
	return NULL;
}

/* One client, several threads, each with its own alarm: requests on the
 * shared socket must not mix up their replies. */
static void test_threads_share_a_client(void **st)
{
	enum { N = 6 };
	struct env *e = *st;
	struct worker w[N];
	pthread_t t[N];
	wakelock_client *c;

	assert_int_equal(wakelock_client_open(NULL, "threads", &c), 0);
	for (int i = 0; i < N; i++) {
		w[i] = (struct worker){ .c = c };
		assert_int_equal(pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
	}
	for (int i = 0; i < N; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(w[i].errors, 0);
		assert_int_equal(w[i].fires, 5);
	}
	assert_int_equal(counter(e), 0);
	assert_int_equal(slot_of(e, c)->alarm_fires, N * 5);
	wakelock_client_close(c);
}

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static void test_cli_shows_alarms(void **st)
{
	struct env *e = *st;
	const char *w = hd_bin("wakelock");
	char bin[4200];
	wakelock_client *c;
	wakelock_alarm *a, *b;

	snprintf(bin, sizeof(bin), "%s", w);
	assert_int_equal(wakelock_client_open(NULL, "shown", &c), 0);
	assert_int_equal(wakelock_alarm_create(c, "tick", &a), 0);
	assert_int_equal(wakelock_alarm_create(c, "later", &b), 0);
	assert_int_equal(wakelock_alarm_set(b, 3600000, 0, 0), 0);
	assert_int_equal(sh("%s status --json | grep -q '\"alarms_armed\":1,'", bin), 0);
	assert_int_equal(wakelock_alarm_set(a, 0, 0, 0), 0);
	assert_int_equal(wakelock_alarm_wait(a, 5000), 1);
	/* Held on the client's behalf, under the alarm's name. */
	assert_int_equal(sh("%s list --json | grep -q '\"hold\":\"alarm:tick\",\"state\":\"held\"'",
	                    bin), 0);
	assert_int_equal(sh("%s stats --json | grep -q '\"name\":\"shown\".*\"alarm_fires\":1,'",
	                    bin), 0);
	assert_int_equal(sh("%s stats --json | grep -q '\"alarm_wakeups\":[1-9]'", bin), 0);
	assert_int_equal(sh("%s stats | grep -q 'alarms: [1-9][0-9]* fired in'", bin), 0);
	assert_int_equal(wakelock_alarm_done(a), 0);
	assert_int_equal(sh("%s list --json | grep -q 'alarm:tick'", bin), 256);
	(void)e;
	wakelock_alarm_destroy(a);
	wakelock_alarm_destroy(b);
	wakelock_client_close(c);
}

/* The example program, linked against libwakelock.so alone (built in every
 * variant next to the daemon): the exported WAKELOCK_2.0 symbols are enough
 * for a client. */
static void test_example_program(void **st)
{
	char bin[4200];
	(void)st;

	snprintf(bin, sizeof(bin), "%s", hd_bin("example-alarm"));
	if (access(bin, X_OK) != 0)
		fail_msg("%s is missing: check-unit builds it for every variant", bin);
	/* Three expiries (some may be reported together), then exit 0. */
	assert_int_equal(sh("out=$(timeout 10 %s ex 20 20 3) && echo \"$out\" | "
	                    "awk -F'[()]' '/^woken/ { n += $2 } END { exit n < 3 }'", bin), 0);
}

/* Without CAP_WAKE_ALARM the daemon falls back to CLOCK_BOOTTIME: it says
 * so and alarms still fire while the system is awake. */
static int fallback_child(void)
{
	struct env e;
	wakelock_client *c;
	wakelock_alarm *a;
	char cmd[1024];

	/* Root regains every capability of the bounding set at exec: take
	 * this one out of it, for the daemon this process starts. */
	if (geteuid() == 0 && prctl(PR_CAPBSET_DROP, CAP_WAKE_ALARM, 0, 0, 0) < 0)
		return 10;
	memset(&e, 0, sizeof(e));
	if (hd_prepare(&e.d) < 0 || hd_start(&e.d, NULL) < 0 || hd_observe(&e.d, &e.seg) < 0)
		return 11;
	if (hd_snap(&e.d)->dstats.alarm_wakes != 0)
		return 12;
	if (wakelock_client_open(NULL, "fallback", &c) || wakelock_alarm_create(c, "a", &a) ||
	    wakelock_alarm_set(a, 20, 0, 0) || wakelock_alarm_wait(a, 5000) != 1 || counter(&e) != 1 ||
	    wakelock_alarm_done(a) || counter(&e) != 0)
		return 13;
	snprintf(cmd, sizeof(cmd), "grep -q 'cannot wake a suspended system' %s", e.d.log);
	if (system(cmd) != 0)
		return 14;
	wakelock_alarm_destroy(a);
	wakelock_client_close(c);
	wl_seg_unmap(&e.seg);
	hd_cleanup(&e.d);
	return 0;
}

static void test_fallback_clock(void **st)
{
	int status;
	pid_t pid;
	(void)st;

	pid = fork();
	if (pid == 0)
		_exit(fallback_child());
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);

	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_api_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_daemon_validates_requests, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fire_hold_done, setup, teardown),
		cmocka_unit_test_setup_teardown(test_imminent_alarm_is_waited_for, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeout_releases_hold, setup_short_timeout,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_stuck_client_loses_hold, setup_short_timeout,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_periodic_on_grid_and_refire_keeps_hold, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_overlapping_windows_share_a_wakeup, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_cancel_and_destroy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_client_dies_with_pending_alarm, setup, teardown),
		cmocka_unit_test_setup_teardown(test_denied_client_alarm_waits,
		                                setup_deny, teardown),
		cmocka_unit_test_setup_teardown(test_daemon_exit_ends_wait, setup, teardown),
		cmocka_unit_test_setup_teardown(test_threads_share_a_client, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cli_shows_alarms, setup, teardown),
		cmocka_unit_test_setup_teardown(test_example_program, setup, teardown),
		cmocka_unit_test(test_fallback_clock),
	};
	/* WL_TEST=pattern runs the matching tests only (debugging). */
	if (getenv("WL_TEST"))
		cmocka_set_test_filter(getenv("WL_TEST"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
