/* SPDX-License-Identifier: GPL-2.0-or-later */
/* wakelock run: keep the system awake while a command runs. */
#include <errno.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cli.h"

int cmd_run(const struct cli *cli, const char *name, char **argv)
{
	char defname[WL_NAME_MAX], base[256];
	wl_client *c;
	wl_hold *h;
	pid_t pid;
	int st, r;

	if (!name) {
		snprintf(base, sizeof(base), "%s", argv[0]);
		snprintf(defname, sizeof(defname), "run:%s", basename(base));
		name = defname;
	}
	r = wl_client_open(cli->socket, name, &c);
	if (r == 0 && (r = wl_hold_create(c, "run", &h)) == 0)
		r = wl_hold_acquire(h);
	if (r < 0) {
		fprintf(stderr, "wakelock: %s\n", wl_last_error()[0] ? wl_last_error() : wl_strerror(r));
		return r == -ENOTCONN ? 3 : 1;
	}
	pid = fork();
	if (pid < 0) {
		perror("wakelock: fork");
		return 1;
	}
	if (pid == 0) {
		execvp(argv[0], argv);
		fprintf(stderr, "wakelock: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	/* Let the command handle ^C; we follow when it exits. */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return 1;
	wl_hold_release(h);
	wl_hold_destroy(h);
	wl_client_close(c);
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return 128 + WTERMSIG(st);
}
