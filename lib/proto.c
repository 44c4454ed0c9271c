/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>
#include "wl_proto.h"
#include "wl_shm.h"

int wl_send_msg_fds(int sock, const void *buf, size_t len, const int *fds, unsigned n)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * WL_MAX_FDS)];
	} cm;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n2;

	if (n > WL_MAX_FDS)
		return -EINVAL;
	if (n) {
		struct cmsghdr *c;

		memset(&cm, 0, sizeof(cm));
		mh.msg_control = cm.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * n);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * n);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * n);
	}
	do
		n2 = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (n2 < 0 && errno == EINTR);
	if (n2 < 0)
		return -errno;
	return (size_t)n2 == len ? 0 : -EPROTO;
}

int wl_send_msg(int sock, const void *buf, size_t len, int fd)
{
	return wl_send_msg_fds(sock, buf, len, &fd, fd >= 0 ? 1 : 0);
}

static void release_fds(int *fds, unsigned n, void (*release)(int fd))
{
	for (unsigned i = 0; i < n; i++) {
		if (fds[i] >= 0)
			release(fds[i]);
		fds[i] = -1;
	}
}

static void close_one(int fd)
{
	close(fd);
}

static void close_fds(int *fds, unsigned n)
{
	release_fds(fds, n, close_one);
}

int wl_recv_msg_release(int sock, void *buf, size_t max, size_t *len, int *fds, unsigned nfds,
                        void (*release)(int fd))
{
	struct iovec iov = { .iov_base = buf, .iov_len = max };
	/* Room for as many as a message can carry (SCM_MAX_FD), so that
	 * every descriptor arrives and is released by `release`: with
	 * MSG_CTRUNC the kernel would drop the rest itself, in this thread,
	 * where a blocking release (a lingering socket) would stall it. */
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * WL_RECV_FDS_MAX)];
	} cm;
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cm.buf, .msg_controllen = sizeof(cm.buf),
	};
	unsigned got = 0;
	ssize_t n;

	for (unsigned i = 0; i < nfds; i++)
		fds[i] = -1;
	*len = 0;
	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN ? -ETIMEDOUT : -errno;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

			for (size_t i = 0; i < k; i++) {
				int fd;

				memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
				if (got < nfds)
					fds[got++] = fd;
				else
					release(fd);
			}
		}
	}
	if (n == 0) {
		release_fds(fds, nfds, release);
		return -ENOTCONN;
	}
	if (mh.msg_flags & MSG_TRUNC) {
		release_fds(fds, nfds, release);
		return -EPROTO;
	}
	*len = (size_t)n;
	return 0;
}

int wl_recv_msg_fds(int sock, void *buf, size_t max, size_t *len, int *fds, unsigned nfds)
{
	return wl_recv_msg_release(sock, buf, max, len, fds, nfds, close_one);
}


int wl_recv_msg_upto(int sock, void *buf, size_t max, size_t *len, int *fd)
{
	int fds[1], r = wl_recv_msg_fds(sock, buf, max, len, fds, fd ? 1 : 0);

	if (fd)
		*fd = fds[0];
	return r;
}

int wl_recv_msg(int sock, void *buf, size_t len, int *fd)
{
	size_t got;
	int r = wl_recv_msg_upto(sock, buf, len, &got, fd);

	if (r == 0 && got != len) {
		if (fd && *fd >= 0) {
			close(*fd);
			*fd = -1;
		}
		return -EPROTO;
	}
	return r;
}

int wl_connect(const char *path, int timeout_ms)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000 };
	int s, r;

	if (!path)
		path = getenv(WL_SOCKET_ENV);
	if (!path || !*path)
		path = WL_DEFAULT_SOCKET;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		wl_set_error("socket path too long: %s", path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, path);
	s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	/* A daemon that accepts but never answers must not hang us. */
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		r = -errno;
		close(s);
		if (r == -ENOENT || r == -ECONNREFUSED) {
			wl_set_error("wakelockd is not running (nothing listens on %s)", path);
			return -ENOTCONN;
		}
		if (r == -EACCES || r == -EPERM) {
			wl_set_error("permission denied on %s: only root and members of the "
			             "daemon's group may keep the system awake", path);
			return -EACCES;
		}
		wl_set_error("cannot connect to %s: %s", path, strerror(-r));
		return r;
	}
	return s;
}

/* Send one request, then read and check the reply. */
static int exchange(int sock, const void *req, size_t len, int send_fd,
                    struct wl_msg_rep *rep, int *fds, unsigned nfds)
{
	size_t got;
	int r = wl_send_msg(sock, req, len, send_fd);

	if (r < 0) {
		wl_set_error("cannot talk to wakelockd: %s", strerror(-r));
		return r == -EPIPE || r == -ECONNRESET ? -ENOTCONN : r;
	}
	memset(rep, 0, sizeof(*rep));
	r = wl_recv_msg_fds(sock, rep, sizeof(*rep), &got, fds, nfds);
	if (r == 0 && got != sizeof(*rep)) {
		close_fds(fds, nfds);
		r = -EPROTO;
	}
	if (r < 0) {
		wl_set_error("no valid answer from wakelockd: %s", strerror(-r));
		return r == -ECONNRESET ? -ENOTCONN : r;
	}
	r = wl_check_reply(rep);
	if (r < 0) {
		close_fds(fds, nfds);
		return r;
	}
	return 0;
}

/*
 * A reply is the daemon's word, but the socket may be anything: its
 * status goes back to the caller as an error code and through strerror,
 * so it must be 0 or a negated errno (-INT_MIN would overflow).
 */
int wl_check_reply(struct wl_msg_rep *rep)
{
	if (rep->magic != WL_MSG_MAGIC) {
		wl_set_error("the socket does not speak the wakelockd protocol");
		return -EPROTO;
	}
	rep->msg[WL_MSG_TEXT - 1] = 0;
	/* The text ends up on a terminal. */
	for (char *p = rep->msg; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	if (rep->status > 0 || rep->status < -WL_MAX_ERRNO) {
		wl_set_error("wakelockd sent an invalid status (%ld)", (long)rep->status);
		return -EPROTO;
	}
	if (rep->status < 0) {
		wl_set_error("%s", rep->msg[0] ? rep->msg : strerror(-rep->status));
		return rep->status;
	}
	return 0;
}

static void fill_req(struct wl_msg_req *req, uint16_t op, const char *name)
{
	memset(req, 0, sizeof(*req));
	req->magic = WL_MSG_MAGIC;
	req->abi_major = WL_ABI_MAJOR;
	req->op = op;
	if (name)
		strncpy(req->name, name, WAKELOCK_NAME_MAX - 1);
}

int wl_request(int sock, uint16_t op, const char *name, struct wl_msg_rep *rep, int *fd)
{
	struct wl_msg_req req;

	/* Never cut a name short: its prefix may be another client's. */
	if (name && strlen(name) >= WAKELOCK_NAME_MAX) {
		wl_set_error("name longer than %d bytes", WAKELOCK_NAME_MAX - 1);
		return -ENAMETOOLONG;
	}
	fill_req(&req, op, name);
	return exchange(sock, &req, sizeof(req), -1, rep, fd, fd ? 1 : 0);
}

int wl_request_fds(int sock, uint16_t op, const char *name, int send_fd,
                   struct wl_msg_rep *rep, int *fds, unsigned nfds)
{
	struct wl_msg_req req;

	if (name && strlen(name) >= WAKELOCK_NAME_MAX) {
		wl_set_error("name longer than %d bytes", WAKELOCK_NAME_MAX - 1);
		return -ENAMETOOLONG;
	}
	fill_req(&req, op, name);
	return exchange(sock, &req, sizeof(req), send_fd, rep, fds, nfds);
}

int wl_request_arg(int sock, struct wl_msg_arg *m, int send_fd, struct wl_msg_rep *rep)
{
	char name[WAKELOCK_NAME_MAX];

	memcpy(name, m->req.name, WAKELOCK_NAME_MAX);
	name[WAKELOCK_NAME_MAX - 1] = 0;
	fill_req(&m->req, m->req.op, name);
	m->wire = 0;
	return exchange(sock, m, sizeof(*m), send_fd, rep, NULL, 0);
}

int wl_request_arg_fd(int sock, struct wl_msg_arg *m, struct wl_msg_rep *rep, int *fd)
{
	char name[WAKELOCK_NAME_MAX];

	memcpy(name, m->req.name, WAKELOCK_NAME_MAX);
	name[WAKELOCK_NAME_MAX - 1] = 0;
	fill_req(&m->req, m->req.op, name);
	if (m->req.op != WL_OP_WAKES)
		m->wire = 0;
	return exchange(sock, m, sizeof(*m), -1, rep, fd, 1);
}
