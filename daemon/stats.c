/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The --stats-file: daemon statistics as JSON, replaced atomically so a
 * reader never sees half a file, and written by root through no symlink
 * (lib/wl_outfile.h): the file may be in a directory others can write. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "lib/wl_json.h"
#include "lib/wl_outfile.h"
#include "daemon.h"
#include "log.h"

void stats_write_file(const char *path, struct wl_shm_header *hdr)
{
	struct wl_shm_dstats st;
	struct wl_outfile o;

	if (!path || !*path)
		return;
	wl_lock(hdr);
	st = hdr->dstats;
	wl_unlock(hdr);
	if (wl_outfile_open(&o, path, 0644) < 0) {
		log_warn("stats file: %s", wakelock_last_error());
		return;
	}
	wl_json_dstats(o.f, &st);
	fputc('\n', o.f);
	if (wl_outfile_commit(&o) < 0)
		log_warn("stats file %s: %s", path, wakelock_last_error());
}
