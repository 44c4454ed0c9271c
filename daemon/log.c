/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Logging to stderr (foreground, journald) or syslog. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include "log.h"

static int cur_level = LOG_L_INFO;
static int to_syslog;
static int to_journal;

/*
 * Is stderr the journal's stream?  systemd says so in JOURNAL_STREAM, the
 * "device:inode" of the stream it connected (systemd.exec(5)); a stderr
 * redirected since (a shell's 2>file) no longer matches.
 */
static int stderr_is_journal(void)
{
	const char *e = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (!e || sscanf(e, "%llu:%llu", &dev, &ino) != 2 || fstat(STDERR_FILENO, &st) < 0)
		return 0;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

static const char *const names[] = { "debug", "info", "warn", "error" };

void log_setup(int level, int use_syslog)
{
	__atomic_store_n(&cur_level, level, __ATOMIC_RELAXED);
	to_syslog = use_syslog;
	to_journal = !use_syslog && stderr_is_journal();
	if (use_syslog)
		openlog("wakelockd", LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

void log_set_level(int level)
{
	__atomic_store_n(&cur_level, level, __ATOMIC_RELAXED);
}

int log_level_parse(const char *s)
{
	for (int i = 0; i < 4; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	if (strcmp(s, "warning") == 0)
		return LOG_L_WARN;
	return -1;
}

const char *log_level_name(int level)
{
	return level >= 0 && level < 4 ? names[level] : "?";
}

void log_msg(int level, const char *fmt, ...)
{
	static const int prio[] = { LOG_DEBUG, LOG_INFO, LOG_WARNING, LOG_ERR };
	char buf[512];
	va_list ap;

	if (level < __atomic_load_n(&cur_level, __ATOMIC_RELAXED))
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (to_syslog) {
		syslog(prio[level], "%s", buf);
	} else if (to_journal) {
		/* The "<N>" prefix of sd-daemon(3): journald stores the line with
		 * that priority (journalctl -p, systemctl status's highlighting)
		 * and adds the name, pid and time itself. */
		fprintf(stderr, "<%d>%s\n", prio[level], buf);
	} else {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		/* One fprintf per line so concurrent threads do not interleave. */
		fprintf(stderr, "wakelockd[%ld.%03ld] %s: %s\n", (long)ts.tv_sec,
		        ts.tv_nsec / 1000000, names[level], buf);
	}
}
