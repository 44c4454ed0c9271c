/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "wl_shm.h"

/* Names end up in tables, JSON and the deny list: keep them printable
 * and free of separators used there. */
int wl_name_char_ok(unsigned char ch)
{
	return ch > ' ' && ch < 0x7f && ch != '"' && ch != '\\' && ch != ',';
}

int wl_name_check(const char *name)
{
	size_t n;

	if (!name || !*name)
		return -EINVAL;
	n = strnlen(name, WAKELOCK_NAME_MAX);
	if (n >= WAKELOCK_NAME_MAX)
		return -ENAMETOOLONG;
	for (size_t i = 0; i < n; i++) {
		if (!wl_name_char_ok((unsigned char)name[i]))
			return -EINVAL;
	}
	return 0;
}

/* The prefixes of the names the daemon gives its own slots (logind's
 * inhibitors) and holds (an alarm's), and of its policy entries by
 * user: a client taking one could pass for the daemon's own, or be
 * denied or allowed as a user. */
static const char *const reserved[] = {
	WL_LOGIND_PREFIX, WL_ALARM_HOLD_PREFIX, WL_UID_PREFIX,
};

int wl_name_reserved(const char *name)
{
	for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
		if (!strncmp(name, reserved[i], strlen(reserved[i])))
			return 1;
	return 0;
}

int wl_policy_key(const char *in, char out[WAKELOCK_NAME_MAX])
{
	size_t pre = strlen(WL_UID_PREFIX);
	uint64_t uid = 0;
	const char *p;
	int r = wl_name_check(in);

	if (r < 0)
		return -EINVAL;
	if (strncmp(in, WL_UID_PREFIX, pre)) {
		memcpy(out, in, strlen(in) + 1);
		return 0;
	}
	/* One spelling per user, so that deny and allow match by string. */
	for (p = in + pre; *p >= '0' && *p <= '9'; p++) {
		uid = uid * 10 + (uint64_t)(*p - '0');
		if (uid >= 0xffffffffu)     /* (uid_t)-1 is nobody's */
			return -EINVAL;
	}
	if (p == in + pre || *p)
		return -EINVAL;
	snprintf(out, WAKELOCK_NAME_MAX, WL_UID_PREFIX "%u", (unsigned)uid);
	return 0;
}
