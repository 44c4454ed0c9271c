/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Hooks run before suspend and after resume, e.g. to resync the clock. */
#include <errno.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "log.h"
#include "powerloop.h"

extern char **environ;

int run_hook(const char *path, const char *phase)
{
	char *argv[] = { (char *)path, (char *)phase, NULL };
	pid_t pid;
	int st, r;

	r = posix_spawn(&pid, path, NULL, NULL, argv, environ);
	if (r) {
		log_warn("hook %s %s: %s", path, phase, strerror(r));
		return -r;
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		log_warn("hook %s %s failed (status 0x%x)", path, phase, st);
		return st ? st : -EIO;
	}
	return 0;
}
