/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Output of the wake ledger (docs/ledger.md) for `wakelock wakes`,
 * `wakelock wakes --summary` and `wakelock timeline --svg FILE`: pure
 * formatting of records already received (a library of its own, which the
 * unit tests link).
 * Names are escaped everywhere: the table shows bytes outside printable
 * ASCII as \xHH, the SVG is valid XML whatever the names hold.
 */
#ifndef WL_CLI_WAKES_H
#define WL_CLI_WAKES_H

#include <stdio.h>
#include "lib/wl_ledger.h"

/* One line per record, oldest first, times in UTC. */
void wakes_print_table(FILE *f, const struct wl_ledger_record *r, size_t n);
/* --json: an array of records. */
void wakes_print_json(FILE *f, const struct wl_ledger_record *r, size_t n);
/* --summary: one line per cause. */
void wakes_print_summary(FILE *f, const struct wl_ledger_summary *s);

/*
 * The asleep/awake timeline on CLOCK_BOOTTIME: asleep spans, a mark for
 * each wake (resume or abort) labelled with its cause, a mark for each
 * claim (at its latency) and for each unclaimed wake.  width in pixels
 * (0: 1000).  Integer arithmetic only: the same records give the same
 * bytes.  Returns 0, or -EINVAL when n is 0.
 */
int timeline_svg(FILE *f, const struct wl_ledger_record *r, size_t n, unsigned width);
/* Write s (at most max bytes) as XML character data / attribute text:
 * & < > " ' as entities, bytes that are not well-formed UTF-8 or not XML
 * characters (controls, U+FFFE, U+FFFF) as the text \xHH. */
void svg_xml_text(FILE *f, const char *s, size_t max);

#endif
