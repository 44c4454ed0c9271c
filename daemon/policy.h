/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef WLD_POLICY_H
#define WLD_POLICY_H

#include "config.h"

/*
 * Run-time deny/allow on top of the configured deny list:
 *   denied(name) = (config deny ∪ runtime deny) − runtime allow
 * so `wakelock allow X` can lift a configured denial until restart, and a
 * reload does not forget what was set at run time.
 */
struct policy {
	char deny[WLD_MAX_DENY][WAKELOCK_NAME_MAX];
	unsigned ndeny;
	char allow[WLD_MAX_DENY][WAKELOCK_NAME_MAX];
	unsigned nallow;
};

int policy_denied(const struct policy *p, const struct wld_config *cfg, const char *name);
int policy_deny(struct policy *p, const char *name);   /* 0 or -ENOSPC */
int policy_allow(struct policy *p, const char *name);

#endif
