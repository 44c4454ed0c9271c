/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Resume notifications (wakelock.h): a doorbell, the read end of a pipe
 * the daemon writes a byte to after each suspend attempt, and the
 * attempt's record fetched on demand. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "wl_client.h"
#include "wl_ledger.h"

/* Subscribe on the client's connection (sock_lock held): *fd gets the
 * doorbell's read end. */
static int subscribe(wakelock_client *c, int *fd)
{
	struct wl_msg_arg m;
	struct wl_msg_rep rep;
	int r;

	memset(&m, 0, sizeof(m));
	m.req.op = WL_OP_RESUME_SUBSCRIBE;
	*fd = -1;
	r = wl_request_arg_fd(c->sock, &m, &rep, fd);
	if (r == 0 && *fd < 0) {
		wl_set_error("wakelockd did not pass the resume doorbell");
		r = -EPROTO;
	}
	return r;
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
	r = subscribe(c, &fd);
	if (r < 0) {
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
	if (c->resume_fd >= 0) {
		int fd;

		/* The new daemon's doorbell, at the number the application
		 * has. */
		r = subscribe(c, &fd);
		if (r == 0) {
			if (dup2(fd, c->resume_fd) < 0)
				r = -errno;
			close(fd);
		}
	}
	pthread_mutex_unlock(&c->sock_lock);
	return r;
}

int wakelock_resume_read(wakelock_client *c, struct wakelock_resume *out)
{
	struct wl_ledger_record *rec;
	char buf[64];
	size_t n;
	int r;

	if (!c || !out)
		return -EINVAL;
	if (c->resume_fd < 0) {
		wl_set_error("call wakelock_resume_fd() first");
		return -EINVAL;
	}
	/* Drain first: an attempt recorded after this read signals again. */
	while (read(c->resume_fd, buf, sizeof(buf)) > 0)
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
