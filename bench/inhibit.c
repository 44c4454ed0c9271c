// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * wl-inhibit-bench N: what keeping the system awake costs a program that
 * uses logind today (an Inhibit("sleep", ..., "block") call on the system
 * bus, then closing the descriptor it returned), next to a libwakelock
 * acquire + release, in the same process and run (bench/README.md).
 *
 * Prints, in wlbench's format (bench/run.py parses it):
 *   BENCH inhibit_pair ...      one Inhibit call + close, ns each
 *   BENCH inhibit_hold_pair ... one acquire + release, ns each, timed in
 *                               batches of 16 (the clock costs more than
 *                               the pair) like wlbench hold
 * Needs the system bus and logind running, root (no polkit in the guest),
 * and wakelockd.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <time.h>
#include <unistd.h>
#include <wakelock.h>

#define BATCH 16

static void die(const char *what, int err)
{
	fprintf(stderr, "wl-inhibit-bench: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double pct(const double *v, size_t n, double p)
{
	size_t k = (size_t)(p * (double)n);

	return n ? v[k < n ? k : n - 1] : 0;
}

static void report(const char *name, double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_d);
	printf("BENCH %s n=%zu median=%.1f p99=%.1f min=%.1f max=%.1f unit=ns\n", name, n,
	       pct(v, n, 0.5), pct(v, n, 0.99), n ? v[0] : 0, n ? v[n - 1] : 0);
	fflush(stdout);
}

static int inhibit(sd_bus *bus)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	int r, fd = -1;

	r = sd_bus_call_method(bus, "org.freedesktop.login1", "/org/freedesktop/login1",
	                       "org.freedesktop.login1.Manager", "Inhibit", &e, &reply, "ssss",
	                       "sleep", "wl-inhibit-bench", "benchmark", "block");
	if (r < 0) {
		fprintf(stderr, "wl-inhibit-bench: Inhibit: %s\n", e.message ? e.message : strerror(-r));
		exit(1);
	}
	if (sd_bus_message_read(reply, "h", &fd) <= 0)
		die("Inhibit reply", EBADMSG);
	/* The message owns the descriptor: unref closes it, as a program's
	 * close() of its copy would end the inhibitor. */
	sd_bus_message_unref(reply);
	sd_bus_error_free(&e);
	return 0;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 200, r;
	double *v = NULL;
	wakelock_client *cl;
	wakelock_hold *h;
	sd_bus *bus;

	if (n < 1 || n > 1000000) {
		fprintf(stderr, "usage: wl-inhibit-bench [N (1..1000000)]\n");
		return 2;
	}
	v = malloc(sizeof(*v) * (size_t)n);
	if (!v)
		die("malloc", ENOMEM);
	if ((r = sd_bus_open_system(&bus)) < 0)
		die("sd_bus_open_system", r);
	for (int i = -10; i < n; i++) {
		double t = now_ns();

		inhibit(bus);
		if (i >= 0)
			v[i] = now_ns() - t;
	}
	report("inhibit_pair", v, (size_t)n);

	if ((r = wakelock_client_open(NULL, "wl-inhibit-bench", &cl)) < 0 ||
	    (r = wakelock_hold_create(cl, "bench", &h)) < 0)
		die("libwakelock", r);
	for (int i = -10; i < n; i++) {
		double t = now_ns();

		for (int k = 0; k < BATCH; k++) {
			wakelock_hold_acquire(h);
			wakelock_hold_release(h);
		}
		if (i >= 0)
			v[i] = (now_ns() - t) / BATCH;
	}
	report("inhibit_hold_pair", v, (size_t)n);
	wakelock_client_close(cl);
	sd_bus_flush_close_unref(bus);
	free(v);
	return 0;
}
