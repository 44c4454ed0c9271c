/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../lib/wl_proto.h"
#include "cli.h"

int snapshot_take(const struct cli *cli, struct snapshot *s)
{
	struct wl_msg_rep rep;
	struct wl_seg seg;
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
		wl_set_error("shared segment rejected: %s", wl_strerror(r));
		return r;
	}
	/* Zeroed (free slots read as FREE); under the lock copy the header
	 * and the live slots only: the segment is mostly unused slots. */
	s->hdr = calloc(1, seg.hdr->size);
	if (!s->hdr) {
		wl_seg_unmap(&seg);
		return -ENOMEM;
	}
	r = wl_lock(seg.hdr);
	if (r == 0) {
		uint32_t n = seg.hdr->nlive <= seg.hdr->nslots ? seg.hdr->nlive : seg.hdr->nslots;

		memcpy(s->hdr, seg.hdr, sizeof(*seg.hdr));
		for (uint32_t k = 0; k < n; k++) {
			uint32_t i = seg.hdr->order[k];

			if (i < seg.hdr->nslots)
				s->hdr->slots[i] = seg.hdr->slots[i];
		}
		wl_unlock(seg.hdr);
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
