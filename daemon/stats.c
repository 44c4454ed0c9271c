/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The --stats-file: daemon statistics as JSON, replaced atomically so a
 * reader never sees half a file. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "lib/wl_json.h"
#include "daemon.h"
#include "log.h"

void stats_write_file(const char *path, struct wl_shm_header *hdr)
{
	struct wl_shm_dstats st;
	char tmp[4200];
	FILE *f;

	if (!path || !*path)
		return;
	wl_lock(hdr);
	st = hdr->dstats;
	wl_unlock(hdr);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "we");
	if (!f) {
		log_warn("stats file %s: %m", tmp);
		return;
	}
	wl_json_dstats(f, &st);
	fputc('\n', f);
	if (fclose(f) != 0 || rename(tmp, path) != 0)
		log_warn("stats file %s: %m", path);
}
