/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "wl_client.h"

static __thread char last_error[256];
/* The last note this thread's last_error has taken in (or was newer than). */
static __thread uint64_t note_seen;

/*
 * Notes come from a client's watcher thread (lib/watch.c: the daemon
 * went away, came back, was given up on), and concern the application's
 * threads, whose calls may never fail meanwhile: the holds live on in
 * the region.  One for the process, numbered; a thread copies it into
 * its own buffer when it asks, so the pointer it gets stays its own.
 */
static pthread_mutex_t note_lock = PTHREAD_MUTEX_INITIALIZER;
static char note[256];
static uint64_t note_seq;   /* atomic; written under note_lock */

void wl_set_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	note_seen = __atomic_load_n(&note_seq, __ATOMIC_ACQUIRE);
}

void wl_note(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&note_lock);
	va_start(ap, fmt);
	vsnprintf(note, sizeof(note), fmt, ap);
	va_end(ap);
	__atomic_store_n(&note_seq, note_seq + 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&note_lock);
}

const char *wakelock_last_error(void)
{
	if (__atomic_load_n(&note_seq, __ATOMIC_ACQUIRE) != note_seen) {
		pthread_mutex_lock(&note_lock);
		memcpy(last_error, note, sizeof(last_error));
		note_seen = note_seq;
		pthread_mutex_unlock(&note_lock);
	}
	return last_error;
}

const char *wakelock_strerror(int err)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case 0: return "success";
	case ENOTCONN: return "wakelockd is not running or has gone away";
	case EACCES: return "permission denied: only root and the daemon's group may keep the system awake";
	case ENOSPC: return "table full: too many clients or holds";
	case EPROTO: return "foreign shared segment or protocol (not wakelockd's)";
	case EPROTONOSUPPORT: return "wakelockd speaks another ABI version than this library";
	case EBADMSG: return "corrupt shared segment";
	case ESTALE: return "the daemon no longer knows this client (restarted or removed it)";
	case EINVAL: return "invalid argument (or release of a hold that is not held)";
	case ENAMETOOLONG: return "name too long";
	case EOVERFLOW: return "hold nested too deeply, or alarm time out of range";
	case ETIMEDOUT: return "wakelockd did not answer in time";
	case ENOTRECOVERABLE: return "shared lock unrecoverable";
	default: return strerror(err);
	}
}
