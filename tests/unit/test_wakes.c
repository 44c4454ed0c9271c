/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The wake ledger wired into the daemon (docs/ledger.md): a record per
 * suspend attempt, claims by the clients that took a hold after it,
 * `wakelock wakes [--summary]` and `wakelock timeline --svg`, and the
 * [ledger] settings.  The real daemon on a fake /sys (harness.c): every
 * "suspend" returns at once, so every record resumed after 0 ms.
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "lib/wl_client.h"
#include "lib/wl_ledger.h"
#include "lib/wl_proto.h"
#include "harness.h"

struct env {
	struct hd d;
};

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* Start the daemon with conf (NULL: none) and --min-awake-ms awake_ms. */
static struct env *start(const char *conf, const char *awake_ms)
{
	struct env *e = calloc(1, sizeof(*e));
	const char *extra[] = { "--min-awake-ms", awake_ms, NULL, NULL, NULL };

	assert_int_equal(hd_prepare(&e->d), 0);
	if (conf) {
		write_text(e->d.conf, conf);
		extra[2] = "--config";
		extra[3] = e->d.conf;
	}
	if (hd_start(&e->d, extra) < 0)
		fail_msg("daemon did not start (log in %s)", e->d.log);
	return e;
}

static int teardown(void **st)
{
	struct env *e = *st;

	if (e) {
		hd_cleanup(&e->d);
		free(e);
	}
	return 0;
}

/* Run `wakelock ARGS` with its output in the test dir; its exit status. */
static int cli(struct env *e, const char *args, const char *out)
{
	char cmd[2048];
	int r;

	snprintf(cmd, sizeof(cmd), "%s %s >%s/%s 2>%s/%s.err", hd_bin("wakelock"), args,
	         e->d.dir, out, e->d.dir, out);
	r = system(cmd);
	return WIFEXITED(r) ? WEXITSTATUS(r) : -1;
}

/* Run a python3 check on a file of the test dir: 0 if it passed. */
static int py(struct env *e, const char *file, const char *code)
{
	char cmd[4096];

	snprintf(cmd, sizeof(cmd), "python3 -c '%s' %s/%s 2>>%s/py.err", code, e->d.dir, file, e->d.dir);
	return system(cmd);
}

static uint64_t attempts(struct env *e)
{
	return hd_snap(&e->d)->dstats.attempts;
}

struct above { struct env *e; uint64_t n; };

static int attempts_above(void *arg)
{
	struct above *a = arg;

	return attempts(a->e) > a->n;
}

/*
 * One record per attempt, numbered from 1, each resumed (the fake kernel
 * suspends at once); the table, the JSON, the summary and the SVG agree.
 */
static void test_records_and_outputs(void **st)
{
	struct env *e = start(NULL, "20");
	struct above a = { e, 5 };

	*st = e;
	assert_true(hd_wait_for(attempts_above, &a, 5000));
	assert_int_equal(cli(e, "--json wakes", "w.json"), 0);
	assert_int_equal(py(e, "w.json",
	        "import json,sys\n"
	        "d = json.load(open(sys.argv[1]))\n"
	        "assert len(d) >= 5, d\n"
	        "assert [r[\"seq\"] for r in d] == list(range(1, len(d) + 1)), d\n"
	        "assert all(r[\"outcome\"] == \"resumed\" for r in d), d\n"
	        "assert all(r[\"cause\"] == \"unknown\" for r in d), d\n"
	        "assert all(r[\"ended_by\"] is None and r[\"ended_by_kind\"] == \"none\" and\n"
	        "           r[\"ended_holders\"] == 0 for r in d), d\n"), 0);
	assert_int_equal(cli(e, "wakes", "w.txt"), 0);
	assert_int_equal(py(e, "w.txt",
	        "import sys\n"
	        "l = open(sys.argv[1]).read().splitlines()\n"
	        "assert l[0].split()[0] == \"SEQ\" and len(l) >= 6, l\n"), 0);
	assert_int_equal(cli(e, "--json wakes --summary", "s.json"), 0);
	assert_int_equal(py(e, "s.json",
	        "import json,sys\n"
	        "s = json.load(open(sys.argv[1]))\n"
	        "assert s[\"records\"] >= 5, s\n"), 0);
	{
		char args[512];

		snprintf(args, sizeof(args), "timeline --svg %s/t.svg", e->d.dir);
		assert_int_equal(cli(e, args, "t.out"), 0);
	}
	assert_int_equal(py(e, "t.svg",
	        "import sys, xml.dom.minidom as m\n"
	        "d = m.parse(sys.argv[1])\n"
	        "assert d.documentElement.tagName == \"svg\"\n"), 0);
	/* Bad use: a clear error, nothing written. */
	assert_int_equal(cli(e, "wakes --bogus", "b.out"), 2);
	assert_int_equal(cli(e, "timeline", "b.out"), 2);
	assert_int_equal(cli(e, "timeline --svg /nonexistent/dir/t.svg", "b.out"), 1);
	assert_int_equal(access("/nonexistent/dir/t.svg.tmp", F_OK), -1);
	assert_int_equal(hd_stop(&e->d), 0);
}

/* [ledger] records = 2: the ring keeps the newest two. */
static void test_ring_size_from_config(void **st)
{
	struct env *e = start("[ledger]\nrecords = 2\n", "20");
	struct above a = { e, 5 };

	*st = e;
	assert_true(hd_wait_for(attempts_above, &a, 5000));
	assert_int_equal(cli(e, "--json wakes", "w.json"), 0);
	assert_int_equal(py(e, "w.json",
	        "import json,sys\n"
	        "d = json.load(open(sys.argv[1]))\n"
	        "assert len(d) == 2 and d[0][\"seq\"] + 1 == d[1][\"seq\"] and d[0][\"seq\"] > 1, d\n"),
	        0);
	assert_int_equal(hd_stop(&e->d), 0);
}

struct record_seen { struct env *e; const char *want; };

static int record_claimed(void *arg)
{
	struct record_seen *s = arg;

	if (cli(s->e, "--json wakes", "c.json") != 0)
		return 0;
	return py(s->e, "c.json", s->want) == 0;
}

/*
 * A client that takes a hold right after a resume claims that wake: the
 * record names it and its hold, with a latency within the window.  The
 * client exits at once after: its claim is kept (taken when it is reaped).
 * A wake nobody claims within the window is "unclaimed".
 */
static void test_claims(void **st)
{
	struct env *e = start("[ledger]\nclaim_window_ms = 300\n", "100");
	struct record_seen s = { e,
		"import json,sys\n"
		"d = json.load(open(sys.argv[1]))\n"
		"c = [r for r in d if r[\"claim\"] == \"claimed\"]\n"
		"assert c, d\n"
		"k = c[0][\"claims\"][0]\n"
		"assert k[\"client\"] == \"claimer\" and k[\"hold\"] == \"run\", k\n"
		"assert 0 <= k[\"latency_us\"] < 300000, k\n"
		"assert any(r[\"claim\"] == \"unclaimed\" for r in d), d\n" };
	struct above a = { e, 2 };
	char cmd[1024];

	*st = e;
	assert_true(hd_wait_for(attempts_above, &a, 5000));
	/* Right after an attempt (the daemon then stays awake 100 ms). */
	a.n = attempts(e);
	assert_true(hd_wait_for(attempts_above, &a, 5000));
	snprintf(cmd, sizeof(cmd), "%s run --name claimer -- true", hd_bin("wakelock"));
	assert_int_equal(system(cmd), 0);
	assert_true(hd_wait_for(record_claimed, &s, 5000));
	assert_int_equal(hd_stop(&e->d), 0);
}

/*
 * The record after a client's hold names it as what ended the awake
 * period, in the JSON and the table; the records before it, with nothing
 * held, say "none".
 */
static void test_ended_by_client(void **st)
{
	struct env *e = start(NULL, "20");
	struct record_seen s = { e,
		"import json,sys\n"
		"d = json.load(open(sys.argv[1]))\n"
		"k = [i for i, r in enumerate(d) if r[\"ended_by\"] == \"mpd\"]\n"
		"assert k, d\n"
		"r = d[k[0]]\n"
		"assert r[\"ended_by_kind\"] == \"client\" and r[\"ended_holders\"] == 1, r\n"
		"assert all(x[\"ended_by_kind\"] == \"none\" for x in d[:k[0]]), d\n" };
	struct above a = { e, 2 };
	char cmd[1024];

	*st = e;
	assert_true(hd_wait_for(attempts_above, &a, 5000));
	snprintf(cmd, sizeof(cmd), "%s run --name mpd -- sleep 0.3", hd_bin("wakelock"));
	assert_int_equal(system(cmd), 0);
	assert_true(hd_wait_for(record_claimed, &s, 5000));
	assert_int_equal(cli(e, "wakes", "w.txt"), 0);
	assert_int_equal(py(e, "w.txt",
	        "import sys\n"
	        "l = open(sys.argv[1]).read().splitlines()\n"
	        "assert \"ENDED BY\" in l[0], l\n"
	        "assert any(x.split()[3] == \"mpd\" for x in l[1:]), l\n"
	        "assert l[1].split()[3] == \"none\", l\n"), 0);
	assert_int_equal(hd_stop(&e->d), 0);
}

/* The first record's wire version when WL_OP_WAKES asks for wire; -1 on
 * error. */
static int wire_version_for(wakelock_client *c, uint32_t wire)
{
	struct wl_msg_arg m;
	struct wl_msg_rep rep;
	struct stat st;
	uint8_t *map;
	int fd = -1, v;

	memset(&m, 0, sizeof(m));
	m.req.op = WL_OP_WAKES;
	m.index = 1;
	m.wire = wire;
	if (wl_request_arg_fd(c->sock, &m, &rep, &fd) < 0 || fd < 0 || rep.slot != 1 ||
	    fstat(fd, &st) < 0 || st.st_size < 3)
		return -1;
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return -1;
	v = map[2];              /* after the record's u16 length */
	munmap(map, (size_t)st.st_size);
	return v;
}

/*
 * A library from before wire version 2 asks with the word zeroed: it
 * gets version 1, which it decodes.  A newer one gets at most the
 * daemon's newest.
 */
static void test_wire_version_asked(void **st)
{
	struct env *e = start(NULL, "20");
	struct above a = { e, 1 };
	wakelock_client *c;

	*st = e;
	assert_true(hd_wait_for(attempts_above, &a, 5000));
	assert_int_equal(wakelock_client_open(NULL, "reader", &c), 0);
	assert_int_equal(wire_version_for(c, 0), 1);
	assert_int_equal(wire_version_for(c, 1), 1);
	assert_int_equal(wire_version_for(c, 2), 2);
	assert_int_equal(wire_version_for(c, 99), WL_LEDGER_WIRE_VERSION);
	wakelock_client_close(c);
	assert_int_equal(hd_stop(&e->d), 0);
}

/*
 * A hold counts from its first activation after the resume, however often
 * it is taken again before the daemon looks: "a" is taken at once, then
 * again well past the window while "b" keeps the system awake; the
 * record still has "a" as a claim within the window.
 */
static void test_claim_counts_from_first_activation(void **st)
{
	struct env *e = start("[ledger]\nclaim_window_ms = 300\n", "100");
	struct record_seen s = { e,
		"import json,sys\n"
		"d = json.load(open(sys.argv[1]))\n"
		"c = [k for r in d if r[\"claim\"] == \"claimed\" for k in r[\"claims\"]\n"
		"     if k[\"client\"] == \"again\" and k[\"hold\"] == \"a\"]\n"
		"assert c, d\n"
		"assert 0 <= c[0][\"latency_us\"] < 300000, c\n" };
	struct above ab = { e, 2 };
	wakelock_client *c;
	wakelock_hold *a, *b;

	*st = e;
	assert_int_equal(wakelock_client_open(NULL, "again", &c), 0);
	assert_int_equal(wakelock_hold_create(c, "a", &a), 0);
	assert_int_equal(wakelock_hold_create(c, "b", &b), 0);
	assert_true(hd_wait_for(attempts_above, &ab, 5000));
	/* Right after an attempt (the daemon then stays awake 100 ms). */
	ab.n = attempts(e);
	assert_true(hd_wait_for(attempts_above, &ab, 5000));
	assert_int_equal(wakelock_hold_acquire(a), 0);
	assert_int_equal(wakelock_hold_acquire(b), 0);
	assert_int_equal(wakelock_hold_release(a), 0);
	hd_sleep_ms(500);
	assert_int_equal(wakelock_hold_acquire(a), 0);
	assert_int_equal(wakelock_hold_release(a), 0);
	assert_int_equal(wakelock_hold_release(b), 0);
	assert_true(hd_wait_for(record_claimed, &s, 5000));
	wakelock_hold_destroy(a);
	wakelock_hold_destroy(b);
	wakelock_client_close(c);
	assert_int_equal(hd_stop(&e->d), 0);
}

/*
 * Resume notifications: the fd becomes readable after each attempt and
 * wakelock_resume_read() reports the latest one once, counting the ones it
 * skipped; misuse gets EINVAL.  The example program prints them.
 */
static void test_resume_notifications(void **st)
{
	struct env *e = start(NULL, "50");
	struct wakelock_resume res;
	struct pollfd p;
	wakelock_client *c;
	uint64_t first;
	char cmd[1024];
	int fd;

	*st = e;
	assert_int_equal(wakelock_client_open(NULL, "watcher", &c), 0);
	assert_int_equal(wakelock_resume_read(c, &res), -EINVAL);    /* not subscribed */
	assert_int_equal(wakelock_resume_fd(NULL), -EINVAL);
	fd = wakelock_resume_fd(c);
	assert_true(fd >= 0);
	assert_int_equal(wakelock_resume_fd(c), fd);                 /* the same one */
	assert_int_equal(wakelock_resume_read(NULL, &res), -EINVAL);
	p = (struct pollfd){ .fd = fd, .events = POLLIN };
	assert_int_equal(poll(&p, 1, 5000), 1);
	assert_int_equal(wakelock_resume_read(c, &res), 1);
	assert_int_equal(res.slept, 1);
	assert_int_equal(res.error, 0);
	assert_string_equal(res.cause, "unknown");
	first = res.seq;
	assert_int_equal(wakelock_resume_read(c, &res), 0);          /* nothing new */
	hd_sleep_ms(400);                                      /* several attempts */
	assert_int_equal(poll(&p, 1, 5000), 1);
	assert_int_equal(wakelock_resume_read(c, &res), 1);
	assert_true(res.seq > first + 1);
	assert_int_equal(res.missed, res.seq - first - 1);
	wakelock_client_close(c);
	snprintf(cmd, sizeof(cmd), "timeout 20 %s resume-example 3 >%s/ex.out",
	         hd_bin("example-resume"), e->d.dir);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(py(e, "ex.out",
	        "import sys,re\n"
	        "l = open(sys.argv[1]).read().splitlines()\n"
	        "assert len(l) == 3, l\n"
	        "assert all(re.match(r\"attempt [0-9]+: slept, 0 ms asleep, woken by unknown\", x) for x in l), l\n"),
	        0);
	assert_int_equal(hd_stop(&e->d), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_records_and_outputs, teardown),
		cmocka_unit_test_teardown(test_ring_size_from_config, teardown),
		cmocka_unit_test_teardown(test_claims, teardown),
		cmocka_unit_test_teardown(test_ended_by_client, teardown),
		cmocka_unit_test_teardown(test_wire_version_asked, teardown),
		cmocka_unit_test_teardown(test_claim_counts_from_first_activation, teardown),
		cmocka_unit_test_teardown(test_resume_notifications, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
