/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * naive-client: the modem client as it is usually written first - a plain
 * blocking read(), no EPOLLWAKEUP, no hold.  Same protocol and options as
 * modem-client ("CALL <id>" -> "ANSWER <id>", "PING" -> "PONG").  Under
 * opportunistic suspend it can be frozen between reading a call and
 * answering it; the end-to-end test uses it for its comparison (c).
 *
 * Usage: naive-client [--tty DEV] [--work-ms N]
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *tty = "/dev/ttyS1";
	unsigned work_ms = 20;
	char buf[4096], out[96];
	size_t len = 0;
	struct termios t;
	int fd;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--tty") && i + 1 < argc)
			tty = argv[++i];
		else if (!strcmp(argv[i], "--work-ms") && i + 1 < argc)
			work_ms = (unsigned)strtoul(argv[++i], NULL, 10);
		else {
			fprintf(stderr, "usage: %s [--tty DEV] [--work-ms N]\n", argv[0]);
			return 2;
		}
	}
	fd = open(tty, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		perror(tty);
		return 1;
	}
	if (tcgetattr(fd, &t) == 0) {
		cfmakeraw(&t);
		t.c_cflag |= CLOCAL | CREAD;
		tcsetattr(fd, TCSANOW, &t);
	}
	for (;;) {
		ssize_t r = read(fd, buf + len, sizeof(buf) - 1 - len);
		char *nl;

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			perror("naive-client: read");
			return 1;
		}
		len += (size_t)r;
		buf[len] = 0;
		while ((nl = memchr(buf, '\n', len))) {
			*nl = 0;
			buf[strcspn(buf, "\r")] = 0;
			if (!strncmp(buf, "CALL ", 5)) {
				struct timespec ts = { work_ms / 1000, (long)(work_ms % 1000) * 1000000L };
				int n;

				while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
					;
				n = snprintf(out, sizeof(out), "ANSWER %.80s\n", buf + 5);
				if (write(fd, out, (size_t)n) < 0)
					perror("naive-client: write");
			} else if (!strcmp(buf, "EXIT")) {
				if (write(fd, "BYE\n", 4) < 0)
					perror("naive-client: write");
				return 0;
			} else if (!strcmp(buf, "PING")) {
				if (write(fd, "PONG\n", 5) < 0)
					perror("naive-client: write");
			}
			len -= (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, len);
			buf[len] = 0;
		}
		if (len == sizeof(buf) - 1)
			len = 0;
	}
}
