/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef WL_OUTFILE_H
#define WL_OUTFILE_H

#include <stdio.h>
#include <sys/types.h>

/*
 * A file written whole or not at all, that no symlink can redirect: the
 * daemon's --stats-file (written by root) and the CLI's
 * `wakelock timeline --svg FILE`.  The text goes to a new file of a name
 * nobody can guess, created O_CREAT | O_EXCL | O_NOFOLLOW under a
 * descriptor of the target's directory, then renamed over the target
 * (which replaces a symlink there, never follows it).  Unique names: a
 * file a crash left behind never blocks the next write.
 */
struct wl_outfile {
	FILE *f;          /* write here, between open and commit/abort */
	int dirfd;
	char tmp[280];    /* in dirfd */
	char base[256];   /* the target, in dirfd */
};

/* 0, or a negative errno (path and reason in wakelock_last_error()). */
int wl_outfile_open(struct wl_outfile *o, const char *path, mode_t mode);
/* Close and rename over the target: 0, or a negative errno (the temporary
 * file removed).  Either way o is done with. */
int wl_outfile_commit(struct wl_outfile *o);
/* Drop what was written. */
void wl_outfile_abort(struct wl_outfile *o);

#endif
