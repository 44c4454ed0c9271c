/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * LD_PRELOAD tracing hook for the host reaction-latency figure: wraps
 * pwrite()/write() and, when the file written is .../sys/power/state,
 * stores CLOCK_MONOTONIC (taken first, before anything else) and bumps a
 * sequence number in the page mapped from $WLBENCH_TRACE.  wlbench
 * latency reads both.  Only for the host daemon running against a fake
 * /sys (--root); nothing here is built into wakelockd.
 */
#ifndef _GNU_SOURCE
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#endif
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

struct trace_page {
	volatile uint64_t seq;
	volatile uint64_t t_ns;
};

static struct trace_page *page;
static int state_fd = -2;   /* -2: unknown yet */
static unsigned char not_state[1024];   /* fds known to be something else */

static void setup(void)
{
	const char *p = getenv("WLBENCH_TRACE");
	int fd;

	if (page || !p)
		return;
	fd = open(p, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return;
	void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m != MAP_FAILED)
		page = m;
}

static int is_state(int fd)
{
	char link[64], target[4200];
	ssize_t n;
	size_t l;

	if (fd == state_fd)
		return 1;
	if (fd >= 0 && fd < 1024 && not_state[fd])
		return 0;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, target, sizeof(target) - 1);
	if (n <= 0)
		return 0;
	target[n] = 0;
	l = strlen("/sys/power/state");
	if ((size_t)n >= l && !strcmp(target + n - l, "/sys/power/state")) {
		state_fd = fd;
		return 1;
	}
	if (fd >= 0 && fd < 1024)
		not_state[fd] = 1;
	return 0;
}

static void trace(int fd, uint64_t t)
{
	setup();
	if (page && is_state(fd)) {
		page->t_ns = t;
		__atomic_add_fetch(&page->seq, 1, __ATOMIC_RELEASE);
	}
}

static uint64_t now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	static ssize_t (*real)(int, const void *, size_t, off_t);
	uint64_t t = now();

	if (!real)
		real = (ssize_t (*)(int, const void *, size_t, off_t))dlsym(RTLD_NEXT, "pwrite");
	trace(fd, t);
	return real(fd, buf, n, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off)
{
	static ssize_t (*real)(int, const void *, size_t, off_t);
	uint64_t t = now();

	if (!real)
		real = (ssize_t (*)(int, const void *, size_t, off_t))dlsym(RTLD_NEXT, "pwrite64");
	trace(fd, t);
	return real(fd, buf, n, off);
}
