/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "fake_power.h"

static uint64_t fc_mono(struct power_clock *c)
{
	struct fake_clock *fc = (struct fake_clock *)c;
	uint64_t v;
	pthread_mutex_lock(&fc->m);
	v = fc->mono;
	pthread_mutex_unlock(&fc->m);
	return v;
}

static uint64_t fc_boot(struct power_clock *c)
{
	struct fake_clock *fc = (struct fake_clock *)c;
	uint64_t v;
	pthread_mutex_lock(&fc->m);
	v = fc->boot;
	pthread_mutex_unlock(&fc->m);
	return v;
}

static int fc_sleep(struct power_clock *c, uint64_t ns)
{
	struct fake_clock *fc = (struct fake_clock *)c;

	pthread_mutex_lock(&fc->m);
	if (fc->nslept < 256)
		fc->slept_ms[fc->nslept++] = ns / 1000000u;
	fc->mono += ns;
	fc->boot += ns;
	pthread_mutex_unlock(&fc->m);
	return 0;
}

static void fc_wake(struct power_clock *c)
{
	(void)c;
}

void fake_clock_init(struct fake_clock *fc)
{
	memset(fc, 0, sizeof(*fc));
	pthread_mutex_init(&fc->m, NULL);
	fc->mono = fc->boot = 1000000000ull;
	fc->pub.mono_ns = fc_mono;
	fc->pub.boot_ns = fc_boot;
	fc->pub.sleep_ns = fc_sleep;
	fc->pub.wake = fc_wake;
}

/* Count the events other processes reported in event_file (fp->m held). */
static void take_file_events(struct fake_power *fp)
{
	struct stat sb;

	if (!fp->event_file[0] || stat(fp->event_file, &sb) < 0)
		return;
	if ((long long)sb.st_size > fp->event_file_seen) {
		fp->count = (fp->count + (unsigned)(sb.st_size - fp->event_file_seen)) & 0xffff;
		fp->event_file_seen = (long long)sb.st_size;
	}
}

static int fp_read(struct power_backend *be, unsigned *count)
{
	struct fake_power *fp = (struct fake_power *)be;
	int r = 0;

	pthread_mutex_lock(&fp->m);
	take_file_events(fp);
	while (fp->in_progress && !fp->interrupted)
		pthread_cond_wait(&fp->c, &fp->m);
	if (fp->interrupted) {
		fp->interrupted = 0;
		r = -EINTR;
	} else {
		*count = fp->count;
	}
	pthread_mutex_unlock(&fp->m);
	return r;
}

static int fp_write(struct power_backend *be, unsigned count)
{
	struct fake_power *fp = (struct fake_power *)be;
	int r = 0;

	pthread_mutex_lock(&fp->m);
	take_file_events(fp);
	if (count != fp->count || fp->in_progress) {
		r = -EINVAL;
	} else {
		fp->armed = 1;
		fp->armed_count = count;
	}
	pthread_mutex_unlock(&fp->m);
	return r;
}

static int fp_suspend(struct power_backend *be, const char *state)
{
	struct fake_power *fp = (struct fake_power *)be;
	int r = 0;

	pthread_mutex_lock(&fp->m);
	take_file_events(fp);
	strncpy(fp->last_state, state, sizeof(fp->last_state) - 1);
	if (strlen(fp->states) + strlen(state) + 2 < sizeof(fp->states))
		strcat(strcat(fp->states, fp->states[0] ? " " : ""), state);
	if (fp->armed && (fp->count != fp->armed_count || fp->in_progress)) {
		fp->aborts++;
		r = -EBUSY;
	} else if (fp->fail_times > 0) {
		fp->fail_times--;
		r = -fp->fail_errno;
	} else {
		fp->suspends++;
	}
	fp->armed = 0;   /* one-shot, like events_check_enabled */
	pthread_cond_broadcast(&fp->c);
	pthread_mutex_unlock(&fp->m);
	if (r == 0) {
		if (fp->clk) {
			uint64_t wake;

			pthread_mutex_lock(&fp->clk->m);
			/* The daemon's own wake, if armed, ends a longer sleep
			 * (the RTC alarm); disk is a power off: no alarm. */
			wake = fp->clk->boot + fp->sleep_ns;
			if (fp->wake_at && fp->wake_at > fp->clk->boot && fp->wake_at < wake &&
			    strcmp(state, "disk")) {
				wake = fp->wake_at;
				fp->own_wakes++;
			}
			fp->clk->boot = wake;
			pthread_mutex_unlock(&fp->clk->m);
		}
		if (fp->on_suspend)
			fp->on_suspend(fp, fp->arg);
	}
	return r;
}

static int fp_arm_wake(struct power_backend *be, uint64_t boot_ns)
{
	struct fake_power *fp = (struct fake_power *)be;

	if (fp->arm_wake_errno && boot_ns)
		return -fp->arm_wake_errno;
	fp->wake_at = boot_ns;
	if (boot_ns)
		fp->wakes_armed++;
	return 0;
}

static void fp_wake_reason(struct power_backend *be, char *buf, size_t len)
{
	(void)be;
	strncpy(buf, "fake", len - 1);
}

/* --- the wake ledger's files ------------------------------------------ */

static struct fake_file *file_find(struct fake_power *fp, const char *rel)
{
	for (int i = 0; i < fp->nfiles; i++)
		if (!strcmp(fp->files[i].path, rel))
			return &fp->files[i];
	return NULL;
}

/* rel into buf, cut at its first newline if cut is set. */
static int read_file(struct fake_power *fp, const char *rel, char *buf, size_t len, int cut)
{
	struct fake_file *f;
	int r;

	pthread_mutex_lock(&fp->m);
	f = file_find(fp, rel);
	if (!f) {
		r = -ENOENT;
	} else if (f->err) {
		r = -f->err;
	} else {
		snprintf(buf, len, "%s", f->data);
		if (cut)
			buf[strcspn(buf, "\n")] = 0;
		r = (int)strlen(buf);
	}
	pthread_mutex_unlock(&fp->m);
	return r;
}

static int fp_read_attr(struct power_backend *be, const char *rel, char *buf, size_t len)
{
	return read_file((struct fake_power *)be, rel, buf, len, 1);
}

static int fp_read_lines(struct power_backend *be, const char *rel, char *buf, size_t len)
{
	return read_file((struct fake_power *)be, rel, buf, len, 0);
}

/* Entries of rel: the distinct first components of the paths under it
 * (a directory with no files in it does not exist: -ENOENT). */
static int fp_list_dir(struct power_backend *be, const char *rel,
                       int (*fn)(void *arg, const char *entry, uint64_t ino), void *arg)
{
	struct fake_power *fp = (struct fake_power *)be;
	char names[FAKE_FILES][80];
	size_t dl = strlen(rel);
	int n = 0;

	pthread_mutex_lock(&fp->m);
	fp->lists++;
	for (int i = 0; i < fp->nfiles; i++) {
		const char *p = fp->files[i].path;
		size_t cl;
		int j;

		if (strncmp(p, rel, dl) || p[dl] != '/')
			continue;
		p += dl + 1;
		cl = strcspn(p, "/");
		if (!cl || cl >= sizeof(names[0]))
			continue;
		for (j = 0; j < n; j++)
			if (!strncmp(names[j], p, cl) && !names[j][cl])
				break;
		if (j == n) {
			memcpy(names[n], p, cl);
			names[n++][cl] = 0;
		}
	}
	pthread_mutex_unlock(&fp->m);
	if (!n)
		return -ENOENT;
	for (int j = 0; j < n; j++)
		if (fn(arg, names[j], 0))           /* no inodes: names read each time */
			break;
	return 0;
}

static struct fake_file *file_slot(struct fake_power *fp, const char *rel)
{
	struct fake_file *f = file_find(fp, rel);

	if (!f && fp->nfiles < FAKE_FILES) {
		f = &fp->files[fp->nfiles++];
		snprintf(f->path, sizeof(f->path), "%s", rel);
	}
	return f;
}

void fake_file_set(struct fake_power *fp, const char *rel, const char *data)
{
	struct fake_file *f;

	pthread_mutex_lock(&fp->m);
	if (!data) {
		f = file_find(fp, rel);
		if (f)
			*f = fp->files[--fp->nfiles];
	} else if ((f = file_slot(fp, rel))) {
		snprintf(f->data, sizeof(f->data), "%s", data);
		f->err = 0;
	}
	pthread_mutex_unlock(&fp->m);
}

void fake_file_fail(struct fake_power *fp, const char *rel, int err)
{
	struct fake_file *f;

	pthread_mutex_lock(&fp->m);
	if ((f = file_slot(fp, rel)))
		f->err = err;
	pthread_mutex_unlock(&fp->m);
}

/* Counts, never powers off: a test's "the system went off". */
static int fp_poweroff(struct power_backend *be)
{
	struct fake_power *fp = (struct fake_power *)be;
	int r;

	pthread_mutex_lock(&fp->m);
	fp->poweroffs++;
	r = fp->poweroff_errno ? -fp->poweroff_errno : 0;
	pthread_mutex_unlock(&fp->m);
	return r;
}

static void fp_interrupt(struct power_backend *be)
{
	struct fake_power *fp = (struct fake_power *)be;

	pthread_mutex_lock(&fp->m);
	fp->interrupted = 1;
	pthread_cond_broadcast(&fp->c);
	pthread_mutex_unlock(&fp->m);
}

void fake_power_init(struct fake_power *fp, struct fake_clock *clk)
{
	memset(fp, 0, sizeof(*fp));
	pthread_mutex_init(&fp->m, NULL);
	pthread_cond_init(&fp->c, NULL);
	fp->clk = clk;
	fp->count = 65534;   /* wraps during tests: compare for equality only */
	fp->pub.read_count = fp_read;
	fp->pub.write_count = fp_write;
	fp->pub.suspend = fp_suspend;
	fp->pub.wake_reason = fp_wake_reason;
	fp->pub.interrupt = fp_interrupt;
	fp->pub.poweroff = fp_poweroff;
	fp->pub.arm_wake = fp_arm_wake;
	fp->pub.read_attr = fp_read_attr;
	fp->pub.read_lines = fp_read_lines;
	fp->pub.list_dir = fp_list_dir;
}

void fake_event_begin(struct fake_power *fp)
{
	pthread_mutex_lock(&fp->m);
	fp->in_progress++;
	pthread_mutex_unlock(&fp->m);
}

void fake_event_end(struct fake_power *fp)
{
	pthread_mutex_lock(&fp->m);
	fp->in_progress--;
	fp->count = (fp->count + 1) & 0xffff;   /* counted on deactivation */
	pthread_cond_broadcast(&fp->c);
	pthread_mutex_unlock(&fp->m);
}

int fake_suspends(struct fake_power *fp)
{
	int n;
	pthread_mutex_lock(&fp->m);
	n = fp->suspends;
	pthread_mutex_unlock(&fp->m);
	return n;
}
