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
#include "closer.h"
#include "daemon.h"
#include "logind.h"
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
	/* The power thread's "an attempt is recorded": this thread tells
	 * the subscribers (notify_resume). */
	ev.data.u32 = IDX_RESUME;
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, d->pl.resume_fd, &ev) < 0)
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
			fd_discard(fd);
			continue;
		}
		/* One user cannot take every connection either: its clients,
		 * and a few more for the CLI and registrations under way. */
		if (uc.uid != 0 && uc.uid != geteuid() &&
		    conns_of_uid(d, uc.uid) >= d->cfg.max_clients_per_uid + WLD_SPARE_CONNS_PER_UID) {
			log_warn("refusing connection of uid %u: %u connections already",
			         (unsigned)uc.uid, conns_of_uid(d, uc.uid));
			fd_discard(fd);
			continue;
		}
		memset(c, 0, sizeof(*c));
		c->fd = fd;
		c->slot = -1;
		c->resume_wfd = -1;
		for (unsigned j = 0; j < WAKELOCK_MAX_ALARMS_PER_CLIENT; j++)
			c->alarm_wfd[j] = -1;
		c->pid = uc.pid;
		c->uid = uc.uid;
		c->allowed = peer_allowed(d, fd, &uc, c->why, sizeof(c->why));
		/* Policy and configuration are for root, the daemon's user and
		 * the admin group, not for every client. */
		c->admin = uc.uid == 0 || uc.uid == geteuid() ||
		           (d->cfg.have_admin_gid && peer_in_group(fd, uc.gid, d->cfg.admin_gid));
		ev.data.u32 = i;
		if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
			fd_discard(fd);
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
		__atomic_store_n(&d->pl.kicked[c->slot], 0, __ATOMIC_RELAXED);
		/* Its alarms left with the slot: no wake-up for them. */
		alarms_rearm(d);
		wl_unlock(hdr);
		/* The power thread reads regions under the lock only. */
		wl_region_unmap(rg);
		d->slot_conn[c->slot] = -1;
		powerloop_kick(&d->pl);
	}
	alarms_conn_closed(c);
	if (c->resume_wfd >= 0)
		close(c->resume_wfd);
	c->resume_wfd = -1;
	epoll_ctl(d->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	/* Descriptors the client queued and we never read are released
	 * with the socket: by the closer, in case one blocks. */
	fd_discard(c->fd);
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

/*
 * Handlers of the request table below: each is called only once the
 * table's rules hold (size, caller, registration, descriptor).  fd is the
 * descriptor a row that takes one received, already checked for its
 * type; the handler owns it.
 */
static void do_register(struct daemon *d, struct conn *c, const struct wl_msg_arg *m, int fd)
{
	struct wl_shm_header *hdr = d->seg.hdr;
	const char *name = m->req.name;
	const struct wl_region *rg;
	uint64_t id = 0;
	int denied, r;

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
	r = wl_region_map(fd, &rg);
	if (r < 0) {
		server_reply(c, -EINVAL, 0, 0, -1, "the region must be a memfd of the right size "
		             "sealed against shrinking");
		goto out;
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
		goto out;
	}
	c->slot = r;
	d->slot_conn[r] = (int)(c - d->conns);
	log_debug("client %s registered (pid %d, uid %u, slot %d%s)", name, (int)c->pid,
	          (unsigned)c->uid, r, denied ? ", denied" : "");
	/* It may hold already (a client of our predecessor): look. */
	powerloop_kick(&d->pl);
	server_reply(c, 0, (uint32_t)r, id, d->seg.fd, NULL);
out:
	/* A memfd (checked by the table): its close cannot block. */
	close(fd);
}

/* A hold's name, at the index the client chose in its region. */
static void do_hold(struct daemon *d, struct conn *c, const struct wl_msg_arg *m, int fd)
{
	struct wl_shm_header *hdr = d->seg.hdr;
	char msg[WL_MSG_TEXT];
	int r;

	(void)fd;
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
static void do_observe(struct daemon *d, struct conn *c, const struct wl_msg_arg *m, int fd)
{
	struct wl_shm_header *hdr = d->seg.hdr;
	uint64_t next;
	int snap;

	(void)m;
	(void)fd;
	wl_lock(hdr);
	/* As the power thread would see it now: finished alarm work and
	 * lapsed holds included. */
	wl_table_holders(hdr, d->regions, wl_now_mono(), &next);
	wl_table_sync(hdr, d->regions, wl_now_mono());
	snap = wl_seg_snapshot(hdr);
	wl_unlock(hdr);
	/* Whoever asks who holds makes the loop look too: what the CLI is
	 * shown, the loop acts on (a client stopped between its release and
	 * its kick is caught here at the latest). */
	powerloop_kick(&d->pl);
	if (snap < 0) {
		server_reply(c, snap, 0, 0, -1, "cannot make a snapshot");
		return;
	}
	server_reply(c, 0, 0, 0, snap, NULL);
	close(snap);
}

static void do_policy(struct daemon *d, struct conn *c, const struct wl_msg_arg *m, int fd)
{
	int deny = m->req.op == WL_OP_DENY, r;
	const char *name = m->req.name;

	(void)fd;
	if (wl_name_check(name) < 0) {
		server_reply(c, -EINVAL, 0, 0, -1, "invalid client name");
		return;
	}
	r = deny ? policy_deny(&d->pol, name) : policy_allow(&d->pol, name);
	if (r < 0) {
		server_reply(c, r, 0, 0, -1, r == -EINVAL ? "neither a client name nor uid:N" :
		             "policy list full");
		return;
	}
	log_info("%s %s", deny ? "denying" : "allowing", name);
	server_apply_policy(d);
	server_reply(c, 0, 0, 0, -1, NULL);
}

static void do_reload(struct daemon *d, struct conn *c, const struct wl_msg_arg *m, int fd)
{
	int r = daemon_reload(d);

	(void)m;
	(void)fd;
	server_reply(c, r, 0, 0, -1, r ? "configuration rejected, old one kept (see log)" : NULL);
}

int server_doorbell(int *wfd)
{
	int p[2];

	/* Two open file descriptions: the client's read end cannot change
	 * how our write end behaves (O_NONBLOCK is per description). */
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0)
		return -errno;
	*wfd = p[1];
	return p[0];
}

void server_ring(int wfd)
{
	char b = 1;

	/* EAGAIN: the pipe is full, so it is readable already. */
	if (wfd >= 0 && write(wfd, &b, 1) < 0) {
	}
}

/* Resume notifications: a doorbell written after each attempt (below,
 * server_resume_event); the client fetches the record. */
static void do_resume_subscribe(struct daemon *d, struct conn *c, const struct wl_msg_arg *m,
                                int fd)
{
	int rfd;

	(void)m;
	(void)fd;
	if (!d->ledger) {
		server_reply(c, -EOPNOTSUPP, 0, 0, -1, "this wakelockd keeps no ledger");
		return;
	}
	if (c->resume_wfd >= 0)
		close(c->resume_wfd);
	c->resume_wfd = -1;
	rfd = server_doorbell(&c->resume_wfd);
	if (rfd < 0) {
		server_reply(c, rfd, 0, 0, -1, "cannot make a pipe");
		return;
	}
	server_reply(c, 0, 0, 0, rfd, NULL);
	close(rfd);
}

/* The client's last hold ended while watched, or its alarm work is done:
 * the loop looks again.  No reply. */
static void do_kick(struct daemon *d, struct conn *c, const struct wl_msg_arg *m, int fd)
{
	(void)m;
	(void)fd;
	powerloop_client_kick(&d->pl, (uint32_t)c->slot);
}

static void do_alarm(struct daemon *d, struct conn *c, const struct wl_msg_arg *m, int fd)
{
	(void)fd;
	alarms_request(d, c, m);
}

/*
 * The ledger's records from m->first_ms on, in their wire form in a
 * sealed memfd (at most the ring's size: 2.5 MiB for 4096 records), in
 * the version the client asked for: a library loaded before the daemon
 * was upgraded asks for none (version 1) and still reads them.
 */
static void do_wakes(struct daemon *d, struct conn *c, const struct wl_msg_arg *m, int fd)
{
	unsigned version = m->wire < 1 ? 1 : m->wire > WL_LEDGER_WIRE_VERSION ?
	                   WL_LEDGER_WIRE_VERSION : m->wire;
	uint64_t from = m->first_ms, next, oldest;
	struct wl_ledger_record *recs;
	size_t max, n, i;
	uint8_t buf[2 + WL_LEDGER_WIRE_MAX];
	FILE *f;

	(void)fd;

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
		size_t len = wl_ledger_encode_version(&recs[i], version, buf + 2,
		                                      WL_LEDGER_WIRE_MAX);

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
 * The request table: every rule a request must pass, in one row per
 * operation, checked by server_handle_msg before the handler runs, so
 * that a new operation cannot forget one.
 *   size   the message's exact length (a request or a request with
 *          arguments, lib/wl_proto.h)
 *   who    any member of the group, a registered client (the operation
 *          is about its slot), or an administrator (root, the daemon's
 *          user, [access] admin_group)
 *   fd     the descriptor it carries, if any, and of which type; any
 *          other descriptor is discarded (closer.c), never kept
 *   reply  0 for the one-way kick: not even an error is answered, so a
 *          reply can never be taken for that of the client's next request
 */
enum who { WHO_MEMBER, WHO_CLIENT, WHO_ADMIN };
enum fd_kind { FD_NONE, FD_REGION };

struct op_rule {
	const char *name;
	size_t size;
	enum who who;
	enum fd_kind fd;
	int reply;
	void (*handle)(struct daemon *d, struct conn *c, const struct wl_msg_arg *m, int fd);
};

#define REQ sizeof(struct wl_msg_req)
#define ARG sizeof(struct wl_msg_arg)
static const struct op_rule ops[WL_OP_COUNT] = {
	[WL_OP_REGISTER] = { "register", REQ, WHO_MEMBER, FD_REGION, 1, do_register },
	[WL_OP_OBSERVE] = { "observe", REQ, WHO_MEMBER, FD_NONE, 1, do_observe },
	[WL_OP_DENY] = { "deny", REQ, WHO_ADMIN, FD_NONE, 1, do_policy },
	[WL_OP_ALLOW] = { "allow", REQ, WHO_ADMIN, FD_NONE, 1, do_policy },
	[WL_OP_RELOAD] = { "reload", REQ, WHO_ADMIN, FD_NONE, 1, do_reload },
	[WL_OP_ALARM_CREATE] = { "alarm create", ARG, WHO_CLIENT, FD_NONE, 1, do_alarm },
	[WL_OP_ALARM_SET] = { "alarm set", ARG, WHO_CLIENT, FD_NONE, 1, do_alarm },
	[WL_OP_ALARM_CANCEL] = { "alarm cancel", ARG, WHO_CLIENT, FD_NONE, 1, do_alarm },
	[WL_OP_ALARM_DESTROY] = { "alarm destroy", ARG, WHO_CLIENT, FD_NONE, 1, do_alarm },
	[WL_OP_HOLD_CREATE] = { "hold create", ARG, WHO_CLIENT, FD_NONE, 1, do_hold },
	[WL_OP_HOLD_DESTROY] = { "hold destroy", ARG, WHO_CLIENT, FD_NONE, 1, do_hold },
	[WL_OP_WAKES] = { "wakes", ARG, WHO_MEMBER, FD_NONE, 1, do_wakes },
	[WL_OP_RESUME_SUBSCRIBE] = { "resume subscribe", ARG, WHO_CLIENT, FD_NONE, 1,
	                             do_resume_subscribe },
	[WL_OP_KICK] = { "kick", REQ, WHO_CLIENT, FD_NONE, 0, do_kick },
};
#undef REQ
#undef ARG

/* A region must be a memfd (the only files with seals) and regular:
 * checked before anything else is done with it, and it is then safe to
 * close. */
static int fd_is(int fd, enum fd_kind kind)
{
	struct stat st;

	if (kind != FD_REGION)
		return 0;
	return fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && fcntl(fd, F_GET_SEALS) >= 0;
}

/* Why the row's rules refuse this request, or NULL (msg: room for it). */
static const char *refused(struct daemon *d, struct conn *c, const struct op_rule *op,
                           int *err, char *msg, size_t len)
{
	if (!c->allowed) {
		log_info("refused pid %d: %s", (int)c->pid, c->why);
		*err = -EACCES;
		return c->why;
	}
	if (op->who == WHO_ADMIN && !c->admin) {
		snprintf(msg, len, "uid %u may not change the policy or configuration "
		         "(root or [access] admin_group only)", (unsigned)c->uid);
		log_info("refused %s by pid %d: not an administrator", op->name, (int)c->pid);
		*err = -EPERM;
		return msg;
	}
	if (op->who == WHO_CLIENT && c->slot < 0) {
		snprintf(msg, len, "%s: only a registered client may ask", op->name);
		*err = -EINVAL;
		return msg;
	}
	if (op->who == WHO_CLIENT && (op->handle == do_alarm) && d->alarm_fd < 0) {
		*err = -EOPNOTSUPP;
		return "wakelockd has no timer for alarms (kernel without timerfd)";
	}
	return NULL;
}

/*
 * One message of a connection, as received: len bytes at buf (any bytes:
 * this is where a client's input enters the daemon), fd a descriptor
 * that came with it or -1 (taken over).  Replies on c->fd.  Returns -1
 * when the connection must be closed (not the protocol), else 0.
 */
int server_handle_msg(struct daemon *d, struct conn *c, const void *buf, size_t len, int fd)
{
	struct wl_msg_arg m;
	const struct op_rule *op;
	const char *why = NULL;
	char msg[160];
	int err = 0;

	if ((len != sizeof(m.req) && len != sizeof(m)) ||
	    ((const struct wl_msg_req *)buf)->magic != WL_MSG_MAGIC) {
		fd_discard(fd);
		return -1;
	}
	memset(&m, 0, sizeof(m));
	memcpy(&m, buf, len);
	op = m.req.op < WL_OP_COUNT && ops[m.req.op].handle ? &ops[m.req.op] : NULL;
	/* Only a row that takes a descriptor keeps one, and only of its type. */
	if (fd >= 0 && (!op || op->fd == FD_NONE || !fd_is(fd, op->fd))) {
		fd_discard(fd);
		fd = -1;
	}
	if (!memchr(m.req.name, 0, WAKELOCK_NAME_MAX)) {
		/* Never cut it short: its prefix may be another client's name. */
		err = -ENAMETOOLONG;
		why = "name longer than 31 bytes";
	} else if (m.req.abi_major != WL_ABI_MAJOR) {
		snprintf(msg, sizeof(msg), "daemon speaks ABI %u, client %u", WL_ABI_MAJOR,
		         m.req.abi_major);
		err = -EPROTONOSUPPORT;
		why = msg;
	} else if (!op) {
		err = -EOPNOTSUPP;
		why = "unknown request";
	} else if (len != op->size) {
		snprintf(msg, sizeof(msg), "%s: a request of %zu bytes, not %zu", op->name,
		         op->size, len);
		err = -EPROTO;
		why = msg;
	} else if (op->fd != FD_NONE && fd < 0) {
		err = -EINVAL;
		why = "no region received (none sent, not a sealed memfd, or wakelockd is out "
		      "of descriptors)";
	} else {
		why = refused(d, c, op, &err, msg, sizeof(msg));
	}
	if (why) {
		if (!op || op->reply)
			server_reply(c, err, 0, 0, -1, why);
		fd_discard(fd);
		return 0;
	}
	op->handle(d, c, &m, fd);
	return 0;
}

static void do_request(struct daemon *d, struct conn *c, uint32_t events)
{
	struct wl_msg_arg m;
	size_t len;
	int fds[1];
	/* One descriptor kept at most; the others, and any on an error, go
	 * to the closer. */
	int r = wl_recv_msg_release(c->fd, &m, sizeof(m), &len, fds, 1, fd_discard);

	/* wl_recv_msg reports EAGAIN (non-blocking socket) as -ETIMEDOUT. */
	if (r == -ETIMEDOUT && !(events & (EPOLLHUP | EPOLLERR)))
		return;
	if (r < 0 || server_handle_msg(d, c, &m, len, fds[0]) < 0)
		server_conn_close(d, c);
}

/* The power thread recorded an attempt: ring every subscriber. */
static void server_resume_event(struct daemon *d)
{
	uint64_t n;

	if (read(d->pl.resume_fd, &n, sizeof(n)) < 0) {
		/* EAGAIN: nothing new */
	}
	for (unsigned i = 0; i < WLD_MAX_CONNS; i++)
		if (d->conns[i].fd >= 0)
			server_ring(d->conns[i].resume_wfd);
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
	if (idx == IDX_RESUME) {
		server_resume_event(d);
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
	/* Deny covers alarms: a denied client's no longer arm the timer. */
	alarms_rearm(d);
	wl_unlock(hdr);
	/* logind's idle inhibitors are counted, not slots: ask again. */
	logind_policy_changed(d);
	powerloop_kick(&d->pl);
}

void server_close(struct daemon *d)
{
	for (unsigned i = 0; i < WLD_MAX_CONNS; i++)
		if (d->conns[i].fd >= 0)
			fd_discard(d->conns[i].fd);
	if (d->listen_fd >= 0) {
		close(d->listen_fd);
		unlink(d->sock_path);
	}
}
