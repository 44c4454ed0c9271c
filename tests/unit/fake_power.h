/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * An in-process fake of the kernel's /sys/power rules (docs/design.md §2):
 *  - reading wakeup_count blocks while events are in progress;
 *  - the count rises when an event ends (16-bit, wraps);
 *  - writing a stale count, or any count while events are in progress,
 *    fails with EINVAL; a good write arms the abort check;
 *  - a suspend with the check armed aborts (EBUSY) if an event happened
 *    since the write; the check is one-shot.
 * and a fake clock that records sleeps instead of sleeping.
 * Other processes (hook scripts) can report events too: every byte added
 * to event_file, if set, is one event that has begun and ended by the
 * time the fake next looks (at each read, write and suspend).
 */
#ifndef FAKE_POWER_H
#define FAKE_POWER_H

#include <pthread.h>
#include "daemon/power.h"

struct fake_clock {
	struct power_clock pub;
	pthread_mutex_t m;
	uint64_t mono, boot;
	uint64_t slept_ms[256];
	int nslept;
};

#define FAKE_FILES 128

struct fake_power {
	struct power_backend pub;
	pthread_mutex_t m;
	pthread_cond_t c;
	unsigned count;
	int in_progress;
	int armed;
	unsigned armed_count;
	int interrupted;
	int suspends;          /* successful */
	int aborts;            /* suspends aborted by an event */
	int fail_times;        /* make the next N suspends fail with -fail_errno */
	int fail_errno;
	uint64_t sleep_ns;     /* added to the boot clock per suspend */
	char last_state[8];
	char states[256];      /* every state written, space-separated ("disk") */
	int poweroffs;         /* poweroff() calls (the host is never powered off) */
	int poweroff_errno;    /* > 0: poweroff() fails with -poweroff_errno */
	/* arm_wake: the armed time (0: none), how often armed, how many
	 * suspends it ended; arm_wake_errno > 0 makes arming fail. */
	uint64_t wake_at;
	int wakes_armed, own_wakes, arm_wake_errno;
	struct fake_clock *clk;
	void (*on_suspend)(struct fake_power *fp, void *arg);  /* inside suspend */
	void *arg;
	char event_file[256];  /* "" = none */
	long long event_file_seen;
	/* The wake ledger's files (read_attr/list_dir): a path relative to
	 * the root and its contents, or an error its read returns. */
	struct fake_file {
		char path[80];
		char data[128];
		int err;               /* > 0: reading fails with -err */
	} files[FAKE_FILES];
	int nfiles;
	int lists;             /* list_dir calls (a snapshot's sources read) */
};

void fake_clock_init(struct fake_clock *fc);
void fake_power_init(struct fake_power *fp, struct fake_clock *clk);
void fake_event_begin(struct fake_power *fp);
void fake_event_end(struct fake_power *fp);
int fake_suspends(struct fake_power *fp);
/* Create or replace the file rel with data; data NULL removes it. */
void fake_file_set(struct fake_power *fp, const char *rel, const char *data);
/* Make reading rel fail with -err (e.g. ENODATA, as pm_wakeup_irq with no
 * wakeup IRQ recorded). */
void fake_file_fail(struct fake_power *fp, const char *rel, int err);

#endif
