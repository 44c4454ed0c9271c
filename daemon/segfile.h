/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef WLD_SEGFILE_H
#define WLD_SEGFILE_H

#include <sys/types.h>
#include "../lib/wl_shm.h"

/* Create the segment at path (mode 0660, group gid if have_gid), first
 * marking a segment left there by a previous daemon as gone so its
 * clients learn they must reconnect. */
int segfile_create(const char *path, gid_t gid, int have_gid, struct wl_seg *seg,
                   char *err, size_t errlen);
/* Mark the segment gone (clients get -ENOTCONN) and remove the file. */
void segfile_retire(const char *path, struct wl_seg *seg);

#endif
