/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The display as an awake source (daemon/display.c, docs/policy.md), the
 * real daemon on a fake /sys: DRM connectors' dpms, backlights' bl_power
 * and brightness, the off delay, bad input counted as on, vanishing
 * devices, the appliance policy, and `wakelock status`.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "harness.h"

struct env {
	struct hd d;
};

static void put(struct env *e, const char *rel, const char *data)
{
	char path[512];

	snprintf(path, sizeof(path), "sys/class/%s", rel);
	hd_put(&e->d, path, data);
}

static uint64_t attempts(struct env *e)
{
	return __atomic_load_n(&hd_snap(&e->d)->dstats.attempts, __ATOMIC_SEQ_CST);
}

static int attempted(void *arg)
{
	return attempts(arg) > 0;
}

/* A source's state in a fresh snapshot ("" if it is not there). */
static const char *source_state(struct env *e, const char *name)
{
	const struct wl_shm_header *h = hd_snap(&e->d);

	for (uint32_t i = 0; i < h->nsources && i < WL_MAX_SOURCES; i++)
		if (!strcmp(h->sources[i].name, name))
			return h->sources[i].state;
	return "";
}

static int start(struct env *e, const char *const *extra)
{
	return hd_start(&e->d, extra);
}

static int setup(void **st)
{
	struct env *e = calloc(1, sizeof(*e));

	assert_non_null(e);
	assert_int_equal(hd_prepare(&e->d), 0);
	*st = e;
	return 0;
}

static int teardown(void **st)
{
	struct env *e = *st;

	hd_cleanup(&e->d);
	free(e);
	return 0;
}

static const char *const DELAY_2S[] = { "--display-off-delay-ms", "2000", NULL };

/* No suspend for ms while the daemon runs. */
static void no_attempt_for(struct env *e, unsigned ms)
{
	hd_sleep_ms(ms);
	assert_int_equal(attempts(e), 0);
}

/* A connector that is on keeps the system awake (phone, the default);
 * off, the first attempt comes after the off delay, not before. */
static void test_connector_on_then_off(void **st)
{
	struct env *e = *st;
	uint64_t t0;

	put(e, "drm/card0-Virtual-1/dpms", "On\n");
	put(e, "drm/card0-Virtual-1/enabled", "enabled\n");
	put(e, "drm/card0/dev", "226:0\n");       /* a card, not a connector */
	assert_int_equal(start(e, DELAY_2S), 0);
	no_attempt_for(e, 2500);
	{
		const struct wl_shm_header *h = hd_snap(&e->d);
		int seen = 0;

		assert_int_equal(h->policy_mode, 1);
		for (uint32_t i = 0; i < h->nsources; i++) {
			if (strcmp(h->sources[i].name, "display"))
				continue;
			seen = 1;
			assert_int_equal(h->sources[i].holding, 1);
			assert_string_equal(h->sources[i].state, "display card0-Virtual-1 on");
		}
		assert_true(seen);
	}
	put(e, "drm/card0-Virtual-1/dpms", "Off\n");
	t0 = hd_now_ns();
	/* The delay counts from the last look that saw it on, at most one
	 * 1 s re-check before the change: the attempt comes 1-2 s after. */
	assert_true(hd_wait_for(attempted, e, 2500));
	assert_true(hd_now_ns() - t0 >= 900000000ull);
	assert_int_equal(hd_stop(&e->d), 0);
}

/* A backlight: on with bl_power 0 and brightness > 0; off with
 * brightness 0 or a blanking bl_power. */
static void test_backlight(void **st)
{
	struct env *e = *st;

	put(e, "backlight/panel/bl_power", "0\n");
	put(e, "backlight/panel/brightness", "120\n");
	assert_int_equal(start(e, (const char *const[]){ "--display-off-delay-ms", "0", NULL }),
	                 0);
	no_attempt_for(e, 1500);
	put(e, "backlight/panel/brightness", "0\n");
	assert_true(hd_wait_for(attempted, e, 2500));
	put(e, "backlight/panel/brightness", "7\n");
	put(e, "backlight/panel/bl_power", "4\n");              /* FB_BLANK_POWERDOWN */
	hd_sleep_ms(1200);
	assert_true(attempts(e) > 1);
	assert_int_equal(hd_stop(&e->d), 0);
}

static int log_has(struct env *e, const char *what)
{
	return hd_log_has(&e->d, what);
}

/* What cannot be read counts as on, logged once: garbage in dpms, in
 * brightness, a dpms that is a directory. */
static void test_bad_input_counts_as_on(void **st)
{
	struct env *e = *st;
	char path[512];

	put(e, "drm/card0-DSI-1/dpms", "\x01garbage\n");
	assert_int_equal(start(e, NULL), 0);
	no_attempt_for(e, 1500);
	assert_true(log_has(e, "dpms of card0-DSI-1 is garbled: counted as on"));
	put(e, "drm/card0-DSI-1/dpms", "Off\n");
	put(e, "backlight/bl/bl_power", "0\n");
	put(e, "backlight/bl/brightness", "bright\n");
	no_attempt_for(e, 1500);
	put(e, "backlight/bl/brightness", "0\n");
	snprintf(path, sizeof(path), "%s/sys/class/drm/card0-DSI-1/dpms", e->d.dir);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkdir(path, 0755), 0);          /* read fails: EISDIR */
	no_attempt_for(e, 1500);
	rmdir(path);
	/* Now off everywhere (the connector without dpms is no connector). */
	assert_true(hd_wait_for(attempted, e, 8000));
	assert_int_equal(hd_stop(&e->d), 0);
}

/* A connector that vanishes is gone, not on; no display at all holds
 * nothing (and says so once). */
static void test_vanishing_and_none(void **st)
{
	struct env *e = *st;
	char path[512];

	put(e, "drm/card1-HDMI-A-1/dpms", "On\n");
	put(e, "drm/card1-HDMI-A-1/enabled", "enabled\n");
	assert_int_equal(start(e, (const char *const[]){ "--display-off-delay-ms", "0", NULL }),
	                 0);
	no_attempt_for(e, 1200);
	snprintf(path, sizeof(path), "%s/sys/class/drm/card1-HDMI-A-1/dpms", e->d.dir);
	assert_int_equal(unlink(path), 0);
	snprintf(path, sizeof(path), "%s/sys/class/drm/card1-HDMI-A-1/enabled", e->d.dir);
	assert_int_equal(unlink(path), 0);
	snprintf(path, sizeof(path), "%s/sys/class/drm/card1-HDMI-A-1", e->d.dir);
	assert_int_equal(rmdir(path), 0);
	assert_true(hd_wait_for(attempted, e, 2500));
	assert_int_equal(hd_stop(&e->d), 0);
}

/* The kernel starts every connector at DPMS On: one that no CRTC drives
 * ("enabled" reads disabled: an unplugged port, a writeback connector, a
 * card nobody set a mode on) is off.  Driven, it holds; an "enabled" that
 * cannot be read counts as on, logged. */
static void test_undriven_connector_is_off(void **st)
{
	struct env *e = *st;

	put(e, "drm/card0-Virtual-1/dpms", "On\n");
	put(e, "drm/card0-Virtual-1/enabled", "disabled\n");
	put(e, "drm/card0-Writeback-1/dpms", "On\n");
	put(e, "drm/card0-Writeback-1/enabled", "disabled\n");
	assert_int_equal(start(e, (const char *const[]){ "--display-off-delay-ms", "0", NULL }),
	                 0);
	assert_true(hd_wait_for(attempted, e, 2000));
	put(e, "drm/card0-Virtual-1/enabled", "enabled\n");
	/* Seen within the re-check or at the next look; then no attempt. */
	hd_sleep_ms(300);
	{
		unsigned before = attempts(e);

		hd_sleep_ms(1500);
		assert_true(attempts(e) <= before + 1);
		before = attempts(e);
		hd_sleep_ms(1500);
		assert_int_equal(attempts(e), before);
	}
	put(e, "drm/card0-Virtual-1/enabled", "\x7f?\n");
	hd_sleep_ms(1500);
	assert_true(log_has(e, "enabled of card0-Virtual-1 is garbled: counted as on"));
	{
		unsigned before = attempts(e);

		hd_sleep_ms(1200);
		assert_int_equal(attempts(e), before);
	}
	assert_int_equal(hd_stop(&e->d), 0);
}

static void test_no_display(void **st)
{
	struct env *e = *st;

	assert_int_equal(start(e, NULL), 0);
	assert_true(hd_wait_for(attempted, e, 2000));
	assert_true(log_has(e, "no DRM connector or backlight"));
	assert_int_equal(hd_stop(&e->d), 0);
}

/* The appliance policy: holds only, a display that is on does not count. */
static void test_appliance_ignores_display(void **st)
{
	struct env *e = *st;

	put(e, "drm/card0-Virtual-1/dpms", "On\n");
	put(e, "drm/card0-Virtual-1/enabled", "enabled\n");
	assert_int_equal(start(e, (const char *const[]){ "--policy", "appliance", NULL }), 0);
	assert_true(hd_wait_for(attempted, e, 2000));
	assert_int_equal(hd_snap(&e->d)->policy_mode, 0);
	assert_int_equal(hd_stop(&e->d), 0);
}

/* A policy this version does not know is refused clearly, not
 * half-applied (laptop: tests/unit/test_activity.c). */
static void test_unknown_policy_refused(void **st)
{
	struct env *e = *st;

	assert_int_equal(start(e, (const char *const[]){ "--policy", "desktop", NULL }), -1);
	assert_true(log_has(e, "expected phone, laptop or appliance"));
}


/* The power supply (daemon/power_supply.c): on_ac = never keeps the
 * system awake while a mains or USB supply is online; a garbled online
 * counts as online; the battery is shown, with or without capacity. */
static void test_power_supply_on_ac_never(void **st)
{
	struct env *e = *st;
	const struct wl_shm_header *h;
	int seen = 0;

	put(e, "power_supply/AC/type", "Mains\n");
	put(e, "power_supply/AC/online", "1\n");
	put(e, "power_supply/BAT0/type", "Battery\n");
	put(e, "power_supply/BAT0/capacity", "80\n");
	assert_int_equal(start(e, (const char *const[]){ "--on-ac", "never", "--policy",
	                                                 "appliance", NULL }), 0);
	no_attempt_for(e, 1200);
	h = hd_snap(&e->d);
	for (uint32_t i = 0; i < h->nsources; i++) {
		if (strcmp(h->sources[i].name, "power"))
			continue;
		seen = 1;
		assert_int_equal(h->sources[i].holding, 1);
		assert_string_equal(h->sources[i].state,
		                    "ac online, battery BAT0 80% (on_ac = never)");
	}
	assert_true(seen);
	put(e, "power_supply/AC/online", "yes\n");             /* garbled: online */
	for (int i = 0; i < 30 && !log_has(e, "power supply AC: online is garbled"); i++)
		hd_sleep_ms(100);
	assert_true(log_has(e, "power supply AC: online is garbled: counted as online"));
	no_attempt_for(e, 300);
	/* Unplugged: seen by the source's own re-check within a second (a
	 * test root has no uevents), not by a look the snapshots cause. */
	put(e, "power_supply/AC/online", "0\n");
	hd_sleep_ms(1600);
	assert_true(attempts(e) > 0);
	assert_int_equal(hd_stop(&e->d), 0);
}

/* on_ac = opportunistic (the phone's default) ignores AC; idle needs an
 * activity to time, which appliance has not. */
static void test_power_supply_opportunistic(void **st)
{
	struct env *e = *st;

	put(e, "power_supply/usb/type", "USB\n");
	put(e, "power_supply/usb/online", "1\n");
	put(e, "power_supply/bat/type", "Battery\n");
	assert_int_equal(start(e, NULL), 0);
	assert_true(hd_wait_for(attempted, e, 2000));
	assert_string_equal(source_state(e, "power"),
	                    "ac online, battery bat (no capacity), critical at 5%: poweroff");
	assert_true(log_has(e, "battery bat has no capacity: the critical level is not watched"));
	assert_int_equal(hd_stop(&e->d), 0);
	assert_int_equal(start(e, (const char *const[]){ "--on-ac", "idle", "--policy",
	                                                 "appliance", NULL }), -1);
	assert_true(log_has(e, "on_ac = idle needs mode = laptop or phone"));
}

/* How many times the (test root's) power off happened. */
static int poweroffs(struct env *e)
{
	char path[512], buf[256];
	int fd, n = 0;
	ssize_t len;

	snprintf(path, sizeof(path), "%s/wakelockd-poweroff", e->d.dir);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	for (ssize_t i = 0; i < len; i++)
		n += buf[i] == '\n';
	return n;
}

static int powered_off(void *arg)
{
	return poweroffs(arg) > 0;
}

/* `wakelock wakes` into the test dir: 1 if its table has what. */
static int wakes_have(struct env *e, const char *what)
{
	char cmd[1024], path[512], buf[16384];
	ssize_t len;
	int fd, r;

	snprintf(path, sizeof(path), "%s/wakes.txt", e->d.dir);
	snprintf(cmd, sizeof(cmd), "%s wakes >%s 2>&1", hd_bin("wakelock"), path);
	r = system(cmd);
	assert_int_equal(WIFEXITED(r) ? WEXITSTATUS(r) : -1, 0);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[len > 0 ? len : 0] = 0;
	return strstr(buf, what) != NULL;
}

/* The critical battery level, the real daemon (phone: power off): taken at
 * start when already critical, even while a display holds, once per
 * discharge episode, again after the capacity rose above the level + 2;
 * one warning line; a ledger record `wakelock wakes` shows; the status. */
static void test_critical_poweroff(void **st)
{
	struct env *e = *st;

	put(e, "drm/card0-Virtual-1/dpms", "On\n");       /* holds: no matter */
	put(e, "drm/card0-Virtual-1/enabled", "enabled\n");
	put(e, "power_supply/AC/type", "Mains\n");
	put(e, "power_supply/AC/online", "0\n");
	put(e, "power_supply/BAT0/type", "Battery\n");
	put(e, "power_supply/BAT0/status", "Discharging\n");
	put(e, "power_supply/BAT0/capacity", "4\n");
	assert_int_equal(start(e, NULL), 0);
	assert_true(hd_wait_for(powered_off, e, 2000));
	assert_true(log_has(e, "battery BAT0 at 4%, discharging: critical (5%): powering off"));
	assert_true(wakes_have(e, "battery 4%: poweroff"));
	assert_true(wakes_have(e, "critical"));
	assert_string_equal(source_state(e, "power"),
	                    "ac offline, battery BAT0 4% discharging, critical at 5%: poweroff");
	assert_int_equal(attempts(e), 0);
	/* Once: the daemon looks every second (no uevents in a test root). */
	put(e, "power_supply/BAT0/capacity", "3\n");
	hd_sleep_ms(2200);
	assert_int_equal(poweroffs(e), 1);
	put(e, "power_supply/BAT0/capacity", "8\n");
	hd_sleep_ms(1500);
	put(e, "power_supply/BAT0/capacity", "5\n");
	for (int i = 0; i < 30 && poweroffs(e) < 2; i++)
		hd_sleep_ms(100);
	assert_int_equal(poweroffs(e), 2);
	assert_int_equal(hd_stop(&e->d), 0);
}

/* Laptop: hibernate ("disk" written through the backend); where the
 * kernel offers no "disk", power off instead. */
static void test_critical_hibernate_and_fallback(void **st)
{
	struct env *e = *st;
	const char *const laptop[] = { "--policy", "laptop", NULL };

	put(e, "power_supply/BAT0/type", "Battery\n");
	put(e, "power_supply/BAT0/status", "Discharging\n");
	put(e, "power_supply/BAT0/capacity", "2\n");
	assert_int_equal(start(e, laptop), 0);
	for (int i = 0; i < 20 && !log_has(e, "hibernating"); i++)
		hd_sleep_ms(100);
	assert_true(log_has(e, "battery BAT0 at 2%, discharging: critical (5%): hibernating"));
	assert_true(wakes_have(e, "battery 2%: hibernate"));
	assert_int_equal(poweroffs(e), 0);
	assert_int_equal(hd_stop(&e->d), 0);
	hd_put(&e->d, "sys/power/state", "freeze mem\n");
	assert_int_equal(start(e, laptop), 0);
	assert_true(hd_wait_for(powered_off, e, 2000));
	assert_true(log_has(e, "hibernation not available (no \"disk\" in /sys/power/state): "
	                    "powering off instead"));
	assert_true(wakes_have(e, "battery 2%: poweroff"));
	assert_int_equal(hd_stop(&e->d), 0);
}

/* Not while charging, and not at all with critical_action = none (the
 * log line only). */
static void test_critical_charging_and_none(void **st)
{
	struct env *e = *st;

	put(e, "power_supply/BAT0/type", "Battery\n");
	put(e, "power_supply/BAT0/status", "Charging\n");
	put(e, "power_supply/BAT0/capacity", "1\n");
	assert_int_equal(start(e, NULL), 0);
	hd_sleep_ms(1500);
	assert_int_equal(poweroffs(e), 0);
	assert_false(log_has(e, "critical ("));
	put(e, "power_supply/BAT0/status", "Discharging\n");      /* the control */
	assert_true(hd_wait_for(powered_off, e, 2500));
	assert_int_equal(hd_stop(&e->d), 0);
	assert_int_equal(start(e, (const char *const[]){ "--critical-action", "none", NULL }), 0);
	for (int i = 0; i < 20 && !log_has(e, "nothing done"); i++)
		hd_sleep_ms(100);
	assert_true(log_has(e, "battery BAT0 at 1%, discharging: critical (5%); "
	                    "critical_action = none: nothing done"));
	assert_int_equal(poweroffs(e), 1);
	assert_int_equal(hd_stop(&e->d), 0);
}

/* on_ac = idle (the laptop's default): the activity holds the AC timeout
 * while on AC; unplugged, the battery one from the unplugging on. */
static void test_on_ac_idle(void **st)
{
	struct env *e = *st;
	uint64_t t0;

	put(e, "power_supply/AC/type", "Mains\n");
	put(e, "power_supply/AC/online", "1\n");
	assert_int_equal(start(e, (const char *const[]){ "--policy", "laptop", "--idle-timeout-ms",
	                                                 "800", "--idle-timeout-ac-ms", "60000",
	                                                 NULL }), 0);
	no_attempt_for(e, 2500);                        /* past 800 ms: on AC */
	assert_string_equal(source_state(e, "power"), "ac online (on_ac = idle)");
	put(e, "power_supply/AC/online", "0\n");
	t0 = hd_now_ns();
	assert_true(hd_wait_for(attempted, e, 3500));
	assert_true(hd_now_ns() - t0 >= 750000000ull);  /* the unplugging was activity */
	assert_int_equal(hd_stop(&e->d), 0);
}

/* A reload keeps the policy the sources were made with, and says so. */
static void test_reload_keeps_policy(void **st)
{
	struct env *e = *st;
	const char *extra[] = { "--config", e->d.conf, NULL };

	put(e, "drm/card0-Virtual-1/dpms", "On\n");
	put(e, "drm/card0-Virtual-1/enabled", "enabled\n");
	hd_put(&e->d, "wakelockd.conf", "[policy]\nmode = phone\n");
	assert_int_equal(start(e, extra), 0);
	no_attempt_for(e, 1200);
	hd_put(&e->d, "wakelockd.conf", "[policy]\nmode = appliance\n[wake_grace]\nx = 5\n");
	kill(e->d.pid, SIGHUP);
	for (int i = 0; i < 30 && !log_has(e, "change only on restart"); i++)
		hd_sleep_ms(100);
	assert_true(log_has(e, "reload: [policy] and [wake_grace] change only on restart"));
	/* Still phone: the display still holds. */
	no_attempt_for(e, 1200);
	assert_int_equal(hd_snap(&e->d)->policy_mode, 1);
	assert_int_equal(hd_stop(&e->d), 0);
	/* The power keys alone warn too, and are kept. */
	hd_put(&e->d, "log", "");
	hd_put(&e->d, "wakelockd.conf", "[policy]\nmode = phone\n");
	assert_int_equal(start(e, extra), 0);
	hd_put(&e->d, "wakelockd.conf", "[policy]\nmode = phone\non_ac = never\n"
	       "critical_action = hibernate\ncritical_battery_percent = 9\n");
	kill(e->d.pid, SIGHUP);
	for (int i = 0; i < 30 && !log_has(e, "change only on restart"); i++)
		hd_sleep_ms(100);
	assert_true(log_has(e, "reload: [policy] and [wake_grace] change only on restart"));
	assert_string_equal(source_state(e, "power"), "ac offline");
	assert_int_equal(hd_stop(&e->d), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_connector_on_then_off, setup, teardown),
		cmocka_unit_test_setup_teardown(test_backlight, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_input_counts_as_on, setup, teardown),
		cmocka_unit_test_setup_teardown(test_vanishing_and_none, setup, teardown),
		cmocka_unit_test_setup_teardown(test_undriven_connector_is_off, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_display, setup, teardown),
		cmocka_unit_test_setup_teardown(test_appliance_ignores_display, setup, teardown),
		cmocka_unit_test_setup_teardown(test_power_supply_on_ac_never, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reload_keeps_policy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_power_supply_opportunistic, setup, teardown),
		cmocka_unit_test_setup_teardown(test_critical_poweroff, setup, teardown),
		cmocka_unit_test_setup_teardown(test_critical_hibernate_and_fallback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_critical_charging_and_none, setup, teardown),
		cmocka_unit_test_setup_teardown(test_on_ac_idle, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_policy_refused, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
