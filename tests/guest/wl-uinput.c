// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * wl-uinput: a keyboard with a lid switch, made with uinput, driven from
 * stdin (the guest plan "policy", tests/guest/policy-activity.sh).  The
 * device lives as long as this program, so a test starts it once on a
 * FIFO and writes commands into it:
 *
 *   key           press and release KEY_A
 *   lid closed    SW_LID 1
 *   lid open      SW_LID 0
 *   flood N MS    N key presses spread over MS milliseconds
 *
 * Prints "ready" once the device exists and "ok LINE" after each command
 * (the evdev events are queued in the kernel by then).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/uinput.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

static int emit(int fd, unsigned type, unsigned code, int value)
{
	struct input_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = type;
	ev.code = code;
	ev.value = value;
	return write(fd, &ev, sizeof(ev)) == (ssize_t)sizeof(ev) ? 0 : -1;
}

static int press(int fd)
{
	return emit(fd, EV_KEY, KEY_A, 1) || emit(fd, EV_SYN, SYN_REPORT, 0) ||
	       emit(fd, EV_KEY, KEY_A, 0) || emit(fd, EV_SYN, SYN_REPORT, 0);
}

static int lid(int fd, int closed)
{
	return emit(fd, EV_SW, SW_LID, closed) || emit(fd, EV_SYN, SYN_REPORT, 0);
}

static int flood(int fd, unsigned n, unsigned ms)
{
	struct timespec gap = { 0, 0 };

	if (n)
		gap.tv_nsec = (long)ms * 1000000L / n;
	for (unsigned i = 0; i < n; i++) {
		if (press(fd))
			return -1;
		if (gap.tv_nsec)
			nanosleep(&gap, NULL);
	}
	return 0;
}

static int setup(void)
{
	struct uinput_setup us;
	int fd = open("/dev/uinput", O_WRONLY | O_CLOEXEC);

	if (fd < 0) {
		fprintf(stderr, "wl-uinput: /dev/uinput: %s\n", strerror(errno));
		return -1;
	}
	memset(&us, 0, sizeof(us));
	us.id.bustype = BUS_VIRTUAL;
	snprintf(us.name, sizeof(us.name), "wl-uinput keyboard and lid");
	if (ioctl(fd, UI_SET_EVBIT, EV_KEY) || ioctl(fd, UI_SET_KEYBIT, KEY_A) ||
	    ioctl(fd, UI_SET_EVBIT, EV_SW) || ioctl(fd, UI_SET_SWBIT, SW_LID) ||
	    ioctl(fd, UI_DEV_SETUP, &us) || ioctl(fd, UI_DEV_CREATE)) {
		fprintf(stderr, "wl-uinput: creating the device: %s\n", strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

int main(void)
{
	char line[128];
	int fd = setup();

	if (fd < 0)
		return 1;
	printf("ready\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		unsigned n, ms;
		int bad;

		line[strcspn(line, "\n")] = 0;
		if (!strcmp(line, "key"))
			bad = press(fd);
		else if (!strcmp(line, "lid closed"))
			bad = lid(fd, 1);
		else if (!strcmp(line, "lid open"))
			bad = lid(fd, 0);
		else if (sscanf(line, "flood %u %u", &n, &ms) == 2)
			bad = flood(fd, n, ms);
		else {
			fprintf(stderr, "wl-uinput: unknown command '%s'\n", line);
			continue;
		}
		if (bad)
			fprintf(stderr, "wl-uinput: '%s': %s\n", line, strerror(errno));
		else
			printf("ok %s\n", line);
		fflush(stdout);
	}
	ioctl(fd, UI_DEV_DESTROY);
	return 0;
}
