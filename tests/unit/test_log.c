/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The daemon's log lines (daemon/log.c): under systemd, whose journal is
 * stderr (JOURNAL_STREAM names it), each line carries its priority as
 * sd-daemon(3)'s "<N>" prefix and nothing the journal records itself;
 * anywhere else (a terminal, a file, a stderr redirected away from the
 * journal) the plain "wakelockd[time] level: message" lines.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "daemon/log.h"

/* Logs to a fresh temporary file as stderr, with JOURNAL_STREAM set to it
 * (journal != 0), to another file's (journal < 0) or unset (0); returns
 * what was written. */
static char *logged(int journal)
{
	static char out[4096];
	char path[] = "/tmp/wl-test-log-XXXXXX";
	int fd = mkstemp(path), saved = dup(STDERR_FILENO);
	struct stat st;
	char env[64];
	ssize_t n;

	assert_true(fd >= 0 && saved >= 0);
	unlink(path);
	assert_int_equal(fstat(fd, &st), 0);
	if (journal) {
		snprintf(env, sizeof(env), "%llu:%llu", (unsigned long long)st.st_dev,
		         (unsigned long long)st.st_ino + (journal < 0 ? 1 : 0));
		setenv("JOURNAL_STREAM", env, 1);
	} else {
		unsetenv("JOURNAL_STREAM");
	}
	fflush(stderr);
	assert_true(dup2(fd, STDERR_FILENO) >= 0);
	log_setup(LOG_L_DEBUG, 0);
	log_debug("d %d", 1);
	log_info("running: state %s", "freeze");
	log_warn("w");
	log_error("e: %s", "boom");
	fflush(stderr);
	assert_true(dup2(saved, STDERR_FILENO) >= 0);
	close(saved);
	n = pread(fd, out, sizeof(out) - 1, 0);
	close(fd);
	assert_true(n >= 0);
	out[n] = 0;
	unsetenv("JOURNAL_STREAM");
	return out;
}

static void test_journal_gets_priorities(void **st)
{
	(void)st;
	assert_string_equal(logged(1), "<7>d 1\n<6>running: state freeze\n<4>w\n<3>e: boom\n");
}

static void test_plain_lines_elsewhere(void **st)
{
	const char *out = logged(0);

	(void)st;
	assert_non_null(strstr(out, "] info: running: state freeze\n"));
	assert_non_null(strstr(out, "] error: e: boom\n"));
	assert_int_equal(strncmp(out, "wakelockd[", 10), 0);
	assert_null(strstr(out, "<6>"));
}

static void test_redirected_stderr_is_not_the_journal(void **st)
{
	const char *out = logged(-1);

	(void)st;
	assert_non_null(strstr(out, "] warn: w\n"));
	assert_null(strchr(out, '<'));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_journal_gets_priorities),
		cmocka_unit_test(test_plain_lines_elsewhere),
		cmocka_unit_test(test_redirected_stderr_is_not_the_journal),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
