/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fetching the daemon's wake ledger (WL_OP_WAKES): for `wakelock wakes`
 * and for resume notifications (resume.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "wl_ledger.h"
#include "wl_proto.h"

int wl_ledger_fetch(int sock, unsigned newest, struct wl_ledger_record **out, size_t *n)
{
	struct wl_msg_arg m;
	struct wl_msg_rep rep;
	struct wl_ledger_record *r = NULL;
	struct stat st;
	const uint8_t *map = MAP_FAILED;
	size_t off = 0, k = 0;
	int fd = -1, err;

	*out = NULL;
	*n = 0;
	memset(&m, 0, sizeof(m));
	m.req.op = WL_OP_WAKES;
	m.index = newest;
	m.wire = WL_LEDGER_WIRE_VERSION;
	err = wl_request_arg_fd(sock, &m, &rep, &fd);
	if (err < 0)
		return err;
	err = -EPROTO;
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size < 0 || rep.slot > (1u << 20) ||
	    (newest && rep.slot > newest))
		goto out;
	r = calloc(rep.slot ? rep.slot : 1, sizeof(*r));
	if (!r) {
		err = -ENOMEM;
		goto out;
	}
	if (st.st_size) {
		map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (map == MAP_FAILED)
			goto out;
	}
	/* Each record: u16 length, then its wire form, checked by decode. */
	while (k < rep.slot && off + 2 <= (size_t)st.st_size) {
		size_t len = (size_t)map[off] | (size_t)map[off + 1] << 8;

		if (off + 2 + len > (size_t)st.st_size ||
		    wl_ledger_decode(map + off + 2, len, &r[k]) < 0)
			goto out;
		off += 2 + len;
		k++;
	}
	if (k != rep.slot || off != (size_t)st.st_size)
		goto out;
	*out = r;
	*n = k;
	r = NULL;
	err = 0;
out:
	if (err == -EPROTO)
		wl_set_error("wakelockd sent a malformed ledger");
	if (map != MAP_FAILED)
		munmap((void *)map, (size_t)st.st_size);
	if (fd >= 0)
		close(fd);
	free(r);
	return err;
}
