/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/wl_proto.h"
#include "cli.h"

/* Names are as the daemon recorded them; cut every one at its field all
 * the same, so that printing never runs into the next field (escaping of
 * what is inside happens where it is printed). */
static void terminate_names(struct wl_shm_slot *sl)
{
	sl->name[WAKELOCK_NAME_MAX - 1] = 0;
	for (uint32_t j = 0; j < WAKELOCK_MAX_HOLDS_PER_CLIENT; j++)
		sl->holds[j].name[WAKELOCK_NAME_MAX - 1] = 0;
	for (uint32_t j = 0; j < WAKELOCK_MAX_ALARMS_PER_CLIENT; j++)
		sl->alarms[j].name[WAKELOCK_NAME_MAX - 1] = 0;
}

int snapshot_take(const struct cli *cli, struct snapshot *s)
{
	struct wl_msg_rep rep;
	struct wl_seg seg;
	size_t size;
	int sock, fd = -1, r;

	memset(s, 0, sizeof(*s));
	sock = wl_connect(cli->socket, 5000);
	if (sock < 0)
		return sock;
	r = wl_request(sock, WL_OP_OBSERVE, NULL, &rep, &fd);
	close(sock);
	if (r < 0)
		return r;
	if (fd < 0)
		return -EPROTO;
	r = wl_seg_map_fd(fd, &seg);
	if (r < 0) {
		wl_set_error("shared segment rejected: %s", wakelock_strerror(r));
		return r;
	}
	/* A snapshot the daemon made for us (sealed, nobody writes it);
	 * still, use counts checked against the mapping's size only. */
	size = seg.hdr->size;
	if (size < sizeof(*seg.hdr) || size > seg.len) {
		wl_seg_unmap(&seg);
		return -EBADMSG;
	}
	s->hdr = calloc(1, size);
	if (!s->hdr) {
		wl_seg_unmap(&seg);
		return -ENOMEM;
	}
	memcpy(s->hdr, seg.hdr, sizeof(*seg.hdr));
	r = 0;
	if (s->hdr->nslots > WL_MAX_CLIENTS || s->hdr->nlive > s->hdr->nslots ||
	    wl_shm_total_size(s->hdr->nslots) > size)
		r = -EBADMSG;
	for (uint32_t k = 0; r == 0 && k < s->hdr->nlive; k++) {
		uint32_t i = s->hdr->order[k];

		if (i < s->hdr->nslots) {
			s->hdr->slots[i] = seg.hdr->slots[i];
			terminate_names(&s->hdr->slots[i]);
		}
	}
	s->now_mono = wl_now_mono();
	wl_seg_unmap(&seg);
	if (r < 0) {
		free(s->hdr);
		s->hdr = NULL;
	}
	return r;
}

void snapshot_free(struct snapshot *s)
{
	free(s->hdr);
	s->hdr = NULL;
}
