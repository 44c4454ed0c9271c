/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer harness: the daemon's request handler (server_handle_msg in
 * daemon/server.c) with a real segment, alarm timer and policy, and two
 * connections (the second one refused by the access check).
 *
 * Input: records of [flags][length][bytes...]: flags bit 0 passes an
 * eventfd with the message, bit 1 sends on the refused connection, bit 2
 * runs the alarm timer's handler afterwards, bit 3 passes a region (a
 * sealed memfd filled with the flags byte: the daemon reads it when it
 * makes the CLI's snapshot), overriding bit 0; length 0 and 1 mean a
 * request and an alarm request of the right size, others that many
 * bytes (mod the largest message + 1).  Missing bytes are zero.
 *
 * Checked after every message: each reply is one the client library
 * accepts (wl_check_reply) and the segment stays valid, its live-slot
 * list consistent.  A connection the handler closes is reconnected.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include "daemon/daemon.h"
#include "daemon/ledger.h"
#include "daemon/log.h"
#include "lib/wl_proto.h"
#include "lib/wl_region.h"

#define CHECK(x) do { if (!(x)) abort(); } while (0)
#define NSLOTS 4u
#define NCONN 2

static struct daemon d;
static int peer[NCONN] = { -1, -1 };   /* the clients' ends */
static size_t seg_size;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The daemon's reload re-reads its command line; here: no change. */
int daemon_reload(struct daemon *dd)
{
	server_apply_policy(dd);
	return 0;
}

static void conn_open(int i)
{
	struct conn *c = &d.conns[i];
	int sv[2];

	CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) == 0);
	memset(c, 0, sizeof(*c));
	c->fd = sv[0];
	c->slot = -1;
	c->resume_wfd = -1;
	for (unsigned j = 0; j < WAKELOCK_MAX_ALARMS_PER_CLIENT; j++)
		c->alarm_wfd[j] = -1;
	c->pid = 1000 + i;
	c->uid = 1000;
	c->allowed = i == 0;
	if (!c->allowed)
		strcpy(c->why, "uid 1000 is not root");
	peer[i] = sv[1];
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	log_setup(LOG_L_ERROR + 1, 0);
	memset(&d, 0, sizeof(d));
	config_defaults(&d.cfg);
	d.epfd = -1;
	d.listen_fd = -1;
	for (unsigned i = 0; i < WLD_MAX_CONNS; i++)
		d.conns[i].fd = -1;
	for (unsigned i = 0; i < WL_MAX_CLIENTS; i++)
		d.slot_conn[i] = -1;
	seg_size = wl_shm_total_size(NSLOTS);
	d.seg.hdr = aligned_alloc(64, (seg_size + 63) / 64 * 64);
	CHECK(d.seg.hdr != NULL);
	d.seg.len = seg_size;
	/* Passed with OBSERVE and REGISTER replies. */
	d.seg.fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	CHECK(d.seg.fd >= 0);
	d.alarm_fd = timerfd_create(CLOCK_BOOTTIME, TFD_CLOEXEC | TFD_NONBLOCK);
	CHECK(d.alarm_fd >= 0);
	/* Kicked on registration and reaping; nobody reads it here. */
	d.pl.kick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	d.pl.resume_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	CHECK(d.pl.kick_fd >= 0 && d.pl.resume_fd >= 0);
	/* An empty ledger: WL_OP_WAKES answers from it. */
	d.ledger = ledger_new(16, 1000);
	CHECK(d.ledger != NULL);
	return 0;
}

/* A region as a client makes it, every byte set to fill. */
static int region_fd(uint8_t fill)
{
	struct wl_region *rg;
	int fd;

	CHECK(wl_region_create(&rg, &fd) == 0);
	memset(rg, fill, sizeof(*rg));
	munmap(rg, sizeof(*rg));
	return fd;
}

/* Read every reply waiting for client i; each must be acceptable. */
static void drain(int i)
{
	for (;;) {
		struct wl_msg_rep rep;
		size_t len;
		int fd = -1, r = wl_recv_msg_upto(peer[i], &rep, sizeof(rep), &len, &fd);

		if (fd >= 0)
			close(fd);
		if (r == -ETIMEDOUT || r == -ENOTCONN)
			return;
		CHECK(r == 0 && len == sizeof(rep));
		CHECK(rep.magic == WL_MSG_MAGIC);
		CHECK(rep.status <= 0 && rep.status >= -WL_MAX_ERRNO);
		CHECK(memchr(rep.msg, 0, sizeof(rep.msg)) != NULL);
		CHECK(wl_check_reply(&rep) == rep.status);
	}
}

static void check_segment(void)
{
	struct wl_shm_header *h = d.seg.hdr;

	CHECK(wl_seg_validate(h, seg_size) == 0);
	for (uint32_t k = 0; k < h->nlive; k++) {
		uint32_t i = h->order[k];

		CHECK(i < h->nslots && h->slots[i].state == WL_SLOT_LIVE && h->slots[i].pos == k);
		CHECK(d.slot_conn[i] >= 0 && d.slot_conn[i] < NCONN);
		CHECK(d.conns[d.slot_conn[i]].slot == (int)i);
		CHECK(d.regions[i] != NULL);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	union {
		struct wl_msg_req req;
		struct wl_msg_arg alarm;
		uint8_t b[sizeof(struct wl_msg_arg)];
	} m;
	size_t pos = 0;

	memset(d.seg.hdr, 0, (seg_size + 63) / 64 * 64);
	CHECK(wl_seg_init(d.seg.hdr, NSLOTS) == 0);
	memset(&d.pol, 0, sizeof(d.pol));
	for (int i = 0; i < NCONN; i++)
		conn_open(i);
	while (pos + 2 <= size) {
		uint8_t flags = data[pos], sel = data[pos + 1];
		int i = flags & 2 ? 1 : 0, fd = -1;
		size_t len, n;

		pos += 2;
		len = sel == 0 ? sizeof(m.req) : sel == 1 ? sizeof(m.alarm) : sel % (sizeof(m) + 1);
		n = size - pos < len ? size - pos : len;
		memset(&m, 0, sizeof(m));
		memcpy(m.b, data + pos, n);
		pos += n;
		if (flags & 8) {
			fd = region_fd(flags);
		} else if (flags & 1) {
			fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
			CHECK(fd >= 0);
		}
		if (d.conns[i].fd < 0)
			conn_open(i);
		if (server_handle_msg(&d, &d.conns[i], m.b, len, fd) < 0) {
			server_conn_close(&d, &d.conns[i]);
			close(peer[i]);
			peer[i] = -1;
		} else {
			drain(i);
		}
		if (flags & 4)
			alarms_timer_event(&d);
		check_segment();
	}
	for (int i = 0; i < NCONN; i++) {
		if (d.conns[i].fd >= 0)
			server_conn_close(&d, &d.conns[i]);
		if (peer[i] >= 0)
			close(peer[i]);
		peer[i] = -1;
	}
	CHECK(d.seg.hdr->nlive == 0);
	for (uint32_t i = 0; i < NSLOTS; i++)
		CHECK(d.regions[i] == NULL);
	return 0;
}
