/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The kernel's wake-cause state at one instant, read through the power
 * backend (power.h: read_attr, list_dir), and the difference between two
 * such snapshots: what the wake ledger (ledger.h) records as the cause of
 * a suspend attempt.  Files the kernel lacks leave a flag unset ("unknown"
 * in the record); they never fail the attempt.  Everything is bounded:
 * WAKESRC_MAX sources (the lowest wakeupN numbers are kept), names cut to
 * WL_LEDGER_SRC_NAME - 1 bytes.  See docs/ledger.md.
 */
#ifndef WLD_WAKESRC_H
#define WLD_WAKESRC_H

#include <stdint.h>
#include "lib/wl_ledger.h"
#include "power.h"

#define WAKESRC_MAX 512u

/* flags */
#define WS_IRQ_FILE    0x01u   /* /sys/power/pm_wakeup_irq exists */
#define WS_IRQ_SET     0x02u   /* ... and names an IRQ (irq) */
#define WS_SOURCES     0x04u   /* /sys/class/wakeup could be listed */
#define WS_TRUNCATED   0x08u   /* more than WAKESRC_MAX sources */
#define WS_HW_SLEEP    0x10u   /* suspend_stats/total_hw_sleep read */
#define WS_STATS       0x20u   /* suspend_stats/{success,fail} read */

struct ws_source {
	uint32_t id;                         /* N of /sys/class/wakeup/wakeupN */
	uint64_t events, wakeups;            /* event_count, wakeup_count */
	char name[WL_LEDGER_SRC_NAME];       /* its name file, raw, or "wakeupN" */
};

struct ws_snapshot {
	/* Stamped by the caller (wakesrc_stamp): right before suspend() and
	 * right after it returned, not when the files were read. */
	uint64_t real_ns, mono_ns, boot_ns;
	uint32_t flags;
	int32_t irq;
	uint64_t success, fail;              /* suspend_stats, with WS_STATS */
	uint64_t hw_sleep_us;                /* total_hw_sleep, with WS_HW_SLEEP */
	uint32_t nsrc;
	struct ws_source src[WAKESRC_MAX];   /* by id */
};

/* Read the files into s (its stamps untouched).  Never fails: what could
 * not be read is flagged as absent.  Where the kernel lists the sources
 * counted since the last write of wakeup_count
 * (/sys/power/wakeup_count_sources), only those are read again, which is
 * exact as long as the caller takes a snapshot after reading the count
 * it writes back, or writes back a count that did not move since its
 * last snapshot (the power loop does one or the other): events before a
 * successful write are not listed after it.  A full listing is taken
 * every 1024 snapshots and whenever the list cannot be used. */
void wakesrc_take(struct power_backend *be, struct ws_snapshot *s);
/* Only the files of /sys/power into s (irq, suspend_stats), its sources
 * and their flags left as they are: a snapshot whose sources are known
 * not to have moved (powerloop.c, step_read_count). */
void wakesrc_take_globals(struct power_backend *be, struct ws_snapshot *s);
/* Close the descriptors wakesrc_take keeps open between snapshots (one
 * per source, its event_count, and the files of /sys/power): at the end,
 * before the backend goes. */
void wakesrc_forget(void);
/* The three clocks now: mono and boot from clk, realtime from the system. */
void wakesrc_stamp(struct ws_snapshot *s, struct power_clock *clk);

struct ws_diff {
	uint32_t cause;                      /* WL_LC_IRQ, _SOURCES, _NO_*, _SRC_TRUNC */
	int32_t irq;
	unsigned nmoved;                     /* all sources that moved */
	unsigned nnamed;                     /* <= WL_LEDGER_SOURCES */
	char names[WL_LEDGER_SOURCES][WL_LEDGER_SRC_NAME];
};

/*
 * What changed from a (before the attempt) to b (after it):
 *  - irq: b names an IRQ and either it differs from a's, or resumed is
 *    set (kernels clear pm_wakeup_irq at each suspend; the same IRQ twice
 *    in a row is a fresh wake when the system did sleep);
 *  - sources: those in both with a larger event_count or wakeup_count, and
 *    those new in b with a nonzero count; named in this order: wakeup_count
 *    moved first, then by the larger event_count increase, then by id.
 * Counters compare for equality and increase only (a source re-registered
 * under the same id with lower counts is taken as new).
 */
void wakesrc_diff(const struct ws_snapshot *a, const struct ws_snapshot *b, int resumed,
                  struct ws_diff *d);

#endif
