/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "lib/wl_proto.h"
#include "harness.h"

uint64_t hd_now_ns(void)
{
	return wl_now_mono();
}

void hd_sleep_ms(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int hd_wait_for(int (*pred)(void *), void *arg, unsigned timeout_ms)
{
	uint64_t end = hd_now_ns() + (uint64_t)timeout_ms * 1000000u;

	while (!pred(arg)) {
		if (hd_now_ns() > end)
			return 0;
		usleep(200);
	}
	return 1;
}

/*
 * The build tree's programs: the test runs as BUILD/tests/unit/test_x (meson
 * lays out the build tree like the source tree), the daemon is
 * BUILD/daemon/wakelockd, the CLI BUILD/cli/wakelock, the example clients
 * BUILD/examples/NAME.
 */
const char *hd_bin(const char *name)
{
	static char path[PATH_MAX + 64];
	char self[PATH_MAX];
	const char *dir = "examples";
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n < 0)
		return name;
	self[n] = 0;
	if (!strcmp(name, "wakelockd"))
		dir = "daemon";
	else if (!strcmp(name, "wakelock"))
		dir = "cli";
	snprintf(path, sizeof(path), "%s/../../%s/%s", dirname(self), dir, name);
	return path;
}

static int write_file(const char *dir, const char *rel, const char *text)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	f = fopen(p, "w");
	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

int hd_prepare(struct hd *d)
{
	char p[400];

	memset(d, 0, sizeof(*d));
	strcpy(d->dir, "/tmp/wl-unit-XXXXXX");
	if (!mkdtemp(d->dir))
		return -1;
	snprintf(p, sizeof(p), "%s/sys/power", d->dir);
	if (mkdir(strcat(strcpy(p, d->dir), "/sys"), 0755) < 0)
		return -1;
	snprintf(p, sizeof(p), "%s/sys/power", d->dir);
	if (mkdir(p, 0755) < 0)
		return -1;
	write_file(d->dir, "sys/power/wakeup_count", "7\n");
	write_file(d->dir, "sys/power/state", "freeze mem disk\n");
	write_file(d->dir, "sys/power/mem_sleep", "s2idle [deep]\n");
	snprintf(d->sock, sizeof(d->sock), "%s/run/wakelockd.sock", d->dir);
	snprintf(d->stats, sizeof(d->stats), "%s/stats.json", d->dir);
	snprintf(d->conf, sizeof(d->conf), "%s/wakelockd.conf", d->dir);
	snprintf(d->log, sizeof(d->log), "%s/log", d->dir);
	return 0;
}

static int ping(struct hd *d)
{
	struct wl_msg_rep rep;
	int fd = -1, s = wl_connect(d->sock, 1000), r;

	if (s < 0)
		return s;
	r = wl_request(s, WL_OP_OBSERVE, NULL, &rep, &fd);
	if (fd >= 0)
		close(fd);
	close(s);
	return r;
}

int hd_start(struct hd *d, const char *const *extra)
{
	const char *argv[64];
	char run[400];
	int n = 0;
	uint64_t end;

	snprintf(run, sizeof(run), "%s/run", d->dir);
	argv[n++] = hd_bin("wakelockd");
	argv[n++] = "--foreground";
	argv[n++] = "--root";
	argv[n++] = d->dir;
	argv[n++] = "--run-dir";
	argv[n++] = run;
	argv[n++] = "--stats-file";
	argv[n++] = d->stats;
	if (getenv("WL_DEBUG_DAEMON")) {
		argv[n++] = "--log-level";
		argv[n++] = "debug";
	}
	argv[n++] = "--min-awake-ms";
	argv[n++] = "2";
	if (!d->keep_grace) {
		argv[n++] = "--start-grace-ms";
		argv[n++] = "0";
	}
	for (; extra && *extra && n < 62; extra++)
		argv[n++] = *extra;
	argv[n] = NULL;
	d->pid = fork();
	if (d->pid < 0)
		return -1;
	if (d->pid == 0) {
		int fd = open(d->log, O_WRONLY | O_CREAT | O_APPEND, 0644);
		if (fd >= 0)
			dup2(fd, 2);
		execv(argv[0], (char **)argv);
		_exit(127);
	}
	setenv("WAKELOCK_SOCKET", d->sock, 1);
	end = hd_now_ns() + 10000000000ull;
	while (hd_now_ns() < end) {
		int st;
		if (waitpid(d->pid, &st, WNOHANG) == d->pid) {
			d->pid = 0;
			return -1;
		}
		if (ping(d) == 0)
			return 0;
		hd_sleep_ms(5);
	}
	return -1;
}

int hd_stop(struct hd *d)
{
	int st;

	if (d->pid <= 0)
		return -1;
	kill(d->pid, SIGTERM);
	while (waitpid(d->pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	d->pid = 0;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

void hd_cleanup(struct hd *d)
{
	char cmd[400];

	if (d->pid > 0)
		hd_stop(d);
	for (unsigned i = 0; i < 32; i++)
		if (d->snaps[i].hdr)
			wl_seg_unmap(&d->snaps[i]);
	d->nsnap = 0;
	if (d->dir[0] && !getenv("WL_KEEP_TMP")) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d->dir);
		if (system(cmd)) { /* best effort */ }
	}
}

int hd_observe(struct hd *d, struct wl_seg *seg)
{
	struct wl_msg_rep rep;
	int fd = -1, s = wl_connect(d->sock, 2000), r;

	if (s < 0)
		return s;
	r = wl_request(s, WL_OP_OBSERVE, NULL, &rep, &fd);
	close(s);
	if (r < 0)
		return r;
	return wl_seg_map_fd(fd, seg);
}

const struct wl_shm_header *hd_snap(struct hd *d)
{
	static struct wl_shm_header none;
	struct wl_seg seg;
	struct wl_seg *slot;

	if (hd_observe(d, &seg) < 0) {
		slot = d->nsnap ? &d->snaps[(d->nsnap - 1) % 32] : NULL;
		return slot ? slot->hdr : &none;
	}
	slot = &d->snaps[d->nsnap++ % 32];
	if (slot->hdr)
		wl_seg_unmap(slot);
	*slot = seg;
	return seg.hdr;
}

void hd_region_acquire(struct wl_region *rg, uint32_t i, const struct wl_shm_header *pub,
                       uint64_t timeout_ns)
{
	if (timeout_ns) {
		uint64_t dl = wl_now_mono() + timeout_ns;

		__atomic_store_n(&rg->holds[i].deadline, dl, __ATOMIC_RELAXED);
		if (dl > __atomic_load_n(&rg->timed_until, __ATOMIC_RELAXED))
			__atomic_store_n(&rg->timed_until, dl, __ATOMIC_SEQ_CST);
	} else {
		__atomic_fetch_add(&rg->holds[i].depth, 1, __ATOMIC_SEQ_CST);
	}
	while (__atomic_load_n(&pub->phase, __ATOMIC_SEQ_CST) != WL_PHASE_OPEN)
		wl_phase_wait(pub, WL_PHASE_CLOSED, 10000000u);
}

void hd_region_release(struct wl_region *rg, uint32_t slot, uint32_t i,
                       const struct wl_shm_header *pub, int kick_fd)
{
	uint64_t one = 1;

	if (__atomic_fetch_sub(&rg->holds[i].depth, 1, __ATOMIC_SEQ_CST) == 1 &&
	    wl_region_untimed_idle(rg) &&
	    __atomic_load_n(&pub->watched[slot], __ATOMIC_SEQ_CST) &&
	    write(kick_fd, &one, sizeof(one)) < 0) {
		/* full counter: the loop wakes anyway */
	}
}

struct wl_region *hd_region_new(void)
{
	void *p = aligned_alloc(4096, (sizeof(struct wl_region) + 4095) & ~(size_t)4095);

	if (p)
		memset(p, 0, sizeof(struct wl_region));
	return p;
}

void hd_put(struct hd *d, const char *rel, const char *data)
{
	char path[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", d->dir, rel);
	for (char *p = path + strlen(d->dir) + 1; (p = strchr(p, '/')); p++) {
		*p = 0;
		mkdir(path, 0755);
		*p = '/';
	}
	f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "hd_put %s: %s\n", path, strerror(errno));
		abort();
	}
	fputs(data, f);
	fclose(f);
}

int hd_log_has(struct hd *d, const char *what)
{
	char buf[65536];
	FILE *f = fopen(d->log, "r");
	size_t n;

	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	return strstr(buf, what) != NULL;
}
