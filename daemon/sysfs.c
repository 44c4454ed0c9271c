/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The power backend on the real /sys/power (or a copy under --root). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/reboot.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include "log.h"
#include "power.h"

#define MAX_SOURCES 256

struct src_count {
	char name[48];
	unsigned long long events;
};

struct sysfs_backend {
	struct power_backend pub;
	char root[4096];
	int count_fd, state_fd;
	int wake_fd;                    /* arm_wake's timer, -1: not made yet */
	int wake_failed;                /* it could not be made (logged once) */
	int wake_reasons;
	pthread_t thread;
	int have_thread;
	struct src_count before[MAX_SOURCES];
	unsigned nbefore;
};

static void path_of(const struct sysfs_backend *b, const char *rel, char *out, size_t len)
{
	snprintf(out, len, "%s%s", b->root, rel);
}

int sysfs_read_small(const char *path, char *buf, size_t len, int oflags)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | oflags);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return (int)n;
}

static int sb_read_count(struct power_backend *be, unsigned *count)
{
	struct sysfs_backend *b = (struct sysfs_backend *)be;
	char buf[32];
	ssize_t n;

	/* Blocks in the kernel while wakeup events are in progress; our
	 * SIGUSR2 handler has no SA_RESTART, so a stop request makes it
	 * return EINTR. */
	n = pread(b->count_fd, buf, sizeof(buf) - 1, 0);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	if (sscanf(buf, "%u", count) != 1)
		return -EBADMSG;
	return 0;
}

static int sb_write_count(struct power_backend *be, unsigned count)
{
	struct sysfs_backend *b = (struct sysfs_backend *)be;
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", count);

	if (pwrite(b->count_fd, buf, (size_t)len, 0) < 0)
		return -errno;
	return 0;
}

static int sb_suspend(struct power_backend *be, const char *state)
{
	struct sysfs_backend *b = (struct sysfs_backend *)be;

	if (pwrite(b->state_fd, state, strlen(state), 0) < 0)
		return -errno;
	return 0;
}

static unsigned scan_sources(struct sysfs_backend *b, struct src_count *out, unsigned max)
{
	char dir[4200], path[4400], buf[64];
	unsigned n = 0;
	struct dirent *de;
	DIR *d;

	path_of(b, "/sys/class/wakeup", dir, sizeof(dir));
	d = opendir(dir);
	if (!d)
		return 0;
	while ((de = readdir(d)) && n < max) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/event_count", dir, de->d_name);
		if (sysfs_read_small(path, buf, sizeof(buf), 0) < 0)
			continue;
		out[n].events = strtoull(buf, NULL, 10);
		snprintf(path, sizeof(path), "%s/%s/name", dir, de->d_name);
		if (sysfs_read_small(path, out[n].name, sizeof(out[n].name), 0) < 0)
			snprintf(out[n].name, sizeof(out[n].name), "%s", de->d_name);
		n++;
	}
	closedir(d);
	return n;
}

static void sb_before_suspend(struct power_backend *be)
{
	struct sysfs_backend *b = (struct sysfs_backend *)be;

	b->nbefore = __atomic_load_n(&b->wake_reasons, __ATOMIC_RELAXED) ? scan_sources(b, b->before, MAX_SOURCES) : 0;
}

/* "irq N" from /sys/power/pm_wakeup_irq plus the kernel sources whose
 * event counts moved across the suspend. */
static void sb_wake_reason(struct power_backend *be, char *out, size_t len)
{
	struct sysfs_backend *b = (struct sysfs_backend *)be;
	static __thread struct src_count after[MAX_SOURCES];
	char path[4200], buf[32];
	size_t used = 0;
	unsigned n;

	out[0] = 0;
	if (!__atomic_load_n(&b->wake_reasons, __ATOMIC_RELAXED))
		return;
	path_of(b, "/sys/power/pm_wakeup_irq", path, sizeof(path));
	if (sysfs_read_small(path, buf, sizeof(buf), 0) > 0)
		used += (size_t)snprintf(out, len, "irq %s", buf);
	n = scan_sources(b, after, MAX_SOURCES);
	for (unsigned i = 0; i < n && used + 2 < len; i++) {
		for (unsigned j = 0; j < b->nbefore; j++) {
			if (strcmp(after[i].name, b->before[j].name))
				continue;
			if (after[i].events != b->before[j].events)
				used += (size_t)snprintf(out + used, len - used, "%s%s",
				                         used ? "; " : "", after[i].name);
			break;
		}
	}
}

/* The wake ledger's reads (power.h), under the same root. */
static int sb_read_attr(struct power_backend *be, const char *rel, char *buf, size_t len)
{
	struct sysfs_backend *b = (struct sysfs_backend *)be;
	char path[4400];

	if (!len)
		return -EINVAL;
	path_of(b, rel, path, sizeof(path));
	return sysfs_read_small(path, buf, len, 0);
}

static int sb_open_attr(struct power_backend *be, const char *rel)
{
	struct sysfs_backend *b = (struct sysfs_backend *)be;
	char path[4400];
	int fd;

	path_of(b, rel, path, sizeof(path));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static int sb_list_dir(struct power_backend *be, const char *rel,
                       int (*fn)(void *arg, const char *entry, uint64_t ino), void *arg)
{
	struct sysfs_backend *b = (struct sysfs_backend *)be;
	char path[4400];
	struct dirent *de;
	DIR *d;

	path_of(b, rel, path, sizeof(path));
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.' && fn(arg, de->d_name, (uint64_t)de->d_ino))
			break;
	closedir(d);
	return 0;
}

/*
 * Power off: on the real root, sync() and reboot(RB_POWER_OFF) (what
 * systemd's final stage does too; here the battery is about to end
 * everything anyway, and a clean shutdown through systemd may take longer
 * than the battery has).  Under a test root (--root) it never touches the
 * host: it appends a line to ROOT/wakelockd-poweroff, for the tests to see.
 */
static int sb_poweroff(struct power_backend *be)
{
	struct sysfs_backend *b = (struct sysfs_backend *)be;
	char path[4200];
	int fd, r = 0;

	if (!b->root[0]) {
		sync();
		reboot(RB_POWER_OFF);
		return -errno;
	}
	path_of(b, "/wakelockd-poweroff", path, sizeof(path));
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, "poweroff\n", 9) != 9)
		r = -errno;
	if (fd >= 0)
		close(fd);
	return r;
}

static void sb_interrupt(struct power_backend *be)
{
	struct sysfs_backend *b = (struct sysfs_backend *)be;

	/* Pairs with the release in sysfs_set_thread(): a stop can arrive
	 * while the power thread is still starting. */
	if (__atomic_load_n(&b->have_thread, __ATOMIC_ACQUIRE))
		pthread_kill(b->thread, SIGUSR2);
}

void sysfs_set_thread(struct power_backend *be)
{
	struct sysfs_backend *b = (struct sysfs_backend *)be;

	b->thread = pthread_self();
	__atomic_store_n(&b->have_thread, 1, __ATOMIC_RELEASE);
}

static void on_sigusr2(int sig)
{
	(void)sig;  /* only there to interrupt a blocking read */
}

/* Check the state (and mem_sleep) against what the kernel offers, and
 * select the mem_sleep mode. */
static int check_modes(struct sysfs_backend *b, const char *state, const char *mem_sleep,
                       char *err, size_t errlen)
{
	char path[4200], buf[256];
	int r;

	path_of(b, "/sys/power/state", path, sizeof(path));
	r = sysfs_read_small(path, buf, sizeof(buf), 0);
	if (r < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(-r));
		return r;
	}
	/* Words separated by spaces: match a whole word. */
	for (char *save = NULL, *w = strtok_r(buf, " ", &save);; w = strtok_r(NULL, " ", &save)) {
		if (!w) {
			snprintf(err, errlen, "%s does not offer '%s'", path, state);
			return -EOPNOTSUPP;
		}
		if (!strcmp(w, state))
			break;
	}
	if (mem_sleep && *mem_sleep) {
		int fd;

		path_of(b, "/sys/power/mem_sleep", path, sizeof(path));
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || pwrite(fd, mem_sleep, strlen(mem_sleep), 0) < 0) {
			r = -errno;
			snprintf(err, errlen, "cannot select mem_sleep '%s' in %s: %s", mem_sleep,
			         path, strerror(-r));
			if (fd >= 0)
				close(fd);
			return r;
		}
		close(fd);
	}
	return 0;
}

static int sb_arm_wake(struct power_backend *be, uint64_t boot_ns);

int sysfs_open(const char *root, const char *state, const char *mem_sleep, int wake_reasons,
               struct power_backend **out, char *err, size_t errlen)
{
	struct sysfs_backend *b = calloc(1, sizeof(*b));
	struct sigaction sa;
	char path[4200];
	int r;

	if (!b)
		return -ENOMEM;
	snprintf(b->root, sizeof(b->root), "%s", strcmp(root, "/") ? root : "");
	b->count_fd = b->state_fd = b->wake_fd = -1;
	b->wake_reasons = wake_reasons;
	path_of(b, "/sys/power/wakeup_count", path, sizeof(path));
	b->count_fd = open(path, O_RDWR | O_CLOEXEC);
	if (b->count_fd < 0) {
		r = -errno;
		snprintf(err, errlen, "%s: %s (kernel without CONFIG_PM_SLEEP, or not root?)",
		         path, strerror(errno));
		goto fail;
	}
	path_of(b, "/sys/power/state", path, sizeof(path));
	b->state_fd = open(path, O_WRONLY | O_CLOEXEC);
	if (b->state_fd < 0) {
		r = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	r = check_modes(b, state, mem_sleep, err, errlen);
	if (r < 0)
		goto fail;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigusr2;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR2, &sa, NULL);    /* no SA_RESTART, on purpose */
	b->pub.read_count = sb_read_count;
	b->pub.write_count = sb_write_count;
	b->pub.suspend = sb_suspend;
	b->pub.before_suspend = sb_before_suspend;
	b->pub.wake_reason = sb_wake_reason;
	b->pub.interrupt = sb_interrupt;
	b->pub.poweroff = sb_poweroff;
	b->pub.read_attr = sb_read_attr;
	b->pub.list_dir = sb_list_dir;
	b->pub.open_attr = sb_open_attr;
	b->pub.arm_wake = sb_arm_wake;
	*out = &b->pub;
	return 0;
fail:
	sysfs_close(&b->pub);
	return r;
}

/*
 * The daemon's own wake (suspend-then-hibernate, hibernate_after.h): a
 * timer of its own on CLOCK_BOOTTIME_ALARM, which the kernel programs
 * into the RTC at suspend.  Nobody reads it: the resume it causes is
 * what is wanted, and the loop runs on at once.  Under a test root it is
 * plain CLOCK_BOOTTIME, so that no test wakes the machine it runs on.
 */
static int sb_arm_wake(struct power_backend *be, uint64_t boot_ns)
{
	struct sysfs_backend *b = (struct sysfs_backend *)be;
	struct itimerspec its = { { 0, 0 }, { (time_t)(boot_ns / 1000000000u),
	                                      (long)(boot_ns % 1000000000u) } };

	if (b->wake_fd < 0 && boot_ns && !b->wake_failed) {
		b->wake_fd = timerfd_create(b->root[0] ? CLOCK_BOOTTIME : CLOCK_BOOTTIME_ALARM,
		                            TFD_CLOEXEC | TFD_NONBLOCK);
		if (b->wake_fd < 0) {
			b->wake_failed = errno;
			log_warn("hibernate_after_s: cannot set a wake alarm (%s%s): the system "
			         "hibernates only once something else wakes it after that time",
			         strerror(errno), errno == EPERM ? ", no CAP_WAKE_ALARM" :
			         errno == EINVAL || errno == ENOTSUP ? ", no RTC with alarms" : "");
		}
	}
	if (b->wake_fd < 0)
		return boot_ns ? -b->wake_failed : 0;
	if (timerfd_settime(b->wake_fd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
		return -errno;
	return 0;
}

int sysfs_reconfigure(struct power_backend *be, const char *state, const char *mem_sleep,
                      int wake_reasons, char *err, size_t errlen)
{
	struct sysfs_backend *b = (struct sysfs_backend *)be;

	__atomic_store_n(&b->wake_reasons, wake_reasons, __ATOMIC_RELAXED);
	return check_modes(b, state, mem_sleep, err, errlen);
}

void sysfs_close(struct power_backend *be)
{
	struct sysfs_backend *b = (struct sysfs_backend *)be;

	if (!b)
		return;
	if (b->count_fd >= 0)
		close(b->count_fd);
	if (b->state_fd >= 0)
		close(b->state_fd);
	if (b->wake_fd >= 0)
		close(b->wake_fd);
	free(b);
}
