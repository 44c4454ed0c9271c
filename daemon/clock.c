/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The real clock.  Sleeps wait on a condition variable so that stopping
 * the daemon interrupts a backoff or grace period at once. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include "lib/wl_shm.h"
#include "power.h"

struct real_clock {
	struct power_clock pub;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int woken;
};

static uint64_t rc_mono(struct power_clock *c) { (void)c; return wl_clock_ns(CLOCK_MONOTONIC); }
static uint64_t rc_boot(struct power_clock *c) { (void)c; return wl_clock_ns(CLOCK_BOOTTIME); }

static int rc_sleep(struct power_clock *c, uint64_t ns)
{
	struct real_clock *rc = (struct real_clock *)c;
	uint64_t end = wl_clock_ns(CLOCK_MONOTONIC) + ns;
	struct timespec ts = { .tv_sec = (time_t)(end / 1000000000u),
	                       .tv_nsec = (long)(end % 1000000000u) };
	int r = 0;

	pthread_mutex_lock(&rc->lock);
	while (!rc->woken && r != ETIMEDOUT)
		r = pthread_cond_timedwait(&rc->cond, &rc->lock, &ts);
	r = rc->woken ? -EINTR : 0;
	pthread_mutex_unlock(&rc->lock);
	return r;
}

static void rc_wake(struct power_clock *c)
{
	struct real_clock *rc = (struct real_clock *)c;

	pthread_mutex_lock(&rc->lock);
	rc->woken = 1;   /* sticky: used only to stop */
	pthread_cond_broadcast(&rc->cond);
	pthread_mutex_unlock(&rc->lock);
}

struct power_clock *real_clock_new(void)
{
	struct real_clock *rc = calloc(1, sizeof(*rc));
	pthread_condattr_t ca;

	if (!rc)
		return NULL;
	rc->pub.mono_ns = rc_mono;
	rc->pub.boot_ns = rc_boot;
	rc->pub.sleep_ns = rc_sleep;
	rc->pub.wake = rc_wake;
	pthread_mutex_init(&rc->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&rc->cond, &ca);
	pthread_condattr_destroy(&ca);
	return &rc->pub;
}

void real_clock_free(struct power_clock *c)
{
	struct real_clock *rc = (struct real_clock *)c;

	if (!rc)
		return;
	pthread_cond_destroy(&rc->cond);
	pthread_mutex_destroy(&rc->lock);
	free(rc);
}
