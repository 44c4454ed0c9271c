/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Closing descriptors that came from a client.  close() of the last
 * reference to a file runs its release, and some releases wait: a TCP
 * socket with SO_LINGER and unsent data waits up to its linger time (an
 * hour, if the client asks), a FUSE file waits for its server, a tty for
 * its output to drain.  A descriptor a client passed us (a region of the
 * wrong type, a descriptor on a request that takes none) or a connection
 * with such descriptors still queued in it must therefore never be closed
 * by the main or the power thread.
 *
 * fd_discard() hands it to a thread of its own, which does nothing else:
 * if a release blocks there, only later discards wait, and the daemon goes
 * on.  Sockets first lose their linger (SO_LINGER 0: the connection is
 * reset instead of drained), so the common case does not block the closer
 * either.  The queue is a pipe: if 16 384 closes are stuck behind one
 * release, further descriptors are kept open (leaked, logged once) rather
 * than closed here.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include "closer.h"
#include "log.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int queue[2] = { -1, -1 };

static void *closer_main(void *arg)
{
	int fds[64];

	(void)arg;
	for (;;) {
		ssize_t n = read(queue[0], fds, sizeof(fds));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return NULL;
		for (size_t i = 0; i < (size_t)n / sizeof(int); i++)
			close(fds[i]);
	}
}

static void start(void)
{
	pthread_attr_t a;
	pthread_t t;
	sigset_t all, old;

	/* Read end blocking (the thread sleeps on it), write end not. */
	if (pipe2(queue, O_CLOEXEC) < 0 ||
	    fcntl(queue[1], F_SETFL, O_NONBLOCK) < 0) {
		log_error("descriptor closer: %s: client descriptors will be kept open",
		          strerror(errno));
		queue[0] = queue[1] = -1;
		return;
	}
	/* No signal for this thread: the daemon takes them by signalfd. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &a, closer_main, NULL) != 0) {
		log_error("descriptor closer: no thread: client descriptors will be kept open");
		close(queue[0]);
		close(queue[1]);
		queue[0] = queue[1] = -1;
	}
	pthread_attr_destroy(&a);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void fd_discard(int fd)
{
	static int warned;
	struct linger no = { .l_onoff = 1, .l_linger = 0 };
	struct stat st;

	if (fd < 0)
		return;
	/* Our own reference is what we change: a reset instead of a drain
	 * when ours is the last one. */
	if (fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode))
		(void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &no, sizeof(no));
	pthread_once(&once, start);
	if (queue[1] >= 0 && write(queue[1], &fd, sizeof(fd)) == (ssize_t)sizeof(fd))
		return;
	if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
		log_warn("descriptor closer stuck or missing: keeping client descriptors open");
}
