/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer harness: what libwakelock and the CLI accept from the daemon
 * - a reply (wl_check_reply) and a published segment (wl_seg_validate) -
 * and the statistics of a segment that passed, as JSON.
 *
 * Input: a struct wl_msg_rep (zero-padded if short), then 4 bytes giving
 * the segment's size (bounded to three slots and a bit), then its first
 * bytes; the rest of the segment is zero.  The segment buffer has exactly
 * that size, so AddressSanitizer sees any read past it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/wl_json.h"
#include "lib/wl_proto.h"
#include "lib/wl_shm.h"

#define CHECK(x) do { if (!(x)) abort(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_reply(const uint8_t *data, size_t size)
{
	struct wl_msg_rep rep;
	int r;

	memset(&rep, 0, sizeof(rep));
	memcpy(&rep, data, size < sizeof(rep) ? size : sizeof(rep));
	r = wl_check_reply(&rep);
	CHECK(r == 0 || (r < 0 && r >= -WL_MAX_ERRNO));
	CHECK(r != 0 || rep.status == 0);
	/* Past the magic, the text is terminated and free of control bytes
	 * (with another magic nothing of the reply is used). */
	if (rep.magic == WL_MSG_MAGIC) {
		CHECK(memchr(rep.msg, 0, sizeof(rep.msg)) != NULL);
		for (const char *p = rep.msg; *p; p++)
			CHECK((unsigned char)*p >= 0x20 && *p != 0x7f);
	}
	if (r < 0)
		CHECK(wakelock_last_error()[0] != 0);
}

static void check_segment(const uint8_t *data, size_t size)
{
	size_t cap = wl_shm_total_size(3) + 64, len;
	uint32_t want = 0;
	struct wl_shm_header *h;
	void *buf;
	FILE *f;

	memcpy(&want, data, size < 4 ? size : 4);
	data += size < 4 ? size : 4;
	size -= size < 4 ? size : 4;
	len = want % cap;
	/* The header holds 64-bit fields: an aligned buffer, as mmap gives. */
	buf = aligned_alloc(64, (len + 63) / 64 * 64);
	CHECK(buf != NULL);
	memset(buf, 0, (len + 63) / 64 * 64);
	memcpy(buf, data, size < len ? size : len);
	if (wl_seg_validate(buf, len) == 0) {
		h = buf;
		CHECK(len >= sizeof(*h) && h->size <= len);
		CHECK(h->nslots >= 1 && h->nslots <= WL_MAX_CLIENTS);
		CHECK(h->nlive <= h->nslots);
		f = fopen("/dev/null", "w");
		CHECK(f != NULL);
		wl_json_dstats(f, &h->dstats);
		fclose(f);
	}
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t n = size < sizeof(struct wl_msg_rep) ? size : sizeof(struct wl_msg_rep);

	check_reply(data, size);
	check_segment(data + n, size - n);
	return 0;
}
