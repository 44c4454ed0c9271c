// SPDX-License-Identifier: GPL-2.0
/*
 * wl-ring: the call program of the ring-line tests (tests/guest/ring-*.sh).
 * It reads the ring key (KEY_PHONE) from an evdev node polled with
 * EPOLLWAKEUP, level-triggered: the kernel keeps the epoll item's wakeup
 * source active from the moment evdev queues the event until the program
 * calls epoll_wait() again, so that it can read the key and act on it
 * (here: work WORK_MS) before the system may sleep.  Needs CAP_BLOCK_SUSPEND
 * (root in the guest), without which the kernel drops EPOLLWAKEUP.
 *
 *   wl-ring read EVDEV N TIMEOUT_MS [plain]
 *	print the next N key events as "key CODE VALUE", exit 1 on a timeout;
 *	"plain" polls without EPOLLWAKEUP, for tests that count wakeup
 *	events (the epoll item's own source would add its own)
 *   wl-ring calls EVDEV PULL CALLS WORK_MS MAX_GAP_MS SEED
 *	ring CALLS times at random moments (0..MAX_GAP_MS of awake time
 *	apart) by writing "pull-down", then WORK_MS + 100 ms later (after
 *	the reader's work for the press) "pull-up", into the
 *	gpio-sim line's sysfs PULL, while a child reads the keys, and judge
 *	every edge: its key event arrives, with the right value, and no
 *	suspend completes between the edge and the read, nor during the
 *	WORK_MS the reader works after it.  Prints one line per edge and a
 *	summary with the edge-to-read latencies; exit 0 if all are right.
 *
 * "No suspend completes" is judged on /sys/power/suspend_stats/success:
 * the ringer reads it before and after the write that makes the edge
 * (an edge whose two reads differ came with a suspend around it and is
 * not judged, only counted); the reader reads it right after read() and
 * after its work.  Times are CLOCK_BOOTTIME, which counts suspended time.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <linux/input.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_EDGES 512

struct rec {
	long long t;		/* us: ringer: before the write; reader: read */
	long long t2;		/* us: ringer: after the write; reader: work done */
	long s0, s1;		/* suspend successes: before/after write; at read/after work */
	int value;		/* the key's value, reader only */
};

static long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

static void die(const char *what)
{
	printf("FAIL: %s: %s\n", what, strerror(errno));
	exit(1);
}

static long successes(void)
{
	char buf[32] = "";
	int fd = open("/sys/power/suspend_stats/success", O_RDONLY);

	if (fd < 0 || read(fd, buf, sizeof(buf) - 1) < 0)
		die("/sys/power/suspend_stats/success");
	close(fd);
	return atol(buf);
}

/* The evdev node, polled level-triggered, with EPOLLWAKEUP if wake. */
static int open_key(const char *path, int *epfd, int wake)
{
	struct epoll_event ev = { .events = EPOLLIN | (wake ? EPOLLWAKEUP : 0) };
	int clk = CLOCK_BOOTTIME;
	int fd;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		die(path);
	if (ioctl(fd, EVIOCSCLOCKID, &clk) < 0)
		die("EVIOCSCLOCKID");
	*epfd = epoll_create1(EPOLL_CLOEXEC);
	if (*epfd < 0 || epoll_ctl(*epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
		die("epoll with EPOLLWAKEUP");
	return fd;
}

/* Waits for key events; returns how many it put in keys[] (at most max). */
static int read_keys(int fd, int epfd, int timeout_ms, struct input_event *keys, int max)
{
	struct input_event ev[16];
	struct epoll_event out;
	int n = 0, r, i;

	r = epoll_wait(epfd, &out, 1, timeout_ms);
	if (r < 0)
		die("epoll_wait");
	if (r == 0)
		return 0;
	while ((r = read(fd, ev, sizeof(ev))) > 0)
		for (i = 0; i < r / (int)sizeof(ev[0]); i++)
			if (ev[i].type == EV_KEY && n < max)
				keys[n++] = ev[i];
	if (r < 0 && errno != EAGAIN)
		die("read evdev");
	return n;
}

static int cmd_read(const char *path, int want, int timeout_ms, int wake)
{
	struct input_event keys[16];
	int epfd, fd = open_key(path, &epfd, wake);
	long long end = now_us() + timeout_ms * 1000LL;
	int got = 0, n, i;

	printf("ready\n");
	fflush(stdout);
	while (got < want) {
		int left = (int)((end - now_us()) / 1000);

		if (left <= 0) {
			printf("FAIL: %d of %d key events within %d ms\n", got, want, timeout_ms);
			return 1;
		}
		n = read_keys(fd, epfd, left, keys, 16);
		for (i = 0; i < n; i++, got++)
			printf("key %u %d\n", keys[i].code, keys[i].value);
		fflush(stdout);
	}
	return 0;
}

/* The call program: every key read is followed by WORK_MS of work. */
static void reader(int fd, int epfd, int out, int edges, int work_ms)
{
	struct input_event keys[16];
	struct rec r;
	int got = 0, n, i;

	while (got < edges) {
		n = read_keys(fd, epfd, -1, keys, 16);
		if (!n)
			continue;
		r.t = now_us();
		r.s0 = successes();
		usleep(work_ms * 1000);
		r.t2 = now_us();
		r.s1 = successes();
		for (i = 0; i < n; i++, got++) {
			r.value = keys[i].value;
			if (write(out, &r, sizeof(r)) != sizeof(r))
				die("write to the ringer");
		}
	}
	exit(0);
}

static int write_pull(const char *pull, const char *what)
{
	int fd = open(pull, O_WRONLY);
	ssize_t r;

	if (fd < 0)
		die(pull);
	r = write(fd, what, strlen(what));
	close(fd);
	return r < 0 ? -1 : 0;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

static int cmd_calls(const char *path, const char *pull, int calls, int work_ms,
		     int max_gap_ms, unsigned int seed)
{
	static struct rec edge[MAX_EDGES], key[MAX_EDGES];
	static long long lat[MAX_EDGES];
	int epfd, fd, p[2], i, bad = 0, judged = 0, nlat = 0;
	int edges = 2 * calls;
	long start = successes();
	pid_t child;

	if (edges > MAX_EDGES)
		edges = MAX_EDGES, calls = MAX_EDGES / 2;
	fd = open_key(path, &epfd, 1);
	if (pipe(p) < 0)
		die("pipe");
	child = fork();
	if (child < 0)
		die("fork");
	if (child == 0) {
		close(p[0]);
		reader(fd, epfd, p[1], edges, work_ms);
	}
	close(p[1]);
	srand(seed);
	for (i = 0; i < edges; i++) {
		if (i % 2 == 0)
			usleep((rand() % (max_gap_ms + 1)) * 1000);
		else
			usleep((work_ms + 100) * 1000);
		edge[i].s0 = successes();
		edge[i].t = now_us();
		if (write_pull(pull, i % 2 ? "pull-up" : "pull-down") < 0)
			die(pull);
		edge[i].t2 = now_us();
		edge[i].s1 = successes();
	}
	for (i = 0; i < edges; i++) {
		struct pollfd pfd = { .fd = p[0], .events = POLLIN };
		ssize_t r = -1;

		/* 30 s of awake time: a key that never comes is a failure. */
		if (poll(&pfd, 1, 30000) == 1)
			r = read(p[0], &key[i], sizeof(key[i]));
		if (r != sizeof(key[i])) {
			printf("FAIL: the reader got %d key events of %d\n", i, edges);
			kill(child, SIGKILL);
			return 1;
		}
	}
	waitpid(child, NULL, 0);

	for (i = 0; i < edges; i++) {
		const char *verdict = "ok";
		int want = i % 2 ? 0 : 1;	/* active low: pull-down presses */

		if (key[i].value != want) {
			verdict = "FAIL wrong value";
			bad++;
		} else if (edge[i].s0 != edge[i].s1) {
			verdict = "not judged (a suspend around the write)";
		} else {
			judged++;
			lat[nlat++] = key[i].t - edge[i].t;
			if (key[i].s0 != edge[i].s1) {
				verdict = "FAIL a suspend between the edge and the read";
				bad++;
			} else if (key[i].s1 != key[i].s0) {
				verdict = "FAIL a suspend while the reader worked";
				bad++;
			}
		}
		printf("edge %d %s: value %d, edge->read %lld us, suspends %ld/%ld/%ld/%ld: %s\n",
		       i + 1, i % 2 ? "release" : "press", key[i].value,
		       key[i].t - edge[i].t, edge[i].s0, edge[i].s1, key[i].s0, key[i].s1,
		       verdict);
	}
	qsort(lat, nlat, sizeof(lat[0]), cmp_ll);
	printf("summary: %d edges, %d judged, %d bad, %ld suspends during the run",
	       edges, judged, bad, successes() - start);
	if (nlat)
		printf("; edge->read us: min %lld median %lld max %lld",
		       lat[0], lat[nlat / 2], lat[nlat - 1]);
	printf("\n");
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if ((argc == 5 || (argc == 6 && !strcmp(argv[5], "plain"))) &&
	    !strcmp(argv[1], "read"))
		return cmd_read(argv[2], atoi(argv[3]), atoi(argv[4]), argc == 5);
	if (argc == 8 && !strcmp(argv[1], "calls"))
		return cmd_calls(argv[2], argv[3], atoi(argv[4]), atoi(argv[5]),
				 atoi(argv[6]), (unsigned int)atoi(argv[7]));
	fprintf(stderr, "usage: wl-ring read EVDEV N TIMEOUT_MS [plain]\n"
		"       wl-ring calls EVDEV PULL CALLS WORK_MS MAX_GAP_MS SEED\n");
	return 2;
}
