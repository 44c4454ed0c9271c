/* SPDX-License-Identifier: GPL-2.0-or-later */
/* wakelock run: keep the system awake while a command runs. */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "lib/wl_json.h"
#include "cli.h"

/*
 * The default name, "run:" and the program's base name, made valid: a
 * byte a client name may not have (a space, a quote, a comma, a control
 * or non-ASCII byte) becomes '_', and the name is cut to fit.
 */
static void default_name(char *out, size_t len, const char *prog)
{
	char base[PATH_MAX];
	size_t n;

	snprintf(base, sizeof(base), "%s", prog);
	snprintf(out, len, "run:%s", basename(base));
	n = strlen(out);
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)out[i];
		if (ch <= ' ' || ch >= 0x7f || ch == '"' || ch == '\\' || ch == ',')
			out[i] = '_';
	}
}

int cmd_run(const struct cli *cli, const char *name, char **argv)
{
	char defname[WAKELOCK_NAME_MAX];
	wakelock_client *c;
	wakelock_hold *h;
	pid_t pid;
	int st, r;

	if (!name) {
		default_name(defname, sizeof(defname), argv[0]);
		name = defname;
	} else if (wl_name_check(name) < 0) {
		char en[256];

		wl_escape(en, sizeof(en), name);
		fprintf(stderr, "wakelock: invalid client name '%s': --name takes 1 to %d bytes "
		        "of printable ASCII without spaces, quotes, backslashes or commas\n",
		        en, WAKELOCK_NAME_MAX - 1);
		return 2;
	}
	r = wakelock_client_open(cli->socket, name, &c);
	if (r == -EADDRINUSE && name == defname) {
		/* A name is its live owner's: another `wakelock run` of the
		 * same program has it.  Ours gets our pid. */
		char pid_s[16];
		int n;

		n = snprintf(pid_s, sizeof(pid_s), ".%d", (int)getpid());
		defname[strnlen(defname, sizeof(defname) - (size_t)n - 1)] = 0;
		strcat(defname, pid_s);
		r = wakelock_client_open(cli->socket, name, &c);
	}
	if (r == 0 && (r = wakelock_hold_create(c, "run", &h)) == 0)
		r = wakelock_hold_acquire(h);
	if (r < 0) {
		fprintf(stderr, "wakelock: %s\n", wakelock_last_error()[0] ? wakelock_last_error() : wakelock_strerror(r));
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
	wakelock_hold_release(h);
	wakelock_hold_destroy(h);
	wakelock_client_close(c);
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return 128 + WTERMSIG(st);
}
