/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Small JSON output helpers shared by the daemon's stats file and the CLI. */
#include <string.h>
#include "wl_json.h"

void wl_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
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
