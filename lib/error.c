/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "wl_proto.h"

static __thread char last_error[256];

void wl_set_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
}

const char *wakelock_last_error(void)
{
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
