/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The wake ledger (docs/ledger.md): records of suspend attempts driven
 * through the fake kernel and clock the way the power loop will drive
 * them, cause attribution from snapshot diffs, claims, the ring, its
 * memory bound, the summary, and every output (JSON, wire, table, SVG)
 * fed hostile names.
 */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "daemon/awake.h"
#include "daemon/ledger.h"
#include "daemon/power.h"
#include "daemon/wakesrc.h"
#include "fake_power.h"
#include "cli/wakes.h"

#define MS 1000000ull

struct fx {
	struct fake_clock clk;
	struct fake_power fp;
	struct ledger *l;
	struct ws_snapshot snap;
	/* applied inside suspend(), i.e. while "asleep" */
	struct { const char *path, *data; } during[8];
	int ndur;
};

static void on_suspend(struct fake_power *fp, void *arg)
{
	struct fx *f = arg;

	for (int i = 0; i < f->ndur; i++)
		fake_file_set(fp, f->during[i].path, f->during[i].data);
	f->ndur = 0;
}

static void during(struct fx *f, const char *path, const char *data)
{
	f->during[f->ndur].path = path;
	f->during[f->ndur++].data = data;
}

static int setup(void **st)
{
	struct fx *f = calloc(1, sizeof(*f));

	fake_clock_init(&f->clk);
	fake_power_init(&f->fp, &f->clk);
	f->fp.on_suspend = on_suspend;
	f->fp.arg = f;
	f->fp.sleep_ns = 30000 * MS;
	f->l = ledger_new(LEDGER_DEFAULT_CAP, LEDGER_DEFAULT_WINDOW_MS);
	assert_non_null(f->l);
	*st = f;
	return 0;
}

static int teardown(void **st)
{
	struct fx *f = *st;

	ledger_free(f->l);
	free(f);
	return 0;
}

/* One attempt as the loop will make it (docs/ledger.md, "Integration"):
 * stamp and read before, suspend, stamp at once after, read, end. */
static int attempt(struct fx *f, const struct ledger_alarm *alarm)
{
	int sr;

	wakesrc_stamp(&f->snap, &f->clk.pub);
	wakesrc_take(&f->fp.pub, &f->snap);
	ledger_attempt_begin(f->l, &f->snap);
	sr = f->fp.pub.suspend(&f->fp.pub, "mem");
	wakesrc_stamp(&f->snap, &f->clk.pub);
	wakesrc_take(&f->fp.pub, &f->snap);
	ledger_attempt_end(f->l, sr, &f->snap, alarm);
	return sr;
}

static struct wl_ledger_record last_rec(struct fx *f)
{
	struct wl_ledger_record r;

	assert_int_equal(ledger_copy(f->l, ledger_next_seq(f->l) - 1, &r, 1), 1);
	return r;
}

/* A wakeup source wakeupN with its three files. */
static void source(struct fx *f, unsigned id, const char *name, unsigned ev, unsigned wk)
{
	char p[80], v[24];

	snprintf(p, sizeof(p), "/sys/class/wakeup/wakeup%u/name", id);
	fake_file_set(&f->fp, p, name);
	snprintf(p, sizeof(p), "/sys/class/wakeup/wakeup%u/event_count", id);
	snprintf(v, sizeof(v), "%u", ev);
	fake_file_set(&f->fp, p, v);
	snprintf(p, sizeof(p), "/sys/class/wakeup/wakeup%u/wakeup_count", id);
	snprintf(v, sizeof(v), "%u", wk);
	fake_file_set(&f->fp, p, v);
}

/* The kernel files of a kernel that has them all, none moving. */
static void full_kernel(struct fx *f)
{
	fake_file_fail(&f->fp, "/sys/power/pm_wakeup_irq", ENODATA);
	fake_file_set(&f->fp, "/sys/power/suspend_stats/success", "0");
	fake_file_set(&f->fp, "/sys/power/suspend_stats/fail", "0");
	source(f, 0, "rtc0", 10, 1);
	source(f, 1, "ttyS1", 5, 0);
	source(f, 2, "idle", 7, 0);
}

/* --- outcomes --------------------------------------------------------------- */

static void test_resumed(void **st)
{
	struct fx *f = *st;
	struct wl_ledger_record r;
	uint64_t m0 = f->clk.mono, b0 = f->clk.boot;

	full_kernel(f);
	assert_int_equal(attempt(f, NULL), 0);
	r = last_rec(f);
	assert_int_equal(r.seq, 1);
	assert_int_equal(r.outcome, WL_LO_RESUMED);
	assert_int_equal(r.err, 0);
	assert_int_equal(r.start_mono_ns, m0);
	assert_int_equal(r.start_boot_ns, b0);
	assert_int_equal(r.end_mono_ns, m0);             /* monotonic stood still */
	assert_int_equal(r.end_boot_ns, b0 + 30000 * MS);
	assert_int_equal(r.asleep_ns, 30000 * MS);
	assert_int_equal(r.asleep_src, WL_LAS_CLOCKS);
	assert_true(r.start_real_ns > 1600000000ull * 1000000000ull);
	assert_int_equal(r.claim_state, WL_LCS_OPEN);
	/* Nothing moved on a kernel that has every file: known, no cause. */
	assert_int_equal(r.cause, 0);
	assert_int_equal(r.nsources_moved, 0);
}

static void test_aborted(void **st)
{
	struct fx *f = *st;
	struct wl_ledger_record r;
	unsigned c;

	full_kernel(f);
	/* Arm the check, then an event comes: the kernel aborts. */
	assert_int_equal(f->fp.pub.read_count(&f->fp.pub, &c), 0);
	assert_int_equal(f->fp.pub.write_count(&f->fp.pub, c), 0);
	fake_event_begin(&f->fp);
	fake_event_end(&f->fp);
	assert_int_equal(attempt(f, NULL), -EBUSY);
	r = last_rec(f);
	assert_int_equal(r.outcome, WL_LO_ABORTED);
	assert_int_equal(r.err, EBUSY);
	assert_int_equal(r.asleep_ns, 0);
	assert_int_equal(r.asleep_src, WL_LAS_NONE);
	/* An abort is a wake someone should handle: its window is open. */
	assert_int_equal(r.claim_state, WL_LCS_OPEN);
}

static void test_failed(void **st)
{
	struct fx *f = *st;
	struct wl_ledger_record r;
	struct ledger_alarm al = { "clock", "morning", f->clk.boot };

	full_kernel(f);
	f->fp.fail_times = 1;
	f->fp.fail_errno = EIO;
	assert_int_equal(attempt(f, &al), -EIO);
	r = last_rec(f);
	assert_int_equal(r.outcome, WL_LO_FAILED);
	assert_int_equal(r.err, EIO);
	assert_int_equal(r.claim_state, WL_LCS_NONE);
	/* A failed attempt woke nobody: no alarm cause, no claims. */
	assert_false(r.cause & WL_LC_ALARM);
	assert_int_equal(ledger_claim(f->l, "app", "job", r.end_mono_ns + MS), 0);
	r = last_rec(f);
	assert_int_equal(r.nclaims_total, 0);
}

static void test_open_and_double_begin(void **st)
{
	struct fx *f = *st;
	struct wl_ledger_record r[2];

	/* end without begin: nothing recorded */
	wakesrc_stamp(&f->snap, &f->clk.pub);
	ledger_attempt_end(f->l, 0, &f->snap, NULL);
	assert_int_equal(ledger_next_seq(f->l), 1);

	ledger_attempt_begin(f->l, &f->snap);
	assert_int_equal(ledger_copy(f->l, 1, r, 2), 1);
	assert_int_equal(r[0].outcome, WL_LO_OPEN);
	ledger_attempt_begin(f->l, &f->snap);
	assert_int_equal(ledger_copy(f->l, 1, r, 2), 2);
	assert_int_equal(r[0].outcome, WL_LO_FAILED);
	assert_int_equal(r[0].err, ECANCELED);
	assert_int_equal(r[1].outcome, WL_LO_OPEN);
}

/* The loop may read the after-snapshot outside its lock: claims that come
 * in while it reads count already. */
static void test_two_step_end(void **st)
{
	struct fx *f = *st;
	struct wl_ledger_record r;
	struct ledger_alarm al = { "clock", "morning", 0 };
	uint64_t m, b;
	int sr;

	full_kernel(f);
	f->fp.sleep_ns = 0;
	fake_file_set(&f->fp, "/sys/power/suspend_stats/total_hw_sleep", "100");
	during(f, "/sys/power/suspend_stats/total_hw_sleep", "5100");
	during(f, "/sys/class/wakeup/wakeup1/event_count", "6");
	wakesrc_stamp(&f->snap, &f->clk.pub);
	wakesrc_take(&f->fp.pub, &f->snap);
	/* out of order: nothing happens */
	ledger_attempt_cause(f->l, &f->snap, &al);
	assert_int_equal(ledger_next_seq(f->l), 1);
	ledger_attempt_begin(f->l, &f->snap);
	ledger_attempt_cause(f->l, &f->snap, &al);
	assert_int_equal(last_rec(f).outcome, WL_LO_OPEN);
	/* taken while the attempt runs: its claim, latency 0 */
	assert_int_equal(ledger_claim(f->l, "app", "job", f->clk.mono), 1);

	sr = f->fp.pub.suspend(&f->fp.pub, "mem");
	m = f->clk.mono;
	b = f->clk.boot;
	ledger_attempt_returned(f->l, sr, m, b);
	r = last_rec(f);
	assert_int_equal(r.outcome, WL_LO_RESUMED);
	assert_int_equal(r.claim_state, WL_LCS_OPEN);
	assert_int_equal(r.asleep_src, WL_LAS_NONE);    /* the clocks say nothing yet */
	/* a claim while the loop reads the files */
	f->clk.mono += 8 * MS;
	f->clk.boot += 8 * MS;
	assert_int_equal(ledger_claim(f->l, "modem-client", "call", m + 2 * MS), 1);
	ledger_attempt_returned(f->l, -EIO, m + 5 * MS, b + 5 * MS);   /* ignored */
	wakesrc_stamp(&f->snap, &f->clk.pub);
	wakesrc_take(&f->fp.pub, &f->snap);
	al.due_boot_ns = b + 900 * MS;        /* relative to the resume, not the read */
	ledger_attempt_cause(f->l, &f->snap, &al);
	r = last_rec(f);
	assert_int_equal(r.outcome, WL_LO_RESUMED);
	assert_int_equal(r.end_mono_ns, m);
	assert_int_equal(r.end_boot_ns, b);
	assert_int_equal(r.nclaims, 2);
	assert_string_equal(r.claims[0].client, "app");
	assert_int_equal(r.claims[0].latency_ns, 0);
	assert_int_equal(r.claims[1].latency_ns, 2 * MS);
	assert_int_equal(r.asleep_src, WL_LAS_HW_SLEEP);
	assert_int_equal(r.asleep_ns, 5 * MS);
	assert_int_equal(r.cause, WL_LC_SOURCES | WL_LC_ALARM);
	assert_string_equal(r.sources[0], "ttyS1");

	/* A record whose cause never came: unknown, and the next one goes on. */
	wakesrc_stamp(&f->snap, &f->clk.pub);
	ledger_attempt_begin(f->l, &f->snap);
	ledger_attempt_returned(f->l, 0, f->clk.mono, f->clk.boot);
	ledger_attempt_begin(f->l, &f->snap);
	assert_int_equal(ledger_copy(f->l, 2, &r, 1), 1);
	assert_int_equal(r.outcome, WL_LO_RESUMED);
	assert_int_equal(r.cause, 0);
	assert_int_equal(r.claim_state, WL_LCS_UNCLAIMED);
	assert_int_equal(last_rec(f).outcome, WL_LO_OPEN);
}

/* --- time asleep: the suspend_stats fallback -------------------------------- */

static void test_asleep_fallback_hw_sleep(void **st)
{
	struct fx *f = *st;
	struct wl_ledger_record r;

	/* The clocks do not tell (no sleep injected), total_hw_sleep does. */
	f->fp.sleep_ns = 0;
	full_kernel(f);
	fake_file_set(&f->fp, "/sys/power/suspend_stats/total_hw_sleep", "1000000");
	during(f, "/sys/power/suspend_stats/total_hw_sleep", "3500000");
	assert_int_equal(attempt(f, NULL), 0);
	r = last_rec(f);
	assert_int_equal(r.asleep_src, WL_LAS_HW_SLEEP);
	assert_int_equal(r.asleep_ns, 2500 * MS);

	/* When the clocks do tell, they win over suspend_stats. */
	f->fp.sleep_ns = 7 * MS;
	during(f, "/sys/power/suspend_stats/total_hw_sleep", "9999999");
	assert_int_equal(attempt(f, NULL), 0);
	r = last_rec(f);
	assert_int_equal(r.asleep_src, WL_LAS_CLOCKS);
	assert_int_equal(r.asleep_ns, 7 * MS);

	/* Neither: none. */
	f->fp.sleep_ns = 0;
	assert_int_equal(attempt(f, NULL), 0);
	r = last_rec(f);
	assert_int_equal(r.asleep_src, WL_LAS_NONE);
	assert_int_equal(r.asleep_ns, 0);
}

/* --- causes ----------------------------------------------------------------- */

static void test_cause_irq(void **st)
{
	struct fx *f = *st;
	struct wl_ledger_record r;
	char key[WL_LEDGER_CAUSE_MAX];
	unsigned c;

	full_kernel(f);
	during(f, "/sys/power/pm_wakeup_irq", "42");
	attempt(f, NULL);
	r = last_rec(f);
	assert_int_equal(r.cause, WL_LC_IRQ);
	assert_int_equal(r.wakeup_irq, 42);
	wl_ledger_cause_key(&r, key, sizeof(key));
	assert_string_equal(key, "irq 42");

	/* The same IRQ again after a real sleep: a fresh wake. */
	attempt(f, NULL);
	r = last_rec(f);
	assert_true(r.cause & WL_LC_IRQ);

	/* An abort with the value unchanged since before: stale, not a cause. */
	assert_int_equal(f->fp.pub.read_count(&f->fp.pub, &c), 0);
	assert_int_equal(f->fp.pub.write_count(&f->fp.pub, c), 0);
	fake_event_begin(&f->fp);
	fake_event_end(&f->fp);
	assert_int_equal(attempt(f, NULL), -EBUSY);
	r = last_rec(f);
	assert_false(r.cause & WL_LC_IRQ);

	/* ... but one that changed during an abort is. */
	wakesrc_stamp(&f->snap, &f->clk.pub);
	wakesrc_take(&f->fp.pub, &f->snap);
	ledger_attempt_begin(f->l, &f->snap);
	fake_file_set(&f->fp, "/sys/power/pm_wakeup_irq", "7");
	wakesrc_stamp(&f->snap, &f->clk.pub);
	wakesrc_take(&f->fp.pub, &f->snap);
	ledger_attempt_end(f->l, -EBUSY, &f->snap, NULL);
	r = last_rec(f);
	assert_int_equal(r.outcome, WL_LO_ABORTED);
	assert_true(r.cause & WL_LC_IRQ);
	assert_int_equal(r.wakeup_irq, 7);

	/* No IRQ recorded any more (ENODATA): known, and no IRQ cause. */
	fake_file_fail(&f->fp, "/sys/power/pm_wakeup_irq", ENODATA);
	attempt(f, NULL);
	r = last_rec(f);
	assert_int_equal(r.cause & (WL_LC_IRQ | WL_LC_NO_IRQ_FILE), 0);
}


/*
 * The wake grace (daemon/wake_grace.c): a wake whose record names a
 * configured wakeup source (or whose wakeup IRQ is a configured one)
 * keeps the system awake that rule's time, claimed in the ledger as
 * wakelockd/grace:NAME; another cause, or an attempt that did not resume,
 * holds nothing.
 */
static void test_wake_grace(void **st)
{
	struct fx *f = *st;
	const struct wake_grace_rule rules[] = { { "ttyS1", 800 }, { "irq/9", 300 } };
	struct awake_source *g = wake_grace_source_new(rules, 2, f->l);
	struct wl_ledger_record r;
	uint64_t now, until = 0;
	char state[96];

	assert_non_null(g);
	full_kernel(f);
	/* Woken by rtc0 only: no grace. */
	during(f, "/sys/class/wakeup/wakeup0/wakeup_count", "2");
	attempt(f, NULL);
	r = last_rec(f);
	now = f->clk.mono;
	g->resumed(g, &r, now);
	assert_int_equal(g->holding(g, now, &until), 0);
	/* Woken by ttyS1 (the modem's port): 800 ms, claimed. */
	during(f, "/sys/class/wakeup/wakeup1/wakeup_count", "1");
	attempt(f, NULL);
	r = last_rec(f);
	assert_string_equal(r.sources[0], "ttyS1");
	now = f->clk.mono;
	g->resumed(g, &r, now);
	assert_int_equal(g->holding(g, now, &until), 1);
	assert_int_equal(until, now + 800 * MS);
	assert_int_equal(g->holding(g, now + 799 * MS, &until), 1);
	assert_int_equal(g->holding(g, now + 800 * MS, &until), 0);
	g->describe(g, now + 200 * MS, state, sizeof(state));
	assert_string_equal(state, "woken by ttyS1: awake 600 ms more");
	r = last_rec(f);
	assert_true(r.nclaims >= 1);
	assert_string_equal(r.claims[0].client, "wakelockd");
	assert_string_equal(r.claims[0].hold, "grace:ttyS1");
	/* An abort that names it holds nothing. */
	r.outcome = WL_LO_ABORTED;
	g->resumed(g, &r, now + 900 * MS);
	assert_int_equal(g->holding(g, now + 900 * MS, &until), 0);
	/* By IRQ. */
	memset(&r, 0, sizeof(r));
	r.outcome = WL_LO_RESUMED;
	r.cause = WL_LC_IRQ;
	r.wakeup_irq = 9;
	g->resumed(g, &r, now + 1000 * MS);
	assert_int_equal(g->holding(g, now + 1000 * MS, &until), 1);
	assert_int_equal(until, now + 1300 * MS);
	r.wakeup_irq = 10;
	g->resumed(g, &r, now + 2000 * MS);
	assert_int_equal(g->holding(g, now + 2000 * MS, &until), 0);
	wake_grace_source_free(g);
}

static void test_cause_sources(void **st)
{
	struct fx *f = *st;
	struct wl_ledger_record r;
	char key[WL_LEDGER_CAUSE_MAX];

	full_kernel(f);
	/* rtc0's events move most, but ttyS1's wakeup_count moved: first. */
	during(f, "/sys/class/wakeup/wakeup0/event_count", "13");
	during(f, "/sys/class/wakeup/wakeup1/event_count", "6");
	during(f, "/sys/class/wakeup/wakeup1/wakeup_count", "1");
	/* a source registered during the attempt, with an event */
	during(f, "/sys/class/wakeup/wakeup9/name", "new");
	during(f, "/sys/class/wakeup/wakeup9/event_count", "1");
	attempt(f, NULL);
	r = last_rec(f);
	assert_int_equal(r.cause, WL_LC_SOURCES);
	assert_int_equal(r.nsources_moved, 3);
	assert_int_equal(r.nsources, 3);
	assert_string_equal(r.sources[0], "ttyS1");
	assert_string_equal(r.sources[1], "rtc0");
	assert_string_equal(r.sources[2], "new");
	wl_ledger_cause_key(&r, key, sizeof(key));
	assert_string_equal(key, "source ttyS1");

	/* Nothing moves the next time: no source cause. */
	attempt(f, NULL);
	r = last_rec(f);
	assert_int_equal(r.nsources_moved, 0);
	assert_false(r.cause & WL_LC_SOURCES);
	wl_ledger_cause_key(&r, key, sizeof(key));
	assert_string_equal(key, "unknown");
}

static void test_cause_sources_bounded(void **st)
{
	static const char *const ev[] = {
		"/sys/class/wakeup/wakeup10/event_count", "/sys/class/wakeup/wakeup11/event_count",
		"/sys/class/wakeup/wakeup12/event_count", "/sys/class/wakeup/wakeup13/event_count",
		"/sys/class/wakeup/wakeup14/event_count", "/sys/class/wakeup/wakeup15/event_count",
		"/sys/class/wakeup/wakeup16/event_count",
	};
	struct fx *f = *st;
	struct wl_ledger_record r;

	full_kernel(f);
	for (unsigned i = 10; i < 17; i++)
		source(f, i, i == 13 ? "big" : "s", 0, 0);
	for (unsigned i = 0; i < 7; i++)
		during(f, ev[i], i == 3 ? "9" : "1");
	attempt(f, NULL);
	r = last_rec(f);
	/* Seven moved, four named: the largest increase first. */
	assert_int_equal(r.nsources_moved, 7);
	assert_int_equal(r.nsources, WL_LEDGER_SOURCES);
	assert_string_equal(r.sources[0], "big");
}

static void test_cause_alarm(void **st)
{
	struct fx *f = *st;
	struct wl_ledger_record r;
	char key[WL_LEDGER_CAUSE_MAX];
	struct ledger_alarm al = { "clock", "morning", f->clk.boot + 30000 * MS };

	full_kernel(f);
	during(f, "/sys/class/wakeup/wakeup0/event_count", "11");   /* the RTC */
	attempt(f, &al);
	r = last_rec(f);
	assert_true(r.cause & WL_LC_ALARM);
	assert_true(r.cause & WL_LC_SOURCES);
	assert_string_equal(r.alarm_client, "clock");
	assert_string_equal(r.alarm_name, "morning");
	wl_ledger_cause_key(&r, key, sizeof(key));
	assert_string_equal(key, "alarm clock/morning");   /* alarm first */

	/* Due within the RTC's second after the resume: still the alarm. */
	al.due_boot_ns = f->clk.boot + 30000 * MS + 900 * MS;
	attempt(f, &al);
	assert_true(last_rec(f).cause & WL_LC_ALARM);
	/* Due later than that: something else woke us. */
	al.due_boot_ns = f->clk.boot + 30000 * MS + 1001 * MS;
	attempt(f, &al);
	assert_false(last_rec(f).cause & WL_LC_ALARM);
}

static void test_missing_files(void **st)
{
	struct fx *f = *st;
	struct wl_ledger_record r;
	char key[WL_LEDGER_CAUSE_MAX], *buf = NULL;
	size_t len = 0;
	FILE *m;

	/* The fake starts with no files at all: an old or small kernel. */
	assert_int_equal(attempt(f, NULL), 0);
	r = last_rec(f);
	assert_int_equal(r.outcome, WL_LO_RESUMED);           /* never a failure */
	assert_int_equal(r.cause, WL_LC_NO_IRQ_FILE | WL_LC_NO_SOURCES);
	assert_int_equal(r.asleep_ns, 30000 * MS);
	wl_ledger_cause_key(&r, key, sizeof(key));
	assert_string_equal(key, "unknown");
	m = open_memstream(&buf, &len);
	wl_ledger_json_record(m, &r);
	fclose(m);
	assert_non_null(strstr(buf, "\"irq\":\"unknown\""));
	assert_non_null(strstr(buf, "\"sources\":\"unknown\""));
	free(buf);

	/* A backend without the ledger's operations at all: the same. */
	f->fp.pub.read_attr = NULL;
	f->fp.pub.list_dir = NULL;
	assert_int_equal(attempt(f, NULL), 0);
	assert_int_equal(last_rec(f).cause, WL_LC_NO_IRQ_FILE | WL_LC_NO_SOURCES);

	/* Files that cannot be parsed count as absent, not as zero. */
	fake_power_init(&f->fp, &f->clk);
	f->fp.sleep_ns = 1000 * MS;
	fake_file_set(&f->fp, "/sys/power/pm_wakeup_irq", "garbage");
	source(f, 3, "x", 1, 0);
	fake_file_set(&f->fp, "/sys/class/wakeup/wakeup3/event_count", "12abc");
	wakesrc_take(&f->fp.pub, &f->snap);
	assert_true(f->snap.flags & WS_IRQ_FILE);
	assert_false(f->snap.flags & WS_IRQ_SET);
	assert_true(f->snap.flags & WS_SOURCES);
	assert_int_equal(f->snap.nsrc, 0);
	assert_false(f->snap.flags & WS_STATS);
}

/* The real sysfs backend against a directory tree: the same rules. */
static void put_file(const char *dir, const char *rel, const char *data)
{
	char p[512], *s;
	FILE *fl;

	snprintf(p, sizeof(p), "%s%s", dir, rel);
	for (s = strchr(p + strlen(dir) + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = 0;
		mkdir(p, 0755);
		*s = '/';
	}
	fl = fopen(p, "w");
	assert_non_null(fl);
	fputs(data, fl);
	fclose(fl);
}

/* A temporary root with the two files sysfs_open needs, and the real
 * sysfs backend on it (dir: a mkdtemp template); sysfs_root_remove ends
 * it, with what the snapshots kept open. */
static struct power_backend *sysfs_root(char *dir)
{
	struct power_backend *be;
	char err[256];

	wakesrc_forget();
	assert_non_null(mkdtemp(dir));
	put_file(dir, "/sys/power/wakeup_count", "5\n");
	put_file(dir, "/sys/power/state", "freeze mem\n");
	assert_int_equal(sysfs_open(dir, "mem", NULL, 1, &be, err, sizeof(err)), 0);
	return be;
}

static void sysfs_root_remove(char *dir, struct power_backend *be)
{
	char cmd[300];

	wakesrc_forget();
	sysfs_close(be);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_sysfs_backend(void **st)
{
	char dir[] = "/tmp/wl-ledger-XXXXXX";
	struct power_backend *be = sysfs_root(dir);
	struct ws_snapshot *s = calloc(1, sizeof(*s));
	char buf[16];

	(void)st;
	wakesrc_take(be, s);
	assert_int_equal(s->flags, 0);                  /* nothing there: unknown */
	put_file(dir, "/sys/power/pm_wakeup_irq", "17\n");
	put_file(dir, "/sys/power/suspend_stats/success", "3\n");
	put_file(dir, "/sys/power/suspend_stats/fail", "1\n");
	put_file(dir, "/sys/class/wakeup/wakeup4/name", "serial8250\n");
	put_file(dir, "/sys/class/wakeup/wakeup4/event_count", "8\n");
	put_file(dir, "/sys/class/wakeup/wakeup4/wakeup_count", "2\n");
	put_file(dir, "/sys/class/wakeup/not-a-source/name", "x\n");
	wakesrc_take(be, s);
	assert_int_equal(s->flags, WS_IRQ_FILE | WS_IRQ_SET | WS_SOURCES | WS_STATS);
	assert_int_equal(s->irq, 17);
	assert_int_equal(s->success, 3);
	assert_int_equal(s->fail, 1);
	assert_int_equal(s->nsrc, 1);
	assert_int_equal(s->src[0].id, 4);
	assert_string_equal(s->src[0].name, "serial8250");
	assert_int_equal(s->src[0].events, 8);
	assert_int_equal(s->src[0].wakeups, 2);
	assert_int_equal(be->read_attr(be, "/sys/power/nope", buf, sizeof(buf)), -ENOENT);
	sysfs_root_remove(dir, be);
	free(s);
}

/*
 * Names are read once per source directory: a source listed again in the
 * same directory (same inode) keeps its name without a read, one whose
 * directory was re-created under the same wakeupN (the kernel reuses the
 * numbers; the new directory has a new inode) is read again, and a name
 * that could not be read is tried again at the next scan.  event_count is
 * read through a descriptor kept open, wakeup_count only when event_count
 * moved.
 */
static void test_names_read_once(void **st)
{
	char dir[] = "/tmp/wl-ledger-XXXXXX", cmd[600];
	struct power_backend *be = sysfs_root(dir);
	struct ws_snapshot *s = calloc(1, sizeof(*s));

	(void)st;
	put_file(dir, "/sys/class/wakeup/wakeup4/name", "serial8250\n");
	put_file(dir, "/sys/class/wakeup/wakeup4/event_count", "8\n");
	put_file(dir, "/sys/class/wakeup/wakeup5/event_count", "1\n");
	wakesrc_take(be, s);
	assert_int_equal(s->nsrc, 2);
	assert_string_equal(s->src[0].name, "serial8250");
	assert_string_equal(s->src[1].name, "wakeup5");      /* no name file */
	/* The same directories: wakeup4's name is not read again (a kernel
	 * never changes it; this test does, to see that it is not read). */
	put_file(dir, "/sys/class/wakeup/wakeup4/name", "changed\n");
	put_file(dir, "/sys/class/wakeup/wakeup5/name", "late\n");
	wakesrc_take(be, s);
	assert_string_equal(s->src[0].name, "serial8250");
	assert_string_equal(s->src[1].name, "late");
	assert_int_equal(s->src[0].events, 8);
	/* event_count is read again through the descriptor kept open;
	 * wakeup_count only when event_count moved (the kernel raises them
	 * together). */
	put_file(dir, "/sys/class/wakeup/wakeup4/wakeup_count", "1\n");
	wakesrc_take(be, s);
	assert_int_equal(s->src[0].wakeups, 0);
	put_file(dir, "/sys/class/wakeup/wakeup4/event_count", "9\n");
	wakesrc_take(be, s);
	assert_int_equal(s->src[0].events, 9);
	assert_int_equal(s->src[0].wakeups, 1);
	/* A source that goes is gone, whatever was kept of it. */
	snprintf(cmd, sizeof(cmd), "rm -r '%s/sys/class/wakeup/wakeup5'", dir);
	assert_int_equal(system(cmd), 0);
	wakesrc_take(be, s);
	assert_int_equal(s->nsrc, 1);
	/* wakeup4 re-created (made beside the old one, so its inode differs). */
	snprintf(cmd, sizeof(cmd), "cd '%s/sys/class/wakeup' && mkdir new && echo rtc0 >new/name && "
	         "echo 2 >new/event_count && rm -r wakeup4 && mv new wakeup4", dir);
	assert_int_equal(system(cmd), 0);
	wakesrc_take(be, s);
	assert_int_equal(s->nsrc, 1);
	assert_string_equal(s->src[0].name, "rtc0");
	assert_int_equal(s->src[0].events, 2);
	sysfs_root_remove(dir, be);
	free(s);
}

#define COUNTED "/sys/power/wakeup_count_sources"

static const struct ws_source *src_of(const struct ws_snapshot *s, uint32_t id)
{
	for (unsigned i = 0; i < s->nsrc; i++)
		if (s->src[i].id == id)
			return &s->src[i];
	return NULL;
}

/*
 * With the kernel's list of the sources counted since the last write of
 * wakeup_count, a snapshot reads only those: a listed source is read
 * again, a new one is added with its name, one gone is dropped, and a
 * source that moved but is not listed keeps what the last snapshot read
 * (the kernel would list it: the test moves it to see that it is not
 * read).  A list that cannot be used (garbled, a line cut, too long,
 * absent) takes the full listing, and so does every 1024th snapshot.
 */
static void test_counted_sources(void **st)
{
	struct fx *f = *st;
	const struct ws_source *x;

	wakesrc_forget();
	full_kernel(f);
	wakesrc_take(&f->fp.pub, &f->snap);
	assert_int_equal(f->fp.lists, 1);        /* the first snapshot lists them */
	fake_file_set(&f->fp, COUNTED, "");
	wakesrc_take(&f->fp.pub, &f->snap);
	assert_int_equal(f->fp.lists, 1);
	assert_int_equal(f->snap.nsrc, 3);
	assert_true(f->snap.flags & WS_SOURCES);

	source(f, 1, "ttyS1", 6, 1);
	source(f, 2, "idle", 9, 0);              /* moved, not listed */
	fake_file_set(&f->fp, COUNTED, "wakeup1\n");
	wakesrc_take(&f->fp.pub, &f->snap);
	assert_int_equal(f->fp.lists, 1);
	assert_int_equal(f->snap.nsrc, 3);
	x = src_of(&f->snap, 1);
	assert_non_null(x);
	assert_int_equal(x->events, 6);
	assert_int_equal(x->wakeups, 1);
	assert_int_equal(src_of(&f->snap, 2)->events, 7);
	assert_int_equal(src_of(&f->snap, 0)->events, 10);

	/* Newest first, as the kernel lists them: a new source, and one
	 * listed twice. */
	source(f, 9, "new", 1, 0);
	fake_file_set(&f->fp, COUNTED, "wakeup9\nwakeup1\nwakeup9\n");
	wakesrc_take(&f->fp.pub, &f->snap);
	assert_int_equal(f->fp.lists, 1);
	assert_int_equal(f->snap.nsrc, 4);
	assert_int_equal(f->snap.src[3].id, 9);
	assert_string_equal(f->snap.src[3].name, "new");
	assert_int_equal(f->snap.src[3].events, 1);

	/* Listed and gone. */
	fake_file_set(&f->fp, "/sys/class/wakeup/wakeup1/name", NULL);
	fake_file_set(&f->fp, "/sys/class/wakeup/wakeup1/event_count", NULL);
	fake_file_set(&f->fp, "/sys/class/wakeup/wakeup1/wakeup_count", NULL);
	fake_file_set(&f->fp, COUNTED, "wakeup1\n");
	wakesrc_take(&f->fp.pub, &f->snap);
	assert_int_equal(f->fp.lists, 1);
	assert_int_equal(f->snap.nsrc, 3);
	assert_null(src_of(&f->snap, 1));

	/* Lists that cannot be used: the full listing, which reads idle. */
	fake_file_set(&f->fp, COUNTED, "wakeupX\n");
	wakesrc_take(&f->fp.pub, &f->snap);
	assert_int_equal(f->fp.lists, 2);
	assert_int_equal(src_of(&f->snap, 2)->events, 9);
	fake_file_set(&f->fp, COUNTED, "wakeup0\nwakeup2");
	wakesrc_take(&f->fp.pub, &f->snap);
	assert_int_equal(f->fp.lists, 3);
	fake_file_fail(&f->fp, COUNTED, EOVERFLOW);
	wakesrc_take(&f->fp.pub, &f->snap);
	assert_int_equal(f->fp.lists, 4);
	fake_file_set(&f->fp, COUNTED, NULL);
	wakesrc_take(&f->fp.pub, &f->snap);
	assert_int_equal(f->fp.lists, 5);
	assert_int_equal(f->snap.nsrc, 3);

	/* From the list again, 1023 times; the 1024th snapshot lists. */
	fake_file_set(&f->fp, COUNTED, "");
	for (int i = 0; i < 1023; i++) {
		wakesrc_take(&f->fp.pub, &f->snap);
		assert_int_equal(f->fp.lists, 5);
	}
	wakesrc_take(&f->fp.pub, &f->snap);
	assert_int_equal(f->fp.lists, 6);
	assert_int_equal(f->snap.nsrc, 3);
	wakesrc_forget();
}

/* An attempt's cause from the list: the source the kernel names, and
 * not one that moved without being listed. */
static void test_counted_cause(void **st)
{
	struct fx *f = *st;
	struct wl_ledger_record r;

	wakesrc_forget();
	full_kernel(f);
	fake_file_set(&f->fp, COUNTED, "");
	wakesrc_take(&f->fp.pub, &f->snap);      /* the listing the list starts from */
	during(f, "/sys/class/wakeup/wakeup1/event_count", "6");
	during(f, COUNTED, "wakeup1\n");
	assert_int_equal(attempt(f, NULL), 0);
	assert_int_equal(f->fp.lists, 1);
	r = last_rec(f);
	assert_true(r.cause & WL_LC_SOURCES);
	assert_int_equal(r.nsources, 1);
	assert_string_equal(r.sources[0], "ttyS1");
	wakesrc_forget();
}

/* The sysfs backend keeps the list open, and a listed source's
 * event_count: a kept descriptor that no longer reads a number (sysfs
 * answers ENODEV once the source is gone) means the source is read again
 * whole by name, as the new source it is. */
static void test_counted_sysfs(void **st)
{
	char dir[] = "/tmp/wl-ledger-XXXXXX", cmd[700];
	struct power_backend *be = sysfs_root(dir);
	struct ws_snapshot *s = calloc(1, sizeof(*s));

	(void)st;
	put_file(dir, "/sys/power/wakeup_count_sources", "");
	put_file(dir, "/sys/class/wakeup/wakeup4/name", "serial8250\n");
	put_file(dir, "/sys/class/wakeup/wakeup4/event_count", "8\n");
	put_file(dir, "/sys/class/wakeup/wakeup5/name", "rtc0\n");
	put_file(dir, "/sys/class/wakeup/wakeup5/event_count", "1\n");
	wakesrc_take(be, s);
	assert_int_equal(s->nsrc, 2);
	/* Not from the directory: a third source there is not seen. */
	put_file(dir, "/sys/class/wakeup/wakeup6/event_count", "3\n");
	put_file(dir, "/sys/class/wakeup/wakeup4/event_count", "9\n");
	put_file(dir, "/sys/class/wakeup/wakeup5/event_count", "2\n");
	put_file(dir, "/sys/power/wakeup_count_sources", "wakeup5\n");
	wakesrc_take(be, s);
	assert_int_equal(s->nsrc, 2);
	assert_int_equal(s->src[0].events, 8);
	assert_int_equal(s->src[1].events, 2);
	/* wakeup5 replaced: the old file, still open, reads no number. */
	snprintf(cmd, sizeof(cmd), "cd '%s/sys/class/wakeup' && mv wakeup5 old && echo gone >old/event_count && "
	         "mkdir wakeup5 && echo alarm >wakeup5/name && echo 4 >wakeup5/event_count", dir);
	assert_int_equal(system(cmd), 0);
	wakesrc_take(be, s);
	assert_int_equal(s->nsrc, 2);
	assert_string_equal(s->src[1].name, "alarm");
	assert_int_equal(s->src[1].events, 4);
	/* The list itself, changed in place, is read anew through its
	 * descriptor. */
	put_file(dir, "/sys/power/wakeup_count_sources", "wakeup4\n");
	wakesrc_take(be, s);
	assert_int_equal(s->src[0].events, 9);
	sysfs_root_remove(dir, be);
	free(s);
}

/* A backend with 1000 sources, long names, listed in either order. */
static int many_ascending;

static int many_read(struct power_backend *be, const char *rel, char *buf, size_t len)
{
	unsigned id;
	char what[32];

	(void)be;
	if (sscanf(rel, "/sys/class/wakeup/wakeup%u/%31s", &id, what) != 2)
		return -ENOENT;
	if (!strcmp(what, "name")) {
		char name[200];
		memset(name, 'n', sizeof(name) - 1);
		name[sizeof(name) - 1] = 0;
		snprintf(buf, len, "%u%s", id, name);
	} else {
		snprintf(buf, len, "%u", id);
	}
	return (int)strlen(buf);
}

static int many_list(struct power_backend *be, const char *rel,
                     int (*fn)(void *arg, const char *entry, uint64_t ino), void *arg)
{
	char e[32];

	(void)be;
	(void)rel;
	for (int k = 0; k < 1000; k++) {
		int i = many_ascending ? k : 999 - k;

		snprintf(e, sizeof(e), "wakeup%d", i);
		if (fn(arg, e, 0))
			break;
	}
	return 0;
}

static void test_snapshot_bounded(void **st)
{
	struct power_backend be = { .read_attr = many_read, .list_dir = many_list };
	struct ws_snapshot *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	struct ws_diff d;

	(void)st;
	for (many_ascending = 0; many_ascending < 2; many_ascending++) {
		wakesrc_take(&be, a);
		assert_int_equal(a->nsrc, WAKESRC_MAX);
		assert_true(a->flags & WS_TRUNCATED);
		for (unsigned i = 0; i < a->nsrc; i++) {
			assert_int_equal(a->src[i].id, i);   /* the lowest, in order */
			assert_int_equal(strlen(a->src[i].name), WL_LEDGER_SRC_NAME - 1);
		}
	}
	*b = *a;
	b->src[100].events++;
	wakesrc_diff(a, b, 1, &d);
	assert_int_equal(d.nmoved, 1);
	assert_true(d.cause & WL_LC_SRC_TRUNC);
	assert_true(d.cause & WL_LC_SOURCES);
	assert_int_equal(strncmp(d.names[0], "100nnn", 6), 0);
	free(a);
	free(b);
}

/* --- claims ----------------------------------------------------------------- */

static void test_claims_and_latency(void **st)
{
	struct fx *f = *st;
	struct wl_ledger_record r;
	uint64_t m;

	full_kernel(f);
	attempt(f, NULL);
	m = last_rec(f).end_mono_ns;
	assert_int_equal(ledger_window_end(f->l), m + 1000 * MS);
	/* Reported out of order: kept by latency. */
	assert_int_equal(ledger_claim(f->l, "modem-client", "call", m + 120 * MS), 1);
	assert_int_equal(ledger_claim(f->l, "sms", "rx", m + 30 * MS), 1);
	assert_int_equal(ledger_claim(f->l, "a", "1", m + 500 * MS), 1);
	assert_int_equal(ledger_claim(f->l, "b", "2", m + 400 * MS), 1);
	/* The fifth is counted, the latest is dropped from the list. */
	assert_int_equal(ledger_claim(f->l, "c", "3", m + 10 * MS), 1);
	/* The same hold again, later: its first time stands, not counted twice. */
	assert_int_equal(ledger_claim(f->l, "sms", "rx", m + 600 * MS), 1);
	/* Taken before the resume stamp (blocked acquire): latency 0. */
	assert_int_equal(ledger_claim(f->l, "early", "x", m - 1), 1);
	r = last_rec(f);
	assert_int_equal(r.claim_state, WL_LCS_OPEN);
	assert_int_equal(r.nclaims_total, 6);
	assert_int_equal(r.nclaims, WL_LEDGER_CLAIMS);
	assert_string_equal(r.claims[0].client, "early");
	assert_int_equal(r.claims[0].latency_ns, 0);
	assert_string_equal(r.claims[1].client, "c");
	assert_int_equal(r.claims[1].latency_ns, 10 * MS);
	assert_string_equal(r.claims[2].client, "sms");
	assert_string_equal(r.claims[2].hold, "rx");
	assert_int_equal(r.claims[2].latency_ns, 30 * MS);
	assert_string_equal(r.claims[3].client, "modem-client");
	assert_int_equal(r.claims[3].latency_ns, 120 * MS);
	/* A claim past the window does not count, and does not close it
	 * either: another hold of the same scan may still be in time. */
	assert_int_equal(ledger_claim(f->l, "late", "x", m + 1000 * MS), 0);
	r = last_rec(f);
	assert_int_equal(r.claim_state, WL_LCS_OPEN);
	assert_int_equal(ledger_claim(f->l, "in-time", "y", m + 900 * MS), 1);
	/* Time closes it. */
	ledger_tick(f->l, m + 1000 * MS);
	r = last_rec(f);
	assert_int_equal(r.claim_state, WL_LCS_CLAIMED);
	assert_int_equal(r.nclaims_total, 7);
	assert_int_equal(ledger_window_end(f->l), 0);
	assert_int_equal(ledger_claim(f->l, "d", "4", m + 5 * MS), 0);
}

/* A hold taken while the attempt runs (before suspend() returned: the
 * daemon's alarm hold as its timer fires during the resume) is a claim of
 * that attempt, latency 0; a failed attempt keeps none. */
static void test_claim_during_attempt(void **st)
{
	struct fx *f = *st;
	struct wl_ledger_record r;

	full_kernel(f);
	wakesrc_stamp(&f->snap, &f->clk.pub);
	wakesrc_take(&f->fp.pub, &f->snap);
	ledger_attempt_begin(f->l, &f->snap);
	assert_int_equal(ledger_claim(f->l, "alarm-test", "alarm:guest", f->snap.mono_ns + 5 * MS), 1);
	wakesrc_stamp(&f->snap, &f->clk.pub);
	ledger_attempt_end(f->l, 0, &f->snap, NULL);
	r = last_rec(f);
	assert_int_equal(r.claim_state, WL_LCS_OPEN);
	assert_int_equal(r.nclaims_total, 1);
	assert_string_equal(r.claims[0].hold, "alarm:guest");
	assert_int_equal(r.claims[0].latency_ns, 0);
	ledger_tick(f->l, r.end_mono_ns + 1000 * MS);
	assert_int_equal(last_rec(f).claim_state, WL_LCS_CLAIMED);

	ledger_attempt_begin(f->l, &f->snap);
	assert_int_equal(ledger_claim(f->l, "app", "job", f->snap.mono_ns), 1);
	ledger_attempt_end(f->l, -EIO, &f->snap, NULL);
	r = last_rec(f);
	assert_int_equal(r.outcome, WL_LO_FAILED);
	assert_int_equal(r.claim_state, WL_LCS_NONE);
	assert_int_equal(r.nclaims_total, 0);
}

static void test_unclaimed_after_window(void **st)
{
	struct fx *f = *st;
	struct wl_ledger_record r;
	uint64_t m;

	full_kernel(f);
	attempt(f, NULL);
	m = last_rec(f).end_mono_ns;
	ledger_tick(f->l, m + 999 * MS);
	assert_int_equal(last_rec(f).claim_state, WL_LCS_OPEN);
	ledger_tick(f->l, m + 1000 * MS);
	r = last_rec(f);
	assert_int_equal(r.claim_state, WL_LCS_UNCLAIMED);
	assert_int_equal(ledger_claim(f->l, "app", "job", m + 1001 * MS), 0);

	/* Back to sleep before anyone acted: the next attempt closes it. */
	attempt(f, NULL);
	attempt(f, NULL);
	r = last_rec(f);
	assert_int_equal(ledger_copy(f->l, r.seq - 1, &r, 1), 1);
	assert_int_equal(r.claim_state, WL_LCS_UNCLAIMED);

	/* The window is configurable. */
	ledger_set_window(f->l, 50);
	attempt(f, NULL);
	m = last_rec(f).end_mono_ns;
	assert_int_equal(ledger_claim(f->l, "app", "job", m + 50 * MS), 0);
	ledger_tick(f->l, m + 50 * MS);
	assert_int_equal(last_rec(f).claim_state, WL_LCS_UNCLAIMED);
	attempt(f, NULL);
	m = last_rec(f).end_mono_ns;
	assert_int_equal(ledger_claim(f->l, "app", "job", m + 49 * MS), 1);
	ledger_tick(f->l, m + 50 * MS);
	assert_int_equal(last_rec(f).claim_state, WL_LCS_CLAIMED);
}

/* --- the ring ------------------------------------------------------------- */

static int collect(const struct wl_ledger_record *r, void *arg)
{
	uint64_t *seqs = arg;

	seqs[++seqs[0]] = r->seq;
	return seqs[0] == 3;     /* stop after three */
}

static void test_ring_overwrite(void **st)
{
	struct fx *f = *st;
	struct wl_ledger_record out[8];
	uint64_t seqs[8] = { 0 };

	ledger_free(f->l);
	f->l = ledger_new(4, 1000);
	assert_null(ledger_new(0, 1000));
	assert_int_equal(ledger_oldest_seq(f->l), 1);
	assert_int_equal(ledger_next_seq(f->l), 1);
	assert_int_equal(ledger_copy(f->l, 1, out, 8), 0);
	for (int i = 0; i < 10; i++) {
		f->fp.sleep_ns = (uint64_t)(i + 1) * 1000 * MS;
		attempt(f, NULL);
	}
	assert_int_equal(ledger_next_seq(f->l), 11);
	assert_int_equal(ledger_oldest_seq(f->l), 7);
	/* A reader that last saw 2 asks from 3 and learns it lost 3..6. */
	assert_int_equal(ledger_copy(f->l, 3, out, 8), 4);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(out[i].seq, 7 + i);
		assert_int_equal(out[i].asleep_ns, (uint64_t)(7 + i) * 1000 * MS);
	}
	assert_int_equal(ledger_copy(f->l, 9, out, 8), 2);
	assert_int_equal(out[0].seq, 9);
	assert_int_equal(ledger_copy(f->l, 8, out, 1), 1);
	assert_int_equal(out[0].seq, 8);
	assert_int_equal(ledger_copy(f->l, 11, out, 8), 0);
	ledger_foreach(f->l, collect, seqs);
	assert_int_equal(seqs[0], 3);
	assert_int_equal(seqs[1], 7);
	assert_int_equal(seqs[2], 8);
	assert_int_equal(seqs[3], 9);
}

/* Bytes the process has allocated: glibc's count, or the sanitizer
 * allocator's (which replaces glibc's under ASan and TSan). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
size_t __sanitizer_get_current_allocated_bytes(void);
static size_t allocated(void) { return __sanitizer_get_current_allocated_bytes(); }
#else
static size_t allocated(void) { return mallinfo2().uordblks; }
#endif

static void test_memory_bound(void **st)
{
	struct fx *f = *st;
	struct wl_ledger_record *all;
	size_t before, n;
	uint64_t m;

	/* The stated bound: a fixed header plus 624 bytes a record. */
	assert_int_equal(sizeof(struct wl_ledger_record), 624);
	assert_int_equal(ledger_bytes(4096) - ledger_bytes(0), 4096u * 624u);
	assert_true(ledger_bytes(0) < 33 * 1024);
	assert_true(ledger_bytes(LEDGER_DEFAULT_CAP) < 2600u * 1000u);

	full_kernel(f);
	during(f, "/sys/power/pm_wakeup_irq", "42");
	attempt(f, NULL);                     /* first use of everything */
	before = allocated();
	assert_true(before > 0);
	for (int i = 0; i < 10000; i++) {
		struct ledger_alarm al = { "clock", "tick", f->clk.boot + 30000 * MS };
		char v[16];

		snprintf(v, sizeof(v), "%d", 20 + i);
		/* applied inside this attempt, while v lives */
		during(f, "/sys/class/wakeup/wakeup1/event_count", v);
		attempt(f, i % 3 ? NULL : &al);
		m = last_rec(f).end_mono_ns;
		for (int k = 0; k < i % 7; k++)
			ledger_claim(f->l, "client", k % 2 ? "a" : "b", m + (uint64_t)k * MS);
		if (i % 5 == 0)
			f->clk.mono += 2000 * MS;
		ledger_tick(f->l, f->clk.mono);
	}
	/* Not one byte allocated by 10 000 attempts. */
	assert_int_equal(allocated(), before);
	assert_int_equal(ledger_next_seq(f->l), 10002);
	assert_int_equal(ledger_oldest_seq(f->l), 10002 - LEDGER_DEFAULT_CAP);
	all = calloc(LEDGER_DEFAULT_CAP + 1, sizeof(*all));
	n = ledger_copy(f->l, 1, all, LEDGER_DEFAULT_CAP + 1);
	assert_int_equal(n, LEDGER_DEFAULT_CAP);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(all[i].seq, 10002 - LEDGER_DEFAULT_CAP + i);
		assert_true(all[i].nclaims <= WL_LEDGER_CLAIMS);
		assert_true(all[i].nsources <= WL_LEDGER_SOURCES);
		assert_int_equal(all[i].outcome, WL_LO_RESUMED);
	}
	free(all);
}

/* The loop thread writes while the server thread claims and reads: the
 * ledger's own lock (run under TSan too). */
struct conc {
	struct ledger *l;
	int stop;
	unsigned long copies, bad;   /* checked after the join (no asserts in threads) */
};

static void *claimer(void *arg)
{
	struct conc *c = arg;
	struct wl_ledger_record out[8];

	do {
		size_t n = ledger_copy(c->l, ledger_oldest_seq(c->l), out, 8);
		uint64_t end = ledger_window_end(c->l);

		for (size_t i = 1; i < n; i++)
			c->bad += out[i].seq != out[i - 1].seq + 1 || out[i].nclaims > WL_LEDGER_CLAIMS;
		if (end)
			ledger_claim(c->l, "app", c->copies % 2 ? "a" : "b", end - 1);
		c->copies++;
	} while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE));
	return NULL;
}

static void test_concurrent_readers(void **st)
{
	struct fx *f = *st;
	struct conc c = { .l = f->l };
	pthread_t th;

	full_kernel(f);
	assert_int_equal(pthread_create(&th, NULL, claimer, &c), 0);
	for (int i = 0; i < 2000; i++) {
		attempt(f, NULL);
		ledger_tick(f->l, f->clk.mono + (i % 2) * 1000 * MS);
	}
	__atomic_store_n(&c.stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	assert_int_equal(ledger_next_seq(f->l), 2001);
	assert_true(c.copies > 0);
	assert_int_equal(c.bad, 0);
}

/* --- hostile names ------------------------------------------------------- */

/* Valid UTF-8 (RFC 3629), no control bytes but \n: what JSON and XML
 * need (XML also excludes U+FFFE and U+FFFF: checked where it matters). */
static void assert_clean_utf8(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t n = *p < 0x80 ? 1 : *p >= 0xc2 && *p <= 0xdf ? 2 : *p >= 0xe0 && *p <= 0xef ? 3
		         : *p >= 0xf0 && *p <= 0xf4 ? 4 : 0;
		uint32_t cp = n == 1 ? *p : n == 2 ? *p & 0x1fu : n == 3 ? *p & 0x0fu : *p & 0x07u;

		assert_true(n > 0);
		for (size_t i = 1; i < n; i++) {
			assert_int_equal(p[i] & 0xc0, 0x80);
			cp = cp << 6 | (p[i] & 0x3fu);
		}
		assert_false((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
		             (cp >= 0xd800 && cp <= 0xdfff));
		if (n == 1)
			assert_true(*p >= 0x20 || *p == '\n');
		assert_true(cp != 0x7f);
		p += n;
	}
}

/* Enough of XML's well-formedness to catch an unescaped name: tags
 * balance, attributes are quoted, & starts a known entity, no < or > in
 * text or attribute values. */
static void assert_well_formed(const char *s)
{
	char stack[64][32];
	int depth = 0, root_seen = 0;

	assert_int_equal(strncmp(s, "<?xml ", 6), 0);
	s = strstr(s, "?>") + 2;
	while (*s) {
		if (*s == '<') {
			int close = s[1] == '/';
			const char *nm = s + 1 + close;
			size_t nl = strcspn(nm, " />");

			assert_true(nl > 0 && nl < 32);
			s = nm + nl;
			while (*s == ' ') {
				const char *eq = strchr(s, '=');
				const char *end;

				assert_non_null(eq);
				assert_int_equal(eq[1], '"');
				end = strchr(eq + 2, '"');
				assert_non_null(end);
				for (const char *q = eq + 2; q < end; q++)
					assert_true(*q != '<' && *q != '>');
				s = end + 1;
			}
			if (s[0] == '/' && s[1] == '>') {
				assert_false(close);
				s += 2;
			} else {
				assert_int_equal(*s, '>');
				s++;
				if (close) {
					assert_true(depth > 0);
					depth--;
					assert_int_equal(strlen(stack[depth]), nl);
					assert_int_equal(strncmp(stack[depth], nm, nl), 0);
				} else {
					assert_true(depth < 64);
					memcpy(stack[depth], nm, nl);
					stack[depth++][nl] = 0;
					root_seen = 1;
				}
			}
		} else if (*s == '&') {
			assert_true(!strncmp(s, "&amp;", 5) || !strncmp(s, "&lt;", 4) ||
			            !strncmp(s, "&gt;", 4) || !strncmp(s, "&quot;", 6) ||
			            !strncmp(s, "&apos;", 6));
			s++;
		} else {
			assert_true(*s != '>');
			s++;
		}
	}
	assert_int_equal(depth, 0);
	assert_true(root_seen);
}

/* Control chars, markup, quotes, invalid UTF-8, a valid "é", overlong. */
#define HOSTILE "\x01<b>&\"'\x7f\xff\xc3(\xc3\xa9\xef\xbf\xbe" \
	"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"

/* gcc 12 takes the buffer open_memstream() filled for a local that
 * dangles (a false positive): the buffer is the heap's. */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#pragma GCC diagnostic ignored "-Wdangling-pointer"
#endif

static char *render(void (*fn)(FILE *, const void *), const void *arg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	fn(m, arg);
	fclose(m);
	return buf;
}

static void json_rec(FILE *m, const void *r) { wl_ledger_json_record(m, r); }
static void svg_recs(FILE *m, const void *r) { assert_int_equal(timeline_svg(m, r, 2, 0), 0); }
static void table_recs(FILE *m, const void *r) { wakes_print_table(m, r, 2); }
static void json_none(FILE *m, const void *r) { wakes_print_json(m, r, 0); }
static void json_sum(FILE *m, const void *s) { wl_ledger_json_summary(m, s); }
static void table_sum(FILE *m, const void *s) { wakes_print_summary(m, s); }

static void test_hostile_names(void **st)
{
	struct fx *f = *st;
	struct wl_ledger_record r[2];
	struct ledger_alarm al = { HOSTILE, HOSTILE, f->clk.boot + 30000 * MS };
	char *out;
	uint64_t m;

	full_kernel(f);
	/* The fake cuts its files at 63 bytes and the snapshot at 39: the
	 * kernel's name files may hold anything but a NUL. */
	during(f, "/sys/class/wakeup/wakeup1/name", HOSTILE);
	during(f, "/sys/class/wakeup/wakeup1/event_count", "6");
	fake_file_set(&f->fp, "/sys/class/wakeup/wakeup1/name", HOSTILE);
	attempt(f, NULL);
	attempt(f, &al);
	m = last_rec(f).end_mono_ns;
	assert_int_equal(ledger_claim(f->l, HOSTILE, "\n\t</title>", m + MS), 1);
	assert_int_equal(ledger_copy(f->l, 1, r, 2), 2);
	assert_int_equal(r[0].nsources, 1);
	assert_int_equal(strlen(r[0].sources[0]), WL_LEDGER_SRC_NAME - 1);
	assert_int_equal(memcmp(r[0].sources[0], HOSTILE, WL_LEDGER_SRC_NAME - 1), 0);
	assert_int_equal(strlen(r[1].alarm_client), WAKELOCK_NAME_MAX - 1);
	assert_int_equal(strlen(r[1].claims[0].client), WAKELOCK_NAME_MAX - 1);
	ledger_tick(f->l, m + 2000 * MS);

	out = render(json_rec, &r[0]);
	assert_clean_utf8(out);
	assert_non_null(strstr(out, "\"source \\u0001<b>&\\\"'\\u007f\\u00ff\\u00c3(\xc3\xa9"));
	assert_null(strchr(out, '\n'));
	free(out);
	out = render(json_rec, &r[1]);
	assert_clean_utf8(out);
	assert_non_null(strstr(out, "\"hold\":\"\\u000a\\u0009</title>\""));
	free(out);

	out = render(svg_recs, r);
	assert_clean_utf8(out);
	assert_null(strstr(out, "\xef\xbf\xbe"));
	assert_well_formed(out);
	/* U+FFFE is no XML character: escaped like the invalid bytes. */
	assert_non_null(strstr(out, "source \\x01&lt;b&gt;&amp;&quot;&apos;\\x7f\\xff\\xc3(\xc3\xa9"
	                            "\\xef\\xbf\\xbe"));
	assert_non_null(strstr(out, "claimed by \\x01&lt;b&gt;"));
	assert_non_null(strstr(out, "/\\x0a\\x09&lt;/title&gt; after 1.000 ms"));
	free(out);

	out = render(table_recs, r);
	assert_clean_utf8(out);
	assert_non_null(strstr(out, "source \\x01<b>&\"'\\x7f\\xff\\xc3("));
	assert_int_equal(strchr(out, '\t'), NULL);
	free(out);
}

/* --- summary -------------------------------------------------------------- */

static struct wl_ledger_record mk(unsigned outcome, const char *src, int claimed,
                                  uint64_t lat, uint64_t asleep)
{
	struct wl_ledger_record r;

	memset(&r, 0, sizeof(r));
	r.outcome = (uint8_t)outcome;
	if (src) {
		r.cause = WL_LC_SOURCES;
		r.nsources = 1;
		r.nsources_moved = 1;
		snprintf(r.sources[0], sizeof(r.sources[0]), "%s", src);
	}
	r.claim_state = claimed > 0 ? WL_LCS_CLAIMED : claimed < 0 ? WL_LCS_UNCLAIMED : WL_LCS_OPEN;
	if (claimed > 0) {
		r.nclaims = 1;
		r.nclaims_total = 1;
		r.claims[0].latency_ns = lat;
		snprintf(r.claims[0].client, WAKELOCK_NAME_MAX, "c");
		snprintf(r.claims[0].hold, WAKELOCK_NAME_MAX, "h");
	}
	r.asleep_ns = asleep;
	return r;
}

static void test_summary_percentiles(void **st)
{
	struct wl_ledger_record *r = calloc(120, sizeof(*r));
	struct wl_ledger_summary *s = calloc(1, sizeof(*s));
	const struct wl_ledger_cause_stat *fg, *modem, *unk;
	size_t n = 0;
	char *out;

	(void)st;
	/* fuel-gauge: 100 wakes, first claims 1..100 ms given in a scrambled
	 * order (37 is prime to 100), asleep 12.5 s each but one of 200 s. */
	for (unsigned i = 0; i < 100; i++)
		r[n++] = mk(WL_LO_RESUMED, "fuel-gauge", 1, ((i * 37) % 100 + 1) * MS,
		            i == 50 ? 200000 * MS : 12500 * MS);
	/* modem: 4 claimed (latencies 40, 10, 30, 20 ms), 2 unclaimed, one
	 * aborted (claimed, 5 ms), asleep 30, 10, 20, 40, 50, 60 s. */
	r[n++] = mk(WL_LO_RESUMED, "modem", 1, 40 * MS, 30000 * MS);
	r[n++] = mk(WL_LO_RESUMED, "modem", 1, 10 * MS, 10000 * MS);
	r[n++] = mk(WL_LO_RESUMED, "modem", 1, 30 * MS, 20000 * MS);
	r[n++] = mk(WL_LO_RESUMED, "modem", 1, 20 * MS, 40000 * MS);
	r[n++] = mk(WL_LO_RESUMED, "modem", -1, 0, 50000 * MS);
	r[n++] = mk(WL_LO_RESUMED, "modem", -1, 0, 60000 * MS);
	r[n++] = mk(WL_LO_ABORTED, "modem", 1, 5 * MS, 0);
	/* unknown: two resumed whose windows are still open, one with a
	 * claim already: neither claimed nor unclaimed yet */
	r[n++] = mk(WL_LO_RESUMED, NULL, 0, 0, 1000 * MS);
	r[n] = mk(WL_LO_RESUMED, NULL, 1, 3 * MS, 3000 * MS);
	r[n++].claim_state = WL_LCS_OPEN;
	/* not counted under causes */
	r[n++] = mk(WL_LO_FAILED, NULL, 0, 0, 0);
	r[n++] = mk(WL_LO_FAILED, NULL, 0, 0, 0);
	r[n++] = mk(WL_LO_OPEN, NULL, 0, 0, 0);

	assert_int_equal(wl_ledger_summarize(r, n, s), 0);
	assert_int_equal(s->records, 112);
	assert_int_equal(s->failed, 2);
	assert_int_equal(s->open, 1);
	assert_int_equal(s->ncauses, 3);
	fg = &s->c[0];
	modem = &s->c[1];
	unk = &s->c[2];
	assert_string_equal(fg->cause, "source fuel-gauge");        /* most first */
	assert_int_equal(fg->count, 100);
	assert_int_equal(fg->unclaimed, 0);
	assert_int_equal(fg->claim_p50_ns, 50 * MS);                /* rank 50 of 100 */
	assert_int_equal(fg->claim_p99_ns, 99 * MS);                /* rank 99 */
	assert_int_equal(fg->asleep_p50_ns, 12500 * MS);
	assert_string_equal(modem->cause, "source modem");
	assert_int_equal(modem->count, 7);
	assert_int_equal(modem->resumed, 6);
	assert_int_equal(modem->aborted, 1);
	assert_int_equal(modem->claimed, 5);
	assert_int_equal(modem->unclaimed, 2);
	/* latencies 5 10 20 30 40: median rank ceil(2.5) = 3 -> 20 ms; p99
	 * rank ceil(4.95) = 5 -> 40 ms */
	assert_int_equal(modem->claim_p50_ns, 20 * MS);
	assert_int_equal(modem->claim_p99_ns, 40 * MS);
	/* asleep of the 6 resumed: 10 20 30 40 50 60 s: rank 3 -> 30 s */
	assert_int_equal(modem->asleep_p50_ns, 30000 * MS);
	assert_string_equal(unk->cause, "unknown");
	assert_int_equal(unk->count, 2);
	assert_int_equal(unk->claimed + unk->unclaimed, 0);
	assert_int_equal(unk->asleep_p50_ns, 1000 * MS);

	out = render(json_sum, s);
	assert_clean_utf8(out);
	assert_non_null(strstr(out, "{\"cause\":\"source modem\",\"count\":7,\"resumed\":6,"
	                            "\"aborted\":1,\"claimed\":5,\"unclaimed\":2,"
	                            "\"claim_p50_us\":20000,\"claim_p99_us\":40000,"
	                            "\"asleep_p50_ms\":30000}"));
	assert_non_null(strstr(out, "\"claim_p50_us\":null"));
	free(out);
	out = render(table_sum, s);
	assert_non_null(strstr(out, "112 attempts: 2 failed, 1 still open\n"));
	assert_non_null(strstr(out, "source modem                                   7       1         2"
	                            "       20.000       40.000     30000.000\n"));
	free(out);

	/* Edge cases of nearest rank. */
	{
		uint64_t v1[] = { 7 }, v4[] = { 4, 3, 2, 1 };
		assert_int_equal(wl_ledger_percentile(v1, 1, 99), 7);
		assert_int_equal(wl_ledger_percentile(v1, 1, 50), 7);
		assert_int_equal(wl_ledger_percentile(v4, 4, 50), 2);
		assert_int_equal(wl_ledger_percentile(v4, 4, 99), 4);
		assert_int_equal(wl_ledger_percentile(v4, 4, 25), 1);
		assert_int_equal(wl_ledger_percentile(NULL, 0, 50), 0);
	}
	free(r);
	free(s);
}

static void test_summary_bounded(void **st)
{
	struct wl_ledger_record *r = calloc(40, sizeof(*r));
	struct wl_ledger_summary *s = calloc(1, sizeof(*s));
	unsigned other = 0;

	(void)st;
	for (unsigned i = 0; i < 40; i++) {
		char nm[16];
		snprintf(nm, sizeof(nm), "s%02u", i);
		r[i] = mk(WL_LO_RESUMED, nm, -1, 0, MS);
	}
	assert_int_equal(wl_ledger_summarize(r, 40, s), 0);
	assert_int_equal(s->ncauses, WL_LEDGER_SUMMARY_MAX);
	for (unsigned k = 0; k < s->ncauses; k++)
		if (!strcmp(s->c[k].cause, "(other)"))
			other = s->c[k].count;
	assert_int_equal(other, 40 - (WL_LEDGER_SUMMARY_MAX - 1));
	assert_string_equal(s->c[0].cause, "(other)");              /* 9: the most */
	assert_int_equal(wl_ledger_summarize(NULL, 0, s), 0);
	assert_int_equal(s->ncauses, 0);
	free(r);
	free(s);
}

/* --- wire form and table -------------------------------------------------- */

static void test_wire_roundtrip(void **st)
{
	struct fx *f = *st;
	struct ledger_alarm al = { "clock", "morning", f->clk.boot + 30000 * MS };
	struct wl_ledger_record r, back;
	uint8_t buf[WL_LEDGER_WIRE_MAX + 8];
	size_t n;
	uint64_t m;

	full_kernel(f);
	during(f, "/sys/power/pm_wakeup_irq", "42");
	during(f, "/sys/class/wakeup/wakeup1/event_count", "6");
	during(f, "/sys/class/wakeup/wakeup0/wakeup_count", "2");
	fake_file_set(&f->fp, "/sys/class/wakeup/wakeup1/name", HOSTILE);
	attempt(f, &al);
	m = last_rec(f).end_mono_ns;
	for (int i = 0; i < 6; i++) {
		char c[WAKELOCK_NAME_MAX + 8];
		memset(c, 'c', sizeof(c) - 1);
		c[sizeof(c) - 1] = 0;
		c[0] = (char)('0' + i);
		ledger_claim(f->l, c, "hold", m + (uint64_t)i * MS);
	}
	ledger_tick(f->l, m + 5000 * MS);
	r = last_rec(f);
	assert_int_equal(r.nclaims, WL_LEDGER_CLAIMS);
	assert_int_equal(r.nsources, 2);

	n = wl_ledger_encode(&r, buf, sizeof(buf));
	assert_true(n > 0 && n <= WL_LEDGER_WIRE_MAX);
	assert_int_equal(wl_ledger_decode(buf, n, &back), (int)n);
	assert_memory_equal(&r, &back, sizeof(r));
	/* Every truncation is refused, not read past. */
	for (size_t k = 0; k < n; k++)
		assert_int_equal(wl_ledger_decode(buf, k, &back), -EBADMSG);
	assert_int_equal(wl_ledger_encode(&r, buf, n - 1), 0);
	/* Counts beyond the record's bounds are refused. */
	n = wl_ledger_encode(&r, buf, sizeof(buf));
	buf[0] = WL_LEDGER_WIRE_VERSION + 1;                 /* version */
	assert_int_equal(wl_ledger_decode(buf, n, &back), -EBADMSG);
	buf[0] = 0;
	assert_int_equal(wl_ledger_decode(buf, n, &back), -EBADMSG);
	buf[0] = WL_LEDGER_WIRE_VERSION;
	buf[4 + 56 + 16] = WL_LEDGER_SOURCES + 1;           /* nsources */
	assert_int_equal(wl_ledger_decode(buf, n, &back), -EBADMSG);
	buf[4 + 56 + 16] = 2;
	buf[4 + 56 + 16 + 1] = WL_LEDGER_SRC_NAME;          /* a name too long */
	assert_int_equal(wl_ledger_decode(buf, n, &back), -EBADMSG);

	/* Too many claims: after the fixed part, nsources 0, two empty names
	 * (version 1: the claims are the end of the record). */
	memset(&back, 0, sizeof(back));
	back.nclaims = 1;
	n = wl_ledger_encode_version(&back, 1, buf, sizeof(buf));
	assert_int_equal(n, 4 + 56 + 16 + 1 + 2 + 1 + 2 + 8);
	assert_int_equal(buf[4 + 56 + 16 + 1 + 2], 1);
	assert_true(wl_ledger_decode(buf, n, &r) > 0);
	/* ... with the bytes of that many claims there to be read */
	buf[4 + 56 + 16 + 1 + 2] = WL_LEDGER_CLAIMS + 1;
	n = 4 + 56 + 16 + 1 + 2 + 1 + (WL_LEDGER_CLAIMS + 1) * 10;
	assert_true(n <= sizeof(buf));
	memset(buf + 4 + 56 + 16 + 1 + 2 + 1, 0, n - (4 + 56 + 16 + 1 + 2 + 1));
	assert_int_equal(wl_ledger_decode(buf, n, &r), -EBADMSG);
	buf[4 + 56 + 16 + 1 + 2] = WL_LEDGER_CLAIMS;
	assert_int_equal(wl_ledger_decode(buf, n - 10, &r), (int)(n - 10));

	/* The largest record fits WL_LEDGER_WIRE_MAX exactly, and
	 * WL_LEDGER_WIRE_MAX_V1 in version 1. */
	memset(&r, 'z', sizeof(r));
	r.outcome = WL_LO_RESUMED;
	r.asleep_src = WL_LAS_CLOCKS;
	r.claim_state = WL_LCS_CLAIMED;
	r.nsources = WL_LEDGER_SOURCES;
	r.nclaims = WL_LEDGER_CLAIMS;
	r.ended_kind = WL_LEK_CLIENT;
	assert_int_equal(wl_ledger_encode(&r, buf, sizeof(buf)), WL_LEDGER_WIRE_MAX);
	assert_int_equal(wl_ledger_encode_version(&r, 1, buf, sizeof(buf)), WL_LEDGER_WIRE_MAX_V1);
	assert_int_equal(wl_ledger_encode_version(&r, WL_LEDGER_WIRE_VERSION + 1, buf, sizeof(buf)), 0);
	/* A critical battery record: its outcome and action in version 3;
	 * a reader of version 2 gets it as failed (ECANCELED). */
	{
		struct wl_ledger_record back;
		size_t k;

		r.outcome = WL_LO_CRITICAL;
		r.critical_capacity = 4;
		r.critical_action = 2;
		r.err = 0;
		r.ended_kind = WL_LEK_UNKNOWN;
		r.ended_holders = 0;
		r.ended_by[0] = 0;
		r.nsources = r.nclaims = 0;
		k = wl_ledger_encode(&r, buf, sizeof(buf));
		assert_true(k > 0);
		assert_int_equal(wl_ledger_decode(buf, k, &back), (int)k);
		assert_int_equal(back.outcome, WL_LO_CRITICAL);
		assert_int_equal(back.critical_capacity, 4);
		assert_int_equal(back.critical_action, 2);
		buf[k - 1] = 3;                         /* no such action */
		assert_int_equal(wl_ledger_decode(buf, k, &back), -EBADMSG);
		buf[k - 1] = 2;
		buf[1] = WL_LO_CRITICAL + 1;            /* no such outcome */
		assert_int_equal(wl_ledger_decode(buf, k, &back), -EBADMSG);
		k = wl_ledger_encode_version(&r, 2, buf, sizeof(buf));
		assert_int_equal(wl_ledger_decode(buf, k, &back), (int)k);
		assert_int_equal(back.outcome, WL_LO_FAILED);
		assert_int_equal(back.err, ECANCELED);
		buf[1] = WL_LO_CRITICAL;                /* not a version 2 outcome */
		assert_int_equal(wl_ledger_decode(buf, k, &back), -EBADMSG);
	}
}

/*
 * Who held last before an attempt (ended_by): recorded as given at the
 * begin, "none" without one, carried by the wire form (version 2; version
 * 1, what a library from before the field asks for, leaves it unknown),
 * and shown by the JSON and the table.  The wire form refuses a name
 * without a holder and a holder without a name.
 */
static void test_ended_by(void **st)
{
	struct fx *f = *st;
	struct ledger_holder by = { .kind = WL_LEK_SOURCE, .holders = 1 };
	struct wl_ledger_record r[2], back;
	uint8_t buf[WL_LEDGER_WIRE_MAX + 8];
	char *out, *line;
	size_t n, n1;
	int sr;

	full_kernel(f);
	attempt(f, NULL);
	r[0] = last_rec(f);
	assert_int_equal(r[0].ended_kind, WL_LEK_NONE);
	assert_int_equal(r[0].ended_holders, 0);
	assert_string_equal(r[0].ended_by, "");

	snprintf(by.name, sizeof(by.name), "display");
	wakesrc_stamp(&f->snap, &f->clk.pub);
	wakesrc_take(&f->fp.pub, &f->snap);
	ledger_attempt_begin_by(f->l, &f->snap, &by);
	sr = f->fp.pub.suspend(&f->fp.pub, "mem");
	wakesrc_stamp(&f->snap, &f->clk.pub);
	ledger_attempt_end(f->l, sr, &f->snap, NULL);
	r[1] = last_rec(f);
	assert_int_equal(r[1].ended_kind, WL_LEK_SOURCE);
	assert_int_equal(r[1].ended_holders, 1);
	assert_string_equal(r[1].ended_by, "display");

	out = render(json_rec, &r[0]);
	assert_non_null(strstr(out, "\"ended_by\":null,\"ended_by_kind\":\"none\",\"ended_holders\":0,\"state\":null}"));
	free(out);
	out = render(json_rec, &r[1]);
	assert_non_null(strstr(out, "\"ended_by\":\"display\",\"ended_by_kind\":\"source\""));
	free(out);
	r[1].ended_kind = WL_LEK_CLIENT;
	r[1].ended_holders = 3;
	memset(r[1].ended_by, 0, sizeof(r[1].ended_by));
	snprintf(r[1].ended_by, sizeof(r[1].ended_by), "mpd");
	out = render(table_recs, r);
	assert_non_null(strstr(out, "ENDED BY"));
	line = strchr(out, '\n') + 1;
	assert_non_null(strstr(line, " none "));
	line = strchr(line, '\n') + 1;
	assert_non_null(strstr(line, " mpd (+2) "));
	free(out);

	/* Version 2 and later carry it, version 1 does not (unknown, "?"). */
	n = wl_ledger_encode(&r[1], buf, sizeof(buf));
	assert_int_equal(wl_ledger_decode(buf, n, &back), (int)n);
	assert_memory_equal(&r[1], &back, sizeof(back));
	n1 = wl_ledger_encode_version(&r[1], 1, buf, sizeof(buf));
	assert_int_equal(n1, n - 2 - 1 - strlen("mpd") - 1 - 1);   /* and the bytes of 3 and 4 */
	assert_int_equal(buf[0], 1);
	assert_int_equal(wl_ledger_decode(buf, n1, &back), (int)n1);
	assert_int_equal(back.ended_kind, WL_LEK_UNKNOWN);
	assert_string_equal(back.ended_by, "");
	back.ended_kind = r[1].ended_kind;
	back.ended_holders = r[1].ended_holders;
	memcpy(back.ended_by, r[1].ended_by, sizeof(back.ended_by));
	assert_memory_equal(&r[1], &back, sizeof(back));
	out = render(table_recs, (struct wl_ledger_record[2]){ r[0], { .seq = 9 } });
	line = strchr(strchr(out, '\n') + 1, '\n') + 1;
	assert_non_null(strstr(line, " ? "));
	free(out);

	/* Inconsistent tails are refused: version 2's tail is the last
	 * 2 + 1 + 3 bytes. */
	n = wl_ledger_encode_version(&r[1], 2, buf, sizeof(buf));
	buf[n - 6] = WL_LEK_SOURCE + 1;                      /* kind */
	assert_int_equal(wl_ledger_decode(buf, n, &back), -EBADMSG);
	buf[n - 6] = WL_LEK_NONE;                            /* none, with a name */
	assert_int_equal(wl_ledger_decode(buf, n, &back), -EBADMSG);
	buf[n - 6] = WL_LEK_CLIENT;
	buf[n - 5] = 0;                                      /* a name, no holder */
	assert_int_equal(wl_ledger_decode(buf, n, &back), -EBADMSG);
	buf[n - 5] = 3;
	assert_int_equal(wl_ledger_decode(buf, n, &back), (int)n);
	r[1].ended_by[0] = 0;                                /* a client, no name */
	n = wl_ledger_encode_version(&r[1], 2, buf, sizeof(buf));
	assert_int_equal(wl_ledger_decode(buf, n, &back), -EBADMSG);

	/* A name is cut to a client name's bound; holders saturate. */
	memset(by.name, 'n', sizeof(by.name) - 1);
	by.name[sizeof(by.name) - 1] = 0;
	by.holders = 1000;
	by.kind = WL_LEK_CLIENT;
	wakesrc_stamp(&f->snap, &f->clk.pub);
	ledger_attempt_begin_by(f->l, &f->snap, &by);
	r[0] = last_rec(f);
	assert_int_equal(strlen(r[0].ended_by), WAKELOCK_NAME_MAX - 1);
	assert_int_equal(r[0].ended_holders, 255);
	/* A kind without a name, or none, records none. */
	by.name[0] = 0;
	ledger_attempt_begin_by(f->l, &f->snap, &by);
	assert_int_equal(last_rec(f).ended_kind, WL_LEK_NONE);
}

static void test_table(void **st)
{
	struct fx *f = *st;
	struct wl_ledger_record r[3];
	char *out, *line;
	uint64_t m;

	full_kernel(f);
	during(f, "/sys/class/wakeup/wakeup1/event_count", "6");
	during(f, "/sys/class/wakeup/wakeup0/event_count", "11");
	attempt(f, NULL);
	m = last_rec(f).end_mono_ns;
	ledger_claim(f->l, "modem-client", "call", m + 12345678);
	f->fp.fail_times = 1;
	f->fp.fail_errno = EIO;
	attempt(f, NULL);
	assert_int_equal(ledger_copy(f->l, 1, r, 3), 2);
	out = render(table_recs, r);
	line = strchr(out, '\n') + 1;
	assert_non_null(strstr(line, "resumed"));
	assert_non_null(strstr(line, "30000.000"));
	/* both moved by one: the lower wakeupN first */
	assert_non_null(strstr(line, "source rtc0 (+1)"));
	assert_non_null(strstr(line, "claimed"));
	assert_non_null(strstr(line, "modem-client/call"));
	assert_non_null(strstr(line, "12.345"));
	line = strchr(line, '\n') + 1;
	assert_non_null(strstr(line, "failed EIO"));
	assert_non_null(strstr(line, " none "));
	free(out);
	out = render(json_none, NULL);
	assert_string_equal(out, "[]\n");
	free(out);
}

static void test_svg_deterministic(void **st)
{
	struct fx *f = *st;
	struct wl_ledger_record r[2];
	char *a, *b;

	full_kernel(f);
	during(f, "/sys/class/wakeup/wakeup1/event_count", "6");
	attempt(f, NULL);
	ledger_claim(f->l, "app", "job", last_rec(f).end_mono_ns + 100 * MS);
	attempt(f, NULL);
	ledger_tick(f->l, last_rec(f).end_mono_ns + 1000 * MS);
	assert_int_equal(ledger_copy(f->l, 1, r, 2), 2);
	a = render(svg_recs, r);
	b = render(svg_recs, r);
	assert_string_equal(a, b);
	assert_well_formed(a);
	assert_non_null(strstr(a, "<title>#1 resumed: source ttyS1</title>"));
	assert_non_null(strstr(a, "class=\"claim\""));
	assert_non_null(strstr(a, "<title>#2 unclaimed: unknown</title>"));
	/* Axis: first start to the last end (30 s asleep twice, 0.1 s claim). */
	assert_non_null(strstr(a, ">1.000 s</text>"));
	assert_non_null(strstr(a, ">61.000 s (CLOCK_BOOTTIME)</text>"));
	free(a);
	free(b);
	{
		FILE *m = fopen("/dev/null", "w");
		assert_int_equal(timeline_svg(m, r, 0, 0), -EINVAL);
		fclose(m);
	}
}

/*
 * The state an attempt wrote, wire version 4's last byte: kept through
 * encode and decode, shown in JSON ("state"), absent from version 3 (the
 * reader gets "not said"), refused when out of range; the cause of a
 * wake for suspend-then-hibernate comes before an alarm's.
 */
static void test_wire_state(void **st)
{
	struct wl_ledger_record r, back;
	uint8_t buf[WL_LEDGER_WIRE_MAX];
	char key[WL_LEDGER_CAUSE_MAX], *out;
	size_t n, n3;

	(void)st;
	memset(&r, 0, sizeof(r));
	r.seq = 7;
	r.outcome = WL_LO_RESUMED;
	r.state = WL_LS_DISK;
	n = wl_ledger_encode(&r, buf, sizeof(buf));
	assert_true(n > 0);
	assert_int_equal(buf[n - 1], WL_LS_DISK);
	assert_int_equal(wl_ledger_decode(buf, n, &back), (int)n);
	assert_int_equal(back.state, WL_LS_DISK);
	out = render(json_rec, &back);
	assert_non_null(strstr(out, ",\"state\":\"disk\"}"));
	free(out);
	buf[n - 1] = WL_LS_DISK + 1;
	assert_int_equal(wl_ledger_decode(buf, n, &back), -EBADMSG);
	n3 = wl_ledger_encode_version(&r, 3, buf, sizeof(buf));
	assert_int_equal(n3, n - 1);
	assert_int_equal(wl_ledger_decode(buf, n3, &back), (int)n3);
	assert_int_equal(back.state, WL_LS_UNKNOWN);
	assert_null(wl_ledger_state_name(back.state));
	assert_int_equal(wl_ledger_state_of("mem"), WL_LS_MEM);
	assert_int_equal(wl_ledger_state_of("standby"), WL_LS_UNKNOWN);

	r.cause = WL_LC_ALARM | WL_LC_HIBERNATE;
	strcpy(r.alarm_client, "app");
	strcpy(r.alarm_name, "sync");
	wl_ledger_cause_key(&r, key, sizeof(key));
	assert_string_equal(key, "hibernate_after");
	r.cause = WL_LC_ALARM;
	wl_ledger_cause_key(&r, key, sizeof(key));
	assert_string_equal(key, "alarm app/sync");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_resumed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_aborted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_claim_during_attempt, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_and_double_begin, setup, teardown),
		cmocka_unit_test_setup_teardown(test_two_step_end, setup, teardown),
		cmocka_unit_test_setup_teardown(test_asleep_fallback_hw_sleep, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cause_irq, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cause_sources, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wake_grace, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cause_sources_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cause_alarm, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_files, setup, teardown),
		cmocka_unit_test(test_sysfs_backend),
		cmocka_unit_test(test_names_read_once),
		cmocka_unit_test_setup_teardown(test_counted_sources, setup, teardown),
		cmocka_unit_test_setup_teardown(test_counted_cause, setup, teardown),
		cmocka_unit_test(test_counted_sysfs),
		cmocka_unit_test(test_snapshot_bounded),
		cmocka_unit_test_setup_teardown(test_claims_and_latency, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unclaimed_after_window, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ring_overwrite, setup, teardown),
		cmocka_unit_test_setup_teardown(test_memory_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_concurrent_readers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hostile_names, setup, teardown),
		cmocka_unit_test(test_summary_percentiles),
		cmocka_unit_test(test_summary_bounded),
		cmocka_unit_test_setup_teardown(test_wire_roundtrip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ended_by, setup, teardown),
		cmocka_unit_test(test_wire_state),
		cmocka_unit_test_setup_teardown(test_table, setup, teardown),
		cmocka_unit_test_setup_teardown(test_svg_deterministic, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
