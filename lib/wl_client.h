/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef WL_CLIENT_H
#define WL_CLIENT_H

#include "wl_proto.h"
#include <pthread.h>
#include "wl_shm.h"

struct wl_client {
	struct wl_seg seg;
	int sock;
	uint32_t slot;
	uint64_t client_id;
	pthread_mutex_t holds_lock;  /* guards the lists below */
	struct wl_hold *holds;       /* destroyed by wl_client_close */
	struct wl_alarm *alarms;     /* likewise */
	/* One request and its reply at a time on sock (alarm requests may
	 * come from several threads). */
	pthread_mutex_t sock_lock;
	/*
	 * Re-registration with a restarted daemon (watch.c).  Read side: any
	 * use of seg, slot or a hold's index (wl_client_lock); write side:
	 * the watcher moving the holds to the new daemon's segment.
	 */
	pthread_rwlock_t reg_lock;
	int lost;                    /* atomic: re-registration given up */
	char name[WL_NAME_MAX];
	char *sock_path;             /* as given to wl_client_open, or NULL */
	pthread_t watcher;
	int watch_stop[2];           /* pipe: wl_client_close ends the watcher */
	int watching;
};

struct wl_hold {
	wl_client *c;
	uint32_t index;
	int epoll_held;   /* acquired by wl_epoll_wait, to release next call */
	struct wl_hold *next, **pprev;
};

struct wl_alarm {
	wl_client *c;
	uint32_t index;   /* in the slot's alarms[] */
	int efd;          /* signalled by the daemon when it fires */
	/* Under the segment lock: */
	uint64_t seen;    /* fired_seq acknowledged by wl_alarm_wait */
	int pending;      /* acknowledged fires await wl_alarm_done */
	struct wl_alarm *next, **pprev;
};

int wl_client_lock(wl_client *c);
void wl_client_unlock(wl_client *c);

/* watch.c: a thread per client that notices the daemon's hang-up and
 * registers the client's holds with its successor. */
#define WL_REREGISTER_MS 10000u
int wl_watch_start(wl_client *c);
void wl_watch_stop(wl_client *c);
/* alarm.c: free the handles without asking the daemon (it reaps them
 * with the connection). */
void wl_alarm_forget_all(wl_client *c);

#endif
