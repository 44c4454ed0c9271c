// SPDX-License-Identifier: GPL-2.0
/*
 * serial-epoll-gap: serial-port wakeup, test 3. A reader polls a serial port enabled for
 * wakeup with EPOLLWAKEUP; check that from the arrival of a byte until the
 * reader's next epoll_wait() there is no moment at which no wakeup source is
 * active.
 *
 *   serial-epoll-gap TTY SYSFS_TTY_DIR HOLD_MS
 *
 * The interval is covered by two sources in turn:
 *  1. the port's own source, activated by the receive interrupt before the
 *     data reaches the tty layer and held for HOLD_MS: when epoll_wait()
 *     returns it must still be active, and have been activated exactly once
 *     (so it was continuously active since the interrupt);
 *  2. the epoll item's source, activated when the tty layer woke the poller
 *     (so while source 1 was active) and held until the next epoll_wait():
 *     a second process starts a blocking read of /sys/power/wakeup_count
 *     (which returns only when no source at all is active) right after
 *     epoll_wait() returned; it must not return while the reader reads the
 *     data and then works for 3 x HOLD_MS (well past the end of source 1),
 *     and must return soon after the reader calls epoll_wait() again.
 * With HOLD_MS 0 the port's source is held only until the line discipline
 * has taken the data, which is when it wakes the poller and the item's
 * source is activated: it need not be active any more when epoll_wait()
 * returns (only activated once), and the reader works 3 s.
 * Run as root (EPOLLWAKEUP needs CAP_BLOCK_SUSPEND). The caller arranges for
 * the host to write into the port within 10 s. Exit 0: no gap; 1: a gap or an
 * error, explained on stdout.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static const char *sysdir;

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void die(const char *what)
{
	printf("FAIL: %s: %s\n", what, strerror(errno));
	exit(1);
}

static long read_file_long(const char *path)
{
	char buf[64] = "";
	FILE *f;

	f = fopen(path, "r");
	if (!f)
		die(path);
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	return buf[0] == '\n' || !buf[0] ? -1 : atol(buf);
}

/*
 * The port's RX wakeup source (patched kernel, v3): the wakeupN/ class device
 * under the tty device whose name is "<tty>-rx". Empty if there is none.
 */
static char rxdir[256];

static void find_rx_source(void)
{
	char path[512], name[64], want[64];
	const char *tty = strrchr(sysdir, '/');
	struct dirent *de;
	DIR *d;
	FILE *f;

	snprintf(want, sizeof(want), "%s-rx\n", tty ? tty + 1 : sysdir);
	d = opendir(sysdir);
	if (!d)
		die(sysdir);
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, "wakeup", 6) || !isdigit((unsigned char)de->d_name[6]))
			continue;
		snprintf(path, sizeof(path), "%s/%s/name", sysdir, de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(name, sizeof(name), f) && !strcmp(name, want))
			snprintf(rxdir, sizeof(rxdir), "%s/%s", sysdir, de->d_name);
		fclose(f);
	}
	closedir(d);
}

/*
 * A statistic of the port's wakeup sources: the tty device's own
 * (power/wakeup_NAME: modem line events) and, where there is one, the RX
 * source (received data: held until the line discipline has taken it, or for
 * the port's wakeup_hold_ms). "wakeup_active" is 1
 * if either is active, "wakeup_active_count" is their sum.
 */
static long read_long(const char *name)
{
	char path[512];
	long v, rx;

	snprintf(path, sizeof(path), "%s/power/%s", sysdir, name);
	v = read_file_long(path);
	if (!rxdir[0])
		return v;
	if (!strcmp(name, "wakeup_active")) {
		snprintf(path, sizeof(path), "%s/active_time_ms", rxdir);
		rx = read_file_long(path);
		return rx > 0 ? 1 : v;
	}
	if (!strcmp(name, "wakeup_active_count")) {
		snprintf(path, sizeof(path), "%s/active_count", rxdir);
		rx = read_file_long(path);
		return (v < 0 ? 0 : v) + rx;
	}
	return v;
}

/* Child: one blocking read of wakeup_count; report when it returned. */
static pid_t start_checker(int wfd)
{
	pid_t pid = fork();

	if (pid < 0)
		die("fork");
	if (pid == 0) {
		char buf[32];
		int fd = open("/sys/power/wakeup_count", O_RDONLY);
		long t;

		if (fd < 0 || read(fd, buf, sizeof(buf)) < 0)
			_exit(2);
		t = now_ms();
		if (write(wfd, &t, sizeof(t)) != sizeof(t))
			_exit(3);
		_exit(0);
	}
	return pid;
}

int main(int argc, char **argv)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLWAKEUP };
	long hold, work, t_ret, t_next, t_check, active0, active1, act;
	int fd, ep, n, p[2];
	struct termios tio;
	char buf[256];
	struct pollfd pfd;
	pid_t checker;

	if (argc != 4) {
		fprintf(stderr, "usage: %s TTY SYSFS_TTY_DIR HOLD_MS\n", argv[0]);
		return 2;
	}
	sysdir = argv[2];
	find_rx_source();
	hold = atol(argv[3]);
	work = hold ? 3 * hold : 3000;

	fd = open(argv[1], O_RDWR | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		die(argv[1]);
	if (tcgetattr(fd, &tio))
		die("tcgetattr");
	cfmakeraw(&tio);
	if (tcsetattr(fd, TCSANOW, &tio))
		die("tcsetattr");
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		die("epoll_create1");
	ev.data.fd = fd;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev))
		die("epoll_ctl");
	active0 = read_long("wakeup_active_count");
	printf("waiting for data (port hold %ld ms)\n", hold);
	fflush(stdout);

	n = epoll_wait(ep, &ev, 1, 10000);
	t_ret = now_ms();
	if (n != 1)
		die("epoll_wait: no data within 10 s");
	act = read_long("wakeup_active");
	active1 = read_long("wakeup_active_count");
	if (pipe(p))
		die("pipe");
	checker = start_checker(p[1]);
	printf("epoll_wait returned; port source active=%ld, activations +%ld\n",
	       act, active1 - active0);
	if (hold && act != 1) {
		printf("FAIL: the port's wakeup source was not active when epoll_wait returned: nothing covered the time from the interrupt to the hand-off\n");
		kill(checker, SIGKILL);
		return 1;
	}
	if (active1 - active0 != 1) {
		printf("FAIL: the port's source was activated %ld times, expected once\n",
		       active1 - active0);
		kill(checker, SIGKILL);
		return 1;
	}

	/* Take the data, then "work" well past the end of the port's hold. */
	n = read(fd, buf, sizeof(buf));
	printf("read %d byte(s); working %ld ms\n", n, work);
	fflush(stdout);
	usleep(work * 1000);
	if (read_long("wakeup_active") != 0) {
		printf("FAIL: the port's hold outlived %ld ms\n", work);
		return 1;
	}
	pfd.fd = p[0];
	pfd.events = POLLIN;
	if (poll(&pfd, 1, 0) == 1) {
		if (read(p[0], &t_check, sizeof(t_check)) != sizeof(t_check))
			t_check = -1;
		printf("FAIL: gap: no wakeup source active %ld ms after epoll_wait returned, before the reader called epoll_wait again\n",
		       t_check - t_ret);
		return 1;
	}

	/* The next epoll_wait() releases the item's source: the read returns. */
	t_next = now_ms();
	epoll_wait(ep, &ev, 1, 0);
	if (poll(&pfd, 1, 5000) != 1) {
		printf("FAIL: wakeup_count still blocked 5 s after the next epoll_wait\n");
		kill(checker, SIGKILL);
		return 1;
	}
	if (read(p[0], &t_check, sizeof(t_check)) != sizeof(t_check))
		die("read checker");
	waitpid(checker, NULL, 0);
	printf("ok: wakeup_count blocked from epoll_wait return until %ld ms after the next epoll_wait (%ld ms in all, port hold %ld ms)\n",
	       t_check - t_next, t_check - t_ret, hold);
	return 0;
}
