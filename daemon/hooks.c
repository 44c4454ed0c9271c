/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Hooks run before suspend and after resume, e.g. to resync the clock.
 *
 * A hook is an ordinary program, not part of the daemon: it must be
 * stoppable like one and must not stop the daemon.  So:
 *  - it starts with an empty signal mask and every signal at its default
 *    action.  The daemon blocks SIGTERM, SIGINT, SIGHUP and SIGUSR1 in all
 *    its threads (they are read from a signalfd) and ignores SIGPIPE; a
 *    program started with those inherited could not be stopped by SIGTERM
 *    and would not see EPIPE the usual way.  (glibc's posix_spawn leaves
 *    its own two internal signals, 32 and 33, ignored in the child; no
 *    program may use those, and sigaddset() refuses them anyway.)
 *  - it runs in a process group of its own, so that what it starts dies
 *    with it when it has to be killed;
 *  - it gets a time limit.  A hook still running then gets SIGTERM (its
 *    group does), and SIGKILL one second later, and is reaped.  A hung
 *    hook therefore delays the loop, and the daemon's shutdown, by at most
 *    the limit plus that second.
 * Waiting uses a pidfd (poll() with a timeout; no signals, so it does not
 * matter which thread runs the hook or what the others do with SIGCHLD),
 * or short sleeps where the kernel has no pidfd_open.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "lib/wl_shm.h"
#include "log.h"
#include "powerloop.h"

extern char **environ;

/* Between SIGTERM and SIGKILL; then how long a killed hook may take to go. */
#define HOOK_KILL_GRACE_MS 1000u
#define HOOK_REAP_MS 2000u
#define PHASE_VAR "WAKELOCKD_PHASE"

int hooks_no_pidfd;

static uint64_t now_ms(void)
{
	return wl_now_mono() / 1000000u;
}

static int open_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
	if (!hooks_no_pidfd)
		return (int)syscall(SYS_pidfd_open, pid, 0);
#endif
	(void)pid;
	errno = ENOSYS;
	return -1;
}

/* 1 once the child has exited (it is left unreaped, so its pid, which is
 * also its process group's id, cannot be reused meanwhile), 0 at the
 * deadline, -errno if it cannot be waited for. */
static int wait_exit(pid_t pid, int pidfd, uint64_t deadline)
{
	unsigned step = 1;

	for (;;) {
		siginfo_t si;
		uint64_t now;

		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (si.si_pid == pid)
			return 1;
		now = now_ms();
		if (now >= deadline)
			return 0;
		if (pidfd >= 0) {
			struct pollfd pfd = { .fd = pidfd, .events = POLLIN };
			uint64_t left = deadline - now;

			/* EINTR (the stop request's SIGUSR2): look again. */
			if (poll(&pfd, 1, left > 60000 ? 60000 : (int)left) < 0 && errno != EINTR)
				return -errno;
		} else {
			uint64_t left = deadline - now;
			struct timespec ts;

			if (step > left)
				step = (unsigned)left;
			ts.tv_sec = 0;
			ts.tv_nsec = (long)step * 1000000L;
			nanosleep(&ts, NULL);
			if (step < 50)
				step *= 2;
		}
	}
}

static int reap(pid_t pid, int *st)
{
	while (waitpid(pid, st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

/* The daemon's environment with WAKELOCKD_PHASE=phase (replacing any). */
static char **hook_env(const char *phase, char *var, size_t varlen)
{
	size_t n = 0, k = 0;
	char **env;

	snprintf(var, varlen, PHASE_VAR "=%s", phase);
	while (environ && environ[n])
		n++;
	env = calloc(n + 2, sizeof(*env));
	if (!env)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], PHASE_VAR "=", sizeof(PHASE_VAR)))
			env[k++] = environ[i];
	env[k++] = var;
	env[k] = NULL;
	return env;
}

static int spawn(pid_t *pid, const char *path, const char *phase)
{
	char *argv[] = { (char *)path, (char *)phase, NULL };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, all;
	char var[64], **env;
	int r;

	env = hook_env(phase, var, sizeof(var));
	if (!env)
		return ENOMEM;
	sigemptyset(&none);
	sigfillset(&all);
	sigdelset(&all, SIGKILL);
	sigdelset(&all, SIGSTOP);
	r = posix_spawnattr_init(&attr);
	if (r) {
		free(env);
		return r;
	}
	r = posix_spawn_file_actions_init(&fa);
	if (r) {
		posix_spawnattr_destroy(&attr);
		free(env);
		return r;
	}
	if (!(r = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
	                                          POSIX_SPAWN_SETPGROUP)) &&
	    !(r = posix_spawnattr_setsigmask(&attr, &none)) &&
	    !(r = posix_spawnattr_setsigdefault(&attr, &all)) &&
	    !(r = posix_spawnattr_setpgroup(&attr, 0)) &&
	    /* Nothing to read: the daemon's stdin may be a terminal. */
	    !(r = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0)))
		r = posix_spawn(pid, path, &fa, &attr, argv, env);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	free(env);
	return r;
}

/* Past the time limit: SIGTERM to the group, SIGKILL after a grace period
 * (to the group again, for what the hook started), reap.  The leader is
 * reaped only after the SIGKILL, so the group id is still ours. */
static void kill_late(const char *path, const char *phase, pid_t pid, int pidfd,
                      unsigned timeout_ms)
{
	int st, r;

	log_warn("hook %s %s still running after %u ms: terminating it", path, phase, timeout_ms);
	if (kill(-pid, SIGTERM) < 0)
		kill(pid, SIGTERM);
	r = wait_exit(pid, pidfd, now_ms() + HOOK_KILL_GRACE_MS);
	if (kill(-pid, SIGKILL) < 0)
		kill(pid, SIGKILL);
	if (r == 0)
		r = wait_exit(pid, pidfd, now_ms() + HOOK_REAP_MS);
	if (r == 1) {
		reap(pid, &st);
		return;
	}
	if (r < 0)      /* ECHILD: already reaped by someone else */
		return;
	/* Stuck in the kernel (uninterruptible sleep): nothing more to do
	 * without blocking the loop for good.  It stays a zombie once it goes. */
	log_error("hook %s %s (pid %d) does not die after SIGKILL; leaving it", path, phase,
	          (int)pid);
}

int run_hook(const char *path, const char *phase, unsigned timeout_ms)
{
	pid_t pid;
	int pidfd, st, r;

	r = spawn(&pid, path, phase);
	if (r) {
		log_warn("cannot run hook %s %s: %s", path, phase, strerror(r));
		return -r;
	}
	/* The child is ours and unreaped: its pid cannot be reused before the
	 * pidfd refers to it. */
	pidfd = open_pidfd(pid);
	r = wait_exit(pid, pidfd, now_ms() + timeout_ms);
	if (r == 0) {
		kill_late(path, phase, pid, pidfd, timeout_ms);
		r = -ETIMEDOUT;
	} else if (r < 0) {
		/* ECHILD: someone else reaped it (SIGCHLD ignored?). */
		log_warn("hook %s %s: cannot wait for it: %s", path, phase, strerror(-r));
	} else if ((r = reap(pid, &st)) == 0) {
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
			r = 0;
		} else {
			if (WIFEXITED(st))
				log_warn("hook %s %s exited with status %d", path, phase,
				         WEXITSTATUS(st));
			else
				log_warn("hook %s %s killed by signal %d", path, phase,
				         WIFSIGNALED(st) ? WTERMSIG(st) : 0);
			r = st;
		}
	}
	if (pidfd >= 0)
		close(pidfd);
	return r;
}
