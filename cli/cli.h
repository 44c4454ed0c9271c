/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef WL_CLI_H
#define WL_CLI_H

#include "lib/wl_shm.h"

struct cli {
	const char *socket;   /* NULL = default */
	const char *root;     /* prefix for /sys/class/wakeup */
	int json;
};

/* A consistent copy of the segment taken under its lock. */
struct snapshot {
	struct wl_shm_header *hdr;  /* malloc'ed copy */
	uint64_t now_mono;
};

int snapshot_take(const struct cli *cli, struct snapshot *s);
void snapshot_free(struct snapshot *s);

int cmd_list(const struct cli *cli, int all);
int cmd_stats(const struct cli *cli);
int cmd_status(const struct cli *cli);
int cmd_run(const struct cli *cli, const char *name, char **argv);
int cmd_policy(const struct cli *cli, int op, const char *name);
/* wakes_cmd.c: the wake ledger. */
int cmd_wakes(const struct cli *cli, int summary);
int cmd_timeline(const struct cli *cli, const char *svg_path);

/* kernel.c: print /sys/class/wakeup sources (table or JSON array). */
void kernel_sources_print(const struct cli *cli);

#endif
