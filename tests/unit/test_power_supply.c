/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The power supply (daemon/power_supply.c) and the critical battery
 * action (daemon/critical.c) in-process, on a fake /sys/class/power_supply
 * under a temp dir and the fake power backend: which battery counts, bad
 * input (garbage, no capacity, a supply vanishing between the listing and
 * the read), the critical level taken once per discharge episode with its
 * hysteresis, never while charging or on AC, the actions (hibernate, its
 * fallback to power off, power off, none) and their ledger records, the
 * status line, and on_ac = idle switching the activity's timeout
 * (daemon/activity.c).  The real daemon: tests/unit/test_display.c.
 */
#include <errno.h>
#include <fcntl.h>
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
#include "daemon/config.h"
#include "daemon/critical.h"
#include "daemon/ledger.h"
#include "daemon/presence.h"
#include "lib/wl_shm.h"
#include "fake_power.h"

struct env {
	char dir[64];
	char log[96];
	int saved_stderr;
	struct awake_source *s;
};

static void put(struct env *e, const char *rel, const char *data)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/sys/class/power_supply/%s", e->dir, rel);
	for (char *p = path + strlen(e->dir) + 1; (p = strchr(p, '/')); p++) {
		*p = 0;
		mkdir(path, 0755);
		*p = '/';
	}
	if (!data) {
		unlink(path);
		return;
	}
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(data, f);
	assert_int_equal(fclose(f), 0);
}

/* How often the log (this process's stderr, since setup) has what. */
static int logged(struct env *e, const char *what)
{
	char buf[65536];
	int fd, n = 0;
	ssize_t len;

	fflush(stderr);
	fd = open(e->log, O_RDONLY);
	assert_true(fd >= 0);
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[len > 0 ? len : 0] = 0;
	for (char *p = buf; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

static int setup(void **st)
{
	struct env *e = calloc(1, sizeof(*e));
	int fd;

	assert_non_null(e);
	strcpy(e->dir, "/tmp/wl-ps-XXXXXX");
	assert_non_null(mkdtemp(e->dir));
	snprintf(e->log, sizeof(e->log), "%s/log", e->dir);
	fflush(stderr);
	e->saved_stderr = dup(2);
	fd = open(e->log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	dup2(fd, 2);
	close(fd);
	*st = e;
	return 0;
}

static int teardown(void **st)
{
	struct env *e = *st;
	char cmd[256];

	power_supply_source_free(e->s);
	fflush(stderr);
	dup2(e->saved_stderr, 2);
	close(e->saved_stderr);
	/* What went to stderr meanwhile (the daemon's log, and cmocka's
	 * message if the test failed) to the real one. */
	snprintf(cmd, sizeof(cmd), "sed 's/^/  | /' '%s' >&2", e->log);
	if (system(cmd)) { /* best effort */ }
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", e->dir);
	if (system(cmd)) { /* best effort */ }
	free(e);
	return 0;
}

static void make(struct env *e, int on_ac, unsigned percent, int action)
{
	struct power_supply_params pp = { on_ac, percent, action };

	e->s = power_supply_source_new(e->dir, &pp);
	assert_non_null(e->s);
}

/* power_supply_update forced (the main thread's look); its flags. */
static int update(struct env *e, struct power_critical *c)
{
	memset(c, 0, sizeof(*c));
	return power_supply_update(e->s, 1, c);
}

static void state_is(struct env *e, const char *want)
{
	char buf[96];

	e->s->describe(e->s, 0, buf, sizeof(buf));
	assert_string_equal(buf, want);
}

static void battery(struct env *e, const char *name, const char *cap, const char *status)
{
	char rel[64];

	snprintf(rel, sizeof(rel), "%s/type", name);
	put(e, rel, "Battery\n");
	snprintf(rel, sizeof(rel), "%s/capacity", name);
	put(e, rel, cap);
	snprintf(rel, sizeof(rel), "%s/status", name);
	put(e, rel, status);
}

static void mains(struct env *e, const char *online)
{
	put(e, "AC/type", "Mains\n");
	put(e, "AC/online", online);
}

/* The critical level: reached once per discharge episode; the episode
 * ends above the level + 2, or on AC. */
static void test_critical_once_with_hysteresis(void **st)
{
	struct env *e = *st;
	struct power_critical c;

	mains(e, "0\n");
	battery(e, "BAT0", "6\n", "Discharging\n");
	make(e, ON_AC_OPPORTUNISTIC, 5, CRITICAL_POWEROFF);
	assert_int_equal(update(e, &c) & PS_CRITICAL, 0);
	state_is(e, "ac offline, battery BAT0 6% discharging, critical at 5%: poweroff");
	put(e, "BAT0/capacity", "5\n");
	assert_int_equal(update(e, &c), PS_CHANGED | PS_CRITICAL);
	assert_string_equal(c.battery, "BAT0");
	assert_int_equal(c.capacity, 5);
	assert_int_equal(c.action, CRITICAL_POWEROFF);
	/* Once: not again lower, nor within the hysteresis. */
	put(e, "BAT0/capacity", "3\n");
	assert_int_equal(update(e, &c), PS_CHANGED);
	put(e, "BAT0/capacity", "7\n");
	assert_int_equal(update(e, &c), PS_CHANGED);
	put(e, "BAT0/capacity", "4\n");
	assert_int_equal(update(e, &c), PS_CHANGED);
	assert_int_equal(update(e, &c), 0);                 /* nothing new at all */
	/* Above 5 + 2: a new episode may begin. */
	put(e, "BAT0/capacity", "8\n");
	assert_int_equal(update(e, &c), PS_CHANGED);
	assert_int_equal(logged(e, "battery BAT0: above its critical level again"), 1);
	put(e, "BAT0/capacity", "5\n");
	assert_int_equal(update(e, &c), PS_CHANGED | PS_CRITICAL);
	/* AC back ends it too, even at the same capacity. */
	mains(e, "1\n");
	assert_int_equal(update(e, &c), PS_CHANGED);
	mains(e, "0\n");
	assert_int_equal(update(e, &c), PS_CHANGED | PS_CRITICAL);
}

/* Not critical while charging, full, not charging, of unknown status, on
 * AC (whatever the battery says), or with the level 0 (off). */
static void test_not_critical_unless_discharging(void **st)
{
	struct env *e = *st;
	static const char *const statuses[] = { "Charging\n", "Full\n", "Not charging\n",
	                                        "Unknown\n" };
	struct power_critical c;

	mains(e, "0\n");
	battery(e, "BAT0", "2\n", "Charging\n");
	make(e, ON_AC_OPPORTUNISTIC, 5, CRITICAL_HIBERNATE);
	for (unsigned i = 0; i < 4; i++) {
		put(e, "BAT0/status", statuses[i]);
		assert_int_equal(update(e, &c) & PS_CRITICAL, 0);
	}
	state_is(e, "ac offline, battery BAT0 2%, critical at 5%: hibernate");
	put(e, "BAT0/status", "Discharging\n");
	mains(e, "1\n");
	assert_int_equal(update(e, &c) & PS_CRITICAL, 0);
	put(e, "USB/type", "USB\n");                        /* USB online alone too */
	put(e, "USB/online", "1\n");
	mains(e, "0\n");
	assert_int_equal(update(e, &c) & PS_CRITICAL, 0);
	put(e, "USB/online", "0\n");
	assert_int_equal(update(e, &c) & PS_CRITICAL, PS_CRITICAL);   /* the control */
	power_supply_source_free(e->s);
	make(e, ON_AC_OPPORTUNISTIC, 0, CRITICAL_HIBERNATE);
	assert_int_equal(update(e, &c) & PS_CRITICAL, 0);
	state_is(e, "ac offline, battery BAT0 2% discharging");
}

/* Garbage in capacity or status is not critical, logged once; a battery
 * without capacity never triggers, logged once; garbage in online counts
 * as online, which is not critical either. */
static void test_bad_input(void **st)
{
	struct env *e = *st;
	static const char *const garbage[] = { "low\n", "-3\n", "101\n", "4%\n", "\n", " 4\n" };
	struct power_critical c;

	battery(e, "BAT0", "low\n", "Discharging\n");
	make(e, ON_AC_OPPORTUNISTIC, 5, CRITICAL_POWEROFF);
	for (unsigned i = 0; i < sizeof(garbage) / sizeof(garbage[0]); i++) {
		put(e, "BAT0/capacity", garbage[i]);
		assert_int_equal(update(e, &c) & PS_CRITICAL, 0);
	}
	assert_int_equal(logged(e, "battery BAT0: capacity is garbled: not counted as critical"), 1);
	state_is(e, "ac offline, battery BAT0 (no capacity), critical at 5%: poweroff");
	put(e, "BAT0/capacity", "4\n");
	put(e, "BAT0/status", "Draining\n");
	assert_int_equal(update(e, &c) & PS_CRITICAL, 0);
	assert_int_equal(update(e, &c) & PS_CRITICAL, 0);
	assert_int_equal(logged(e, "battery BAT0: status is garbled: not counted as discharging"), 1);
	put(e, "BAT0/status", NULL);
	assert_int_equal(update(e, &c) & PS_CRITICAL, 0);
	put(e, "BAT0/status", "Discharging\n");
	put(e, "AC/type", "Mains\n");
	put(e, "AC/online", "maybe\n");
	assert_int_equal(update(e, &c) & PS_CRITICAL, 0);
	assert_int_equal(logged(e, "power supply AC: online is garbled: counted as online"), 1);
	put(e, "AC/online", "0\n");
	assert_int_equal(update(e, &c) & PS_CRITICAL, PS_CRITICAL);   /* the control */
	/* No capacity file at all. */
	power_supply_source_free(e->s);
	put(e, "BAT0/capacity", NULL);
	make(e, ON_AC_OPPORTUNISTIC, 5, CRITICAL_POWEROFF);
	for (int i = 0; i < 3; i++)
		assert_int_equal(update(e, &c) & PS_CRITICAL, 0);
	assert_int_equal(logged(e, "battery BAT0 has no capacity: the critical level is not "
	                        "watched"), 1);
	state_is(e, "ac offline, battery BAT0 (no capacity), critical at 5%: poweroff");
}

/* A supply listed but gone when read (a dangling entry; a battery whose
 * files went), a directory that is not there, and a peripheral's battery
 * (scope Device), which is not the system's. */
static void test_vanishing_and_peripheral(void **st)
{
	struct env *e = *st;
	struct power_critical c;
	char path[256];

	make(e, ON_AC_NEVER, 5, CRITICAL_POWEROFF);        /* no power_supply dir yet */
	assert_int_equal(update(e, &c), 0);
	state_is(e, "ac offline");
	battery(e, "hid-mouse", "1\n", "Discharging\n");
	put(e, "hid-mouse/scope", "Device\n");
	battery(e, "BAT1", "50\n", "Discharging\n");
	assert_int_equal(update(e, &c), PS_CHANGED);
	state_is(e, "ac offline, battery BAT1 50% discharging, critical at 5%: poweroff");
	/* Listed first by name, gone when read: BAT0 is a dangling link. */
	snprintf(path, sizeof(path), "%s/sys/class/power_supply/BAT0", e->dir);
	assert_int_equal(symlink("/nonexistent/wl-battery", path), 0);
	assert_int_equal(update(e, &c), 0);
	state_is(e, "ac offline, battery BAT1 50% discharging, critical at 5%: poweroff");
	unlink(path);
	/* The battery's files gone under it (the directory stays listed). */
	put(e, "BAT1/capacity", NULL);
	put(e, "BAT1/status", NULL);
	put(e, "BAT1/type", NULL);
	assert_int_equal(update(e, &c), PS_CHANGED);
	state_is(e, "ac offline");
	/* The mouse at 1 % discharging powered nothing off. */
	assert_int_equal(logged(e, "critical"), 0);
}

/* The actions through the fake backend, and their ledger records. */
static int one_record(struct ledger *l, struct wl_ledger_record *r)
{
	uint64_t next = ledger_next_seq(l);

	return next > 1 && ledger_copy(l, next - 1, r, 1) == 1;
}

static void test_actions(void **st)
{
	struct env *e = *st;
	struct fake_clock clk;
	struct fake_power fp;
	struct ledger *l = ledger_new(8, 1000);
	struct power_critical c = { "BAT0", 4, CRITICAL_HIBERNATE };
	struct wl_ledger_record r;
	char key[WL_LEDGER_CAUSE_MAX];

	assert_non_null(l);
	fake_clock_init(&clk);
	fake_power_init(&fp, &clk);
	fp.sleep_ns = 7000000000ull;           /* the hibernation's 7 s */
	fake_file_set(&fp, "/sys/power/state", "freeze mem disk");
	/* Hibernate: "disk" written, a record of it. */
	assert_int_equal(critical_take(&fp.pub, &clk.pub, NULL, l, &c, 5), CRITICAL_HIBERNATE);
	assert_string_equal(fp.states, "disk");
	assert_int_equal(fp.poweroffs, 0);
	assert_int_equal(logged(e, "battery BAT0 at 4%, discharging: critical (5%): hibernating"), 1);
	assert_true(one_record(l, &r));
	assert_int_equal(r.outcome, WL_LO_CRITICAL);
	assert_int_equal(r.critical_action, CRITICAL_HIBERNATE);
	assert_int_equal(r.critical_capacity, 4);
	assert_int_equal(r.err, 0);
	assert_int_equal(r.claim_state, WL_LCS_NONE);
	assert_int_equal(r.asleep_ns, 7000000000ull);
	wl_ledger_cause_key(&r, key, sizeof(key));
	assert_string_equal(key, "battery 4%: hibernate");
	/* The hibernation fails: power off instead. */
	fp.fail_times = 1;
	fp.fail_errno = ENOMEM;
	assert_int_equal(critical_take(&fp.pub, &clk.pub, NULL, l, &c, 5), CRITICAL_POWEROFF);
	assert_string_equal(fp.states, "disk disk");
	assert_int_equal(fp.poweroffs, 1);
	assert_int_equal(logged(e, "hibernation failed: Cannot allocate memory: powering off "
	                        "instead"), 1);
	assert_true(one_record(l, &r));
	assert_int_equal(r.critical_action, CRITICAL_POWEROFF);
	assert_int_equal(r.err, 0);
	/* No "disk" offered: power off, without trying. */
	fake_file_set(&fp, "/sys/power/state", "freeze mem");
	assert_int_equal(critical_take(&fp.pub, &clk.pub, NULL, l, &c, 5), CRITICAL_POWEROFF);
	assert_string_equal(fp.states, "disk disk");
	assert_int_equal(fp.poweroffs, 2);
	assert_int_equal(logged(e, "hibernation not available (no \"disk\" in /sys/power/state)"), 1);
	/* Power off asked for, and failing: its errno in the record. */
	c.action = CRITICAL_POWEROFF;
	fp.poweroff_errno = EPERM;
	assert_int_equal(critical_take(&fp.pub, &clk.pub, NULL, l, &c, 5), CRITICAL_POWEROFF);
	assert_int_equal(fp.poweroffs, 3);
	assert_true(one_record(l, &r));
	assert_int_equal(r.err, EPERM);
	assert_int_equal(logged(e, "power off failed: Operation not permitted"), 1);
	/* None: the log line only. */
	c.action = CRITICAL_NONE;
	assert_int_equal(ledger_next_seq(l), 5);
	assert_int_equal(critical_take(&fp.pub, &clk.pub, NULL, l, &c, 5), CRITICAL_NONE);
	assert_int_equal(fp.poweroffs, 3);
	assert_int_equal(ledger_next_seq(l), 5);
	assert_int_equal(logged(e, "critical_action = none: nothing done"), 1);
	ledger_free(l);
}

/* A critical record beside the loop's attempts: its wire form, and an
 * attempt whose cause was not in yet is closed, not overwritten. */
static void test_record_wire_and_order(void **st)
{
	struct ledger *l = ledger_new(8, 1000);
	struct ws_snapshot *ws = calloc(1, sizeof(*ws));
	struct ledger_critical lc = { .start_mono_ns = 10, .end_mono_ns = 20, .start_boot_ns = 10,
	                              .end_boot_ns = 20, .capacity = 3, .action = 2 };
	struct wl_ledger_record r[3], back;
	uint8_t buf[WL_LEDGER_WIRE_MAX];
	size_t n;

	(void)st;
	assert_non_null(l);
	assert_non_null(ws);
	ledger_attempt_begin(l, ws);
	ledger_attempt_returned(l, 0, 5, 5);
	ledger_critical(l, &lc);
	ledger_attempt_cause(l, ws, NULL);      /* too late: the record is closed */
	assert_int_equal(ledger_copy(l, 1, r, 3), 2);
	assert_int_equal(r[0].outcome, WL_LO_RESUMED);
	assert_int_equal(r[1].outcome, WL_LO_CRITICAL);
	assert_int_equal(r[1].critical_capacity, 3);
	n = wl_ledger_encode(&r[1], buf, sizeof(buf));
	assert_true(n > 0);
	assert_int_equal(wl_ledger_decode(buf, n, &back), (int)n);
	assert_int_equal(back.outcome, WL_LO_CRITICAL);
	assert_int_equal(back.critical_capacity, 3);
	assert_int_equal(back.critical_action, 2);
	/* Version 4 ends with the action, then the state: none for it. */
	assert_int_equal(buf[n - 2], 2);
	assert_int_equal(buf[n - 1], 0);
	buf[n - 1] = WL_LS_DISK;                /* a critical record names no state */
	assert_int_equal(wl_ledger_decode(buf, n, &back), -EBADMSG);
	buf[n - 1] = 0;
	buf[n - 2] = 9;                         /* no such action */
	assert_int_equal(wl_ledger_decode(buf, n, &back), -EBADMSG);
	buf[n - 2] = 2;
	assert_int_equal(wl_ledger_decode(buf, n - 1, &back), -EBADMSG);  /* cut */
	/* A resumed record says no action; one that says one is refused. */
	n = wl_ledger_encode(&r[0], buf, sizeof(buf));
	assert_int_equal(buf[n - 2], 0);
	assert_int_equal(wl_ledger_decode(buf, n, &back), (int)n);
	buf[n - 2] = 1;
	assert_int_equal(wl_ledger_decode(buf, n, &back), -EBADMSG);
	free(ws);
	ledger_free(l);
}

/* on_ac = idle: the activity holds idle_timeout_ac_ms on AC and
 * idle_timeout_ms on battery, switching as the charger comes and goes;
 * plugging or pulling it counts as activity. */
static void test_on_ac_idle_switches_activity(void **st)
{
	struct env *e = *st;
	struct power_critical c;
	struct awake_source *a;
	uint64_t t0, until = 0;
	const uint64_t s = 1000000000ull;

	mains(e, "1\n");
	make(e, ON_AC_IDLE, 5, CRITICAL_HIBERNATE);
	assert_int_equal(__atomic_load_n(&presence_on_ac, __ATOMIC_RELAXED), 1);
	a = activity_source_new(e->dir, 2000, 6000, LID_IGNORE);
	assert_non_null(a);
	t0 = wl_now_mono();                     /* the start counts as activity */
	a->sample(a, t0 + 3 * s, 0);
	assert_int_equal(a->holding(a, t0 + 3 * s, &until), 1);        /* AC: 6 s */
	assert_true(until >= t0 + 5 * s && until <= t0 + 7 * s);
	assert_int_equal(a->holding(a, t0 + 7 * s, &until), 0);
	mains(e, "0\n");
	assert_int_equal(update(e, &c), PS_CHANGED);
	assert_int_equal(__atomic_load_n(&presence_on_ac, __ATOMIC_RELAXED), 0);
	/* Unplugged at 7 s: a person was there, 2 s from then. */
	a->sample(a, t0 + 7 * s, 0);
	assert_int_equal(a->holding(a, t0 + 8 * s, &until), 1);
	assert_int_equal(a->holding(a, t0 + 9 * s + s / 2, &until), 0);
	/* Plugged in again at 10 s: 6 s from then. */
	mains(e, "1\n");
	assert_int_equal(update(e, &c), PS_CHANGED);
	a->sample(a, t0 + 10 * s, 0);
	assert_int_equal(a->holding(a, t0 + 15 * s, &until), 1);
	assert_int_equal(a->holding(a, t0 + 16 * s + s / 2, &until), 0);
	state_is(e, "ac online (on_ac = idle)");
	activity_source_free(a);
	/* Phone with on_ac = idle: activity counts on AC only. */
	a = activity_source_new(e->dir, 0, 6000, LID_IGNORE);
	t0 = wl_now_mono();
	assert_int_equal(a->holding(a, t0 + s, &until), 1);
	mains(e, "0\n");
	assert_int_equal(update(e, &c), PS_CHANGED);
	a->sample(a, t0 + 2 * s, 0);
	assert_int_equal(a->holding(a, t0 + 2 * s, &until), 0);
	activity_source_free(a);
}

/* on_ac = never holds while AC is online and objects at the last look to
 * a charger plugged in after the decision; opportunistic never holds. */
static void test_on_ac_never_and_opportunistic(void **st)
{
	struct env *e = *st;
	struct power_critical c;
	uint64_t until = 0;

	mains(e, "0\n");
	make(e, ON_AC_NEVER, 0, CRITICAL_NONE);
	assert_int_equal(e->s->holding(e->s, 0, &until), 0);
	mains(e, "1\n");
	assert_int_equal(e->s->last_look(e->s), 1);          /* read at the look */
	assert_int_equal(e->s->holding(e->s, 0, &until), 1);
	state_is(e, "ac online (on_ac = never)");
	mains(e, "0\n");
	assert_int_equal(update(e, &c), PS_CHANGED);
	assert_int_equal(e->s->holding(e->s, 0, &until), 0);
	assert_int_equal(e->s->last_look(e->s), 0);
	power_supply_source_free(e->s);
	mains(e, "1\n");
	make(e, ON_AC_OPPORTUNISTIC, 0, CRITICAL_NONE);
	assert_int_equal(e->s->holding(e->s, 0, &until), 0);
	assert_int_equal(e->s->last_look(e->s), 0);
	state_is(e, "ac online");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_critical_once_with_hysteresis, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_critical_unless_discharging, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_input, setup, teardown),
		cmocka_unit_test_setup_teardown(test_vanishing_and_peripheral, setup, teardown),
		cmocka_unit_test_setup_teardown(test_actions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_record_wire_and_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_on_ac_idle_switches_activity, setup, teardown),
		cmocka_unit_test_setup_teardown(test_on_ac_never_and_opportunistic, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
