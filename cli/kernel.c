/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The kernel's own wakeup sources, from /sys/class/wakeup/wakeupN/. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/wl_json.h"
#include "cli.h"

static const char *const fields[] = {
	"active_count", "event_count", "wakeup_count", "expire_count", "active_time_ms",
	"total_time_ms", "max_time_ms", "last_change_ms", "prevent_suspend_time_ms",
};
#define NFIELDS (sizeof(fields) / sizeof(fields[0]))

static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	if (!fgets(buf, (int)len, f))
		buf[0] = 0;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

static int cmp(const struct dirent **a, const struct dirent **b)
{
	return strverscmp((*a)->d_name, (*b)->d_name);
}

void kernel_sources_print(const struct cli *cli)
{
	char dir[4200], path[4500], name[64], val[32];
	struct dirent **list = NULL;
	int n, first = 1;

	snprintf(dir, sizeof(dir), "%s/sys/class/wakeup", cli->root ? cli->root : "");
	n = scandir(dir, &list, NULL, cmp);
	if (cli->json)
		printf("[");
	else
		printf("\nKernel wakeup sources (%s):\n%-24s %8s %8s %8s %8s %12s %10s\n", dir,
		       "NAME", "ACTIVE", "EVENTS", "ABORTS", "EXPIRED", "TOTAL_MS", "MAX_MS");
	for (int i = 0; i < n; i++) {
		unsigned long long v[NFIELDS];

		if (list[i]->d_name[0] == '.')
			goto next;
		snprintf(path, sizeof(path), "%s/%s/name", dir, list[i]->d_name);
		if (read_line(path, name, sizeof(name)) < 0)
			goto next;
		for (unsigned f = 0; f < NFIELDS; f++) {
			snprintf(path, sizeof(path), "%s/%s/%s", dir, list[i]->d_name, fields[f]);
			v[f] = read_line(path, val, sizeof(val)) == 0 ? strtoull(val, NULL, 10) : 0;
		}
		if (cli->json) {
			printf("%s{\"name\":", first ? "" : ",");
			wl_json_str(stdout, name);
			for (unsigned f = 0; f < NFIELDS; f++)
				printf(",\"%s\":%llu", fields[f], v[f]);
			printf("}");
		} else {
			printf("%-24s %8llu %8llu %8llu %8llu %12llu %10llu\n", name, v[0], v[1],
			       v[2], v[3], v[5], v[6]);
		}
		first = 0;
next:
		free(list[i]);
	}
	free(list);
	if (cli->json)
		printf("]");
	else if (first)
		printf("(none)\n");
}
