/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Start-up and output paths that others may share, and restarts that
 * must not lose holds (docs/design.md §3, §4).  Each test runs the real
 * daemon on a fake /sys (harness.c); the suspends it attempts are counted
 * in its published statistics.
 *
 *   a run dir (or a directory above it) others can write, or that another
 *   user owns, is refused, naming the path, owner and mode;
 *   a symlink as the pid file is not followed; the pid file is private,
 *   so another user can neither lock it nor swap the socket;
 *   the stats file and `wakelock timeline --svg` are written through no
 *   symlink, whatever waits at the old .tmp names;
 *   a client that holds gets its hold back from a daemon that was away
 *   12 s or 60 s (kill -9), or stopped with its run dir removed: no
 *   suspend while it holds, one within 1 s of its release.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "lib/wl_client.h"
#include "harness.h"

#define NOBODY 65534
#ifndef WL_REREGISTER_STEP_MAX_MS
#define WL_REREGISTER_STEP_MAX_MS 2000u    /* lib/wl_client.h */
#endif

static int setup(void **st)
{
	struct hd *d = calloc(1, sizeof(*d));

	assert_non_null(d);
	assert_int_equal(hd_prepare(d), 0);
	*st = d;
	return 0;
}

static int teardown(void **st)
{
	struct hd *d = *st;

	/* Back to ours, so that hd_cleanup can remove everything. */
	chmod(d->dir, 0700);
	hd_cleanup(d);
	free(d);
	return 0;
}

static void path_in(const struct hd *d, const char *rel, char *out, size_t len)
{
	snprintf(out, len, "%s/%s", d->dir, rel);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* The file's first 255 bytes, "" if none. */
static const char *read_text(const char *path)
{
	static char buf[256];
	int fd = open(path, O_RDONLY | O_CLOEXEC), n;

	buf[0] = 0;
	if (fd < 0)
		return buf;
	n = (int)read(fd, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = 0;
	close(fd);
	return buf;
}

static int log_has(const struct hd *d, const char *what)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "grep -qF -- '%s' '%s'", what, d->log);
	return system(cmd) == 0;
}

/*
 * The daemon on this run dir, expected to refuse: its exit status, or -2
 * if it was still running after 5 s (it accepted; stopped then).
 */
static int run_refused(struct hd *d, const char *run_dir)
{
	const char *argv[] = {
		hd_bin("wakelockd"), "--foreground", "--root", d->dir, "--run-dir", run_dir,
		"--start-grace-ms", "0", NULL,
	};
	uint64_t end = hd_now_ns() + 5000000000ull;
	pid_t pid;
	int st;

	unlink(d->log);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(d->log, O_WRONLY | O_CREAT | O_APPEND, 0644);

		if (fd >= 0)
			dup2(fd, 2);
		execv(argv[0], (char **)argv);
		_exit(127);
	}
	while (hd_now_ns() < end) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		hd_sleep_ms(10);
	}
	kill(pid, SIGTERM);
	waitpid(pid, &st, 0);
	return -2;
}

/* Run as another user (nobody), in a child: its exit status. */
static int as_nobody(int (*fn)(const struct hd *), const struct hd *d)
{
	pid_t pid = fork();
	int st;

	assert_true(pid >= 0);
	if (pid == 0) {
		if (setgroups(0, NULL) < 0 || setgid(NOBODY) < 0 || setuid(NOBODY) < 0)
			_exit(99);
		_exit(fn(d));
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* --- the run dir ------------------------------------------------------ */

static void test_run_dir_others_can_write_refused(void **st)
{
	struct hd *d = *st;
	char run[400], pid[450];

	path_in(d, "run", run, sizeof(run));
	assert_int_equal(mkdir(run, 0755), 0);

	assert_int_equal(chmod(run, 0777), 0);
	assert_int_equal(run_refused(d, run), 1);
	assert_true(log_has(d, run));
	assert_true(log_has(d, "mode 0777"));

	assert_int_equal(chmod(run, 0775), 0);
	assert_int_equal(run_refused(d, run), 1);
	assert_true(log_has(d, "mode 0775"));
	/* Nothing was created in it. */
	snprintf(pid, sizeof(pid), "%s/wakelockd.pid", run);
	assert_int_equal(access(pid, F_OK), -1);

	/* A directory above it that others can write: they could rename
	 * the run dir away and put their own in its place. */
	assert_int_equal(chmod(run, 0755), 0);
	assert_int_equal(chmod(d->dir, 0777), 0);
	assert_int_equal(run_refused(d, run), 1);
	assert_true(log_has(d, d->dir));
	assert_true(log_has(d, "mode 0777"));

	/* Sticky (as /tmp): others cannot rename what is ours there. */
	assert_int_equal(chmod(d->dir, 01777), 0);
	if (hd_start(d, NULL) < 0)
		fail_msg("refused under a sticky directory (log in %s)", d->log);
	assert_int_equal(hd_stop(d), 0);
}

static void test_run_dir_of_another_user_refused(void **st)
{
	struct hd *d = *st;
	char run[400];

	if (geteuid() != 0)
		skip();    /* giving a directory away needs root */
	path_in(d, "run", run, sizeof(run));
	assert_int_equal(mkdir(run, 0755), 0);
	assert_int_equal(chown(run, NOBODY, NOBODY), 0);
	assert_int_equal(run_refused(d, run), 1);
	assert_true(log_has(d, run));
	assert_true(log_has(d, "uid 65534"));
	assert_true(log_has(d, "mode 0755"));
}

/* --- the pid file and the socket ------------------------------------- */

static void test_pid_file_symlink_not_followed(void **st)
{
	struct hd *d = *st;
	char run[400], pid[450], precious[400];

	path_in(d, "run", run, sizeof(run));
	path_in(d, "precious", precious, sizeof(precious));
	snprintf(pid, sizeof(pid), "%s/wakelockd.pid", run);
	assert_int_equal(mkdir(run, 0755), 0);
	write_text(precious, "precious\n");
	assert_int_equal(symlink(precious, pid), 0);

	assert_int_equal(run_refused(d, run), 1);
	assert_string_equal(read_text(precious), "precious\n");
	assert_true(log_has(d, pid));
	assert_true(log_has(d, "symbolic link"));
}

static int nobody_open_pid_file(const struct hd *d)
{
	char p[450];
	int fd;

	snprintf(p, sizeof(p), "%s/run/wakelockd.pid", d->dir);
	fd = open(p, O_RDONLY);
	if (fd >= 0)
		return flock(fd, LOCK_EX | LOCK_NB) == 0 ? 2 : 1;
	return errno == EACCES ? 0 : 3;
}

static int nobody_swap_socket(const struct hd *d)
{
	char p[450];

	snprintf(p, sizeof(p), "%s/run/wakelockd.sock", d->dir);
	if (unlink(p) == 0)
		return 1;
	snprintf(p, sizeof(p), "%s/run/wakelockd.sock.evil", d->dir);
	if (open(p, O_WRONLY | O_CREAT, 0666) >= 0)
		return 2;
	return errno == EACCES ? 0 : 3;
}

static void test_pid_file_private(void **st)
{
	struct hd *d = *st;
	char pid[450];
	struct stat s;

	if (hd_start(d, NULL) < 0)
		fail_msg("daemon did not start (log in %s)", d->log);
	snprintf(pid, sizeof(pid), "%s/run/wakelockd.pid", d->dir);
	assert_int_equal(lstat(pid, &s), 0);
	assert_true(S_ISREG(s.st_mode));
	assert_int_equal(s.st_mode & 077, 0);
	if (geteuid() == 0) {
		/* Let another user reach the run dir, as /run/wakelockd is
		 * reachable: it can neither lock the pid file (flock needs
		 * only a descriptor, any) nor swap the socket. */
		assert_int_equal(chmod(d->dir, 0755), 0);
		assert_int_equal(as_nobody(nobody_open_pid_file, d), 0);
		assert_int_equal(as_nobody(nobody_swap_socket, d), 0);
	}
	/* A pid file an earlier version left readable is made private. */
	assert_int_equal(hd_stop(d), 0);
	write_text(pid, "");
	assert_int_equal(chmod(pid, 0644), 0);
	if (hd_start(d, NULL) < 0)
		fail_msg("daemon did not start (log in %s)", d->log);
	assert_int_equal(stat(pid, &s), 0);
	assert_int_equal(s.st_mode & 077, 0);
	assert_int_equal(hd_stop(d), 0);
}

/* --- output files ---------------------------------------------------- */

static struct hd *cur;

static uint64_t attempts(void)
{
	return __atomic_load_n(&hd_snap(cur)->dstats.attempts, __ATOMIC_SEQ_CST);
}

static int attempted(void *arg)
{
	(void)arg;
	return attempts() > 0;
}

/* Files whose names end in .tmp in dir. */
static unsigned tmp_files(const char *dir)
{
	DIR *dp = opendir(dir);
	struct dirent *e;
	unsigned n = 0;

	assert_non_null(dp);
	while ((e = readdir(dp))) {
		size_t l = strlen(e->d_name);

		n += l > 4 && !strcmp(e->d_name + l - 4, ".tmp");
	}
	closedir(dp);
	return n;
}

static int stats_written(void *arg)
{
	struct stat s;

	return lstat(arg, &s) == 0 && S_ISREG(s.st_mode) &&
	       strstr(read_text(arg), "attempts") != NULL;
}

static void test_stats_file_through_no_symlink(void **st)
{
	struct hd *d = *st;
	char shared[400], stats[450], tmp[460], precious[400], precious2[400];
	const char *extra[] = { "--stats-file", stats, NULL };

	/* A directory anyone can write, as /tmp. */
	path_in(d, "shared", shared, sizeof(shared));
	path_in(d, "precious", precious, sizeof(precious));
	path_in(d, "precious2", precious2, sizeof(precious2));
	assert_int_equal(mkdir(shared, 0755), 0);
	assert_int_equal(chmod(shared, 01777), 0);
	snprintf(stats, sizeof(stats), "%s/stats.json", shared);
	snprintf(tmp, sizeof(tmp), "%s.tmp", stats);
	write_text(precious, "precious\n");
	write_text(precious2, "precious2\n");
	/* What waits there: the old temporary name, and the file itself. */
	assert_int_equal(symlink(precious, tmp), 0);
	assert_int_equal(symlink(precious2, stats), 0);

	cur = d;
	if (hd_start(d, extra) < 0)
		fail_msg("daemon did not start (log in %s)", d->log);
	assert_true(hd_wait_for(attempted, NULL, 5000));
	assert_int_equal(kill(d->pid, SIGUSR1), 0);
	assert_true(hd_wait_for(stats_written, stats, 5000));
	assert_string_equal(read_text(precious), "precious\n");
	assert_string_equal(read_text(precious2), "precious2\n");
	assert_int_equal(hd_stop(d), 0);
	assert_true(stats_written(stats));
	assert_string_equal(read_text(precious), "precious\n");
	/* The symlink at the old name is left alone; no file of ours stays. */
	assert_int_equal(tmp_files(shared), 1);
}

static void test_timeline_svg_through_no_symlink(void **st)
{
	struct hd *d = *st;
	char shared[400], svg[450], tmp[460], precious[400], cmd[2048];
	struct stat s;
	int r = -1;

	path_in(d, "shared", shared, sizeof(shared));
	path_in(d, "precious", precious, sizeof(precious));
	assert_int_equal(mkdir(shared, 0755), 0);
	assert_int_equal(chmod(shared, 01777), 0);
	snprintf(svg, sizeof(svg), "%s/timeline.svg", shared);
	snprintf(tmp, sizeof(tmp), "%s.tmp", svg);
	write_text(precious, "precious\n");
	assert_int_equal(symlink(precious, tmp), 0);

	cur = d;
	if (hd_start(d, NULL) < 0)
		fail_msg("daemon did not start (log in %s)", d->log);
	assert_true(hd_wait_for(attempted, NULL, 5000));
	snprintf(cmd, sizeof(cmd), "%s timeline --svg '%s' 2>>'%s'", hd_bin("wakelock"), svg,
	         d->log);
	/* The ledger's first record may follow the counter by a moment. */
	for (int i = 0; i < 20 && r != 0; i++) {
		r = system(cmd);
		if (r)
			hd_sleep_ms(50);
	}
	assert_int_equal(r, 0);
	assert_string_equal(read_text(precious), "precious\n");
	assert_int_equal(lstat(svg, &s), 0);
	assert_true(S_ISREG(s.st_mode));
	assert_non_null(strstr(read_text(svg), "<svg"));
	assert_int_equal(tmp_files(shared), 1);

	/* Again, over the file it wrote: replaced, not appended to. */
	assert_int_equal(system(cmd), 0);
	assert_non_null(strstr(read_text(svg), "<svg"));
	assert_int_equal(tmp_files(shared), 1);
	assert_int_equal(hd_stop(d), 0);
}

/* --- restarts -------------------------------------------------------- */

static const struct wl_shm_slot *find_slot(struct hd *d, const char *name)
{
	const struct wl_shm_header *h = hd_snap(d);

	for (uint32_t i = 0; i < h->nslots; i++) {
		const struct wl_shm_slot *s = &h->slots[i];

		if (s->state == WL_SLOT_LIVE && !strncmp(s->name, name, WAKELOCK_NAME_MAX))
			return s;
	}
	return NULL;
}

static uint64_t cpu_ms(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000u +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000u;
}

/*
 * A victim holds; the daemon goes away for absent_ms (killed, or stopped
 * and its run dir removed, as `systemctl stop` does) and comes back.
 * Longer than the daemon's grace after it is back, the hold alone keeps
 * it awake; the hold is listed, and a suspend follows its release.
 */
static void restart_keeps_hold(struct hd *d, int sig, int remove_run_dir, unsigned absent_ms)
{
	wakelock_client *c;
	wakelock_hold *h;
	const struct wl_shm_slot *s;
	uint64_t cpu0;
	const char *msg;
	char cmd[600];
	int status;

	cur = d;
	d->keep_grace = 1;        /* the daemon's own start, as installed */
	if (hd_start(d, NULL) < 0)
		fail_msg("daemon did not start (log in %s)", d->log);
	assert_int_equal(wakelock_client_open(NULL, "victim", &c), 0);
	assert_int_equal(wakelock_hold_create(c, "call", &h), 0);
	assert_int_equal(wakelock_hold_acquire(h), 0);

	assert_int_equal(kill(d->pid, sig), 0);
	assert_int_equal(waitpid(d->pid, &status, 0), d->pid);
	d->pid = 0;
	if (sig == SIGTERM)
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	if (remove_run_dir) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s/run'", d->dir);
		assert_int_equal(system(cmd), 0);
	}
	cpu0 = cpu_ms();
	hd_sleep_ms(absent_ms);
	/* The watcher retried with backoff, not in a loop: a few tries a
	 * second at first, one every 2 s later. */
	assert_true(cpu_ms() - cpu0 < 100 + absent_ms / 100);

	assert_int_equal(hd_start(d, NULL), 0);
	/* Longer than the grace (3 s): the hold, not the grace, keeps the
	 * system awake now. */
	hd_sleep_ms(4500);
	assert_int_equal(attempts(), 0);
	s = find_slot(d, "victim");
	assert_non_null(s);
	assert_int_equal(s->pid, getpid());
	assert_true(s->holding);
	assert_int_equal(hd_snap(d)->counter, 1);
	/* What happened, told in this thread too. */
	msg = strstr(wakelock_last_error(), "registered again after ");
	if (!msg)
		fail_msg("last error: %s", wakelock_last_error());
	assert_true(strtoul(msg + strlen("registered again after "), NULL, 10) >= absent_ms);

	assert_int_equal(wakelock_hold_release(h), 0);
	assert_true(hd_wait_for(attempted, NULL, 1000));
	wakelock_hold_destroy(h);
	wakelock_client_close(c);
	assert_int_equal(hd_stop(d), 0);
}

static void test_restart_after_12s_keeps_hold(void **st)
{
	restart_keeps_hold(*st, SIGKILL, 0, 12000);
}

static void test_restart_after_60s_keeps_hold(void **st)
{
	restart_keeps_hold(*st, SIGKILL, 0, 60000);
}

/* `systemctl stop` removes the run dir, pid file and all; `start` finds
 * no trace of the clients that held. */
static void test_stop_start_without_run_dir_keeps_hold(void **st)
{
	restart_keeps_hold(*st, SIGTERM, 1, 1000);
}

/* Nothing held: after the window the client gives up, and says so. */
static void test_nothing_held_gives_up(void **st)
{
	struct hd *d = *st;
	wakelock_client *c;
	wakelock_hold *h;
	int status;

	if (hd_start(d, NULL) < 0)
		fail_msg("daemon did not start (log in %s)", d->log);
	assert_int_equal(wakelock_client_open(NULL, "idle", &c), 0);
	assert_int_equal(wakelock_hold_create(c, "h", &h), 0);
	assert_int_equal(kill(d->pid, SIGKILL), 0);
	assert_int_equal(waitpid(d->pid, &status, 0), d->pid);
	d->pid = 0;
	hd_sleep_ms(WL_REREGISTER_MS + 2 * WL_REREGISTER_STEP_MAX_MS + 500);
	assert_non_null(strstr(wakelock_last_error(), "given up"));
	assert_int_equal(wakelock_hold_acquire(h), -ENOTCONN);
	wakelock_hold_destroy(h);
	wakelock_client_close(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_run_dir_others_can_write_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_dir_of_another_user_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pid_file_symlink_not_followed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pid_file_private, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stats_file_through_no_symlink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeline_svg_through_no_symlink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_start_without_run_dir_keeps_hold, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_restart_after_12s_keeps_hold, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restart_after_60s_keeps_hold, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nothing_held_gives_up, setup, teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	/* WL_TEST=pattern runs the matching tests only (debugging). */
	if (getenv("WL_TEST"))
		cmocka_set_test_filter(getenv("WL_TEST"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
