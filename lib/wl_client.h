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
	pthread_mutex_t holds_lock;  /* guards the list below */
	struct wl_hold *holds;       /* destroyed by wl_client_close */
};

struct wl_hold {
	wl_client *c;
	uint32_t index;
	int epoll_held;   /* acquired by wl_epoll_wait, to release next call */
	struct wl_hold *next, **pprev;
};

int wl_client_lock(wl_client *c);

#endif
