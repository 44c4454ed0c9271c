/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "lib/wl_shm.h"
#include "policy.h"

static int find(char (*list)[WAKELOCK_NAME_MAX], unsigned n, const char *name)
{
	for (unsigned i = 0; i < n; i++)
		if (!strcmp(list[i], name))
			return (int)i;
	return -1;
}

static void drop(char (*list)[WAKELOCK_NAME_MAX], unsigned *n, const char *name)
{
	int i = find(list, *n, name);

	if (i >= 0) {
		memmove(list[i], list[i + 1], (size_t)(*n - (unsigned)i - 1) * WAKELOCK_NAME_MAX);
		(*n)--;
	}
}

static int add(char (*list)[WAKELOCK_NAME_MAX], unsigned *n, const char *name)
{
	if (find(list, *n, name) >= 0)
		return 0;
	if (*n >= WLD_MAX_DENY)
		return -ENOSPC;
	strncpy(list[*n], name, WAKELOCK_NAME_MAX - 1);
	list[*n][WAKELOCK_NAME_MAX - 1] = 0;
	(*n)++;
	return 0;
}

int policy_denied(const struct policy *p, const struct wld_config *cfg, const char *name)
{
	if (find((char (*)[WAKELOCK_NAME_MAX])p->allow, p->nallow, name) >= 0)
		return 0;
	return config_is_denied(cfg, name) ||
	       find((char (*)[WAKELOCK_NAME_MAX])p->deny, p->ndeny, name) >= 0;
}

int policy_denied_client(const struct policy *p, const struct wld_config *cfg,
                         const char *name, uint32_t uid)
{
	char key[WAKELOCK_NAME_MAX];

	snprintf(key, sizeof(key), WL_UID_PREFIX "%u", (unsigned)uid);
	return policy_denied(p, cfg, name) || policy_denied(p, cfg, key);
}

int policy_deny(struct policy *p, const char *name)
{
	char key[WAKELOCK_NAME_MAX];

	if (wl_policy_key(name, key) < 0)
		return -EINVAL;
	drop(p->allow, &p->nallow, key);
	return add(p->deny, &p->ndeny, key);
}

int policy_allow(struct policy *p, const char *name)
{
	char key[WAKELOCK_NAME_MAX];

	if (wl_policy_key(name, key) < 0)
		return -EINVAL;
	drop(p->deny, &p->ndeny, key);
	return add(p->allow, &p->nallow, key);
}
