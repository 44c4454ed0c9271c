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
 *   wl-ring calls EVDEV PULL CALLS WORK_MS MAX_GAP_MS SEED [plain]
 *	ring CALLS times at random moments (2 x WORK_MS + 0..MAX_GAP_MS of
 *	awake time after the last ring ended, when the reader is idle again)
 *	by writing "pull-down", then 3/4 x WORK_MS later (while the
 *	reader works on the press) "pull-up", into the gpio-sim line's
 *	sysfs PULL, while a child reads the keys, and judge every edge: its
 *	key event arrives, with the right value, and the system does not
 *	suspend to idle between the edge and the read, nor during the
 *	WORK_MS the reader works after it.  Prints one line per edge and a
 *	summary with the edge-to-read latencies; exit 0 if all are right.
 *	"plain": the reader polls without EPOLLWAKEUP, as an unprivileged
 *	program would: the judge must then find suspends in its work.
 *
 * "Does not suspend" is judged on the order of the kernel log, the one
 * total order that both processes and the suspend path write into: the
 * ringer logs "wl-ring: edge N" into /dev/kmsg just before the write that
 * makes edge N, the reader "wl-ring: read N" just after its read() and
 * "wl-ring: done N" after its work, and the kernel logs "PM:
 * suspend-to-idle" (a pm_debug_messages line: the caller enables them)
 * just before the system idles, after every device has suspended.  The
 * ringer stands in for the modem, which a suspend does not freeze: it
 * holds a kernel wake lock from its marker until its write has returned,
 * so that it cannot be frozen between the two (which made an edge that
 * came after a resume look like one the suspend had ignored).  From the
 * write on, only gpio-keys and the reader keep the system awake.  A
 * suspend counter read by user space cannot judge it: suspend_stats
 * counts a success only after user space has been thawed, so a suspend
 * that ended before an edge can be counted after it.  Latencies are
 * CLOCK_BOOTTIME, which counts suspended time; a release is read when the
 * work on its press ends, so only the presses' are summed up.
 *
 * The line is low only while the reader holds the system awake: the input
 * core releases every pressed key when the system suspends, and gpio-keys
 * reports the line's state again at resume, so a suspend while the line
 * is low would add a release and a press of its own (which the judge then
 * reports, as markers out of order).
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

static int kmsg = -1;

/* A marker in the kernel log, in order with the kernel's own lines. */
static void mark(const char *what, int n)
{
	char buf[64];
	int len = snprintf(buf, sizeof(buf), "<6>wl-ring: %s %d\n", what, n);

	if (write(kmsg, buf, len) != len)
		die("write /dev/kmsg");
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

	/* The freezer interrupts it at every suspend: wait on. */
	do
		r = epoll_wait(epfd, &out, 1, timeout_ms);
	while (r < 0 && errno == EINTR);
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
		for (i = 0; i < n; i++)
			mark("read", got + i + 1);
		usleep(work_ms * 1000);
		for (i = 0; i < n; i++, got++) {
			mark("done", got + 1);
			r.value = keys[i].value;
			if (write(out, &r, sizeof(r)) != sizeof(r))
				die("write to the ringer");
		}
	}
	exit(0);
}

/*
 * Walks the kernel log from where the run began (log, opened then):
 * bad[N] is set if a "PM: suspend-to-idle" line comes after "edge N" and
 * before "done N".  Sets *extra if the markers are out of order, which
 * means the reader got key events that no edge made (see above: a suspend
 * while the line was low).  Returns the number of suspend-to-idle lines,
 * or -1 if the log lost records or markers (it then cannot judge:
 * /dev/kmsg writes are rate-limited unless kernel.printk_devkmsg is "on").
 */
static int judge_log(int log, int edges, const char **bad, int *extra)
{
	static int state[MAX_EDGES + 1];	/* 0, 1 edged, 2 read, 3 done */
	char rec[2048];
	int idles = 0, n, i;
	ssize_t r;

	for (;;) {
		char *msg;

		r = read(log, rec, sizeof(rec) - 1);
		if (r < 0 && errno == EAGAIN) {
			/* Every edge's three markers, in order, or no verdict. */
			for (i = 1; i <= edges; i++)
				if (state[i] != 3)
					return *extra ? idles : -1;
			return idles;
		}
		if (r < 0)
			return -1;	/* EPIPE: overwritten before read */
		rec[r] = 0;
		msg = strchr(rec, ';');
		if (!msg)
			continue;
		msg++;
		/* A read before its edge: the reader got a key no edge made. */
		if (sscanf(msg, "wl-ring: edge %d", &n) == 1 && n >= 1 && n <= edges) {
			state[n] = state[n] == 0 ? 1 : (*extra = 1, -1);
		} else if (sscanf(msg, "wl-ring: read %d", &n) == 1 && n >= 1 && n <= edges) {
			state[n] = state[n] == 1 ? 2 : (*extra = 1, -1);
		} else if (sscanf(msg, "wl-ring: done %d", &n) == 1 && n >= 1 && n <= edges) {
			state[n] = state[n] == 2 ? 3 : (*extra = 1, -1);
		} else if (!strncmp(msg, "PM: suspend-to-idle\n", 20)) {
			idles++;
			for (i = 1; i <= edges; i++) {
				if (state[i] == 1 && !bad[i])
					bad[i] = "FAIL suspended to idle between the edge and the read";
				if (state[i] == 2 && !bad[i])
					bad[i] = "FAIL suspended to idle while the reader worked";
			}
		}
	}
}

/* what into the file at path: 0 or -1 (the write failed). */
static int write_file(const char *path, const char *what)
{
	int fd = open(path, O_WRONLY);
	ssize_t r;

	if (fd < 0)
		die(path);
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
		     int max_gap_ms, unsigned int seed, int wake)
{
	static struct rec edge[MAX_EDGES], key[MAX_EDGES];
	static const char *bad[MAX_EDGES + 1];
	static long long lat[MAX_EDGES];
	int epfd, fd, log, p[2], i, nbad = 0, nlat = 0, idles, extra = 0;
	int edges = 2 * calls;
	long start = successes();
	pid_t child;

	if (edges > MAX_EDGES)
		edges = MAX_EDGES, calls = MAX_EDGES / 2;
	kmsg = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
	log = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (kmsg < 0 || log < 0 || lseek(log, 0, SEEK_END) < 0)
		die("/dev/kmsg");
	fd = open_key(path, &epfd, wake);
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
			usleep((2 * work_ms + rand() % (max_gap_ms + 1)) * 1000);
		else
			usleep(work_ms * 3 / 4 * 1000);
		if (write_file("/sys/power/wake_lock", "wl-ring-ringer") < 0)
			die("/sys/power/wake_lock");
		edge[i].t = now_us();
		mark("edge", i + 1);
		if (write_file(pull, i % 2 ? "pull-up" : "pull-down") < 0)
			die(pull);
		if (write_file("/sys/power/wake_unlock", "wl-ring-ringer") < 0)
			die("/sys/power/wake_unlock");
	}
	for (i = 0; i < edges; i++) {
		struct pollfd pfd = { .fd = p[0], .events = POLLIN };
		ssize_t r = -1;

		/* 30 s of awake time: a key that never comes is a failure. */
		if (poll(&pfd, 1, 30000) == 1)
			r = read(p[0], &key[i], sizeof(key[i]));
		if (r != sizeof(key[i])) {
			/*
			 * gpio-keys reports the line's level once its debounce
			 * work runs: a ring that ended before then is no key.
			 */
			printf("FAIL: the reader got %d key events of %d (a ring shorter than gpio-keys' debounce work took to run?)\n",
			       i, edges);
			kill(child, SIGKILL);
			return 1;
		}
	}
	waitpid(child, NULL, 0);
	idles = judge_log(log, edges, bad, &extra);
	if (idles < 0) {
		printf("FAIL: the kernel log lost records or markers during the run: cannot judge\n");
		return 1;
	}
	if (extra) {
		printf("FAIL: key events that no edge made (a suspend while the line was low)\n");
		nbad++;
	}

	for (i = 0; i < edges; i++) {
		const char *verdict = bad[i + 1];
		int want = i % 2 ? 0 : 1;	/* active low: pull-down presses */

		if (key[i].value != want && !verdict)
			verdict = "FAIL wrong value";
		if (verdict)
			nbad++;
		if (i % 2 == 0)
			lat[nlat++] = key[i].t - edge[i].t;
		printf("edge %d %s at %lld ms: value %d, edge->read %lld us: %s\n",
		       i + 1, i % 2 ? "release" : "press", edge[i].t / 1000, key[i].value,
		       key[i].t - edge[i].t, verdict ? verdict : "ok");
	}
	qsort(lat, nlat, sizeof(lat[0]), cmp_ll);
	printf("summary: %d edges, %d bad, %d suspends to idle and %ld successes during the run",
	       edges, nbad, idles, successes() - start);
	if (nlat)
		printf("; press edge->read us: min %lld median %lld max %lld",
		       lat[0], lat[nlat / 2], lat[nlat - 1]);
	printf("\n");
	return nbad ? 1 : 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if ((argc == 5 || (argc == 6 && !strcmp(argv[5], "plain"))) &&
	    !strcmp(argv[1], "read"))
		return cmd_read(argv[2], atoi(argv[3]), atoi(argv[4]), argc == 5);
	if ((argc == 8 || (argc == 9 && !strcmp(argv[8], "plain"))) &&
	    !strcmp(argv[1], "calls"))
		return cmd_calls(argv[2], argv[3], atoi(argv[4]), atoi(argv[5]),
				 atoi(argv[6]), (unsigned int)atoi(argv[7]), argc == 8);
	fprintf(stderr, "usage: wl-ring read EVDEV N TIMEOUT_MS [plain]\n"
		"       wl-ring calls EVDEV PULL CALLS WORK_MS MAX_GAP_MS SEED [plain]\n");
	return 2;
}
