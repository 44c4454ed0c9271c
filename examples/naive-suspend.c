/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * naive-suspend: the power manager as it is usually written first - write
 * the sleep state to /sys/power/state in a loop, with no
 * /sys/power/wakeup_count handshake and no user-space holds.  A wakeup
 * event that arrives while it decides to suspend is not noticed; the
 * end-to-end test uses it for its comparison (c).
 *
 * Usage: naive-suspend [--state S] [--pause-ms N]
 *   --pause-ms N   stay awake N ms after each resume (default 0)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int main(int argc, char **argv)
{
	const char *state = "freeze";
	unsigned pause_ms = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--state") && i + 1 < argc)
			state = argv[++i];
		else if (!strcmp(argv[i], "--pause-ms") && i + 1 < argc)
			pause_ms = (unsigned)strtoul(argv[++i], NULL, 10);
		else {
			fprintf(stderr, "usage: %s [--state S] [--pause-ms N]\n", argv[0]);
			return 2;
		}
	}
	for (;;) {
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
}
