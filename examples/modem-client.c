/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * modem-client: answer "incoming calls" on a serial modem without ever
 * letting the system suspend between the call and the answer.
 *
 * This is the reference pattern for a program that handles wakeup events
 * under wakelockd (design.md section 3, "Closing the hand-off window"):
 *
 *   1. watch the device with epoll, level-triggered, with EPOLLWAKEUP
 *      (wakelock_epoll_add): from the moment data is queued, the kernel keeps a
 *      wakeup source active until this process calls epoll_wait() again;
 *   2. wait with wakelock_epoll_wait(): when it returns events, our libwakelock
 *      hold is already taken - it was acquired while the kernel's source
 *      was still active, so there is no moment when neither keeps the
 *      system awake;
 *   3. read the call, do the work (--work-ms), answer on the same line;
 *   4. go back to wakelock_epoll_wait(), which releases the hold just before it
 *      blocks (the kernel's source is still active at that point).
 *
 * Step 1 needs CAP_BLOCK_SUSPEND. A deployment runs this client as an
 * ordinary user in the daemon's group, without it; the kernel then drops
 * EPOLLWAKEUP silently and the hold of step 2 comes after epoll_wait()
 * returns. What covers the gap from the byte's arrival to that hold is the
 * port's own wakeup hold (a serial port enabled for wakeup, on a kernel with
 * our serial patches: docs/serial-wakeup.md); the end-to-end test runs the
 * client that way (docs/e2e.md).
 *
 * Protocol (one line each, '\n'-terminated; '\r' ignored):
 *   host -> "CALL <id>"      client -> "ANSWER <id>"
 *   host -> "PING"           client -> "PONG"
 *   host -> "EXIT"           client -> "BYE", and exits with status 0
 *
 * Deliberately broken modes, so the end-to-end test can show that it fails:
 *   --no-epollwakeup  epoll without EPOLLWAKEUP; the hold is taken only after
 *                     epoll_wait() returns (the hand-off window is open):
 *                     what the kernel makes of the default mode for a client
 *                     without CAP_BLOCK_SUSPEND, but asked for, so it also
 *                     happens as root;
 *   --no-hold         never take a libwakelock hold.
 *
 * A program that keeps the system awake through logind instead, as call
 * applications do today (docs/logind.md):
 *   --logind MODE     after each wake-up from epoll_wait(), take a logind
 *                     "sleep" inhibitor in MODE (block or delay) and close
 *                     it once the lines are handled; with --no-hold and
 *                     --no-epollwakeup, that is all it does.  Only in
 *                     builds with sd-bus.
 *
 * Usage: modem-client [--tty DEV] [--work-ms N] [--name NAME]
 *                     [--no-epollwakeup] [--no-hold] [--logind MODE] [--verbose]
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <wakelock.h>
#ifdef WL_HAVE_SDBUS
#include <systemd/sd-bus.h>
#endif

static int verbose;

static void die(const char *what, int err)
{
	fprintf(stderr, "modem-client: %s: %s%s%s\n", what, wakelock_strerror(err),
	        *wakelock_last_error() ? " - " : "", wakelock_last_error());
	exit(1);
}

static int open_modem(const char *path)
{
	struct termios t;
	int fd = open(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0) {
		fprintf(stderr, "modem-client: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	/* Raw mode: a tty in canonical mode wakes pollers only at end of line
	 * and edits the input; a modem speaks bytes. */
	if (tcgetattr(fd, &t) == 0) {
		cfmakeraw(&t);
		t.c_cflag |= CLOCAL | CREAD;
		cfsetispeed(&t, B115200);
		cfsetospeed(&t, B115200);
		tcsetattr(fd, TCSANOW, &t);
	}
	return fd;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
}

static void write_all(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t w = write(fd, s, n);

		if (w < 0 && errno == EAGAIN) {
			struct timespec ts = { 0, 1000000L };
			nanosleep(&ts, NULL);
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			perror("modem-client: write");
			return;
		}
		s += w;
		n -= (size_t)w;
	}
}

/* Handle one complete line from the modem. */
static void handle_line(int fd, char *line, unsigned work_ms)
{
	char out[96];
	int n;

	line[strcspn(line, "\r")] = 0;
	if (!strncmp(line, "CALL ", 5)) {
		if (verbose)
			fprintf(stderr, "modem-client: call %s\n", line + 5);
		sleep_ms(work_ms);              /* "work": pick up, set up audio... */
		n = snprintf(out, sizeof(out), "ANSWER %.80s\n", line + 5);
		write_all(fd, out, (size_t)n);
	} else if (!strcmp(line, "PING")) {
		write_all(fd, "PONG\n", 5);
	} else if (!strcmp(line, "EXIT")) {
		write_all(fd, "BYE\n", 4);
		exit(0);        /* the holds go with the process */
	}
}

/* Read what the modem has and handle every complete line. */
static void drain(int fd, char *buf, size_t *len, size_t cap, unsigned work_ms)
{
	for (;;) {
		ssize_t r = read(fd, buf + *len, cap - 1 - *len);
		char *nl;

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		*len += (size_t)r;
		buf[*len] = 0;
		while ((nl = memchr(buf, '\n', *len))) {
			*nl = 0;
			handle_line(fd, buf, work_ms);
			*len -= (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, *len);
			buf[*len] = 0;
		}
		if (*len == cap - 1)            /* a line too long: drop it */
			*len = 0;
	}
}

/*
 * --logind: a sleep inhibitor for the handling of one wake-up, as a logind
 * client takes it.  logind_connect() at start (0, or -ENOTSUP in a build
 * without sd-bus); logind_inhibit() returns the inhibitor's descriptor
 * (close it to end the inhibitor).
 */
#ifdef WL_HAVE_SDBUS
static sd_bus *bus;

static int logind_connect(void)
{
	int r = sd_bus_open_system(&bus);

	if (r < 0)
		die("sd_bus_open_system", r);
	return 0;
}

static int logind_inhibit(const char *mode)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	int r, fd = -1;

	r = sd_bus_call_method(bus, "org.freedesktop.login1", "/org/freedesktop/login1",
	                       "org.freedesktop.login1.Manager", "Inhibit", &e, &reply, "ssss",
	                       "sleep", "modem-client", "incoming call", mode);
	if (r < 0) {
		fprintf(stderr, "modem-client: Inhibit: %s\n", e.message ? e.message : strerror(-r));
		exit(1);
	}
	/* The message owns the descriptor it carries: keep a copy. */
	if (sd_bus_message_read(reply, "h", &fd) <= 0 || (fd = fcntl(fd, F_DUPFD_CLOEXEC, 3)) < 0)
		die("Inhibit reply", EBADMSG);
	sd_bus_message_unref(reply);
	sd_bus_error_free(&e);
	return fd;
}
#else
static int logind_connect(void) { return -ENOTSUP; }
static int logind_inhibit(const char *mode) { (void)mode; return -ENOTSUP; }
#endif

/* How long a client keeps trying to reach a restarted daemon. */
#define RECONNECT_MS 10000u

static int lost_daemon(int r)
{
	return r == -ENOTCONN || r == -ESTALE;
}

/*
 * The daemon exited or restarted: drop the old client and register again,
 * retrying for up to RECONNECT_MS (a restart under systemd takes a moment),
 * instead of dying and leaving calls unprotected for good.
 */
static void reconnect(wakelock_client **cl, wakelock_hold **h, const char *name)
{
	unsigned waited = 0, step = 50;
	int r;

	wakelock_client_close(*cl);           /* destroys *h too */
	*cl = NULL;
	*h = NULL;
	for (;;) {
		r = wakelock_client_open(NULL, name, cl);
		if (r == 0)
			r = wakelock_hold_create(*cl, "call", h);
		if (r == 0)
			break;
		if (*cl) {
			wakelock_client_close(*cl);
			*cl = NULL;
		}
		if (waited >= RECONNECT_MS)
			die("reconnect", r);
		usleep(step * 1000u);
		waited += step;
		if (step < 1000)
			step *= 2;
	}
	if (verbose)
		fprintf(stderr, "modem-client: re-registered with wakelockd\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "tty", required_argument, NULL, 't' },
		{ "work-ms", required_argument, NULL, 'w' },
		{ "name", required_argument, NULL, 'n' },
		{ "no-epollwakeup", no_argument, NULL, 'E' },
		{ "no-hold", no_argument, NULL, 'H' },
		{ "logind", required_argument, NULL, 'L' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *tty = "/dev/ttyS1", *name = "modem-client", *logind = NULL;
	unsigned work_ms = 20;
	int epollwakeup = 1, hold = 1, c, r, fd, epfd;
	wakelock_client *cl = NULL;
	wakelock_hold *h = NULL;
	char buf[4096];
	size_t len = 0;

	while ((c = getopt_long(argc, argv, "t:w:n:vh", opts, NULL)) != -1) {
		switch (c) {
		case 't': tty = optarg; break;
		case 'w': work_ms = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'n': name = optarg; break;
		case 'E': epollwakeup = 0; break;
		case 'H': hold = 0; break;
		case 'L': logind = optarg; break;
		case 'v': verbose = 1; break;
		default:
			fprintf(stderr, "usage: %s [--tty DEV] [--work-ms N] [--name NAME] "
			        "[--no-epollwakeup] [--no-hold] [--logind block|delay] [--verbose]\n",
			        argv[0]);
			return c == 'h' ? 0 : 2;
		}
	}
	if (logind && strcmp(logind, "block") && strcmp(logind, "delay")) {
		fprintf(stderr, "modem-client: --logind: expected block or delay\n");
		return 2;
	}
	if (logind && logind_connect() == -ENOTSUP) {
		fprintf(stderr, "modem-client: --logind: built without sd-bus\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	fd = open_modem(tty);
	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (epfd < 0)
		die("epoll_create1", errno);
	if (hold) {
		if ((r = wakelock_client_open(NULL, name, &cl)) < 0)
			die("wakelock_client_open", r);
		if ((r = wakelock_hold_create(cl, "call", &h)) < 0)
			die("wakelock_hold_create", r);
	}
	if (epollwakeup) {
		/* Level-triggered, no EPOLLONESHOT: the kernel's hold lasts until
		 * our next epoll_wait(). */
		r = wakelock_epoll_add(epfd, fd, EPOLLIN, 0);
		if (r == -EPERM) {
			/* No CAP_BLOCK_SUSPEND: the kernel would drop the flag.
			 * The port's own wakeup hold (wakeup_hold_ms) covers the
			 * gap until our hold instead; go on without it. */
			struct epoll_event ev = { .events = EPOLLIN };

			fprintf(stderr, "modem-client: %s; relying on the port's wakeup hold\n",
			        wakelock_last_error());
			if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
				die("epoll_ctl", errno);
		} else if (r < 0) {
			die("wakelock_epoll_add", r);
		}
	} else {
		struct epoll_event ev = { .events = EPOLLIN };
		if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
			die("epoll_ctl", errno);
	}
	if (verbose)
		fprintf(stderr, "modem-client: listening on %s (EPOLLWAKEUP %s, hold %s, work %u ms)\n",
		        tty, epollwakeup ? "on" : "off", hold ? "on" : "off", work_ms);

	for (;;) {
		struct epoll_event ev;
		int n;

		if (hold && epollwakeup) {
			/* The pattern: the hold is taken inside, before the kernel's
			 * EPOLLWAKEUP source can lapse, and released at the next call. */
			n = wakelock_epoll_wait(h, epfd, &ev, 1, -1);
			if (lost_daemon(n)) {
				/* The kernel's source still covers the event until our
				 * next epoll_wait: take the new client's hold first. */
				reconnect(&cl, &h, name);
				if ((r = wakelock_hold_acquire(h)) < 0)
					die("wakelock_hold_acquire", r);
				drain(fd, buf, &len, sizeof(buf), work_ms);
				wakelock_hold_release(h);
				continue;
			}
			if (n < 0)
				die("wakelock_epoll_wait", n);
		} else {
			n = epoll_wait(epfd, &ev, 1, -1);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				die("epoll_wait", errno);
			if (hold && lost_daemon(r = wakelock_hold_acquire(h))) {
				reconnect(&cl, &h, name);
				r = wakelock_hold_acquire(h);
			}
			if (hold && r < 0)   /* too late: window open */
				die("wakelock_hold_acquire", r);
		}
		if (n > 0) {
			int inh = logind ? logind_inhibit(logind) : -1;

			drain(fd, buf, &len, sizeof(buf), work_ms);
			if (inh >= 0)
				close(inh);
		}
		/* A release that finds the daemon gone has nothing left to
		 * release; the next acquire reconnects. */
		if (hold && !epollwakeup && (r = wakelock_hold_release(h)) < 0 && !lost_daemon(r))
			die("wakelock_hold_release", r);
	}
}
