/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef WLD_DAEMON_H
#define WLD_DAEMON_H

#include <pthread.h>
#include <sys/types.h>
#include "config.h"
#include "policy.h"
#include "power.h"
#include "powerloop.h"
#include "awake.h"

/* Every registered client keeps a connection; room for the CLI besides. */
#define WLD_MAX_CONNS (WL_MAX_CLIENTS + 64)
/* Connections a user may have beyond max_clients_per_uid (CLI, clients
 * registering); root and the daemon's user have no limit. */
#define WLD_SPARE_CONNS_PER_UID 16u
/* epoll data of the daemon's own descriptors (connections: their index). */
#define IDX_LISTEN 0xffffffffu
#define IDX_SIGNAL 0xfffffffeu
#define IDX_ALARM 0xfffffffdu
#define IDX_LOGIND 0xfffffffcu
#define IDX_RESUME 0xfffffffbu
#define IDX_POWER 0xfffffffau

struct wl_msg_arg;
struct logind;
struct logind_sessions;
struct logind_presence;

struct conn {
	int fd;              /* -1 = free */
	int slot;            /* registered client slot, -1 if none */
	pid_t pid;
	uid_t uid;
	int allowed;         /* passed the access check */
	int admin;           /* may deny, allow and reload */
	char why[160];       /* why not */
	/* Doorbells: write ends of pipes whose read ends the client has
	 * (server_doorbell), -1 = none.  Only this thread writes and closes
	 * them, never under the segment lock. */
	int alarm_wfd[WAKELOCK_MAX_ALARMS_PER_CLIENT];
	int resume_wfd;      /* resume notifications */
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
	struct ledger *ledger;   /* one record per suspend attempt (ledger.h) */
	struct logind *logind;   /* logind's inhibitors (logind.h), NULL: none */
	struct awake_source logind_src;   /* its last look (main.c) */
	/* logind's sessions and idle inhibitors as presence, NULL: not
	 * wanted (logind_presence.c); the sessions' bus side, NULL: none
	 * (logind_session.c).  Main thread. */
	struct logind_presence *presence;
	struct logind_sessions *sessions;
	struct awake_source *display;     /* [policy] mode = phone, else NULL */
	pthread_t power_thread;
	int listen_fd, epfd, sig_fd, pid_fd;
	int unclean_start;       /* a stale pid file: the last daemon died */
	int alarm_fd;            /* timerfd of the wake alarms (main thread) */
	int slot_conn[WL_MAX_CLIENTS];   /* connection of a registered slot, -1 */
	/* Each registered client's region, mapped read-only; changed by
	 * this thread under the segment lock, read by the power thread. */
	const struct wl_region *regions[WL_MAX_CLIENTS];
	char sock_path[4200], pid_path[4200];
	char stats_path[4096];   /* fixed at start: read by the power thread */
	struct conn conns[WLD_MAX_CONNS];
};

/* server.c */
int server_open(struct daemon *d, char *err, size_t errlen);
void server_event(struct daemon *d, uint32_t idx, uint32_t events);
/* One received message of connection c (len bytes, fd passed with it or
 * -1, taken over); -1 if the connection must be closed. */
int server_handle_msg(struct daemon *d, struct conn *c, const void *buf, size_t len, int fd);
/* Close connection c, reaping its client. */
void server_conn_close(struct daemon *d, struct conn *c);
void server_apply_policy(struct daemon *d);
void server_close(struct daemon *d);
void server_reply(struct conn *c, int status, uint32_t slot, uint64_t id, int fd,
                  const char *msg);
void server_reply_fds(struct conn *c, int status, uint32_t slot, uint64_t id, const int *fds,
                      unsigned nfds, const char *msg);
int daemon_reload(struct daemon *d);   /* main.c */
/* A doorbell for a client: a pipe whose read end (returned, or -errno)
 * goes to the client, the write end (*wfd) stays ours.  server_ring
 * writes a byte to it without blocking, whatever the client does with
 * its end. */
int server_doorbell(int *wfd);
void server_ring(int wfd);

/* alarms.c: wake alarms, in the main thread. */
int alarms_open(struct daemon *d, char *err, size_t errlen);
void alarms_close(struct daemon *d);
/* Publish cfg.alarm_timeout_ms in the segment (start, reload). */
void alarms_set_timeout(struct daemon *d);
/* The timer expired: fire what is due, re-arm. */
void alarms_timer_event(struct daemon *d);
/* An alarm request of a registered client's connection; replies. */
void alarms_request(struct daemon *d, struct conn *c, const struct wl_msg_arg *m);
/* Set the timer to the next fire time (segment lock held). */
void alarms_rearm(struct daemon *d);
/* The connection's alarms are gone with its slot: close their doorbells. */
void alarms_conn_closed(struct conn *c);

/* stats.c */
void stats_write_file(const char *path, struct wl_shm_header *hdr);

#endif
