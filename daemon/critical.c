/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The critical battery level's action ([policy] critical_action,
 * docs/policy.md), once power_supply.c found the level reached: hibernate
 * (write "disk" to /sys/power/state; where the kernel offers no "disk" or
 * the write fails, power off instead), power off (sync, then
 * reboot(RB_POWER_OFF), both behind the backend: a test root or the fake
 * backend only records it), or none (the log line alone).  Taken even
 * under holds: the battery ends the system whatever its clients want, and
 * a hibernation keeps their work where a dead battery would not.
 *
 * The main thread takes it (see power_supply.c for why not the loop), with
 * the segment lock held: the loop holds that lock from its last look
 * through its state write, so no suspend attempt is in flight while the
 * action runs, and none starts before it returned.  It returns after a
 * hibernation resumed, or a power off failed; a second action cannot
 * start meanwhile (the main thread is in this one), and power_supply.c
 * reports the level once per discharge episode.
 */
#include <errno.h>
#include <string.h>
#include "lib/wl_shm.h"
#include "config.h"
#include "critical.h"
#include "ledger.h"
#include "log.h"

/* Whether the kernel offers hibernation: "disk" among /sys/power/state's
 * words (not there without CONFIG_HIBERNATION, or with no swap set up
 * for it on some distributions' kernels). */
static int can_hibernate(struct power_backend *be)
{
	char buf[128], *save = NULL;

	if (!be->read_attr || be->read_attr(be, "/sys/power/state", buf, sizeof(buf)) < 0)
		return 0;
	for (char *w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save))
		if (!strcmp(w, "disk"))
			return 1;
	return 0;
}

/* The action; *err its errno if it failed, 0 if it went through.
 * Returns the action finally taken. */
static int act(struct power_backend *be, int action, int *err)
{
	int r;

	if (action == CRITICAL_HIBERNATE) {
		if (!can_hibernate(be)) {
			log_warn("critical battery: hibernation not available (no \"disk\" in "
			         "/sys/power/state): powering off instead");
		} else if ((r = be->suspend(be, "disk")) < 0) {
			log_warn("critical battery: hibernation failed: %s: powering off instead",
			         strerror(-r));
		} else {
			*err = 0;
			return CRITICAL_HIBERNATE;
		}
	}
	r = be->poweroff ? be->poweroff(be) : -ENOSYS;
	if (r < 0)
		log_error("critical battery: power off failed: %s", strerror(-r));
	*err = r < 0 ? -r : 0;
	return CRITICAL_POWEROFF;
}

int critical_take(struct power_backend *be, struct power_clock *clk, struct wl_shm_header *hdr,
                  struct ledger *ledger, const struct power_critical *c, unsigned percent)
{
	struct ledger_critical rec = { .capacity = (unsigned)c->capacity };

	if (c->action == CRITICAL_NONE) {
		log_warn("battery %s at %d%%, discharging: critical (%u%%); critical_action = none: "
		         "nothing done", c->battery, c->capacity, percent);
		return CRITICAL_NONE;
	}
	log_warn("battery %s at %d%%, discharging: critical (%u%%): %s", c->battery, c->capacity,
	         percent, c->action == CRITICAL_HIBERNATE ? "hibernating" : "powering off");
	if (hdr)
		wl_lock(hdr);
	rec.start_real_ns = wl_now_real();
	rec.start_mono_ns = clk->mono_ns(clk);
	rec.start_boot_ns = clk->boot_ns(clk);
	rec.action = (unsigned)act(be, c->action, &rec.err);
	rec.end_mono_ns = clk->mono_ns(clk);
	rec.end_boot_ns = clk->boot_ns(clk);
	if (ledger)
		ledger_critical(ledger, &rec);
	if (hdr)
		wl_unlock(hdr);
	return (int)rec.action;
}
