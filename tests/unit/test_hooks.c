/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The real wakelockd with hooks, against a fake /sys (harness.c): in the
 * fake tree every count write and every suspend succeeds at once, so the
 * daemon cycles as fast as --min-awake-ms lets it.  The loop's rules
 * (hook before the read, backoff) are tested against the fake kernel in
 * test_powerloop.c; here what only the whole daemon shows: the signal
 * state its hooks inherit, a hung hook, shutdown, the log.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "harness.h"

struct env {
	struct hd d;
	struct wl_seg seg;
	int mapped;
	char pre[400], post[400];
};

static int setup(void **st)
{
	struct env *e = calloc(1, sizeof(*e));

	if (!e || hd_prepare(&e->d) < 0)
		return -1;
	*st = e;
	return 0;
}

static int teardown(void **st)
{
	struct env *e = *st;

	if (e->mapped)
		wl_seg_unmap(&e->seg);
	if (e->d.pid > 0) {
		/* A daemon that would not stop: do not hang the other tests. */
		kill(e->d.pid, SIGKILL);
		waitpid(e->d.pid, NULL, 0);
		e->d.pid = 0;
	}
	hd_cleanup(&e->d);
	free(e);
	return 0;
}

/* The script DIR/name; "@" in body stands for DIR. */
static void make_script(struct env *e, char *path, size_t len, const char *name,
                        const char *body)
{
	FILE *f;

	snprintf(path, len, "%s/%s", e->d.dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("#!/bin/sh\n", f);
	for (const char *c = body; *c; c++) {
		if (*c == '@')
			fputs(e->d.dir, f);
		else
			fputc(*c, f);
	}
	fputc('\n', f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, 0755), 0);
}

static void start(struct env *e, const char *const *extra)
{
	assert_int_equal(hd_start(&e->d, extra), 0);
	assert_int_equal(hd_observe(&e->d, &e->seg), 0);
	e->mapped = 1;
}

static uint64_t successes(struct env *e)
{
	return __atomic_load_n(&hd_snap(&e->d)->dstats.successes, __ATOMIC_SEQ_CST);
}

static int count_lines(const char *dir, const char *name, const char *want)
{
	char path[400], line[256];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (!want || !strcmp(line, want))
			n++;
	}
	fclose(f);
	return n;
}

static int file_has(const char *path, const char *what)
{
	char buf[8192];
	size_t n;
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	return strstr(buf, what) != NULL;
}

struct lines_arg {
	struct env *e;
	const char *name;
	int n;
};

static int has_lines(void *arg)
{
	struct lines_arg *a = arg;
	return count_lines(a->e->d.dir, a->name, NULL) >= a->n;
}

/* SIGTERM; the exit status, or -1 if it did not exit within limit_ms (it
 * is then killed, and its time is reported in *ms). */
static int stop_within(struct env *e, unsigned limit_ms, uint64_t *ms)
{
	uint64_t t0 = hd_now_ns();
	int st;

	kill(e->d.pid, SIGTERM);
	for (;;) {
		pid_t r = waitpid(e->d.pid, &st, WNOHANG);

		*ms = (hd_now_ns() - t0) / 1000000u;
		if (r == e->d.pid) {
			e->d.pid = 0;
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		}
		if (*ms > limit_ms) {
			kill(e->d.pid, SIGKILL);
			waitpid(e->d.pid, NULL, 0);
			e->d.pid = 0;
			return -1;
		}
		hd_sleep_ms(5);
	}
}

/* Gone or a zombie. */
static int process_dead(int pid)
{
	char path[64], buf[256], *rp;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return 1;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	rp = strrchr(buf, ')');
	return rp && rp[1] == ' ' && (rp[2] == 'Z' || rp[2] == 'X');
}

/* A pre-suspend hook that never ends (and blocks nothing itself): with a
 * 300 ms limit it is killed each time, the daemon goes on suspending, and
 * SIGTERM stops the daemon within the limit plus the kill's grace. */
static void test_hung_hook_is_killed_and_daemon_stops(void **st)
{
	struct env *e = *st;
	const char *extra[] = { "--pre-suspend-hook", e->pre, "--hook-timeout-ms", "300",
	                        "--min-awake-ms", "50", NULL };
	struct lines_arg three = { e, "starts", 3 };
	char path[400];
	uint64_t ms;
	int pid;
	FILE *f;

	make_script(e, e->pre, sizeof(e->pre), "hang",
	            "echo $$ >>@/starts; exec sleep 1000");
	start(e, extra);
	/* Each run is killed after 300 ms and the loop goes on: three runs,
	 * and suspends between them. */
	assert_true(hd_wait_for(has_lines, &three, 15000));
	assert_true(successes(e) >= 2);
	assert_true(file_has(e->d.log, "still running after 300 ms"));
	/* Stop while a run hangs (one starts every ~350 ms). */
	assert_int_equal(stop_within(e, 5000, &ms), 0);
	assert_true(ms < 300 + 1000 + 1500);
	/* Every run it started is gone. */
	snprintf(path, sizeof(path), "%s/starts", e->d.dir);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fscanf(f, "%d", &pid) == 1)
		assert_true(process_dead(pid));
	fclose(f);
}

/*
 * What a hook gets from the daemon: argv[1] and WAKELOCKD_PHASE name the
 * phase; no signal blocked, none ignored (the daemon blocks SIGTERM & co.
 * for its signalfd and ignores SIGPIPE), stdin /dev/null.  The script
 * reads its own /proc/$$/status with shell builtins (dash empties the
 * mask of the commands it runs).  Signals 32 and 33 are glibc's own,
 * which its posix_spawn leaves ignored: left out.
 */
#define SIG_STATUS \
	"while read -r k v; do case $k in SigBlk:|SigIgn:) echo \"$k $v\";; esac; " \
	"done </proc/$$/status"

static void check_sig(const char *dir, const char *name)
{
	char path[400], line[256];
	unsigned long long v, internal = 0;
	int seen = 0;
	FILE *f;

	for (int sig = 32; sig < SIGRTMIN; sig++)
		internal |= 1ull << (sig - 1);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "SigBlk: %llx", &v) == 1) {
			assert_int_equal(v, 0);
			seen |= 1;
		} else if (sscanf(line, "SigIgn: %llx", &v) == 1) {
			assert_int_equal(v & ~internal, 0);
			seen |= 2;
		}
	}
	fclose(f);
	assert_int_equal(seen, 3);
}

static void test_hooks_get_phase_and_clean_signals(void **st)
{
	struct env *e = *st;
	const char *extra[] = { "--pre-suspend-hook", e->pre, "--post-resume-hook", e->post,
	                        "--min-awake-ms", "50", NULL };
	struct lines_arg four = { e, "phases", 4 };
	uint64_t ms;

	make_script(e, e->pre, sizeof(e->pre), "pre",
	            SIG_STATUS " >@/sig-pre\n"
	            "readlink /proc/$$/fd/0 >@/stdin-pre\n"
	            "echo \"$1 $WAKELOCKD_PHASE\" >>@/phases");
	make_script(e, e->post, sizeof(e->post), "post",
	            SIG_STATUS " >@/sig-post\n"
	            "echo \"$1 $WAKELOCKD_PHASE\" >>@/phases");
	start(e, extra);
	assert_true(hd_wait_for(has_lines, &four, 15000));
	assert_int_equal(stop_within(e, 10000, &ms), 0);
	check_sig(e->d.dir, "sig-pre");
	check_sig(e->d.dir, "sig-post");
	assert_int_equal(count_lines(e->d.dir, "stdin-pre", "/dev/null"), 1);
	/* Alternating, one of each per suspend. */
	assert_int_equal(count_lines(e->d.dir, "phases", "pre-suspend pre-suspend") +
	                 count_lines(e->d.dir, "phases", "post-resume post-resume"),
	                 count_lines(e->d.dir, "phases", NULL));
	assert_true(count_lines(e->d.dir, "phases", "post-resume post-resume") >= 1);
}

/* A hook that exits non-zero is logged with its status; the suspend it
 * came before goes ahead (hooks have no veto: they take a hold for that). */
static void test_failing_hook_is_logged_and_suspend_goes_on(void **st)
{
	struct env *e = *st;
	const char *extra[] = { "--pre-suspend-hook", e->pre, "--min-awake-ms", "50", NULL };
	struct lines_arg three = { e, "runs", 3 };
	uint64_t ms;

	make_script(e, e->pre, sizeof(e->pre), "fail", "echo run >>@/runs; exit 3");
	start(e, extra);
	assert_true(hd_wait_for(has_lines, &three, 15000));
	/* A suspend after each run but perhaps the last. */
	assert_true(successes(e) >= 2);
	assert_int_equal(hd_snap(&e->d)->dstats.failures, 0);
	assert_int_equal(stop_within(e, 10000, &ms), 0);
	assert_true(file_has(e->d.log, "fail pre-suspend exited with status 3"));
}

/* The option and the key: out of range is a usage error. */
static void test_hook_timeout_option(void **st)
{
	struct env *e = *st;
	const char *zero[] = { "--hook-timeout-ms", "0", NULL };

	assert_int_not_equal(hd_start(&e->d, zero), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_hung_hook_is_killed_and_daemon_stops, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_hooks_get_phase_and_clean_signals, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_failing_hook_is_logged_and_suspend_goes_on,
		                                setup, teardown),
		cmocka_unit_test_setup_teardown(test_hook_timeout_option, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
