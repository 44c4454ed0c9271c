/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef WLD_CRITICAL_H
#define WLD_CRITICAL_H

#include "awake.h"
#include "power.h"

struct wl_shm_header;
struct ledger;

/*
 * critical.c: take the critical battery action c->action for c (found by
 * power_supply_update; percent: the configured level, for the log), on the
 * main thread: one warning line, the action through the backend (a
 * hibernation that is not offered or fails powers off instead), then a
 * ledger record (ledger may be NULL), all under hdr's lock (hdr may be
 * NULL).  Returns the action taken (enum critical_action).
 */
int critical_take(struct power_backend *be, struct power_clock *clk, struct wl_shm_header *hdr,
                  struct ledger *ledger, const struct power_critical *c, unsigned percent);

#endif
