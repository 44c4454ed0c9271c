/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * wl-energy: the guest side of the energy figures of `make bench`
 * (bench/README.md, "6. Energy").  Static, in the guest
 * image as /usr/bin/wl-energy.  All use of libwakelock's public API is in
 * this file.
 *
 *   wl-energy bare CYCLES SLEEP_MS WORK_MS
 *       The platform's own cost of a wake-up: CYCLES times a
 *       CLOCK_BOOTTIME_ALARM timer armed SLEEP_MS ahead, the wakeup_count
 *       handshake and "mem" written to /sys/power/state, then WORK_MS of
 *       work (a sleep) after the resume; no daemon, nothing else running.
 *       The RTC wakes the guest, as it does for the daemon's alarms; the
 *       host times, on its own clock, QEMU's wake-up event to the next
 *       suspend event: resume + work + suspend.
 *
 *   wl-energy alarms TAG N PERIOD_MS WINDOW_MS SPREAD_MS WORK_MS FIRST_MS FIRES
 *       N clients (one thread each, client "TAG-i"), each with one periodic
 *       wake alarm: client i first due FIRST_MS + i * SPREAD_MS / (N - 1)
 *       after the start, then every PERIOD_MS, each expiry allowed to be
 *       WINDOW_MS late.  With SPREAD_MS < WINDOW_MS every client's window
 *       contains [FIRST + SPREAD, FIRST + WINDOW] of each period: one wake-up
 *       can serve them all ("aligned clients, overlapping windows").  Each
 *       fire is WORK_MS of work (a sleep: I/O-like work, so N clients work
 *       in parallel), then wakelock_alarm_done().
 *       The caller holds the kernel wake lock "bench-energy" while the
 *       alarms are set up; once all are set this program prints
 *       "BENCHCTL energy begin TAG" on the console and releases it.  The
 *       client whose fire is the last of FIRES fires of every client takes
 *       the wake lock again before it calls wakelock_alarm_done(); then this
 *       program prints
 *       "BENCHCTL energy end TAG", stops the clients and prints
 *         BENCH energy_TAG n=FIRES median=LATE p99=LATE unit=ms key=value...
 *       (lateness of each fire after its due time, on the guest's
 *       CLOCK_BOOTTIME, which an S3 resume sets from the RTC in whole
 *       seconds: indicative only).
 *
 * The host (bench/run.py) reads the QMP SUSPEND/WAKEUP events: time asleep
 * is measured there, not with the guest's clocks.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include "wakelock.h"

#define MAX_CLIENTS 64
#define MAX_FIRES 4096
#define WAKE_LOCK_NAME "bench-energy"

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* A line on the console, where the host reads it at once (the test's own
 * output reaches the console through a pipe). */
static void console(const char *fmt, const char *arg)
{
	int fd = open("/dev/console", O_WRONLY | O_NOCTTY | O_CLOEXEC);
	char line[200];
	int n = snprintf(line, sizeof(line), fmt, arg);

	if (fd < 0)
		return;
	if (n > 0 && write(fd, line, (size_t)n) < 0)
		n = 0;
	close(fd);
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t k;

	if (fd < 0)
		return -errno;
	k = write(fd, text, strlen(text));
	k = k < 0 ? -errno : 0;
	close(fd);
	return (int)k;
}

/* --- bare: the platform's cycle ------------------------------------------ */

static void on_alarm(int s)
{
	(void)s;
}

static int cmd_bare(int cycles, int sleep_ms_, int work_ms)
{
	int cfd = open("/sys/power/wakeup_count", O_RDWR | O_CLOEXEC);
	int sfd = open("/sys/power/state", O_WRONLY | O_CLOEXEC);
	int tfd = timerfd_create(CLOCK_BOOTTIME_ALARM, TFD_CLOEXEC | TFD_NONBLOCK);
	struct itimerspec its = { .it_value = { .tv_sec = sleep_ms_ / 1000,
	                                        .tv_nsec = (long)(sleep_ms_ % 1000) * 1000000L } };
	struct sigaction sa = { .sa_handler = on_alarm };
	int ok = 0, aborts = 0, fails = 0;
	uint64_t b0 = clock_ns(CLOCK_BOOTTIME), m0 = clock_ns(CLOCK_MONOTONIC);
	char buf[32];

	if (cfd < 0 || sfd < 0 || tfd < 0) {
		perror("wl-energy: /sys/power or CLOCK_BOOTTIME_ALARM");
		return 1;
	}
	sigaction(SIGALRM, &sa, NULL);   /* no SA_RESTART: bounds a blocked read */
	while (ok < cycles && aborts + fails < 100) {
		ssize_t k;

		alarm(10);
		k = pread(cfd, buf, sizeof(buf) - 1, 0);
		alarm(0);
		if (k <= 0) {
			perror("wl-energy: read wakeup_count");
			return 1;
		}
		buf[k] = 0;
		buf[strcspn(buf, "\n")] = 0;
		/* The wake-up: SLEEP_MS from now (the alarm timer refuses a
		 * suspend with less than 2 s to go). */
		if (timerfd_settime(tfd, 0, &its, NULL) < 0) {
			perror("wl-energy: timerfd_settime");
			return 1;
		}
		if (pwrite(cfd, buf, strlen(buf), 0) < 0) {
			aborts++;
			continue;
		}
		if (pwrite(sfd, "mem", 3, 0) < 0) {
			fails++;
			sleep_ms(100);
			continue;
		}
		ok++;
		if (work_ms > 0)
			sleep_ms((unsigned)work_ms);
	}
	uint64_t asleep = (clock_ns(CLOCK_BOOTTIME) - b0) - (clock_ns(CLOCK_MONOTONIC) - m0);
	printf("BENCH energy_bare_w%d n=%d median=%d p99=%d unit=cycles cycles=%d aborts=%d failures=%d"
	       " guest_asleep_ms=%.0f\n", work_ms, ok, ok, ok, ok, aborts, fails, (double)asleep / 1e6);
	return ok == cycles ? 0 : 1;
}

/* --- alarms: N clients, periodic wake alarms ------------------------------- */

struct client {
	pthread_t thread;
	int idx;
	char name[WAKELOCK_NAME_MAX];
	wakelock_client *c;
	wakelock_alarm *a;
	uint64_t due_ns;          /* next due time, CLOCK_BOOTTIME */
	unsigned fires, expiries;
	double late_ms[MAX_FIRES];
};

static struct {
	unsigned period_ms, work_ms, want_fires;
	int nclients, ndone, stop;
	const char *tag;
	pthread_mutex_t lock;
} g = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* A client has seen its FIRES fires (or failed): the last one ends the run,
 * keeping the system awake before its alarm's hold goes. */
static void count_done(void)
{
	int r;

	pthread_mutex_lock(&g.lock);
	if (++g.ndone == g.nclients) {
		if ((r = write_file("/sys/power/wake_lock", WAKE_LOCK_NAME)) < 0)
			fprintf(stderr, "wl-energy: wake_lock: %s\n", strerror(-r));
		console("BENCHCTL energy end %s\n", g.tag);
		__atomic_store_n(&g.stop, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&g.lock);
}

static void *client_main(void *arg)
{
	struct client *cl = arg;
	int counted = 0;

	while (!__atomic_load_n(&g.stop, __ATOMIC_ACQUIRE)) {
		int r = wakelock_alarm_wait(cl->a, 500);

		if (r < 0) {
			fprintf(stderr, "wl-energy: %s: wait: %s\n", cl->name, wakelock_strerror(r));
			break;
		}
		if (r == 0)
			continue;
		uint64_t now = clock_ns(CLOCK_BOOTTIME);
		if (cl->fires < MAX_FIRES)
			cl->late_ms[cl->fires] = now >= cl->due_ns ? (double)(now - cl->due_ns) / 1e6
			                                           : -(double)(cl->due_ns - now) / 1e6;
		cl->fires++;
		cl->expiries += (unsigned)r;
		/* The next due time on the client's grid: expiries missed are
		 * not replayed (wakelock.h), so step past now. */
		cl->due_ns += (uint64_t)g.period_ms * 1000000u;
		while (cl->due_ns <= now)
			cl->due_ns += (uint64_t)g.period_ms * 1000000u;
		sleep_ms(g.work_ms);
		if (cl->fires == g.want_fires) {
			count_done();
			counted = 1;
		}
		if ((r = wakelock_alarm_done(cl->a)) < 0) {
			fprintf(stderr, "wl-energy: %s: done: %s\n", cl->name, wakelock_strerror(r));
			break;
		}
	}
	if (!counted)
		count_done();
	return NULL;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int number(const char *s, long max, long *out)
{
	char *end;

	*out = strtol(s, &end, 10);
	return *s && !*end && *out >= 0 && *out <= max ? 0 : -1;
}

static int cmd_alarms(char **argv)
{
	const char *tag = argv[0];
	long v[7];
	static struct client cls[MAX_CLIENTS];
	static double late[MAX_CLIENTS * MAX_FIRES];
	int n, r;

	for (int i = 0; i < 7; i++)
		if (number(argv[i + 1], 86400000, &v[i])) {
			fprintf(stderr, "wl-energy alarms: bad number '%s'\n", argv[i + 1]);
			return 2;
		}
	n = (int)v[0];
	long period = v[1], window = v[2], spread = v[3], work = v[4], first = v[5], want = v[6];
	if (n < 1 || n > MAX_CLIENTS || !period || window > period || spread > window || want < 1 ||
	    want > MAX_FIRES) {
		fprintf(stderr, "wl-energy alarms: need 1 <= N <= %d, SPREAD <= WINDOW <= PERIOD,"
		        " 1 <= FIRES <= %d\n", MAX_CLIENTS, MAX_FIRES);
		return 2;
	}
	g.period_ms = (unsigned)period;
	g.work_ms = (unsigned)work;
	g.want_fires = (unsigned)want;
	g.nclients = n;
	g.tag = tag;
	for (int i = 0; i < n; i++) {
		struct client *cl = &cls[i];
		long off = first + (n > 1 ? spread * i / (n - 1) : 0);

		cl->idx = i;
		snprintf(cl->name, sizeof(cl->name), "%s-%d", tag, i);
		if ((r = wakelock_client_open(NULL, cl->name, &cl->c)) < 0 ||
		    (r = wakelock_alarm_create(cl->c, "tick", &cl->a)) < 0) {
			fprintf(stderr, "wl-energy: %s: %s %s\n", cl->name, wakelock_strerror(r), wakelock_last_error());
			return 1;
		}
		cl->due_ns = clock_ns(CLOCK_BOOTTIME) + (uint64_t)off * 1000000u;
		if ((r = wakelock_alarm_set(cl->a, (uint64_t)off, (uint32_t)period, (uint32_t)window)) < 0) {
			fprintf(stderr, "wl-energy: %s: set: %s\n", cl->name, wakelock_strerror(r));
			return 1;
		}
		if (pthread_create(&cl->thread, NULL, client_main, cl)) {
			fprintf(stderr, "wl-energy: pthread_create failed\n");
			return 1;
		}
	}
	uint64_t b0 = clock_ns(CLOCK_BOOTTIME), m0 = clock_ns(CLOCK_MONOTONIC);
	console("BENCHCTL energy begin %s\n", tag);
	if ((r = write_file("/sys/power/wake_unlock", WAKE_LOCK_NAME)) < 0)
		fprintf(stderr, "wl-energy: wake_unlock: %s\n", strerror(-r));

	/* Until the last client's last fire (it takes the wake lock). */
	for (int i = 0; i < n; i++)
		pthread_join(cls[i].thread, NULL);
	uint64_t b1 = clock_ns(CLOCK_BOOTTIME), m1 = clock_ns(CLOCK_MONOTONIC);
	size_t nl = 0;
	unsigned fires = 0, expiries = 0, fmin = ~0u, fmax = 0;
	for (int i = 0; i < n; i++) {
		struct client *cl = &cls[i];

		for (unsigned k = 0; k < cl->fires && k < MAX_FIRES; k++)
			late[nl++] = cl->late_ms[k];
		fires += cl->fires;
		expiries += cl->expiries;
		fmin = cl->fires < fmin ? cl->fires : fmin;
		fmax = cl->fires > fmax ? cl->fires : fmax;
		wakelock_alarm_destroy(cl->a);
		wakelock_client_close(cl->c);
	}
	qsort(late, nl, sizeof(*late), cmp_d);
	double med = nl ? late[nl / 2] : 0, p99 = nl ? late[(size_t)(0.99 * (double)(nl - 1) + 0.5)] : 0;
	printf("BENCH energy_%s n=%zu median=%.1f p99=%.1f min=%.1f max=%.1f unit=ms clients=%d"
	       " period_ms=%ld window_ms=%ld spread_ms=%ld work_ms=%ld first_ms=%ld want_fires=%ld"
	       " fires=%u expiries=%u fires_per_client_min=%u fires_per_client_max=%u"
	       " guest_elapsed_ms=%.0f guest_asleep_ms=%.0f\n",
	       tag, nl, med, p99, nl ? late[0] : 0, nl ? late[nl - 1] : 0, n, period, window, spread,
	       work, first, want, fires, expiries, fmin, fmax, (double)(b1 - b0) / 1e6,
	       (double)((b1 - b0) - (m1 - m0)) / 1e6);
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 5 && !strcmp(argv[1], "bare"))
		return cmd_bare(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
	if (argc == 10 && !strcmp(argv[1], "alarms"))
		return cmd_alarms(argv + 2);
	fprintf(stderr, "usage: see the comment at the top of bench/energy.c\n");
	return 2;
}
