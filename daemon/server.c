/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The daemon's socket: registration (identity from SO_PEERCRED, access
 * check), reaping on hang-up, and the deny/allow/reload requests of the
 * CLI.  Runs in the main thread's epoll loop.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "lib/wl_proto.h"
#include "lib/wl_region.h"
#include "daemon.h"
#include "ledger.h"
#include "log.h"

int server_open(struct daemon *d, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = IDX_LISTEN };

	for (unsigned i = 0; i < WLD_MAX_CONNS; i++)
		d->conns[i].fd = -1;
	for (unsigned i = 0; i < WL_MAX_CLIENTS; i++)
		d->slot_conn[i] = -1;
	snprintf(d->sock_path, sizeof(d->sock_path), "%s/wakelockd.sock", d->cfg.run_dir);
	if (strlen(d->sock_path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "socket path too long: %s", d->sock_path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, d->sock_path);
	d->listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (d->listen_fd < 0)
		goto fail;
	/* We hold the pid-file lock, so a socket file left here is stale. */
	unlink(d->sock_path);
	if (bind(d->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		goto fail;
	if ((d->cfg.have_gid && chown(d->sock_path, (uid_t)-1, d->cfg.gid) < 0) ||
	    chmod(d->sock_path, d->cfg.have_gid ? 0660 : 0600) < 0)
		goto fail;
	if (listen(d->listen_fd, 128) < 0)
		goto fail;
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, d->listen_fd, &ev) < 0)
		goto fail;
	return 0;
fail:
	snprintf(err, errlen, "socket %s: %s", d->sock_path, strerror(errno));
	return -errno;
}

/* Whether the peer on fd is in group gid, primary or supplementary, as
 * the kernel saw it at connect time (never as the peer says). */
static int peer_in_group(int fd, gid_t peer_gid, gid_t gid)
{
	gid_t groups[256];
	socklen_t glen = sizeof(groups);

	if (peer_gid == gid)
		return 1;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &glen) == 0) {
		for (unsigned i = 0; i < glen / sizeof(gid_t); i++)
			if (groups[i] == gid)
				return 1;
	}
	return 0;
}

/* Root, the daemon's own user, or the configured group. */
static int peer_allowed(struct daemon *d, int fd, struct ucred *uc, char *why, size_t len)
{
	if (uc->uid == 0 || uc->uid == geteuid())
		return 1;
	if (d->cfg.have_gid) {
		if (peer_in_group(fd, uc->gid, d->cfg.gid))
			return 1;
		snprintf(why, len, "uid %u is not root and not in group '%s': blocking suspend "
		         "is reserved to that group", (unsigned)uc->uid, d->cfg.group);
	} else {
		snprintf(why, len, "uid %u is not root: blocking suspend is reserved to root "
		         "(no group configured)", (unsigned)uc->uid);
	}
	return 0;
}

static unsigned conns_of_uid(struct daemon *d, uid_t uid)
{
	unsigned n = 0;

	for (unsigned i = 0; i < WLD_MAX_CONNS; i++)
		if (d->conns[i].fd >= 0 && d->conns[i].uid == uid)
			n++;
	return n;
}

/*
 * The eventfd a client passes must be one: the daemon writes 8 bytes to
 * it from its main thread and must neither block nor write into a file.
 * Where /proc is missing the check is skipped; O_NONBLOCK still holds.
 */
int server_check_eventfd(int fd)
{
	char path[64], link[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n >= 0) {
		link[n] = 0;
		if (strcmp(link, "anon_inode:[eventfd]"))
			return -EINVAL;
	}
	if (fcntl(fd, F_SETFL, O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

static void do_accept(struct daemon *d)
{
	for (;;) {
		struct ucred uc;
		socklen_t ul = sizeof(uc);
		struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP };
		struct conn *c = NULL;
		int fd = accept4(d->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		unsigned i;

		if (fd < 0) {
			if (errno != EAGAIN && errno != EINTR)
				log_warn("accept: %s", strerror(errno));
			return;
		}
		for (i = 0; i < WLD_MAX_CONNS; i++) {
			if (d->conns[i].fd < 0) {
				c = &d->conns[i];
				break;
			}
		}
		if (!c || getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &ul) < 0) {
			log_warn("refusing connection: %s", c ? strerror(errno) : "too many");
			close(fd);
			continue;
		}
		/* One user cannot take every connection either: its clients,
		 * and a few more for the CLI and registrations under way. */
		if (uc.uid != 0 && uc.uid != geteuid() &&
		    conns_of_uid(d, uc.uid) >= d->cfg.max_clients_per_uid + WLD_SPARE_CONNS_PER_UID) {
			log_warn("refusing connection of uid %u: %u connections already",
			         (unsigned)uc.uid, conns_of_uid(d, uc.uid));
			close(fd);
			continue;
		}
		memset(c, 0, sizeof(*c));
		c->fd = fd;
		c->slot = -1;
		for (unsigned j = 0; j < WAKELOCK_MAX_ALARMS_PER_CLIENT; j++)
			c->alarm_efd[j] = -1;
		c->pid = uc.pid;
		c->uid = uc.uid;
		c->allowed = peer_allowed(d, fd, &uc, c->why, sizeof(c->why));
		/* Policy and configuration are for root, the daemon's user and
		 * the admin group, not for every client. */
		c->admin = uc.uid == 0 || uc.uid == geteuid() ||
		           (d->cfg.have_admin_gid && peer_in_group(fd, uc.gid, d->cfg.admin_gid));
		ev.data.u32 = i;
		if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
			close(fd);
			c->fd = -1;
		}
	}
}

/* The peer hung up (exited, crashed, closed): drop its holds and alarms
 * now, including the hold of an alarm whose work it never finished. */
void server_conn_close(struct daemon *d, struct conn *c)
{
	if (c->slot >= 0) {
		struct wl_shm_header *hdr = d->seg.hdr;
		const struct wl_region *rg;

		wl_lock(hdr);
		log_debug("client %s (pid %d) gone, reaping", hdr->slots[c->slot].name, (int)c->pid);
		powerloop_ledger_forget(&d->pl, (uint32_t)c->slot, -1);
		wl_table_slot_free(hdr, (uint32_t)c->slot, wl_now_mono());
		rg = d->regions[c->slot];
		d->regions[c->slot] = NULL;
		if (d->pl.resume_efd[c->slot] >= 0)
			close(d->pl.resume_efd[c->slot]);
		d->pl.resume_efd[c->slot] = -1;
		/* Its alarms left with the slot: no wake-up for them. */
		alarms_rearm(d);
		wl_unlock(hdr);
		/* The power thread reads regions under the lock only. */
		wl_region_unmap(rg);
		d->slot_conn[c->slot] = -1;
		powerloop_kick(&d->pl);
	}
	alarms_conn_closed(c);
	epoll_ctl(d->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	c->fd = -1;
	c->slot = -1;
}

void server_reply(struct conn *c, int status, uint32_t slot, uint64_t id, int fd,
                  const char *msg)
{
	server_reply_fds(c, status, slot, id, &fd, fd >= 0 ? 1 : 0, msg);
}

void server_reply_fds(struct conn *c, int status, uint32_t slot, uint64_t id, const int *fds,
                      unsigned nfds, const char *msg)
{
	struct wl_msg_rep rep;

	memset(&rep, 0, sizeof(rep));
	rep.magic = WL_MSG_MAGIC;
	rep.status = status;
	rep.slot = slot;
	rep.abi_major = WL_ABI_MAJOR;
	rep.client_id = id;
	if (msg)
		snprintf(rep.msg, sizeof(rep.msg), "%s", msg);
	wl_send_msg_fds(c->fd, &rep, sizeof(rep), fds, nfds);
}

static unsigned clients_of_uid(struct daemon *d, uid_t uid)
{
	unsigned n = 0;

	for (unsigned i = 0; i < WLD_MAX_CONNS; i++)
		if (d->conns[i].fd >= 0 && d->conns[i].slot >= 0 && d->conns[i].uid == uid)
			n++;
	return n;
}

static void do_register(struct daemon *d, struct conn *c, const char *name, int fd)
{
	struct wl_shm_header *hdr = d->seg.hdr;
	const struct wl_region *rg;
	uint64_t id = 0;
	int denied, r, fds[2];

	if (c->slot >= 0) {
		server_reply(c, -EALREADY, 0, 0, -1, "already registered on this connection");
		goto out;
	}
	if (wl_name_check(name) < 0) {
		server_reply(c, -EINVAL, 0, 0, -1, "invalid client name");
		goto out;
	}
	if (clients_of_uid(d, c->uid) >= d->cfg.max_clients_per_uid) {
		char msg[96];

		snprintf(msg, sizeof(msg), "uid %u already has %u clients (max_clients_per_uid)",
		         (unsigned)c->uid, d->cfg.max_clients_per_uid);
		server_reply(c, -EDQUOT, 0, 0, -1, msg);
		goto out;
	}
	if (fd < 0) {
		server_reply(c, -EINVAL, 0, 0, -1, "no region received (none sent, or wakelockd "
		             "is out of descriptors)");
		return;
	}
	r = wl_region_map(fd, &rg);
	if (r < 0) {
		server_reply(c, -EINVAL, 0, 0, -1, "the region must be a memfd of the right size "
		             "sealed against shrinking");
		return;
	}
	denied = policy_denied_client(&d->pol, &d->cfg, name, c->uid);
	wl_lock(hdr);
	r = wl_table_slot_alloc(hdr, c->pid, c->uid, name, !denied, &id);
	if (r >= 0)
		d->regions[r] = rg;
	wl_unlock(hdr);
	if (r < 0) {
		char msg[WL_MSG_TEXT];

		wl_region_unmap(rg);
		server_reply(c, r, 0, 0, -1, wl_table_refusal(r, 0, name, msg, sizeof(msg)));
		return;
	}
	c->slot = r;
	d->slot_conn[r] = (int)(c - d->conns);
	log_debug("client %s registered (pid %d, uid %u, slot %d%s)", name, (int)c->pid,
	          (unsigned)c->uid, r, denied ? ", denied" : "");
	/* It may hold already (a client of our predecessor): look. */
	powerloop_kick(&d->pl);
	fds[0] = d->seg.fd;
	fds[1] = d->pl.kick_fd;
	server_reply_fds(c, 0, (uint32_t)r, id, fds, 2, NULL);
	return;
out:
	if (fd >= 0)
		close(fd);
}

/* A hold's name, at the index the client chose in its region. */
static void do_hold(struct daemon *d, struct conn *c, const struct wl_msg_arg *m)
{
	struct wl_shm_header *hdr = d->seg.hdr;
	char msg[WL_MSG_TEXT];
	int r;

	if (c->slot < 0) {
		server_reply(c, -EINVAL, 0, 0, -1, "holds belong to a registered client");
		return;
	}
	if (m->req.op == WL_OP_HOLD_CREATE && wl_name_check(m->req.name) < 0) {
		server_reply(c, -EINVAL, 0, 0, -1, "invalid hold name");
		return;
	}
	if (m->index != WL_INDEX_ANY && m->index >= WAKELOCK_MAX_HOLDS_PER_CLIENT) {
		server_reply(c, -EINVAL, 0, 0, -1, "no such hold");
		return;
	}
	wl_lock(hdr);
	if (m->req.op == WL_OP_HOLD_CREATE) {
		r = wl_table_hold_alloc(hdr, (uint32_t)c->slot, m->req.name, WL_HOLD_CLIENT,
		                        m->index == WL_INDEX_ANY ? -1 : (int)m->index);
	} else if (m->index == WL_INDEX_ANY ||
	           hdr->slots[c->slot].holds[m->index].owner != WL_HOLD_CLIENT) {
		r = -EINVAL;    /* an alarm's hold goes with its alarm */
	} else {
		powerloop_ledger_forget(&d->pl, (uint32_t)c->slot, (int)m->index);
		wl_table_hold_free(hdr, (uint32_t)c->slot, m->index, wl_now_mono());
		r = 0;
	}
	wl_unlock(hdr);
	if (r < 0)
		server_reply(c, r, 0, 0, -1, wl_table_refusal(r, 1, m->req.name, msg, sizeof(msg)));
	else
		server_reply(c, 0, (uint32_t)r, 0, -1, NULL);
}

/* The CLI's view: the clients' holds mirrored, copied whole. */
static void do_observe(struct daemon *d, struct conn *c)
{
	struct wl_shm_header *hdr = d->seg.hdr;
	int fd;

	uint64_t next;

	wl_lock(hdr);
	/* As the power thread would see it now: finished alarm work and
	 * lapsed holds included. */
	wl_table_holders(hdr, d->regions, wl_now_mono(), &next);
	wl_table_sync(hdr, d->regions, wl_now_mono());
	fd = wl_seg_snapshot(hdr);
	wl_unlock(hdr);
	if (fd < 0) {
		server_reply(c, fd, 0, 0, -1, "cannot make a snapshot");
		return;
	}
	server_reply(c, 0, 0, 0, fd, NULL);
	close(fd);
}

static void do_policy(struct daemon *d, struct conn *c, int deny, const char *name)
{
	int r;

	if (wl_name_check(name) < 0) {
		server_reply(c, -EINVAL, 0, 0, -1, "invalid client name");
		return;
	}
	r = deny ? policy_deny(&d->pol, name) : policy_allow(&d->pol, name);
	if (r < 0) {
		server_reply(c, r, 0, 0, -1, "policy list full");
		return;
	}
	log_info("%s %s", deny ? "denying" : "allowing", name);
	server_apply_policy(d);
	server_reply(c, 0, 0, 0, -1, NULL);
}

static int is_alarm_op(uint16_t op)
{
	return op >= WL_OP_ALARM_CREATE && op <= WL_OP_ALARM_DESTROY;
}

static int is_arg_op(uint16_t op)
{
	return is_alarm_op(op) || op == WL_OP_HOLD_CREATE || op == WL_OP_HOLD_DESTROY ||
	       op == WL_OP_WAKES || op == WL_OP_RESUME_SUBSCRIBE;
}

/* Resume notifications: the client's eventfd, written after each attempt
 * by the power thread (powerloop.c, notify_resume). */
static void do_resume_subscribe(struct daemon *d, struct conn *c, int fd)
{
	if (c->slot < 0 || !d->ledger || fd < 0 || server_check_eventfd(fd) < 0) {
		server_reply(c, c->slot < 0 || fd < 0 || d->ledger ? -EINVAL : -EOPNOTSUPP, 0, 0, -1,
		             c->slot < 0 ? "resume notifications belong to a registered client" :
		             !d->ledger ? "this wakelockd keeps no ledger" :
		             "resume notifications need an eventfd");
		if (fd >= 0)
			close(fd);
		return;
	}
	wl_lock(d->seg.hdr);
	if (d->pl.resume_efd[c->slot] >= 0)
		close(d->pl.resume_efd[c->slot]);
	d->pl.resume_efd[c->slot] = fd;
	wl_unlock(d->seg.hdr);
	server_reply(c, 0, 0, 0, -1, NULL);
}

/*
 * The ledger's records from m->first_ms on, in their wire form in a
 * sealed memfd (at most the ring's size: 2.4 MiB for 4096 records).
 */
static void do_wakes(struct daemon *d, struct conn *c, const struct wl_msg_arg *m)
{
	uint64_t from = m->first_ms, next, oldest;
	struct wl_ledger_record *recs;
	size_t max, n, i;
	uint8_t buf[2 + WL_LEDGER_WIRE_MAX];
	FILE *f;
	int fd;

	if (!d->ledger) {
		server_reply(c, -EOPNOTSUPP, 0, 0, -1, "this wakelockd keeps no ledger");
		return;
	}
	/* Close a claim window that has ended (the loop does not wake for
	 * it), so that the reader sees the verdict. */
	powerloop_ledger_poll(&d->pl, 0);
	next = ledger_next_seq(d->ledger);
	oldest = ledger_oldest_seq(d->ledger);
	if (m->index && next > m->index)
		from = next - m->index;
	if (from < oldest)
		from = oldest;
	max = next > from ? (size_t)(next - from) : 0;
	recs = calloc(max ? max : 1, sizeof(*recs));
	fd = memfd_create("wakelockd-wakes", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (!recs || fd < 0) {
		free(recs);
		if (fd >= 0)
			close(fd);
		server_reply(c, -ENOMEM, 0, 0, -1, "cannot copy the ledger");
		return;
	}
	n = ledger_copy(d->ledger, from, recs, max);
	f = fdopen(dup(fd), "w");
	for (i = 0; f && i < n; i++) {
		size_t len = wl_ledger_encode(&recs[i], buf + 2, WL_LEDGER_WIRE_MAX);

		buf[0] = (uint8_t)(len & 0xff);
		buf[1] = (uint8_t)(len >> 8);
		if (!len || fwrite(buf, 1, len + 2, f) != len + 2)
			break;
	}
	free(recs);
	if (!f || fclose(f) != 0 || i < n ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		close(fd);
		server_reply(c, -EIO, 0, 0, -1, "cannot copy the ledger");
		return;
	}
	server_reply(c, 0, (uint32_t)n, oldest, fd, NULL);
	close(fd);
}

/*
 * One message of a connection, as received: len bytes at buf (any bytes:
 * this is where a client's input enters the daemon), fd a descriptor
 * that came with it or -1 (taken over).  Replies on c->fd.  Returns -1
 * when the connection must be closed (not the protocol), else 0.
 */
int server_handle_msg(struct daemon *d, struct conn *c, const void *buf, size_t len, int fd)
{
	union {
		struct wl_msg_req req;
		struct wl_msg_arg alarm;
	} m;
	struct wl_msg_req *req = &m.req;
	int r;

	if (len != sizeof(m.req) && len != sizeof(m.alarm)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	memset(&m, 0, sizeof(m));
	memcpy(&m, buf, len);
	/* A descriptor is accepted with a registration (the region) and an
	 * alarm's creation (its eventfd) only. */
	if (fd >= 0 && !(len == sizeof(m.req) && req->op == WL_OP_REGISTER) &&
	    !(len == sizeof(m.alarm) && (req->op == WL_OP_ALARM_CREATE ||
	                                 req->op == WL_OP_RESUME_SUBSCRIBE))) {
		close(fd);
		fd = -1;
	}
	if (req->magic != WL_MSG_MAGIC) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	r = 0;
	if (!memchr(req->name, 0, WAKELOCK_NAME_MAX)) {
		/* Never cut it short: its prefix may be another client's name. */
		server_reply(c, -ENAMETOOLONG, 0, 0, -1, "name longer than 31 bytes");
		r = -1;
	} else if (req->abi_major != WL_ABI_MAJOR) {
		char msg[128];
		snprintf(msg, sizeof(msg), "daemon speaks ABI %u, client %u", WL_ABI_MAJOR,
		         req->abi_major);
		server_reply(c, -EPROTONOSUPPORT, 0, 0, -1, msg);
		r = -1;
	} else if (!c->allowed) {
		log_info("refused pid %d: %s", (int)c->pid, c->why);
		server_reply(c, -EACCES, 0, 0, -1, c->why);
		r = -1;
	} else if ((req->op == WL_OP_DENY || req->op == WL_OP_ALLOW || req->op == WL_OP_RELOAD) &&
	           !c->admin) {
		char msg[128];

		snprintf(msg, sizeof(msg), "uid %u may not change the policy or configuration "
		         "(root or [access] admin_group only)", (unsigned)c->uid);
		log_info("refused %s by pid %d: not an administrator",
		         req->op == WL_OP_RELOAD ? "reload" : "policy change", (int)c->pid);
		server_reply(c, -EPERM, 0, 0, -1, msg);
		r = -1;
	} else if (is_arg_op(req->op) && len != sizeof(m.alarm)) {
		server_reply(c, -EPROTO, 0, 0, -1, "truncated request");
		r = -1;
	}
	if (r < 0) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	if (is_alarm_op(req->op)) {
		alarms_request(d, c, &m.alarm, fd);
		return 0;
	}
	if (req->op == WL_OP_WAKES) {
		do_wakes(d, c, &m.alarm);
		return 0;
	}
	if (req->op == WL_OP_RESUME_SUBSCRIBE) {
		do_resume_subscribe(d, c, fd);
		return 0;
	}
	if (is_arg_op(req->op)) {
		do_hold(d, c, &m.alarm);
		return 0;
	}
	switch (req->op) {
	case WL_OP_REGISTER:
		do_register(d, c, req->name, fd);
		break;
	case WL_OP_OBSERVE:
		do_observe(d, c);
		break;
	case WL_OP_DENY:
	case WL_OP_ALLOW:
		do_policy(d, c, req->op == WL_OP_DENY, req->name);
		break;
	case WL_OP_RELOAD:
		r = daemon_reload(d);
		server_reply(c, r, 0, 0, -1, r ? "configuration rejected, old one kept (see log)" : NULL);
		break;
	default:
		server_reply(c, -EOPNOTSUPP, 0, 0, -1, "unknown request");
	}
	return 0;
}

static void do_request(struct daemon *d, struct conn *c, uint32_t events)
{
	union {
		struct wl_msg_req req;
		struct wl_msg_arg alarm;
	} m;
	size_t len;
	int fd = -1;
	int r = wl_recv_msg_upto(c->fd, &m, sizeof(m), &len, &fd);

	/* wl_recv_msg reports EAGAIN (non-blocking socket) as -ETIMEDOUT. */
	if (r == -ETIMEDOUT && !(events & (EPOLLHUP | EPOLLERR)))
		return;
	if (r < 0 || server_handle_msg(d, c, &m, len, fd) < 0)
		server_conn_close(d, c);
}

void server_event(struct daemon *d, uint32_t idx, uint32_t events)
{
	struct conn *c;

	if (idx == IDX_LISTEN) {
		do_accept(d);
		return;
	}
	if (idx == IDX_ALARM) {
		alarms_timer_event(d);
		return;
	}
	if (idx >= WLD_MAX_CONNS || d->conns[idx].fd < 0)
		return;
	c = &d->conns[idx];
	/* Messages queued before a hang-up are still read (a client may send
	 * and exit at once); the read that finds EOF closes and reaps. */
	do_request(d, c, events);
}

void server_apply_policy(struct daemon *d)
{
	struct wl_shm_header *hdr = d->seg.hdr;
	uint64_t now = wl_now_mono();

	wl_lock(hdr);
	/* Live slots only; set_allowed does not change the live list. */
	for (uint32_t k = 0; k < hdr->nlive; k++) {
		uint32_t i = hdr->order[k];
		struct wl_shm_slot *s = &hdr->slots[i];

		if (s->state == WL_SLOT_LIVE)
			wl_table_set_allowed(hdr, i, !policy_denied_client(&d->pol, &d->cfg, s->name,
			                                                   s->uid), now);
	}
	wl_unlock(hdr);
	powerloop_kick(&d->pl);
}

void server_close(struct daemon *d)
{
	for (unsigned i = 0; i < WLD_MAX_CONNS; i++)
		if (d->conns[i].fd >= 0)
			close(d->conns[i].fd);
	if (d->listen_fd >= 0) {
		close(d->listen_fd);
		unlink(d->sock_path);
	}
}
