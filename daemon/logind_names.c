// SPDX-License-Identifier: GPL-2.0-or-later
/* What logind reports, made safe to show and to match (logind.h). */
#include <string.h>
#include "logind.h"
#include "lib/wl_shm.h"

void logind_clean_name(char *dst, size_t size, const char *src)
{
	size_t n = 0;

	if (!src || !*src)
		src = "unnamed";
	/* The rule of wl_name_check (lib/names.c), character by character. */
	for (; src[n] && n + 1 < size; n++)
		dst[n] = wl_name_char_ok((unsigned char)src[n]) ? src[n] : '_';
	dst[n] = '\0';
}

/* Whether the colon-separated list has word (exactly, not as a prefix:
 * "idle" is not "idle-something"). */
static int what_has(const char *what, const char *word)
{
	const char *p = what;
	size_t wl = strlen(word);

	while (p && *p) {
		size_t len = strcspn(p, ":");

		if (len == wl && !strncmp(p, word, wl))
			return 1;
		p += len;
		if (*p == ':')
			p++;
	}
	return 0;
}

int logind_what_has_sleep(const char *what)
{
	return what_has(what, "sleep");
}

int logind_what_has_idle(const char *what)
{
	return what_has(what, "idle");
}

static void fill(struct logind_inhibitor *inh, const char *who, const char *why, uint32_t uid,
                 uint32_t pid)
{
	size_t pre = strlen(LOGIND_CLIENT_PREFIX);

	memcpy(inh->name, LOGIND_CLIENT_PREFIX, pre);
	logind_clean_name(inh->name + pre, sizeof(inh->name) - pre, who);
	logind_clean_name(inh->hold, sizeof(inh->hold), why);
	inh->uid = uid;
	inh->pid = pid;
}

int logind_idle_inhibitor_from(struct logind_inhibitor *inh, const char *what, const char *who,
                               const char *why, const char *mode, uint32_t uid, uint32_t pid)
{
	if (!logind_what_has_idle(what) || !mode || strcmp(mode, "block"))
		return 0;
	fill(inh, who, why, uid, pid);
	return 1;
}

int logind_inhibitor_from(struct logind_inhibitor *inh, const char *what, const char *who,
                          const char *why, const char *mode, uint32_t uid, uint32_t pid)
{
	if (!logind_what_has_sleep(what) || !mode || strcmp(mode, "block"))
		return 0;
	fill(inh, who, why, uid, pid);
	return 1;
}
