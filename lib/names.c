/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
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
