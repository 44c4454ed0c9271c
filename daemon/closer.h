/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef WLD_CLOSER_H
#define WLD_CLOSER_H

/* Close fd, a descriptor a client could have chosen (or a connection that
 * may carry some), on the closer thread: never blocks the caller
 * (closer.c).  Any thread. */
void fd_discard(int fd);

#endif
