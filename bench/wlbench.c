/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * wlbench: the measuring end of `make bench` (bench/README.md).  Built for
 * the host (build/host/bench/wlbench) and, static, for the QEMU guest
 * (build/guest/bin/wlbench).  Every figure is printed as one line
 *   BENCH <name> n=<samples> median=<v> p99=<v> unit=<ns|us|ms> [key=value]...
 * followed by the raw samples (at most $WLBENCH_MAXRAW, default 2000) as
 *   RAW <name> v v v ...            (several lines of at most 40 values)
 * which bench/run.py parses (host: stdout; guest: the console).
 * All times are CLOCK_MONOTONIC.
 *
 *   wlbench hold PROCS SECONDS BATCH     wakelock_hold_acquire + wakelock_hold_release
 *                                        of an untimed hold, PROCS processes
 *                                        at once (one client and hold each:
 *                                        each pair takes its client from 0
 *                                        to 1 hold and back), per-pair ns
 *                                        per batch; another client's keeper
 *                                        hold keeps the daemon waiting;
 *                                        then, in the same processes at
 *                                        once, the same atomics on a
 *                                        private line (hold_floor_pN)
 *   wlbench scale CLIENTS SECONDS        CLIENTS clients x
 *                                        WAKELOCK_MAX_HOLDS_PER_CLIENT holds, all
 *                                        but the last held; acquire+release
 *                                        of a random client's last hold;
 *                                        daemon RSS, registration, reaping;
 *                                        then, alone, the memory floor of
 *                                        that pattern (scale_floor_cN)
 *   wlbench wakelock PAIRS               /sys/power/wake_lock + wake_unlock
 *   wlbench epoll ROUNDS                 eventfd write -> epoll_wait
 *                                        (EPOLLWAKEUP asked for) -> read;
 *                                        wakeup_kept= says if the kernel kept
 *                                        the flag (it drops it without
 *                                        CONFIG_PM_SLEEP or CAP_BLOCK_SUSPEND)
 *   wlbench latency N TRACEFILE          last release -> daemon's write to
 *                                        /sys/power/state (trace_shim.so)
 *   wlbench idle SECONDS                 daemon context switches/s while a
 *                                        hold keeps the system awake
 *   wlbench power-wakeups SECONDS        the power thread's context switches/s
 *                                        (its wake-ups) while a hold is held;
 *                                        displays set up by the caller
 *   wlbench input-flood FIFO RATE SECONDS [PER_WRITE]
 *                                        RATE struct input_event a second
 *                                        (PER_WRITE a write, default 2: one
 *                                        evdev packet, a motion and its
 *                                        SYN_REPORT) into FIFO, the daemon's
 *                                        input device: the daemon's CPU
 *                                        (schedstat, all threads) and
 *                                        wake-ups; then the same flood into
 *                                        a bare reader of our own (epoll,
 *                                        batched reads, woken by every
 *                                        write), the peer
 *   wlbench cycle-cpu SECONDS            the daemon's CPU per suspend attempt
 *                                        while nothing is held (a fake /sys
 *                                        whose state write returns at once:
 *                                        the daemon's own work per cycle),
 *                                        schedstat of all its threads
 *   wlbench bare-loop SECONDS            wakeup_count handshake + freeze, no
 *                                        daemon (the kernel's own limit)
 *   wlbench futex-wake N                 FUTEX_WAKE -> sleeper running (the
 *                                        floor under the reaction latency)
 *   wlbench clock N                      cost of one
 *                                        clock_gettime(CLOCK_MONOTONIC), the
 *                                        clock the fast path reads
 *   wlbench cpu                          daemon utime+stime (ticks) and pid
 *   wlbench drain PATH                   read PATH non-blocking until empty
 * The daemon is found through $WAKELOCK_SOCKET (default socket) and
 * $WLBENCH_DAEMON_PID (else the pid file next to the socket).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/input.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <linux/futex.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "lib/wl_client.h"

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void die(const char *what, int r)
{
	fprintf(stderr, "wlbench: %s: %s %s\n", what, r < 0 ? wakelock_strerror(r) : strerror(errno),
	        r < 0 ? wakelock_last_error() : "");
	exit(1);
}

/* --- output ---------------------------------------------------------------- */

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double pct(const double *sorted, size_t n, double p)
{
	size_t i;

	if (!n)
		return 0;
	i = (size_t)(p * (double)(n - 1) + 0.5);
	return sorted[i < n ? i : n - 1];
}

/* Sorts v in place; extra: " key=value..." or "". */
static void report(const char *name, double *v, size_t n, const char *unit, const char *extra)
{
	const char *mr = getenv("WLBENCH_MAXRAW");
	size_t maxraw = mr ? strtoul(mr, NULL, 10) : 2000, step = 1, k = 0;

	qsort(v, n, sizeof(*v), cmp_d);
	printf("BENCH %s n=%zu median=%.1f p99=%.1f min=%.1f max=%.1f unit=%s%s\n", name, n,
	       pct(v, n, 0.5), pct(v, n, 0.99), n ? v[0] : 0, n ? v[n - 1] : 0, unit,
	       extra ? extra : "");
	/* Raw samples: all of them, or an evenly spaced subset of the sorted
	 * ones (keeps the distribution) when there are more than maxraw. */
	if (maxraw && n > maxraw)
		step = (n + maxraw - 1) / maxraw;
	for (size_t i = 0; maxraw && i < n; i += step) {
		if (k % 40 == 0)
			printf("%sRAW %s", k ? "\n" : "", name);
		printf(" %.1f", v[i]);
		k++;
	}
	if (k)
		printf("\n");
	fflush(stdout);
}

/* --- the daemon's process ------------------------------------------------- */

static pid_t daemon_pid(void)
{
	const char *e = getenv("WLBENCH_DAEMON_PID");
	const char *sock = getenv("WAKELOCK_SOCKET");
	char path[4200], buf[32];
	int fd, n;

	if (e)
		return (pid_t)atoi(e);
	snprintf(path, sizeof(path), "%s", sock ? sock : "/run/wakelockd/wakelockd.sock");
	char *slash = strrchr(path, '/');
	if (!slash)
		return 0;
	strcpy(slash, "/wakelockd.pid");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = (int)read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	return (pid_t)atoi(buf);
}

/* Sum of a "Key:\t123" field over all threads of pid. */
static long long task_field_sum(pid_t pid, const char *key)
{
	char dir[64], path[400], line[256];
	long long sum = 0;
	size_t kl = strlen(key);
	struct dirent *de;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	d = opendir(dir);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/status", dir, de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, key, kl) && line[kl] == ':')
				sum += atoll(line + kl + 1);
		fclose(f);
	}
	closedir(d);
	return sum;
}

static long long proc_status_kb(pid_t pid, const char *key)
{
	char path[64], line[256];
	long long v = -1;
	size_t kl = strlen(key);
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, kl) && line[kl] == ':')
			v = atoll(line + kl + 1);
	fclose(f);
	return v;
}

/* utime + stime of the whole process, in clock ticks. */
static long long cpu_ticks(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long ut, st;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return -1;
	return (long long)(ut + st);
}

/* --- hold: acquire+release, PROCS processes -------------------------------- */

/* The memory floor of the process rows: the atomics of the fast path
 * (lib/hold.c), in the same order and with the same orderings, on one
 * line of the process's own memory (a shared mapping, as a client's
 * region is, touched by no other process), and nothing else: no call, no
 * clock, no statistics.  acquire: a sequentially consistent add on the
 * depth, then a sequentially consistent load of the daemon's phase;
 * release: a relaxed load of the depth, a sequentially consistent
 * compare-and-swap, and at zero a sequentially consistent load of the
 * watched flag.  Run in PROCS processes at once, right after the pair in
 * the same processes: what is left of the pair's growth with the number of
 * processes, over this floor's own growth, is the library's. */
struct floor_line {
	uint32_t depth;
	uint32_t phase;         /* WL_PHASE_OPEN, never changed */
	uint32_t watched;       /* 0, never changed */
	uint32_t odd;           /* counts what would have left the fast path */
} __attribute__((aligned(64)));

static inline void floor_hold_pair(struct floor_line *l)
{
	uint32_t d = __atomic_fetch_add(&l->depth, 1, __ATOMIC_SEQ_CST);

	if (__atomic_load_n(&l->phase, __ATOMIC_SEQ_CST) != WL_PHASE_OPEN || d)
		l->odd++;
	d = __atomic_load_n(&l->depth, __ATOMIC_RELAXED);
	do {
		if (d == 0) {
			l->odd++;
			return;
		}
	} while (!__atomic_compare_exchange_n(&l->depth, &d, d - 1, 1, __ATOMIC_SEQ_CST,
	                                      __ATOMIC_RELAXED));
	if (d == 1 && __atomic_load_n(&l->watched, __ATOMIC_SEQ_CST))
		l->odd++;
}


/* The samples of one phase (the pair, or its floor) of all processes. */
static void hold_report(const char *name, double *samples, const size_t *counts, int procs,
                        size_t per, int batch, uint64_t ns)
{
	size_t total = 0;
	double ops = 0, *all;
	char extra[160];

	for (int p = 0; p < procs; p++)
		total += counts[p];
	all = malloc(sizeof(double) * (total + 1));
	if (!all)
		die("malloc", -ENOMEM);
	total = 0;
	for (int p = 0; p < procs; p++) {
		memcpy(all + total, samples + (size_t)p * per, sizeof(double) * counts[p]);
		total += counts[p];
		ops += (double)counts[p] * batch;
	}
	snprintf(extra, sizeof(extra), " procs=%d batch=%d ops_per_s=%.0f", procs, batch,
	         ops / ((double)ns / 1e9));
	report(name, all, total, "ns", extra);
	free(all);
}

static int cmd_hold(int procs, double seconds, int batch)
{
	size_t per = 200000 / (size_t)procs + 16;
	/* Per phase (0 the pair, 1 its floor): counts, then samples. */
	size_t maplen = 2 * (sizeof(size_t) * (size_t)procs + sizeof(double) * per * (size_t)procs);
	void *map = mmap(NULL, maplen, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	size_t *counts[2];
	double *samples[2];
	int ready[2], go[2], r;
	wakelock_client *kc;
	wakelock_hold *kh;
	uint64_t t_start[2], t_end[2];

	if (map == MAP_FAILED)
		die("mmap", 0);
	counts[0] = map;
	counts[1] = counts[0] + procs;
	samples[0] = (double *)(counts[1] + procs);
	samples[1] = samples[0] + per * (size_t)procs;
	/* A keeper hold, another client's: the daemon stays parked, watching
	 * the keeper (a real system with a busy user), and the measured
	 * clients' releases, unwatched, make no system call. */
	if ((r = wakelock_client_open(NULL, "bench-keeper", &kc)) < 0 ||
	    (r = wakelock_hold_create(kc, "keep", &kh)) < 0 || (r = wakelock_hold_acquire(kh)) < 0)
		die("keeper", r);
	if (pipe(ready) < 0 || pipe(go) < 0)
		die("pipe", 0);
	for (int p = 0; p < procs; p++) {
		pid_t pid = fork();

		if (pid < 0)
			die("fork", 0);
		if (pid == 0) {
			char name[WAKELOCK_NAME_MAX], c;
			wakelock_client *cl;
			wakelock_hold *h;
			struct floor_line *fl;

			close(ready[0]);
			close(go[1]);
			snprintf(name, sizeof(name), "bench-%d", p);
			if ((r = wakelock_client_open(NULL, name, &cl)) < 0 ||
			    (r = wakelock_hold_create(cl, "h", &h)) < 0)
				die("client", r);
			/* The floor's line: this process's own, a shared mapping
			 * like its region, touched by no other process. */
			fl = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
			if (fl == MAP_FAILED)
				_exit(3);
			memset(fl, 0, sizeof(*fl));
			fl->phase = WL_PHASE_OPEN;
			for (int i = 0; i < 1000; i++) {   /* warm up */
				wakelock_hold_acquire(h);
				wakelock_hold_release(h);
				floor_hold_pair(fl);
			}
			/* Phase 0 the pair, phase 1 its floor: each started by
			 * one byte on go, each ended by one byte on ready. */
			for (int ph = 0; ph < 2; ph++) {
				double *mine = samples[ph] + (size_t)p * per;
				size_t n = 0;
				uint64_t end;

				if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
					_exit(1);
				end = wl_now_mono() + (uint64_t)(seconds * 1e9);
				for (;;) {
					uint64_t t0 = wl_now_mono(), t1;

					if (ph == 0) {
						for (int i = 0; i < batch; i++)
							if (wakelock_hold_acquire(h) < 0 ||
							    wakelock_hold_release(h) < 0)
								_exit(2);
					} else {
						for (int i = 0; i < batch; i++)
							floor_hold_pair(fl);
					}
					t1 = wl_now_mono();
					if (n < per)
						mine[n++] = (double)(t1 - t0) / batch;
					if (t1 >= end)
						break;
				}
				counts[ph][p] = n;
			}
			if (fl->odd)           /* never: the floor left its path */
				_exit(4);
			if (write(ready[1], "d", 1) != 1)
				_exit(1);
			wakelock_client_close(cl);
			_exit(0);
		}
	}
	close(ready[1]);
	close(go[0]);
	for (int ph = 0; ph < 3; ph++) {
		/* Every process ready (ph 0), done with the pair (ph 1), done
		 * with the floor (ph 2). */
		for (int p = 0; p < procs; p++) {
			char c;
			if (read(ready[0], &c, 1) != 1)
				die("a child failed", 0);
		}
		if (ph > 0)
			t_end[ph - 1] = wl_now_mono();
		if (ph == 2)
			break;
		t_start[ph] = wl_now_mono();
		for (int p = 0; p < procs; p++)
			if (write(go[1], "g", 1) != 1)
				die("go", 0);
	}
	for (int p = 0; p < procs; p++) {
		int st;
		wait(&st);
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			die("child failed", 0);
	}
	char name[32];
	snprintf(name, sizeof(name), "hold_p%d", procs);
	hold_report(name, samples[0], counts[0], procs, per, batch, t_end[0] - t_start[0]);
	snprintf(name, sizeof(name), "hold_floor_p%d", procs);
	hold_report(name, samples[1], counts[1], procs, per, batch, t_end[1] - t_start[1]);
	wakelock_hold_release(kh);
	wakelock_client_close(kc);
	munmap(map, maplen);
	return 0;
}

/* --- scale ---------------------------------------------------------------- */

static uint64_t rng = 88172645463325252ull;
static uint64_t xorshift(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* The daemon's count of live slots (read without the lock, only polled):
 * watching it costs nothing, where scanning every slot's state would touch
 * the whole sparse table and be timed as reaping. */
static uint32_t live_slots(const struct wl_shm_header *hdr)
{
	return __atomic_load_n(&hdr->nlive, __ATOMIC_ACQUIRE);
}

/* The memory floor of the scale pattern: CLIENTS regions of the same
 * size, each its own shared mapping like a client's memfd, and per pick
 * only what any layout of a hold must touch: a sequentially consistent
 * add and subtract on its depth and one store to its statistics (the
 * same line in this layout).
 * No library, no clock: what is left of a pair's growth with the number
 * of clients, over this floor's own growth, is the library's. */
static struct wl_region **floor_map(int n)
{
	struct wl_region **f = calloc((size_t)n ? (size_t)n : 1, sizeof(*f));

	if (!f)
		die("calloc", -ENOMEM);
	for (int i = 0; i < n; i++) {
		void *m = mmap(NULL, sizeof(struct wl_region), PROT_READ | PROT_WRITE,
		               MAP_SHARED | MAP_ANONYMOUS, -1, 0);

		if (m == MAP_FAILED)
			die("mmap", -errno);
		memset(m, 0, sizeof(struct wl_region));     /* every page present */
		f[i] = m;
	}
	return f;
}

static void floor_pair(struct wl_region *rg, uint64_t stamp)
{
	const unsigned last = WAKELOCK_MAX_HOLDS_PER_CLIENT - 1;

	__atomic_fetch_add(&rg->holds[last].depth, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&rg->holds[last].since, stamp, __ATOMIC_RELAXED);
	__atomic_fetch_sub(&rg->holds[last].depth, 1, __ATOMIC_SEQ_CST);
}

static int cmd_scale(int want, double seconds)
{
	wakelock_client **cl = calloc((size_t)want, sizeof(*cl));
	wakelock_hold **h = calloc((size_t)want * WAKELOCK_MAX_HOLDS_PER_CLIENT, sizeof(*h));
	wakelock_client *obs;
	int n = 0, r = 0, held = 0;
	size_t cap = 400000, ns = 0, nf = 0;
	double *v = malloc(sizeof(double) * cap), *vf = malloc(sizeof(double) * cap);
	struct wl_region **fl = NULL;
	uint64_t t0, reg_ns, end, reap_ns;
	pid_t dpid = daemon_pid();
	long long rss0, rss1;
	char extra[400], name[32];

	/* The observer: keeps the system awake and watches the table. */
	if ((r = wakelock_client_open(NULL, "bench-observer", &obs)) < 0)
		die("observer", r);
	wakelock_hold *oh;
	if ((r = wakelock_hold_create(obs, "keep", &oh)) < 0 || (r = wakelock_hold_acquire(oh)) < 0)
		die("observer hold", r);
	rss0 = proc_status_kb(dpid, "VmRSS");
	t0 = wl_now_mono();
	for (n = 0; n < want; n++) {
		char nm[WAKELOCK_NAME_MAX];
		snprintf(nm, sizeof(nm), "scale-%d", n);
		r = wakelock_client_open(NULL, nm, &cl[n]);
		if (r < 0)
			break;
	}
	reg_ns = wl_now_mono() - t0;
	int err = r;
	if (n == 0)
		die("no client could register", err);
	char errs[80];
	snprintf(errs, sizeof(errs), "%s", err < 0 ? wakelock_strerror(err) : "none");
	for (char *p = errs; *p; p++)   /* keep key=value parseable */
		if (*p == ' ')
			*p = '_';
	for (int i = 0; i < n; i++) {
		for (unsigned j = 0; j < WAKELOCK_MAX_HOLDS_PER_CLIENT; j++) {
			wakelock_hold **hp = &h[(size_t)i * WAKELOCK_MAX_HOLDS_PER_CLIENT + j];
			if ((r = wakelock_hold_create(cl[i], "s", hp)) < 0)
				die("hold_create", r);
			if (j + 1 < WAKELOCK_MAX_HOLDS_PER_CLIENT) {
				if ((r = wakelock_hold_acquire(*hp)) < 0)
					die("acquire", r);
				held++;
			}
		}
	}
	rss1 = proc_status_kb(dpid, "VmRSS");
	const int batch = 64;
	int pi[64];

	/* The pair, then its floor, each alone: warm up, then batches of 64
	 * picks of random clients.  A pair takes the client's free hold
	 * 0->1->0 (its slot stays active).  Not interleaved: the floor's
	 * CLIENTS more regions would double the pages the pair's batches
	 * walk, and time the TLB's capacity rather than the library. */
	for (int floor = 0; floor <= 1; floor++) {
		double *out = floor ? vf : v;
		size_t *nout = floor ? &nf : &ns;

		if (floor)
			fl = floor_map(n);

		end = wl_now_mono() + 100000000ull + (uint64_t)(seconds * 1e9);
		for (int warm = 1; warm >= 0; warm--) {
			uint64_t stop = warm ? end - (uint64_t)(seconds * 1e9) : end;

			for (;;) {
				uint64_t a, b;

				for (int i = 0; i < batch; i++)
					pi[i] = (int)(xorshift() % (uint64_t)n);
				a = wl_now_mono();
				for (int i = 0; i < batch; i++) {
					if (floor) {
						floor_pair(fl[pi[i]], a);
						continue;
					}
					wakelock_hold *p = h[(size_t)pi[i] * WAKELOCK_MAX_HOLDS_PER_CLIENT +
					                     WAKELOCK_MAX_HOLDS_PER_CLIENT - 1];
					wakelock_hold_acquire(p);
					wakelock_hold_release(p);
				}
				b = wl_now_mono();
				if (!warm && *nout < cap)
					out[(*nout)++] = (double)(b - a) / batch;
				if (b >= stop)
					break;
			}
		}
	}
	/* Reaping: close every client at once, time from the first close until
	 * the daemon has freed all their slots (it learns of each through a
	 * socket hang-up, and may reap while the closes are still going on). */
	t0 = wl_now_mono();
	for (int i = 0; i < n; i++) {
		/* Let the daemon reap: do not release in the library first.
		 * The client's watcher would register it again: stop it. */
		wl_watch_stop(cl[i]);
		close(cl[i]->sock);
		cl[i]->sock = -1;
	}
	while (live_slots(__atomic_load_n(&obs->pub, __ATOMIC_ACQUIRE)) > 1 && wl_now_mono() - t0 < 20000000000ull)
		usleep(100);
	reap_ns = wl_now_mono() - t0;
	snprintf(extra, sizeof(extra),
	         " clients_wanted=%d clients=%d holds_held=%d open_error=%s"
	         " register_us=%.1f reap_us_per_client=%.1f daemon_rss_kb_before=%lld"
	         " daemon_rss_kb=%lld",
	         want, n, held + 1, errs,
	         n ? (double)reg_ns / n / 1e3 : 0, n ? (double)reap_ns / n / 1e3 : 0, rss0, rss1);
	snprintf(name, sizeof(name), "scale_c%d", want);
	report(name, v, ns, "ns", extra);
	snprintf(name, sizeof(name), "scale_floor_c%d", want);
	report(name, vf, nf, "ns", NULL);
	for (int i = 0; i < n; i++)
		munmap(fl[i], sizeof(struct wl_region));
	free(fl);
	free(vf);
	wakelock_hold_release(oh);
	wakelock_client_close(obs);
	return 0;
}

/* --- kernel peers ---------------------------------------------------------- */

static int cmd_wakelock(int pairs)
{
	double *v = malloc(sizeof(double) * (size_t)pairs);
	int lk = open("/sys/power/wake_lock", O_WRONLY | O_CLOEXEC);
	int ul = open("/sys/power/wake_unlock", O_WRONLY | O_CLOEXEC);

	if (lk < 0 || ul < 0)
		die("/sys/power/wake_lock", 0);
	for (int i = -100; i < pairs; i++) {
		uint64_t a = wl_now_mono();
		if (write(lk, "wlbench", 7) != 7 || write(ul, "wlbench", 7) != 7)
			die("wake_lock write", 0);
		if (i >= 0)
			v[i] = (double)(wl_now_mono() - a);
	}
	report("wake_lock_pair", v, (size_t)pairs, "ns", NULL);
	return 0;
}

/* Did the kernel keep EPOLLWAKEUP on the item?  It clears the flag without
 * an error when it has no CONFIG_PM_SLEEP or the caller lacks
 * CAP_BLOCK_SUSPEND; the item's mask in /proc/self/fdinfo tells.
 * 1 kept, 0 dropped, -1 unknown. */
static int epoll_wakeup_kept(int ep, int fd)
{
	char path[64], line[256];
	int kept = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", ep);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		int tfd;
		unsigned events;

		if (sscanf(line, "tfd: %d events: %x", &tfd, &events) == 2 && tfd == fd)
			kept = (events & EPOLLWAKEUP) != 0;
	}
	fclose(f);
	return kept;
}

static int cmd_epoll(int rounds)
{
	double *v = malloc(sizeof(double) * (size_t)rounds);
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK), ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { .events = EPOLLIN | EPOLLWAKEUP };
	uint64_t one = 1, got;
	char extra[64];

	if (efd < 0 || ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev) < 0)
		die("eventfd/epoll", 0);
	snprintf(extra, sizeof(extra), " wakeup_kept=%d", epoll_wakeup_kept(ep, efd));
	for (int i = -100; i < rounds; i++) {
		uint64_t a = wl_now_mono();
		if (write(efd, &one, 8) != 8 || epoll_wait(ep, &ev, 1, -1) != 1 ||
		    read(efd, &got, 8) != 8)
			die("epoll round", 0);
		if (i >= 0)
			v[i] = (double)(wl_now_mono() - a);
	}
	/* One more epoll_wait releases the kernel's EPOLLWAKEUP source. */
	epoll_wait(ep, &ev, 1, 0);
	report("epollwakeup_round", v, (size_t)rounds, "ns", extra);
	return 0;
}

/* --- latency: last release -> write to /sys/power/state -------------------- */

struct trace_page {            /* shared with bench/trace_shim.c */
	volatile uint64_t seq;
	volatile uint64_t t_ns;
};

static int cmd_latency(int iters, const char *trace)
{
	int fd = open(trace, O_RDWR | O_CLOEXEC);
	struct trace_page *tp;
	double *v = malloc(sizeof(double) * (size_t)iters);
	wakelock_client *c;
	wakelock_hold *h;
	int r, n = 0, timeouts = 0;

	if (fd < 0)
		die(trace, 0);
	tp = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (tp == MAP_FAILED)
		die("mmap trace", 0);
	if ((r = wakelock_client_open(NULL, "bench-latency", &c)) < 0 ||
	    (r = wakelock_hold_create(c, "h", &h)) < 0)
		die("client", r);
	const struct wl_shm_header *hdr = c->pub;
	for (int i = -20; i < iters; i++) {
		uint64_t seq, t0, dl;

		if ((r = wakelock_hold_acquire(h)) < 0)
			die("acquire", r);
		/* Wait until the daemon is parked on the counter (step 3). */
		dl = wl_now_mono() + 2000000000ull;
		while (!(__atomic_load_n(&hdr->dstate, __ATOMIC_ACQUIRE) == WL_D_WAITING &&
		         __atomic_load_n(&hdr->waiting, __ATOMIC_ACQUIRE)) && wl_now_mono() < dl)
			usleep(50);
		usleep(200);   /* and really asleep in poll() */
		seq = tp->seq;
		t0 = wl_now_mono();
		if ((r = wakelock_hold_release(h)) < 0)
			die("release", r);
		dl = t0 + 2000000000ull;
		/* The daemon stamps the time itself: poll gently, do not spin (a
		 * spinning poller on a 2-core machine delays the daemon). */
		while (tp->seq == seq && wl_now_mono() < dl)
			usleep(50);
		if (tp->seq == seq) {
			timeouts++;
			continue;
		}
		if (i >= 0)
			v[n++] = (double)(tp->t_ns - t0) / 1e3;
	}
	char extra[64];
	snprintf(extra, sizeof(extra), " timeouts=%d", timeouts);
	report("react_latency", v, (size_t)n, "us", extra);
	wakelock_client_close(c);
	return 0;
}

/* --- idle cost ------------------------------------------------------------- */

static int cmd_idle(double seconds)
{
	pid_t dpid = daemon_pid();
	wakelock_client *c;
	wakelock_hold *h;
	long long v0, nv0, v1, nv1, c0, c1;
	int r;

	if (dpid <= 0)
		die("daemon pid", 0);
	if ((r = wakelock_client_open(NULL, "bench-idle", &c)) < 0 ||
	    (r = wakelock_hold_create(c, "h", &h)) < 0 || (r = wakelock_hold_acquire(h)) < 0)
		die("client", r);
	sleep_ms(300);   /* let the daemon settle into its wait */
	v0 = task_field_sum(dpid, "voluntary_ctxt_switches");
	nv0 = task_field_sum(dpid, "nonvoluntary_ctxt_switches");
	c0 = cpu_ticks(dpid);
	sleep_ms((unsigned)(seconds * 1000));
	v1 = task_field_sum(dpid, "voluntary_ctxt_switches");
	nv1 = task_field_sum(dpid, "nonvoluntary_ctxt_switches");
	c1 = cpu_ticks(dpid);
	printf("BENCH idle_wakeups n=1 median=%.2f p99=%.2f unit=per_s seconds=%.1f"
	       " voluntary=%lld nonvoluntary=%lld cpu_ticks=%lld\n",
	       (double)(v1 - v0 + nv1 - nv0) / seconds, (double)(v1 - v0 + nv1 - nv0) / seconds,
	       seconds, v1 - v0, nv1 - nv0, c1 - c0);
	fflush(stdout);
	wakelock_client_close(c);
	return 0;
}

/* --- the power thread's wake-ups (awake sources) ------------------------- */

/* One "Key:\t123" field of one thread, -1 if unreadable. */
static long long task_field(pid_t pid, pid_t tid, const char *key)
{
	char path[96], line[256];
	long long v = -1;
	size_t kl = strlen(key);
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, kl) && line[kl] == ':')
			v = atoll(line + kl + 1);
	fclose(f);
	return v;
}

/* The thread's system call while blocked (/proc/.../syscall: its number
 * first), -1 if running or unreadable. */
static long task_syscall(pid_t pid, pid_t tid)
{
	char path[96], buf[256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0 || buf[0] < '0' || buf[0] > '9')
		return -1;
	buf[n] = 0;
	return strtol(buf, NULL, 10);
}

/* The power thread: the daemon's only thread that waits in poll()
 * (daemon/powerloop.c wait_kick; the main thread waits in epoll_wait, the
 * descriptor closer in read).  0 if none is found (in up to 2 s). */
static pid_t power_thread(pid_t pid)
{
	for (int tries = 0; tries < 200; tries++) {
		char dir[64];
		struct dirent *de;
		pid_t found = 0;
		int n = 0;
		DIR *d;

		snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
		if (!(d = opendir(dir)))
			return 0;
		while ((de = readdir(d))) {
			pid_t tid = (pid_t)atoi(de->d_name);
			long nr;

			if (tid <= 0 || tid == pid)
				continue;
			nr = task_syscall(pid, tid);
#ifdef SYS_poll
			if (nr == SYS_poll) {
				found = tid;
				n++;
			}
#endif
			if (nr == SYS_ppoll) {
				found = tid;
				n++;
			}
		}
		closedir(d);
		if (n == 1)
			return found;
		sleep_ms(10);
	}
	return 0;
}

/*
 * wlbench power-wakeups SECONDS: how often the power thread wakes while a
 * hold of this process keeps the system awake: its voluntary and
 * involuntary context switches over SECONDS (each return from its poll()
 * is one voluntary switch), and the whole daemon's, for comparison.  The
 * conditions (the displays) are the caller's (bench/run.py).
 */
static int cmd_power_wakeups(double seconds)
{
	pid_t dpid = daemon_pid(), tid;
	wakelock_client *c;
	wakelock_hold *h;
	long long v0, nv0, pv0, pnv0, v1, nv1, pv1, pnv1;
	uint64_t t0, t1;
	double s, rate;
	int r;

	if (dpid <= 0)
		die("daemon pid", 0);
	if ((r = wakelock_client_open(NULL, "bench-wakeups", &c)) < 0 ||
	    (r = wakelock_hold_create(c, "h", &h)) < 0 || (r = wakelock_hold_acquire(h)) < 0)
		die("client", r);
	sleep_ms(300);   /* let the daemon settle into its wait */
	tid = power_thread(dpid);
	if (tid <= 0) {
		fprintf(stderr, "wlbench: power-wakeups: no single daemon thread in poll()\n");
		return 1;
	}
	t0 = wl_now_mono();
	v0 = task_field(dpid, tid, "voluntary_ctxt_switches");
	nv0 = task_field(dpid, tid, "nonvoluntary_ctxt_switches");
	pv0 = task_field_sum(dpid, "voluntary_ctxt_switches");
	pnv0 = task_field_sum(dpid, "nonvoluntary_ctxt_switches");
	sleep_ms((unsigned)(seconds * 1000));
	v1 = task_field(dpid, tid, "voluntary_ctxt_switches");
	nv1 = task_field(dpid, tid, "nonvoluntary_ctxt_switches");
	pv1 = task_field_sum(dpid, "voluntary_ctxt_switches");
	pnv1 = task_field_sum(dpid, "nonvoluntary_ctxt_switches");
	t1 = wl_now_mono();
	if (v0 < 0 || v1 < 0)
		die("power thread status", 0);
	s = (double)(t1 - t0) / 1e9;
	rate = (double)(v1 - v0) / s;
	printf("BENCH power_wakeups n=1 median=%.2f p99=%.2f unit=per_s seconds=%.2f tid=%d"
	       " voluntary=%lld nonvoluntary=%lld proc_voluntary=%lld proc_nonvoluntary=%lld\n",
	       rate, rate, s, (int)tid, v1 - v0, nv1 - nv0, pv1 - pv0, pnv1 - pnv0);
	fflush(stdout);
	wakelock_client_close(c);
	return 0;
}

static int cmd_cpu(void)
{
	pid_t dpid = daemon_pid();

	printf("%lld %d %lld\n", cpu_ticks(dpid), (int)dpid, (long long)sysconf(_SC_CLK_TCK));
	return 0;
}

/* --- a flood of input events (the activity source, laptop policy) --------- */

/* CPU time of every thread of pid in ns: the first field of each
 * /proc/PID/task/TID/schedstat (time on a CPU), -1 if none is readable.
 * The ticks of /proc/PID/stat are 10 ms, too coarse for a process that
 * should use a few ms in 10 s; they are reported beside it. */
static long long task_cpu_ns(pid_t pid)
{
	char dir[64], path[400];
	long long sum = -1;
	struct dirent *de;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	d = opendir(dir);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		unsigned long long v;
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/schedstat", dir, de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (fscanf(f, "%llu", &v) == 1)
			sum = (sum < 0 ? 0 : sum) + (long long)v;
		fclose(f);
	}
	closedir(d);
	return sum;
}

/* The writing end of a FIFO once its reader has it open (ENXIO until
 * then; up to 5 s), blocking: a flood then waits for its reader rather
 * than losing records. */
static int fifo_writer(const char *path)
{
	int fd = -1;

	for (int i = 0; i < 500 && fd < 0; i++) {
		fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0 && errno != ENXIO)
			die(path, 0);
		if (fd < 0)
			sleep_ms(10);
	}
	if (fd < 0)
		die("no reader of the FIFO", 0);
	fcntl(fd, F_SETFL, 0);
	return fd;
}

/* rate records a second into fd for seconds, per_write (even, at most
 * 256) in each write at even intervals, on absolute deadlines (a late
 * write is followed by the next one at once: the rate holds on average);
 * half REL_X motions, half their SYN_REPORTs.  Returns the records
 * written. */
static long long flood(int fd, unsigned rate, unsigned per_write, double seconds)
{
	struct input_event ev[256];
	uint64_t step = (uint64_t)per_write * 1000000000ull / rate, t0 = wl_now_mono();
	uint64_t end = t0 + (uint64_t)(seconds * 1e9);
	long long written = 0;

	memset(ev, 0, sizeof(ev));
	for (unsigned i = 0; i + 1 < per_write; i += 2) {
		ev[i].type = EV_REL;
		ev[i].code = REL_X;
		ev[i].value = 1;
		ev[i + 1].type = EV_SYN;       /* SYN_REPORT */
	}
	for (uint64_t next = t0; next < end; next += step) {
		struct timespec ts = { .tv_sec = (time_t)(next / 1000000000u),
		                       .tv_nsec = (long)(next % 1000000000u) };
		size_t len = per_write * sizeof(ev[0]);

		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		if (write(fd, ev, len) != (ssize_t)len)
			die("writing the flood", 0);
		written += per_write;
	}
	return written;
}

/* The peer: what reading the flood costs a process woken by every write.
 * It sleeps in epoll_wait on the FIFO and at each wake-up reads what is
 * there, 128 records a read, until EAGAIN; it ends at end of file. */
static void bare_reader(const char *path)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct input_event buf[128];
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC), ep = epoll_create1(EPOLL_CLOEXEC);

	if (fd < 0 || ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0)
		_exit(1);
	for (;;) {
		ssize_t n;

		if (epoll_wait(ep, &ev, 1, -1) < 0 && errno != EINTR)
			_exit(1);
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			;
		/* 0: the writer has gone, after a flood (before it, a FIFO
		 * that never had a writer reports nothing to epoll). */
		if (n == 0)
			_exit(0);
	}
}

/* CPU ns, ticks and context switches of a process, for one side. */
struct usage { long long ns, ticks, vol, invol; uint64_t t; };

static void usage_now(pid_t pid, struct usage *u)
{
	u->t = wl_now_mono();
	u->ns = task_cpu_ns(pid);
	u->ticks = cpu_ticks(pid);
	u->vol = task_field_sum(pid, "voluntary_ctxt_switches");
	u->invol = task_field_sum(pid, "nonvoluntary_ctxt_switches");
}

static void report_flood(const char *name, const struct usage *a, const struct usage *b,
                         long long events, unsigned rate, unsigned per_write)
{
	double s = (double)(b->t - a->t) / 1e9, pct = (double)(b->ns - a->ns) / (s * 1e9) * 100;

	if (a->ns < 0 || b->ns < 0)
		die("schedstat", 0);
	printf("BENCH %s n=1 median=%.4f p99=%.4f unit=pct seconds=%.2f events=%lld rate=%u"
	       " per_write=%u cpu_ms=%.3f ticks=%lld clk_tck=%ld wakeups_per_s=%.2f"
	       " voluntary=%lld nonvoluntary=%lld\n", name, pct, pct, s, events, rate, per_write,
	       (double)(b->ns - a->ns) / 1e6, b->ticks - a->ticks, sysconf(_SC_CLK_TCK),
	       (double)(b->vol - a->vol) / s, b->vol - a->vol, b->invol - a->invol);
	fflush(stdout);
}

/*
 * wlbench input-flood FIFO RATE SECONDS [PER_WRITE]: the daemon reads
 * FIFO as an input device (bench/run.py starts it in laptop mode on a
 * fake root whose dev/input/event0 is FIFO).  Its CPU over the flood,
 * all threads, from schedstat; then the bare reader's over the same
 * flood, in the same run.
 */
static int cmd_input_flood(const char *path, unsigned rate, double seconds, unsigned per_write)
{
	char dir[] = "/tmp/wlbench-reader-XXXXXX", fifo[64];
	pid_t dpid = daemon_pid(), child;
	struct usage a, b;
	long long n;
	int fd, st;

	if (dpid <= 0)
		die("daemon pid", 0);
	if (!rate || per_write < 2 || per_write > 256 || per_write % 2)
		die("input-flood: RATE > 0, PER_WRITE even, 2..256", 0);
	fd = fifo_writer(path);
	sleep_ms(300);   /* the daemon has seen the writer come */
	usage_now(dpid, &a);
	n = flood(fd, rate, per_write, seconds);
	usage_now(dpid, &b);
	close(fd);
	report_flood("input_flood", &a, &b, n, rate, per_write);

	if (!mkdtemp(dir))
		die("mkdtemp", 0);
	snprintf(fifo, sizeof(fifo), "%s/event0", dir);
	if (mkfifo(fifo, 0600) < 0)
		die("mkfifo", 0);
	child = fork();
	if (child < 0)
		die("fork", 0);
	if (child == 0)
		bare_reader(fifo);
	fd = fifo_writer(fifo);
	sleep_ms(100);
	usage_now(child, &a);
	n = flood(fd, rate, per_write, seconds);
	usage_now(child, &b);
	close(fd);
	report_flood("input_flood_bare", &a, &b, n, rate, per_write);
	if (waitpid(child, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
		fprintf(stderr, "wlbench: the bare reader did not end cleanly\n");
	unlink(fifo);
	rmdir(dir);
	return 0;
}

/* --- the daemon's CPU per cycle ------------------------------------------ */

/*
 * wlbench cycle-cpu SECONDS: with nothing held the daemon cycles as fast
 * as its min_awake_ms lets it (on a fake /sys the state write returns at
 * once), so its CPU over SECONDS divided by the attempts it counted in
 * that time is its own work per cycle: the loop's steps, the ledger's
 * snapshots of the wakeup sources, the statistics.  The caller sets up
 * the sources (bench/run.py).  This client holds nothing.
 */
static int cmd_cycle_cpu(double seconds)
{
	pid_t dpid = daemon_pid();
	const struct wl_shm_header *hdr;
	struct usage a, b;
	uint64_t n0, n1;
	wakelock_client *c;
	double s;
	int r;

	if (dpid <= 0)
		die("daemon pid", 0);
	if ((r = wakelock_client_open(NULL, "bench-cycles", &c)) < 0)
		die("client", r);
	hdr = __atomic_load_n(&c->pub, __ATOMIC_ACQUIRE);
	sleep_ms(300);
	usage_now(dpid, &a);
	n0 = __atomic_load_n(&hdr->dstats.attempts, __ATOMIC_ACQUIRE);
	sleep_ms((unsigned)(seconds * 1000));
	usage_now(dpid, &b);
	n1 = __atomic_load_n(&hdr->dstats.attempts, __ATOMIC_ACQUIRE);
	if (a.ns < 0 || b.ns < 0 || n1 <= n0)
		die("cycle-cpu: no schedstat, or no attempt", 0);
	s = (double)(b.t - a.t) / 1e9;
	printf("BENCH cycle_cpu n=1 median=%.2f p99=%.2f unit=us seconds=%.2f cycles=%llu"
	       " cycles_per_s=%.1f cpu_ms=%.3f ticks=%lld pct=%.3f\n",
	       (double)(b.ns - a.ns) / 1e3 / (double)(n1 - n0),
	       (double)(b.ns - a.ns) / 1e3 / (double)(n1 - n0), s,
	       (unsigned long long)(n1 - n0), (double)(n1 - n0) / s, (double)(b.ns - a.ns) / 1e6,
	       b.ticks - a.ticks, (double)(b.ns - a.ns) / (s * 1e9) * 100);
	fflush(stdout);
	wakelock_client_close(c);
	return 0;
}

/* --- bare loop: the kernel's own limit -------------------------------------- */

static volatile sig_atomic_t alarmed;
static void on_alarm(int s) { (void)s; alarmed = 1; }

static int cmd_bare(double seconds)
{
	int cfd = open("/sys/power/wakeup_count", O_RDWR | O_CLOEXEC);
	int sfd = open("/sys/power/state", O_WRONLY | O_CLOEXEC);
	size_t cap = 100000, n = 0;
	double *v = malloc(sizeof(double) * cap);
	int ok = 0, aborts = 0, fails = 0;
	uint64_t end, prev, start;
	struct sigaction sa = { .sa_handler = on_alarm };
	char buf[32], extra[200];

	if (cfd < 0 || sfd < 0)
		die("/sys/power", 0);
	sigaction(SIGALRM, &sa, NULL);   /* no SA_RESTART: bounds a blocked read */
	start = prev = wl_now_mono();
	end = start + (uint64_t)(seconds * 1e9);
	while (wl_now_mono() < end) {
		ssize_t k;

		alarm(5);
		k = pread(cfd, buf, sizeof(buf) - 1, 0);
		alarm(0);
		if (k <= 0)
			die("read wakeup_count", 0);
		buf[k] = 0;
		buf[strcspn(buf, "\n")] = 0;
		if (pwrite(cfd, buf, strlen(buf), 0) < 0) {
			aborts++;
			continue;
		}
		if (pwrite(sfd, "freeze", 6, 0) < 0) {
			fails++;
			continue;
		}
		ok++;
		uint64_t t = wl_now_mono();
		if (n < cap)
			v[n++] = (double)(t - prev) / 1e6;
		prev = t;
	}
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	double cpu_ms = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
	                (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
	snprintf(extra, sizeof(extra), " cycles=%d aborts=%d failures=%d seconds=%.2f rate=%.2f"
	         " cpu_ms_per_cycle=%.3f",
	         ok, aborts, fails, (double)(wl_now_mono() - start) / 1e9,
	         ok / ((double)(wl_now_mono() - start) / 1e9), ok ? cpu_ms / ok : 0);
	report("bare_cycle", v, n, "ms", extra);
	return 0;
}

/* --- the OS floor under the reaction latency ------------------------------- */

/* A process asleep in FUTEX_WAIT (as the daemon's power thread is) is woken
 * by another one; time from just before FUTEX_WAKE to the sleeper running
 * again.  What any daemon woken by a release pays at least. */
static int cmd_futex_wake(int iters)
{
	struct fw { volatile uint32_t word; volatile uint64_t t_woke; volatile uint32_t seen; } *fw;
	double *v = malloc(sizeof(double) * (size_t)iters);
	pid_t pid;

	fw = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (fw == MAP_FAILED)
		die("mmap", 0);
	memset((void *)fw, 0, sizeof(*fw));
	pid = fork();
	if (pid == 0) {
		for (uint32_t seq = 0;; ) {
			while (fw->word == seq)
				syscall(SYS_futex, &fw->word, FUTEX_WAIT, seq, NULL, NULL, 0);
			fw->t_woke = wl_now_mono();
			seq = fw->word;
			__atomic_store_n(&fw->seen, seq, __ATOMIC_RELEASE);
			if (seq == 0xffffffffu)
				_exit(0);
		}
	}
	for (int i = -20; i < iters; i++) {
		uint32_t seq = (uint32_t)(i + 21);
		uint64_t t0;

		usleep(300);   /* the child is asleep in the kernel again */
		t0 = wl_now_mono();
		__atomic_store_n(&fw->word, seq, __ATOMIC_RELEASE);
		syscall(SYS_futex, &fw->word, FUTEX_WAKE, 1, NULL, NULL, 0);
		while (__atomic_load_n(&fw->seen, __ATOMIC_ACQUIRE) != seq)
			;
		if (i >= 0)
			v[i] = (double)(fw->t_woke - t0) / 1e3;
	}
	fw->word = 0xffffffffu;
	syscall(SYS_futex, &fw->word, FUTEX_WAKE, 1, NULL, NULL, 0);
	waitpid(pid, NULL, 0);
	report("futex_wake", v, (size_t)iters, "us", NULL);
	return 0;
}

/* The clock the fast path reads (lib/table.c: CLOCK_MONOTONIC, lazily,
 * only when a hold or its slot changes state): its cost on this machine. */
static int cmd_clock(int iters)
{
	double *v = malloc(sizeof(double) * (size_t)iters);
	struct timespec ts;

	for (int i = 0; i < iters; i++) {
		uint64_t a = wl_now_mono();
		for (int k = 0; k < 100; k++)
			clock_gettime(CLOCK_MONOTONIC, &ts);
		v[i] = (double)(wl_now_mono() - a) / 100;
	}
	report("clock_mono", v, (size_t)iters, "ns", NULL);
	return 0;
}

static int cmd_drain(const char *path)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	char buf[4096];
	long total = 0;
	ssize_t k;

	if (fd < 0)
		die(path, 0);
	while ((k = read(fd, buf, sizeof(buf))) > 0)
		total += k;
	printf("drained %ld bytes\n", total);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	struct rlimit nofile;

	/* Four descriptors per client (connection, region, the daemon's
	 * eventfd, the watcher's): 1000 clients need more than 1024. */
	if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
		nofile.rlim_cur = nofile.rlim_max;
		setrlimit(RLIMIT_NOFILE, &nofile);
	}

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 5 && !strcmp(argv[1], "hold"))
		return cmd_hold(atoi(argv[2]), atof(argv[3]), atoi(argv[4]));
	if (argc >= 4 && !strcmp(argv[1], "scale"))
		return cmd_scale(atoi(argv[2]), atof(argv[3]));
	if (argc >= 3 && !strcmp(argv[1], "wakelock"))
		return cmd_wakelock(atoi(argv[2]));
	if (argc >= 3 && !strcmp(argv[1], "epoll"))
		return cmd_epoll(atoi(argv[2]));
	if (argc >= 4 && !strcmp(argv[1], "latency"))
		return cmd_latency(atoi(argv[2]), argv[3]);
	if (argc >= 3 && !strcmp(argv[1], "idle"))
		return cmd_idle(atof(argv[2]));
	if (argc >= 3 && !strcmp(argv[1], "power-wakeups"))
		return cmd_power_wakeups(atof(argv[2]));
	if (argc >= 5 && !strcmp(argv[1], "input-flood"))
		return cmd_input_flood(argv[2], (unsigned)atoi(argv[3]), atof(argv[4]),
		                       argc >= 6 ? (unsigned)atoi(argv[5]) : 2);
	if (argc >= 3 && !strcmp(argv[1], "cycle-cpu"))
		return cmd_cycle_cpu(atof(argv[2]));
	if (argc >= 3 && !strcmp(argv[1], "bare-loop"))
		return cmd_bare(atof(argv[2]));
	if (argc >= 2 && !strcmp(argv[1], "cpu"))
		return cmd_cpu();
	if (argc >= 3 && !strcmp(argv[1], "futex-wake"))
		return cmd_futex_wake(atoi(argv[2]));
	if (argc >= 3 && !strcmp(argv[1], "clock"))
		return cmd_clock(atoi(argv[2]));
	if (argc >= 3 && !strcmp(argv[1], "drain"))
		return cmd_drain(argv[2]);
	fprintf(stderr, "usage: see the comment at the top of bench/wlbench.c\n");
	return 2;
}
