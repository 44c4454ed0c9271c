/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Small JSON output helpers shared by the daemon's stats file and the CLI. */
#include <string.h>
#include "wl_json.h"

/*
 * Length of the well-formed UTF-8 sequence at s (1..4), or 0 if the bytes
 * there are not one: overlong forms, surrogates and code points above
 * U+10FFFF are not (RFC 3629).  s is NUL-terminated, and a NUL is never a
 * continuation byte, so this never reads past the end.
 */
static size_t utf8_len(const unsigned char *s)
{
	unsigned char c = s[0];
	size_t n;
	unsigned lo = 0x80, hi = 0xbf;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	/* The second byte's range excludes overlongs and surrogates. */
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

/*
 * Names come from clients and from the kernel (wakeup sources), and need
 * not be UTF-8: a byte that does not start a well-formed sequence is
 * written as \u00XX (the code point of the same number), so the output is
 * always valid UTF-8 and valid JSON, and distinct bytes stay distinct.
 */
void wl_json_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	while (*p) {
		unsigned char ch = *p;
		size_t n = utf8_len(p);

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20 || ch == 0x7f || n == 0)
			fprintf(f, "\\u%04x", ch);
		else
			fwrite(p, 1, n, f);
		p += n ? n : 1;
	}
	fputc('"', f);
}

size_t wl_escape(char *dst, size_t len, const char *src)
{
	size_t o = 0;

	if (!len)
		return 0;
	for (const unsigned char *p = (const unsigned char *)src; *p; p++) {
		char e[5];
		size_t n;

		if (*p < 0x20 || *p >= 0x7f || *p == '\\') {
			if (*p == '\\')
				memcpy(e, "\\\\", 3);
			else
				snprintf(e, sizeof(e), "\\x%02x", *p);
			n = strlen(e);
		} else {
			e[0] = (char)*p;
			e[1] = 0;
			n = 1;
		}
		if (o + n >= len)
			break;
		memcpy(dst + o, e, n);
		o += n;
	}
	dst[o] = 0;
	return o;
}

const char *wl_errno_name(int err, char *buf, size_t len)
{
	const char *n = err > 0 ? strerrorname_np(err) : NULL;

	if (n)
		return n;
	snprintf(buf, len, "%d", err);
	return buf;
}

void wl_json_dstats(FILE *f, const struct wl_shm_dstats *st)
{
	char nb[16];
	int first = 1;

	fprintf(f, "{\"attempts\":%llu,\"successes\":%llu,\"aborts\":%llu,\"failures\":%llu,"
	        "\"read_errors\":%llu,\"waits\":%llu,\"asleep_ms\":%llu,\"last_asleep_ms\":%llu,"
	        "\"last_resume_realtime_ms\":%llu,\"backoff_ms\":%llu,\"failures_by_errno\":{",
	        (unsigned long long)st->attempts, (unsigned long long)st->successes,
	        (unsigned long long)st->aborts, (unsigned long long)st->failures,
	        (unsigned long long)st->read_errors, (unsigned long long)st->waits,
	        (unsigned long long)(st->asleep_ns / 1000000u),
	        (unsigned long long)(st->last_asleep_ns / 1000000u),
	        (unsigned long long)(st->last_resume_rt / 1000000u),
	        (unsigned long long)st->backoff_ms);
	for (unsigned i = 0; i < WL_ERRNO_BUCKETS; i++) {
		if (!st->by_errno[i].count)
			continue;
		fprintf(f, "%s", first ? "" : ",");
		wl_json_str(f, st->by_errno[i].err < 0 ? "other"
		                : wl_errno_name(st->by_errno[i].err, nb, sizeof(nb)));
		fprintf(f, ":%llu", (unsigned long long)st->by_errno[i].count);
		first = 0;
	}
	fprintf(f, "},\"last_wake\":");
	wl_json_str(f, st->last_wake);
	fprintf(f, ",\"alarm_wakeups\":%llu,\"alarm_fires\":%llu,\"alarms_wake_system\":%s}",
	        (unsigned long long)st->alarm_wakeups, (unsigned long long)st->alarm_fires,
	        st->alarm_wakes ? "true" : "false");
}
