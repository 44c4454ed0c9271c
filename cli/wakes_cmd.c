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
#include <unistd.h>
#include "lib/wl_outfile.h"
#include "lib/wl_proto.h"
#include "cli.h"
#include "wakes.h"

/* Every record the daemon holds, decoded and checked. */
static int fetch(const struct cli *cli, struct wl_ledger_record **out, size_t *n)
{
	int sock = wl_connect(cli->socket, 5000), r;

	if (sock < 0)
		return sock;
	r = wl_ledger_fetch(sock, 0, out, n);
	close(sock);
	return r;
}

static int failed(int r)
{
	fprintf(stderr, "wakelock: %s\n", wakelock_last_error()[0] ? wakelock_last_error() : wakelock_strerror(r));
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
	struct wl_outfile o;
	size_t n;
	int err = fetch(cli, &r, &n);

	if (err < 0)
		return failed(err);
	if (!n) {
		free(r);
		fprintf(stderr, "wakelock: the ledger is empty: no suspend attempt yet\n");
		return 1;
	}
	/* Written whole or not at all, and through no symlink: FILE may be
	 * in a directory others can write (lib/wl_outfile.h). */
	if (wl_outfile_open(&o, path, 0666) < 0) {
		free(r);
		fprintf(stderr, "wakelock: %s\n", wakelock_last_error());
		return 1;
	}
	err = timeline_svg(o.f, r, n, 0);
	free(r);
	if (err < 0) {
		wl_outfile_abort(&o);
		fprintf(stderr, "wakelock: %s: %s\n", path, strerror(-err));
		return 1;
	}
	if (wl_outfile_commit(&o) < 0) {
		fprintf(stderr, "wakelock: %s\n", wakelock_last_error());
		return 1;
	}
	return 0;
}
