/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Registration with the daemon and the client handle. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "wl_client.h"

/* Writer-preferring: a re-registration must not starve behind threads
 * that keep acquiring and releasing (no caller nests the read side). */
static void wl_rwlock_init(pthread_rwlock_t *l)
{
	pthread_rwlockattr_t a;

	pthread_rwlockattr_init(&a);
	pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(l, &a);
	pthread_rwlockattr_destroy(&a);
}

int wl_client_open(const char *socket_path, const char *name, wl_client **out)
{
	struct wl_msg_rep rep;
	wl_client *c;
	int sock, fd = -1, r;

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
	sock = wl_connect(socket_path, 5000);
	if (sock < 0) {
		free(c);
		return sock;
	}
	r = wl_request(sock, WL_OP_REGISTER, name, &rep, &fd);
	if (r < 0)
		goto fail;
	if (fd < 0) {
		wl_set_error("wakelockd did not pass the shared segment");
		r = -EPROTO;
		goto fail;
	}
	r = wl_seg_map_fd(fd, &c->seg);
	if (r < 0) {
		wl_set_error("shared segment rejected: %s", wl_strerror(r));
		goto fail;
	}
	if (rep.slot >= c->seg.hdr->nslots) {
		wl_set_error("wakelockd assigned an impossible slot");
		r = -EBADMSG;
		wl_seg_unmap(&c->seg);
		goto fail;
	}
	/* The mapping is all a client needs: do not keep one more descriptor
	 * per client open (a process may register many). */
	close(c->seg.fd);
	c->seg.fd = -1;
	pthread_mutex_init(&c->holds_lock, NULL);
	pthread_mutex_init(&c->sock_lock, NULL);
	wl_rwlock_init(&c->reg_lock);
	c->sock = sock;
	c->slot = rep.slot;
	c->client_id = rep.client_id;
	memcpy(c->name, name, strlen(name) + 1);
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
	pthread_rwlock_destroy(&c->reg_lock);
	pthread_mutex_destroy(&c->holds_lock);
	pthread_mutex_destroy(&c->sock_lock);
	free(c->sock_path);
	wl_seg_unmap(&c->seg);
	close(sock);
	free(c);
	return r;
fail:
	close(sock);
	free(c);
	return r;
}

/*
 * Lock the segment and check that the daemon still knows us.  The
 * registration lock (read side) comes first: a re-registration (watch.c)
 * takes it for writing to move the holds to a new daemon's segment, so
 * c->seg and c->slot are stable while it is held.  On error nothing is
 * left locked.
 */
int wl_client_lock(wl_client *c)
{
	struct wl_shm_header *hdr;
	int r;

	pthread_rwlock_rdlock(&c->reg_lock);
	hdr = c->seg.hdr;
	r = wl_lock(hdr);
	if (r < 0) {
		pthread_rwlock_unlock(&c->reg_lock);
		return r;
	}
	/* Until the watcher has given up re-registering, the old segment
	 * stays in use (its holds are what will be moved), even once the
	 * daemon has retired it. */
	if (__atomic_load_n(&hdr->gone, __ATOMIC_ACQUIRE) &&
	    __atomic_load_n(&c->lost, __ATOMIC_ACQUIRE)) {
		wl_client_unlock(c);
		wl_set_error("wakelockd has exited or been replaced");
		return -ENOTCONN;
	}
	if (hdr->slots[c->slot].state != WL_SLOT_LIVE ||
	    hdr->slots[c->slot].client_id != c->client_id) {
		wl_client_unlock(c);
		wl_set_error("wakelockd no longer knows this client");
		return -ESTALE;
	}
	return 0;
}

void wl_client_unlock(wl_client *c)
{
	wl_unlock(c->seg.hdr);
	pthread_rwlock_unlock(&c->reg_lock);
}

void wl_client_close(wl_client *c)
{
	if (!c)
		return;
	wl_watch_stop(c);
	/* Holds the caller did not destroy go with the client. */
	while (c->holds)
		wl_hold_destroy(c->holds);
	wl_alarm_forget_all(c);
	pthread_mutex_destroy(&c->holds_lock);
	pthread_mutex_destroy(&c->sock_lock);
	/* Holds (alarms' too) are released by the daemon when the socket
	 * closes; do it here too so the effect is immediate rather than one
	 * round trip through the daemon later. */
	if (wl_client_lock(c) == 0) {
		uint64_t now = WL_NOW_LAZY;
		for (uint32_t j = 0; j < WL_MAX_HOLDS_PER_CLIENT; j++)
			wl_table_hold_free(c->seg.hdr, c->slot, j, now);
		wl_client_unlock(c);
	}
	pthread_rwlock_destroy(&c->reg_lock);
	close(c->sock);
	wl_seg_unmap(&c->seg);
	free(c->sock_path);
	free(c);
}

int wl_client_fd(const wl_client *c)
{
	return c ? c->sock : -EINVAL;
}
