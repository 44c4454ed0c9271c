/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * naive-suspend: the power manager as it is usually written first - write
 * the sleep state to /sys/power/state in a loop, with no
 * /sys/power/wakeup_count handshake and no user-space holds.  A wakeup
 * event that arrives while it decides to suspend is not noticed; the
 * end-to-end test uses it for its comparison (c).
 *
 * Usage: naive-suspend [--state S] [--pause-ms N] [--run-ms N]
 *   --pause-ms N   stay awake N ms after each resume (default 0)
 *   --run-ms N     exit 0 once N ms have passed (CLOCK_BOOTTIME, so time
 *                  asleep counts); 0 = run until killed (default).  The
 *                  end-to-end test needs it: the loop leaves other tasks so
 *                  little time between two suspends that a shell asked to
 *                  stop it may not get to run for minutes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static unsigned long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (unsigned long long)ts.tv_sec * 1000 + (unsigned long long)ts.tv_nsec / 1000000;
}

static int parse_ms(const char *s, unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v > 86400000UL)
		return -1;
	*out = (unsigned)v;
	return 0;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int main(int argc, char **argv)
{
	const char *state = "freeze";
	unsigned pause_ms = 0, run_ms = 0;
	unsigned long long until;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--state") && i + 1 < argc) {
			state = argv[++i];
		} else if (!strcmp(argv[i], "--pause-ms") && i + 1 < argc) {
			if (parse_ms(argv[++i], &pause_ms) < 0)
				goto bad_number;
		} else if (!strcmp(argv[i], "--run-ms") && i + 1 < argc) {
			if (parse_ms(argv[++i], &run_ms) < 0)
				goto bad_number;
		} else {
			fprintf(stderr, "usage: %s [--state S] [--pause-ms N] [--run-ms N]\n",
				argv[0]);
			return 2;
		}
		continue;
bad_number:
		fprintf(stderr, "%s: %s: not a number of milliseconds (0-86400000)\n",
			argv[0], argv[i]);
		return 2;
	}
	until = run_ms ? now_ms() + run_ms : 0;
	while (!until || now_ms() < until) {
		int fd = open("/sys/power/state", O_WRONLY | O_CLOEXEC);

		if (fd < 0) {
			perror("/sys/power/state");
			return 1;
		}
		if (write(fd, state, strlen(state)) < 0)
			sleep_ms(10);   /* aborted or refused: try again soon */
		close(fd);
		if (pause_ms)
			sleep_ms(pause_ms);
	}
	return 0;
}
