/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Resume notifications (wakelock.h): an eventfd the daemon writes after
 * each suspend attempt, and the attempt's record fetched on demand. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include "wl_client.h"
#include "wl_ledger.h"

/* Subscribe fd on the client's connection (sock_lock held). */
static int subscribe(wakelock_client *c, int fd)
{
	struct wl_msg_arg m;
	struct wl_msg_rep rep;

	memset(&m, 0, sizeof(m));
	m.req.op = WL_OP_RESUME_SUBSCRIBE;
	return wl_request_arg(c->sock, &m, fd, &rep);
}

int wakelock_resume_fd(wakelock_client *c)
{
	int fd, r;

	if (!c)
		return -EINVAL;
	pthread_mutex_lock(&c->sock_lock);
	if (c->resume_fd >= 0) {
		pthread_mutex_unlock(&c->sock_lock);
		return c->resume_fd;
	}
	/* Non-blocking: the daemon must never block writing it. */
	fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (fd < 0) {
		r = -errno;
		pthread_mutex_unlock(&c->sock_lock);
		return r;
	}
	r = subscribe(c, fd);
	if (r < 0) {
		close(fd);
		pthread_mutex_unlock(&c->sock_lock);
		return r;
	}
	c->resume_fd = fd;
	pthread_mutex_unlock(&c->sock_lock);
	return fd;
}

int wl_client_resubscribe(wakelock_client *c)
{
	int r = 0;

	pthread_mutex_lock(&c->sock_lock);
	if (c->resume_fd >= 0)
		r = subscribe(c, c->resume_fd);
	pthread_mutex_unlock(&c->sock_lock);
	return r;
}

int wakelock_resume_read(wakelock_client *c, struct wakelock_resume *out)
{
	struct wl_ledger_record *rec;
	uint64_t cnt;
	size_t n;
	int r;

	if (!c || !out)
		return -EINVAL;
	if (c->resume_fd < 0) {
		wl_set_error("call wakelock_resume_fd() first");
		return -EINVAL;
	}
	/* Drain first: an attempt recorded after this read signals again. */
	while (read(c->resume_fd, &cnt, sizeof(cnt)) == (ssize_t)sizeof(cnt))
		;
	pthread_mutex_lock(&c->sock_lock);
	r = wl_ledger_fetch(c->sock, 1, &rec, &n);
	pthread_mutex_unlock(&c->sock_lock);
	if (r < 0)
		return r;
	if (n == 0 || rec[0].seq <= c->resume_seen || rec[0].outcome == WL_LO_OPEN) {
		free(rec);
		return 0;
	}
	memset(out, 0, sizeof(*out));
	out->seq = rec[0].seq;
	out->slept = rec[0].outcome == WL_LO_RESUMED;
	out->error = rec[0].outcome == WL_LO_ABORTED ? EBUSY : -rec[0].err;
	if (out->error < 0)
		out->error = 0;
	out->asleep_ms = rec[0].asleep_ns / 1000000u;
	out->missed = c->resume_seen && rec[0].seq - c->resume_seen > 1 ?
	              (uint32_t)(rec[0].seq - c->resume_seen - 1) : 0;
	wl_ledger_cause_key(&rec[0], out->cause, sizeof(out->cause));
	c->resume_seen = rec[0].seq;
	free(rec);
	return 1;
}
