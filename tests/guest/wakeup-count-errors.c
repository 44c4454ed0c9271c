// SPDX-License-Identifier: GPL-2.0
/*
 * wakeup-count-errors: the error paths of /sys/power/wakeup_count that a
 * power manager has to handle, each checked for its exact errno:
 *
 *  - a blocked read (a wakeup source is active) interrupted by a signal
 *    fails with EINTR, and the next read succeeds once the source is idle;
 *  - writing a stale count (an event came after the read) fails with EINVAL,
 *    and so does writing the current count while an event is in progress, or
 *    something that is not a number;
 *  - any write while autosleep is on fails with EBUSY: the handshake belongs
 *    to autosleep then.
 *
 * Events come from /sys/power/wake_lock (CONFIG_PM_WAKELOCKS), which also
 * keeps autosleep from suspending the guest while it is switched on.
 * Run as root. Exit 0: all as expected; 1: the first deviation, on stdout.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#define WAKEUP_COUNT "/sys/power/wakeup_count"
#define LOCK_NAME "wakeup-count-errors"

static int failures;

static void check(int ok, const char *what)
{
	printf("%s: %s\n", ok ? "ok" : "FAIL", what);
	if (!ok)
		failures++;
}

/* Write @text to @path; 0 or the errno of the write. */
static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	int err = 0;

	if (fd < 0)
		return errno;
	if (write(fd, text, strlen(text)) < 0)
		err = errno;
	close(fd);
	return err;
}

/* Read the count: 0 and *count, or the errno of the read. */
static int read_count(unsigned int *count)
{
	char buf[32];
	ssize_t n;
	int fd = open(WAKEUP_COUNT, O_RDONLY | O_CLOEXEC);
	int err = 0;

	if (fd < 0)
		return errno;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0) {
		err = errno;
	} else {
		buf[n] = '\0';
		if (sscanf(buf, "%u", count) != 1)
			err = EPROTO;
	}
	close(fd);
	return err;
}

static int write_count(unsigned int count)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%u", count);
	return write_file(WAKEUP_COUNT, buf);
}

static void on_alarm(int sig)
{
	(void)sig;
}

static void test_eintr(void)
{
	struct sigaction sa = { .sa_handler = on_alarm }; /* no SA_RESTART */
	struct itimerval it = { .it_value = { .tv_usec = 300000 } };
	unsigned int count;
	int err;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	check(write_file("/sys/power/wake_lock", LOCK_NAME) == 0, "wake_lock taken");
	setitimer(ITIMER_REAL, &it, NULL);
	err = read_count(&count);
	printf("# blocked read returned: %s\n", err ? strerror(err) : "a count");
	check(err == EINTR, "a signal ends a blocked read with EINTR");
	check(write_file("/sys/power/wake_unlock", LOCK_NAME) == 0, "wake_lock released");
	check(read_count(&count) == 0, "the next read returns the count");
}

static void test_einval(void)
{
	unsigned int n, m;
	int err;

	check(read_count(&n) == 0, "count read");
	check(write_file(WAKEUP_COUNT, "not-a-number") == EINVAL,
	      "a write that is not a number fails with EINVAL");
	check(write_file("/sys/power/wake_lock", LOCK_NAME) == 0, "wake_lock taken");
	err = write_count(n);
	printf("# current count while an event is in progress: %s\n",
	       err ? strerror(err) : "accepted");
	check(err == EINVAL, "the count is refused with EINVAL while an event is in progress");
	check(write_file("/sys/power/wake_unlock", LOCK_NAME) == 0, "wake_lock released");
	check(read_count(&m) == 0 && m != n, "the count moved after the event");
	err = write_count(n);
	printf("# stale count %u (now %u): %s\n", n, m, err ? strerror(err) : "accepted");
	check(err == EINVAL, "a stale count fails with EINVAL");
	check(write_count(m) == 0, "the fresh count is accepted");
}

static void test_ebusy(void)
{
	unsigned int n;
	int err;

	/* Held throughout, so that autosleep cannot suspend the guest. */
	check(write_file("/sys/power/wake_lock", LOCK_NAME) == 0, "wake_lock taken");
	err = write_file("/sys/power/autosleep", "freeze");
	if (err) {
		printf("FAIL: switching autosleep on: %s\n", strerror(err));
		failures++;
		write_file("/sys/power/wake_unlock", LOCK_NAME);
		return;
	}
	err = write_count(0);
	printf("# write under autosleep: %s\n", err ? strerror(err) : "accepted");
	check(err == EBUSY, "a write while autosleep is on fails with EBUSY");
	check(write_file("/sys/power/autosleep", "off") == 0, "autosleep switched off");
	check(write_file("/sys/power/wake_unlock", LOCK_NAME) == 0, "wake_lock released");
	check(read_count(&n) == 0 && write_count(n) == 0,
	      "after autosleep, the handshake works again");
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_eintr();
	test_einval();
	test_ebusy();
	return failures ? 1 : 0;
}
