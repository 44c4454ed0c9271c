/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `wakelock wakes [--summary]` and `wakelock timeline --svg FILE`: the
 * daemon's wake ledger (docs/ledger.md), fetched over the socket and
 * printed by wakes_format.c and timeline_svg.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../lib/wl_proto.h"
#include "cli.h"
#include "wakes.h"

/* Every record the daemon holds, decoded and checked; *n gets their
 * number.  Returns 0 or a negative errno (the detail in wl_last_error). */
static int fetch(const struct cli *cli, struct wl_ledger_record **out, size_t *n)
{
	struct wl_msg_arg m;
	struct wl_msg_rep rep;
	struct wl_ledger_record *r = NULL;
	struct stat st;
	const uint8_t *map = MAP_FAILED;
	size_t off = 0, k = 0;
	int sock, fd = -1, err;

	*out = NULL;
	*n = 0;
	sock = wl_connect(cli->socket, 5000);
	if (sock < 0)
		return sock;
	memset(&m, 0, sizeof(m));
	m.req.op = WL_OP_WAKES;
	m.first_ms = 0;
	err = wl_request_arg_fd(sock, &m, &rep, &fd);
	close(sock);
	if (err < 0)
		return err;
	err = -EPROTO;
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size < 0 || rep.slot > (1u << 20))
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

static int failed(int r)
{
	fprintf(stderr, "wakelock: %s\n", wl_last_error()[0] ? wl_last_error() : wl_strerror(r));
	return 1;
}

int cmd_wakes(const struct cli *cli, int summary)
{
	struct wl_ledger_record *r;
	size_t n;
	int err = fetch(cli, &r, &n);

	if (err < 0)
		return failed(err);
	if (summary) {
		struct wl_ledger_summary s;

		err = wl_ledger_summarize(r, n, &s);
		if (err < 0) {
			free(r);
			return failed(err);
		}
		if (cli->json)
			wl_ledger_json_summary(stdout, &s);
		else
			wakes_print_summary(stdout, &s);
	} else if (cli->json) {
		wakes_print_json(stdout, r, n);
	} else {
		wakes_print_table(stdout, r, n);
	}
	free(r);
	return fflush(stdout) ? 1 : 0;
}

int cmd_timeline(const struct cli *cli, const char *path)
{
	struct wl_ledger_record *r;
	char tmp[4200];
	size_t n;
	FILE *f;
	int err = fetch(cli, &r, &n);

	if (err < 0)
		return failed(err);
	if (!n) {
		free(r);
		fprintf(stderr, "wakelock: the ledger is empty: no suspend attempt yet\n");
		return 1;
	}
	/* Written whole or not at all. */
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "we");
	if (!f) {
		free(r);
		fprintf(stderr, "wakelock: %s: %s\n", tmp, strerror(errno));
		return 1;
	}
	err = timeline_svg(f, r, n, 0);
	free(r);
	if (fclose(f) != 0 || err < 0 || rename(tmp, path) != 0) {
		fprintf(stderr, "wakelock: %s: %s\n", path, strerror(err < 0 ? -err : errno));
		unlink(tmp);
		return 1;
	}
	return 0;
}
