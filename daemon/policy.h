/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef WLD_POLICY_H
#define WLD_POLICY_H

#include "config.h"

/*
 * Run-time deny/allow on top of the configured deny list, by key (a
 * client's name, or "uid:N" for all of a user's clients):
 *   denied(key) = (config deny ∪ runtime deny) − runtime allow
 * so `wakelock allow X` can lift a configured denial until restart, and a
 * reload does not forget what was set at run time.  A client is denied
 * when its name or its uid is: the name alone cannot stop a client that
 * registers again under another, its uid (from SO_PEERCRED) can.
 */
struct policy {
	char deny[WLD_MAX_DENY][WAKELOCK_NAME_MAX];
	unsigned ndeny;
	char allow[WLD_MAX_DENY][WAKELOCK_NAME_MAX];
	unsigned nallow;
};

/* One key. */
int policy_denied(const struct policy *p, const struct wld_config *cfg, const char *name);
/* A client: its name or its uid denied. */
int policy_denied_client(const struct policy *p, const struct wld_config *cfg,
                         const char *name, uint32_t uid);
/* 0, -ENOSPC, or -EINVAL for a key that is neither a name nor "uid:N";
 * "uid:007" is "uid:7". */
int policy_deny(struct policy *p, const char *name);
int policy_allow(struct policy *p, const char *name);

#endif
