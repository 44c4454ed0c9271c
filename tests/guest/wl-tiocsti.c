// SPDX-License-Identifier: GPL-2.0
/*
 * wl-tiocsti DEV COUNT: push COUNT bytes ('s') into DEV's input with TIOCSTI,
 * one ioctl each (every one takes the port's flip buffer exclusively, see
 * tty_buffer_lock_exclusive()). Prints how many were pushed. For the guest
 * test serial-tiocsti (bug 2 of the v2 review: the buf->priority break in
 * flush_to_ldisc() left the RX wakeup source of a drained port held).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long count, i;
	char c = 's';
	int fd;

	if (argc != 3) {
		fprintf(stderr, "usage: wl-tiocsti DEV COUNT\n");
		return 2;
	}
	count = strtol(argv[2], NULL, 10);
	fd = open(argv[1], O_RDWR | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	for (i = 0; i < count; i++) {
		if (ioctl(fd, TIOCSTI, &c) < 0) {
			perror("TIOCSTI");
			return 1;
		}
	}
	printf("%ld\n", i);
	return 0;
}
