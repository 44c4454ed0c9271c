/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Messages on the daemon's Unix socket (SOCK_SEQPACKET: one message per
 * send, hang-up visible to the daemon the moment the peer dies).  The
 * connection of a registered client lives as long as the client: its
 * hang-up is how the daemon learns of the client's death, with an
 * identity (the connection) that cannot be confused by pid reuse, and
 * pid/uid taken from SO_PEERCRED so they cannot be forged.
 */
#ifndef WL_PROTO_H
#define WL_PROTO_H

#include <stddef.h>
#include <stdint.h>
#include "wakelock.h"

#define WL_DEFAULT_SOCKET "/run/wakelockd/wakelockd.sock"
#define WL_SOCKET_ENV "WAKELOCK_SOCKET"
#define WL_MSG_MAGIC 0x4d4b4c57u /* "WLKM" */
#define WL_MSG_TEXT 192

enum wl_op {
	/* name = client name; carries the client's region (wl_region.h);
	 * the reply carries the published segment */
	WL_OP_REGISTER = 1,
	WL_OP_OBSERVE = 2,  /* the CLI: the reply carries a snapshot of the segment */
	WL_OP_DENY = 3,     /* name = client name to deny */
	WL_OP_ALLOW = 4,    /* name = client name to allow */
	WL_OP_RELOAD = 5,   /* re-read the configuration */
	/* Wake alarms and holds of the registered client on this
	 * connection; these requests are struct wl_msg_arg. */
	/* name; reply slot = index, and it carries the read end of the
	 * alarm's doorbell (a pipe the daemon writes a byte to per fire) */
	WL_OP_ALARM_CREATE = 6,
	WL_OP_ALARM_SET = 7,     /* index, first_ms, period_ms, window_ms */
	WL_OP_ALARM_CANCEL = 8,  /* index */
	WL_OP_ALARM_DESTROY = 9, /* index; releases its hold */
	WL_OP_HOLD_CREATE = 10,  /* name, index (WL_INDEX_ANY: the daemon picks); reply slot = index */
	WL_OP_HOLD_DESTROY = 11, /* index */
	/* The wake ledger (docs/ledger.md): records from sequence number
	 * first_ms on, or, with index > 0, the newest index records.  The
	 * reply carries a sealed memfd of the records, each a u16 length and
	 * its wire form (wl_ledger_encode_version, in the version wire asks
	 * for, at most the daemon's newest); slot = their number, client_id =
	 * the oldest sequence number still held. */
	WL_OP_WAKES = 12,
	/* Resume notifications: the reply carries the read end of a pipe
	 * the daemon writes a byte to after each suspend attempt
	 * (wakelock_resume_fd). */
	WL_OP_RESUME_SUBSCRIBE = 13,
	/* No reply: look at this client's region again (its last hold ended
	 * while watched, or alarm work is done).  The kick travels on the
	 * client's own connection: no descriptor of the daemon is ever
	 * handed to a client (docs/design.md §4). */
	WL_OP_KICK = 14,
	WL_OP_COUNT
};
#define WL_INDEX_ANY 0xffffffffu

struct wl_msg_req {
	uint32_t magic;
	uint16_t abi_major;
	uint16_t op;
	char name[WAKELOCK_NAME_MAX];
};

/* A request about an alarm or a hold: the common request followed by its
 * arguments.  The common part comes first and keeps its size, so a
 * daemon still answers an old client's wl_msg_req with a readable
 * EPROTONOSUPPORT. */
struct wl_msg_arg {
	struct wl_msg_req req;
	uint32_t index;
	uint32_t period_ms;
	uint32_t window_ms;
	/* WL_OP_WAKES: the newest ledger wire version the client decodes
	 * (lib/wl_ledger.h); 0, as a library from before the field sends,
	 * means 1.  0 in every other request. */
	uint32_t wire;
	uint64_t first_ms;
};

struct wl_msg_rep {
	uint32_t magic;
	int32_t status;          /* 0 or -errno */
	uint32_t slot;
	uint32_t abi_major;
	uint64_t client_id;
	char msg[WL_MSG_TEXT];   /* why, when status < 0 */
};

/* Send one message, optionally with a file descriptor (fd < 0: none). */
int wl_send_msg(int sock, const void *buf, size_t len, int fd);
/* The same with n (<= WL_MAX_FDS) descriptors. */
#define WL_MAX_FDS 2
int wl_send_msg_fds(int sock, const void *buf, size_t len, const int *fds, unsigned n);
/* Receive one message of exactly len bytes; *fd gets a passed descriptor
 * or -1 (may be NULL to refuse descriptors). */
int wl_recv_msg(int sock, void *buf, size_t len, int *fd);
/* The same for a message of 1..max bytes; *len gets its size. */
int wl_recv_msg_upto(int sock, void *buf, size_t max, size_t *len, int *fd);
/* The same with up to nfds descriptors: fds[i] = -1 where none came;
 * any beyond nfds are closed. */
int wl_recv_msg_fds(int sock, void *buf, size_t max, size_t *len, int *fds, unsigned nfds);
/* The same, with every descriptor it does not return (beyond nfds, or
 * all of them on an error) given to release instead of close(): the
 * daemon's closer (daemon/closer.c).  A message carries at most
 * WL_RECV_FDS_MAX (the kernel's SCM_MAX_FD). */
#define WL_RECV_FDS_MAX 253
int wl_recv_msg_release(int sock, void *buf, size_t max, size_t *len, int *fds, unsigned nfds,
                        void (*release)(int fd));
/* Connect to the daemon; path NULL = $WAKELOCK_SOCKET or default. */
int wl_connect(const char *path, int timeout_ms);
/* One request/response exchange on a connected socket. */
int wl_request(int sock, uint16_t op, const char *name, struct wl_msg_rep *rep, int *fd);
/* The same passing send_fd (-1: none) and receiving up to nfds
 * descriptors into fds (each -1 where none came). */
int wl_request_fds(int sock, uint16_t op, const char *name, int send_fd,
                   struct wl_msg_rep *rep, int *fds, unsigned nfds);
/* An alarm request (magic and ABI filled in); send_fd < 0: none. */
int wl_request_arg(int sock, struct wl_msg_arg *m, int send_fd, struct wl_msg_rep *rep);
/* The same receiving a descriptor (*fd, -1 if none came). */
int wl_request_arg_fd(int sock, struct wl_msg_arg *m, struct wl_msg_rep *rep, int *fd);

/* Check a received reply: magic, status 0 or -1..-WL_MAX_ERRNO (anything
 * else is -EPROTO); terminates msg.  Returns 0 or the negative status, with
 * the error detail set. */
#define WL_MAX_ERRNO 4095
int wl_check_reply(struct wl_msg_rep *rep);

/* Per-thread error detail (error.c). */
void wl_set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
