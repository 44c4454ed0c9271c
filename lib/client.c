/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Registration with the daemon, the client handle, and the slow paths
 * the hold fast path (hold.c) falls back to. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include "wl_client.h"

int wl_client_register(wakelock_client *c, const char *path, int timeout_ms, int *sockp,
                       const struct wl_shm_header **pub, struct wl_msg_rep *rep)
{
	int fd, sock, r;

	sock = wl_connect(path, timeout_ms);
	if (sock < 0)
		return sock;
	r = wl_request_fds(sock, WL_OP_REGISTER, c->name, c->region_fd, rep, &fd, 1);
	if (r < 0)
		goto fail;
	if (fd < 0) {
		wl_set_error("wakelockd did not pass its segment");
		r = -EPROTO;
		goto fail;
	}
	if (rep->slot >= WL_MAX_CLIENTS) {
		wl_set_error("wakelockd assigned an impossible slot");
		close(fd);
		r = -EBADMSG;
		goto fail;
	}
	r = wl_pub_get(fd, pub);
	if (r < 0) {
		wl_set_error("shared segment rejected: %s", wakelock_strerror(r));
		goto fail;
	}
	*sockp = sock;
	return 0;
fail:
	close(sock);
	return r;
}

static void free_pubs(wakelock_client *c)
{
	while (c->pubs) {
		struct wl_pub_map *p = c->pubs;

		c->pubs = p->next;
		wl_pub_put(p->hdr);
		free(p);
	}
}

int wakelock_client_open(const char *socket_path, const char *name, wakelock_client **out)
{
	struct wl_msg_rep rep;
	wakelock_client *c;
	int r;

	if (!out)
		return -EINVAL;
	*out = NULL;
	r = wl_name_check(name);
	if (r < 0) {
		wl_set_error("invalid client name");
		return r;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->pubs = calloc(1, sizeof(*c->pubs));
	if (!c->pubs) {
		free(c);
		return -ENOMEM;
	}
	memcpy(c->name, name, strlen(name) + 1);
	c->sock = c->region_fd = c->resume_fd = -1;
	r = wl_region_create(&c->region, &c->region_fd);
	if (r < 0) {
		wl_set_error("cannot create the client's shared region: %s", wakelock_strerror(r));
		goto fail;
	}
	r = wl_client_register(c, socket_path, 5000, &c->sock, &c->pubs->hdr, &rep);
	if (r < 0)
		goto fail;
	c->pub = c->pubs->hdr;
	if (rep.slot >= c->pub->nslots) {
		wl_set_error("wakelockd assigned an impossible slot");
		r = -EBADMSG;
		goto fail;
	}
	c->watched = &c->pub->watched[rep.slot];
	pthread_mutex_init(&c->holds_lock, NULL);
	pthread_mutex_init(&c->timed_lock, NULL);
	pthread_mutex_init(&c->sock_lock, NULL);
	c->slot = rep.slot;
	c->client_id = rep.client_id;
	if (socket_path) {
		c->sock_path = strdup(socket_path);
		if (!c->sock_path) {
			r = -ENOMEM;
			goto fail_started;
		}
	}
	r = wl_watch_start(c);
	if (r < 0)
		goto fail_started;
	*out = c;
	return 0;
fail_started:
	pthread_mutex_destroy(&c->holds_lock);
	pthread_mutex_destroy(&c->timed_lock);
	pthread_mutex_destroy(&c->sock_lock);
	free(c->sock_path);
fail:
	if (c->sock >= 0)
		close(c->sock);
	if (c->region) {
		munmap(c->region, sizeof(*c->region));
		close(c->region_fd);
	}
	free_pubs(c);
	free(c);
	return r;
}

int wl_client_hold_request(wakelock_client *c, uint16_t op, const char *name, int want)
{
	struct wl_msg_arg m;
	struct wl_msg_rep rep;
	int r;

	memset(&m, 0, sizeof(m));
	m.req.op = op;
	if (name)
		strncpy(m.req.name, name, WAKELOCK_NAME_MAX - 1);
	m.index = want < 0 ? WL_INDEX_ANY : (uint32_t)want;
	pthread_mutex_lock(&c->sock_lock);
	r = wl_request_arg(c->sock, &m, -1, &rep);
	pthread_mutex_unlock(&c->sock_lock);
	if (r == 0 && op == WL_OP_HOLD_CREATE) {
		if (rep.slot >= WAKELOCK_MAX_HOLDS_PER_CLIENT) {
			wl_set_error("wakelockd assigned an impossible hold");
			return -EBADMSG;
		}
		r = (int)rep.slot;
	}
	if (r == -ENOTCONN || r == -ECONNRESET || r == -EPIPE)
		wl_set_error("wakelockd has exited");
	return r;
}

void wl_client_kick(wakelock_client *c)
{
	struct wl_msg_req m = { .magic = WL_MSG_MAGIC, .abi_major = WL_ABI_MAJOR, .op = WL_OP_KICK };

	/* One message, no reply, never blocking: kicks are at most one per
	 * watch, so the connection's buffer cannot be full of anything but
	 * kicks the daemon has yet to read, and it looks after those.  A
	 * daemon that is gone is replaced by one that looks at every
	 * region. */
	if (send(__atomic_load_n(&c->sock, __ATOMIC_RELAXED), &m, sizeof(m),
	         MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
	}
}

void wl_client_timed_changed(wakelock_client *c, uint64_t now)
{
	struct wl_region *rg = c->region;
	uint64_t until = 0;

	for (uint32_t j = 0; j < WAKELOCK_MAX_HOLDS_PER_CLIENT; j++) {
		uint64_t dl = __atomic_load_n(&rg->holds[j].deadline, __ATOMIC_RELAXED);

		if (dl > until)
			until = dl;
	}
	__atomic_store_n(&rg->timed_until, until, __ATOMIC_SEQ_CST);
	if (until <= now)
		wl_client_released(c);
}

/*
 * The daemon closed its phase after we published a hold: it is looking at
 * the regions or suspending.  Wait for it to open again; our hold is in
 * our region either way, and this returns once the system is awake.  In
 * slices, because the daemon may die while closed (a successor reads our
 * region when we register with it, see watch.c).
 */
void wl_client_wait_open(wakelock_client *c)
{
	for (;;) {
		const struct wl_shm_header *pub = __atomic_load_n(&c->pub, __ATOMIC_ACQUIRE);
		uint32_t ph = __atomic_load_n(&pub->phase, __ATOMIC_SEQ_CST);

		/* A daemon that hung up is dead: no attempt of its can be under
		 * way, and its successor sees our hold when we register. */
		if (ph == WL_PHASE_OPEN || __atomic_load_n(&pub->gone, __ATOMIC_ACQUIRE) ||
		    __atomic_load_n(&c->lost, __ATOMIC_ACQUIRE) ||
		    __atomic_load_n(&c->away, __ATOMIC_ACQUIRE))
			return;
		wl_phase_wait(pub, ph, 100000000u);
		if (__atomic_load_n(&c->pub, __ATOMIC_ACQUIRE) != pub)
			continue;
		/* A daemon that died closed never opens: the watcher sees the
		 * hang-up and moves us to a new pub, or gives up (lost). */
	}
}

void wakelock_client_close(wakelock_client *c)
{
	if (!c)
		return;
	wl_watch_stop(c);
	/* Holds the caller did not destroy go with the client. */
	for (uint32_t i = 0; i < WAKELOCK_MAX_HOLDS_PER_CLIENT; i++)
		if (wl_hold_live(c, i))
			wakelock_hold_destroy((wakelock_hold *)(void *)&c->region->holds[i]);
	wl_alarm_forget_all(c);
	pthread_mutex_destroy(&c->holds_lock);
	pthread_mutex_destroy(&c->timed_lock);
	pthread_mutex_destroy(&c->sock_lock);
	/* The daemon drops the region when the socket closes. */
	close(c->sock);
	if (c->resume_fd >= 0)
		close(c->resume_fd);
	munmap(c->region, sizeof(*c->region));
	close(c->region_fd);
	free_pubs(c);
	free(c->meta);
	free(c->sock_path);
	free(c);
}

int wakelock_client_fd(const wakelock_client *c)
{
	return c ? c->sock : -EINVAL;
}
