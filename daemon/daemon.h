/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef WLD_DAEMON_H
#define WLD_DAEMON_H

#include <pthread.h>
#include <sys/types.h>
#include "config.h"
#include "policy.h"
#include "power.h"
#include "powerloop.h"

/* Every registered client keeps a connection; room for the CLI besides. */
#define WLD_MAX_CONNS (WL_MAX_CLIENTS + 64)

struct conn {
	int fd;              /* -1 = free */
	int slot;            /* registered client slot, -1 if none */
	pid_t pid;
	uid_t uid;
	int allowed;         /* passed the access check */
	char why[160];       /* why not */
};

struct daemon {
	struct wld_config cfg;
	int argc;
	char **argv;
	struct policy pol;
	struct wl_seg seg;
	struct power_backend *be;
	struct power_clock *clk;
	struct powerloop pl;
	pthread_t power_thread;
	int listen_fd, epfd, sig_fd, pid_fd;
	char sock_path[4200], pid_path[4200];
	char stats_path[4096];   /* fixed at start: read by the power thread */
	struct conn conns[WLD_MAX_CONNS];
};

/* server.c */
int server_open(struct daemon *d, char *err, size_t errlen);
void server_event(struct daemon *d, uint32_t idx, uint32_t events);
void server_apply_policy(struct daemon *d);
void server_close(struct daemon *d);
int daemon_reload(struct daemon *d);   /* main.c */

/* stats.c */
void stats_write_file(const char *path, struct wl_shm_header *hdr);

#endif
