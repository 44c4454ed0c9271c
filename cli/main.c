/* SPDX-License-Identifier: GPL-2.0-or-later */
/* wakelock: the command-line client of wakelockd (see wakelock(1)). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "lib/wl_json.h"
#include "lib/wl_proto.h"
#include "cli.h"

static void usage(FILE *f)
{
	fprintf(f, "Usage: wakelock [--json] [--socket PATH] [--root DIR] COMMAND\n"
	           "  list [--all]             who holds the system awake, since when\n"
	           "  stats                    per-client, daemon and kernel statistics\n"
	           "  status                   daemon state in a few lines\n"
	           "  run [--name N] -- CMD... hold while CMD runs; exit with its status\n"
	           "  deny KEY | allow KEY     policy: a client NAME's holds, or those of all\n"
	           "                           clients of a user (uid:UID or uid:USER), stop/start\n"
	           "                           counting\n"
	           "  wakes [--summary]        each suspend attempt: what woke it, who claimed it\n"
	           "  timeline --svg FILE      the asleep/awake timeline of the ledger as SVG\n"
	           "  reload                   make the daemon re-read its configuration\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "socket", required_argument, NULL, 's' },
		{ "root", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct cli cli = { 0 };
	const char *cmd;
	int opt;

	/* '+': stop at the command, whose own options follow it. */
	while ((opt = getopt_long(argc, argv, "+jh", opts, NULL)) != -1) {
		switch (opt) {
		case 'j': cli.json = 1; break;
		case 's':
			/* Not the default socket: that is what leaving it out means. */
			if (!*optarg) {
				fprintf(stderr, "wakelock: --socket needs a path, not an empty string\n");
				return 2;
			}
			cli.socket = optarg;
			break;
		case 'r': cli.root = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	cmd = argv[optind++];
	/* Accept --json after the command too: `wakelock stats --json`. */
	for (int i = optind; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "--json")) {
			cli.json = 1;
			memmove(&argv[i], &argv[i + 1], (size_t)(argc - i) * sizeof(char *));
			argc--;
			i--;
		}
	}
	if (!strcmp(cmd, "list"))
		return cmd_list(&cli, optind < argc && !strcmp(argv[optind], "--all"));
	if (!strcmp(cmd, "stats"))
		return cmd_stats(&cli);
	if (!strcmp(cmd, "status"))
		return cmd_status(&cli);
	if (!strcmp(cmd, "wakes")) {
		int summary = optind < argc && !strcmp(argv[optind], "--summary");

		if (argc - optind > summary) {
			usage(stderr);
			return 2;
		}
		return cmd_wakes(&cli, summary);
	}
	if (!strcmp(cmd, "timeline")) {
		if (argc - optind != 2 || strcmp(argv[optind], "--svg") || !*argv[optind + 1]) {
			usage(stderr);
			return 2;
		}
		return cmd_timeline(&cli, argv[optind + 1]);
	}
	if (!strcmp(cmd, "reload"))
		return cmd_policy(&cli, WL_OP_RELOAD, NULL);
	if (!strcmp(cmd, "deny") || !strcmp(cmd, "allow")) {
		if (optind + 1 != argc) {
			usage(stderr);
			return 2;
		}
		return cmd_policy(&cli, !strcmp(cmd, "deny") ? WL_OP_DENY : WL_OP_ALLOW, argv[optind]);
	}
	if (!strcmp(cmd, "run")) {
		const char *name = NULL;

		while (optind < argc && strcmp(argv[optind], "--")) {
			if (!strcmp(argv[optind], "--name") && optind + 1 < argc) {
				name = argv[optind + 1];
				optind += 2;
			} else if (!strncmp(argv[optind], "--name=", 7)) {
				name = argv[optind++] + 7;
			} else {
				break;
			}
		}
		if (optind < argc && !strcmp(argv[optind], "--"))
			optind++;
		if (optind >= argc) {
			usage(stderr);
			return 2;
		}
		return cmd_run(&cli, name, &argv[optind]);
	}
	{
		char ec[256];

		wl_escape(ec, sizeof(ec), cmd);
		fprintf(stderr, "wakelock: unknown command '%s'\n", ec);
	}
	usage(stderr);
	return 2;
}
