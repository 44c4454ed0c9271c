/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libwakelock: keep the system awake from user space.
 *
 * A process registers with wakelockd once (wakelock_client_open), creates named
 * holds (wakelock_hold_create) and acquires/releases them around the work that
 * must not be interrupted by suspend.  While any allowed hold is active the
 * daemon does not suspend the machine.
 *
 * Every function that can fail returns 0 on success or a negative errno
 * value; wakelock_strerror() turns it into a sentence and
 * wakelock_last_error() gives the detail of the last failure in the calling
 * thread.
 *
 * Every name this header defines starts with wakelock_ or WAKELOCK_, so that
 * it can be included beside any other library of the desktop and phone
 * stack (libwayland's wl_ in particular).  libwakelock 2 (soname
 * libwakelock.so.2) renamed the wl_ names of libwakelock 1.
 *
 * Thread safety: a wakelock_client and its holds may be used from several
 * threads at once.  A handle is not valid in a child after fork(): the
 * child must open its own client.  Each client has a thread of its own
 * (all signals blocked) that re-registers it after a daemon restart.
 *
 * See libwakelock(3) for the full contract.
 */
#ifndef WAKELOCK_H
#define WAKELOCK_H

#include <stdint.h>
#include <sys/epoll.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WAKELOCK_VERSION_MAJOR 2
#define WAKELOCK_VERSION_MINOR 0

/* Longest client or hold name, including the terminating NUL. */
#define WAKELOCK_NAME_MAX 32

/* Longest alarm name, including the NUL: its hold is called "alarm:NAME". */
#define WAKELOCK_ALARM_NAME_MAX (WAKELOCK_NAME_MAX - 6)

typedef struct wakelock_client wakelock_client;
typedef struct wakelock_hold wakelock_hold;
typedef struct wakelock_alarm wakelock_alarm;

/*
 * Register with the daemon.
 *   socket_path: NULL for $WAKELOCK_SOCKET, else the default
 *                /run/wakelockd/wakelockd.sock.
 *   name:        shown in `wakelock list` and used by the deny list;
 *                1..WAKELOCK_NAME_MAX-1 printable characters.
 * Errors: -EINVAL (bad name), -ENAMETOOLONG, -ENOTCONN (daemon not
 * running), -EACCES (caller is neither root nor in the daemon's group),
 * -ENOSPC (client table full), -EPROTO (foreign segment or protocol),
 * -EPROTONOSUPPORT (daemon speaks another ABI), -EBADMSG (corrupt
 * segment), -ENOMEM.
 */
int wakelock_client_open(const char *socket_path, const char *name, wakelock_client **out);

/* Release and destroy every hold of the client (their handles become
 * invalid) and unregister.  NULL is ignored. */
void wakelock_client_close(wakelock_client *c);

/*
 * The client's connection to the daemon.  When the daemon exits or
 * restarts, a thread of the library registers the client again and moves
 * its holds over (retrying for 10 s; the descriptor keeps its number).
 * Only if that fails, or the client has wake alarms, does every call fail
 * with -ENOTCONN: then close and reopen.  Do not read or write it.
 */
int wakelock_client_fd(const wakelock_client *c);

/*
 * Create a named hold (initially released).  Names need not be unique.
 * Errors: -EINVAL, -ENAMETOOLONG, -ENOSPC (the client has
 * WAKELOCK_MAX_HOLDS_PER_CLIENT holds already), -ENOMEM, -ENOTCONN, -ESTALE.
 */
int wakelock_hold_create(wakelock_client *c, const char *name, wakelock_hold **out);

/* Release the hold completely (whatever its depth) and free it. */
void wakelock_hold_destroy(wakelock_hold *h);

/*
 * Nesting: a hold counts its untimed acquisitions.  Each wakelock_hold_acquire()
 * needs one wakelock_hold_release(); the hold keeps the system awake while that
 * depth is above zero OR a timeout set by wakelock_hold_acquire_timeout() has
 * not passed.  A timed acquisition does not add to the depth: it sets the
 * expiry to the later of the current one and now + timeout_ms, and it
 * lapses on its own (even if the process sleeps or is stopped).
 * wakelock_hold_release() removes one untimed level; on a hold whose depth is
 * already zero it cancels a pending timeout instead.
 *
 * An untimed acquire or release makes no system call and takes no lock:
 * it updates the client's own shared region and reads one word of the
 * daemon's.  The exceptions: a release that ends the client's last hold
 * while the daemon waits for exactly that sends it a kick on the client's
 * connection (once per watch, never blocking),
 * and an acquire made while the daemon is entering suspend waits until
 * the attempt is over (so a successful acquire means the system is
 * awake).  Timed acquisitions and their cancellation also read
 * CLOCK_MONOTONIC and take a mutex private to the client.
 *
 * Errors: -EINVAL (release of a hold that is not held), -EOVERFLOW
 * (depth would exceed 2^31), -ENOTCONN (the daemon is gone and no
 * successor took the client back within 10 s).
 * A client denied by policy still succeeds: its holds are recorded and
 * counted in statistics but do not keep the system awake.
 */
int wakelock_hold_acquire(wakelock_hold *h);
int wakelock_hold_acquire_timeout(wakelock_hold *h, uint32_t timeout_ms);
int wakelock_hold_release(wakelock_hold *h);

/* 1 when the hold currently keeps (or would keep, if denied) the system
 * awake, 0 when not, negative errno on error. */
int wakelock_hold_is_held(wakelock_hold *h);

/*
 * Closing the hand-off window (EPOLLWAKEUP).
 *
 * wakelock_epoll_add() adds fd to epfd with EPOLLWAKEUP, so the kernel keeps
 * the system awake from the moment an event is queued until this process
 * calls epoll_wait() again.  It refuses EPOLLET and EPOLLONESHOT (-EINVAL)
 * because with them the kernel drops its wakeup source as soon as the
 * event is delivered, reopening the window.  EPOLLWAKEUP needs
 * CAP_BLOCK_SUSPEND; without it the kernel drops the flag silently, and
 * wakelock_epoll_add() fails with -EPERM (fd not added; wakelock_last_error() says
 * which capability is missing).  On a kernel that cannot suspend (no
 * /sys/power/wakeup_count) it succeeds: there is nothing to hand off.
 *
 * wakelock_epoll_wait() is epoll_wait() that hands the kernel's hold over to
 * `h`: when events are returned, `h` is acquired (once) before the call
 * returns, i.e. while the kernel still holds its wakeup source; at the
 * next call it is released just before blocking, while the kernel's
 * source is still active.  So the system stays awake from the event until
 * the caller comes back for more.  Work that outlives that moment takes
 * a hold of its own before returning to the loop.
 * Returns the number of events (>= 0) or a negative errno.
 */
int wakelock_epoll_add(int epfd, int fd, uint32_t events, uint64_t data);
int wakelock_epoll_wait(wakelock_hold *h, int epfd, struct epoll_event *events,
                  int maxevents, int timeout_ms);

/*
 * Wake alarms for periodic work.
 *
 * An alarm asks the daemon to wake the system at a time, even from
 * suspend, and to keep it awake until the client has done its work.  When
 * the alarm fires the daemon FIRST acquires a hold named "alarm:NAME" of
 * this client, THEN makes wakelock_alarm_fd() readable; the hold lasts until
 * wakelock_alarm_done() or until the daemon's safety timeout ([alarm] timeout_ms,
 * 10 s by default) lapses, whichever comes first.  So the work started
 * after wakelock_alarm_wait() returns runs before the system can suspend again.
 * A fire that comes while the client is still busy with an earlier one
 * takes no hold of its own: wakelock_alarm_done() for the earlier one renews
 * the hold for it.  A client that stops calling wakelock_alarm_done() thus keeps
 * the system awake for one timeout, not for ever, and holds again only
 * once it has called it.
 *
 * wakelock_alarm_create(): name as for holds but shorter than WAKELOCK_ALARM_NAME_MAX.
 *   Errors: -EINVAL, -ENAMETOOLONG, -ENOSPC (WAKELOCK_MAX_ALARMS_PER_CLIENT = 16
 *   alarms, or no hold left for it), -ENOMEM, -ENOTCONN, -EOPNOTSUPP (the
 *   daemon runs on a kernel without timerfd).
 * wakelock_alarm_set(): first expiry first_ms from now (CLOCK_BOOTTIME: time
 *   asleep counts), then every period_ms (0 = one-shot); each expiry may
 *   be delayed by up to window_ms so that several alarms share one
 *   wake-up; it is never early.  Periodic expiries stay on their grid
 *   (no drift); expiries missed while the system could not be woken are
 *   not replayed.  Replaces any earlier setting.  Errors: -EINVAL (window
 *   larger than a nonzero period), -EOVERFLOW (times beyond 2^63 ns),
 *   -ENOTCONN, -ESTALE.
 * wakelock_alarm_cancel(): no further expiries until set again; a fire already
 *   delivered keeps its hold until wakelock_alarm_done().
 * wakelock_alarm_fd(): a descriptor (the read end of the daemon's pipe) that
 *   becomes readable when the alarm fires, for poll/epoll.  Do not read it: call wakelock_alarm_wait(a, 0).
 * wakelock_alarm_wait(): wait up to timeout_ms (-1: forever, 0: poll) for the
 *   alarm to fire.  Returns the number of expiries not seen before (>= 1),
 *   0 on timeout, or a negative errno (-ENOTCONN when the daemon exits).
 * wakelock_alarm_done(): the work for the fires seen by wakelock_alarm_wait() is
 *   finished: the alarm's hold is released, unless the alarm fired again
 *   meanwhile (then the fd is readable again and the hold is renewed for
 *   a full timeout, for that fire).  -EINVAL if wakelock_alarm_wait() reported
 *   no fire since the last call.  A hold already released by the safety
 *   timeout is not an error.
 * wakelock_alarm_destroy(): cancel, release its hold and free.  NULL is ignored.
 *
 * A client denied by policy still gets its alarms, but their holds do not
 * keep the system awake (as with its other holds).
 */
int wakelock_alarm_create(wakelock_client *c, const char *name, wakelock_alarm **out);
int wakelock_alarm_set(wakelock_alarm *a, uint64_t first_ms, uint32_t period_ms, uint32_t window_ms);
int wakelock_alarm_cancel(wakelock_alarm *a);
int wakelock_alarm_fd(const wakelock_alarm *a);
int wakelock_alarm_wait(wakelock_alarm *a, int timeout_ms);
int wakelock_alarm_done(wakelock_alarm *a);
void wakelock_alarm_destroy(wakelock_alarm *a);

/*
 * Resume notifications: after each suspend attempt, whether
 * the system slept, for how long, and what woke it.
 *
 * wakelock_resume_fd(): a descriptor (the read end of the daemon's pipe) that
 *   becomes readable after each attempt,
 *   for poll/epoll; the first call subscribes (one request to the
 *   daemon), later ones return the same fd.  Do not read it: call
 *   wakelock_resume_read().  Errors: -ENOTCONN, -ENOMEM, -EOPNOTSUPP (the
 *   daemon keeps no ledger).
 * wakelock_resume_read(): the latest attempt, if one ended since the last call:
 *   returns 1 and fills *out, 0 if none ended since, or a negative errno.
 *   Attempts that ended in between are counted in out->missed, not
 *   reported one by one (`wakelock wakes` has them all).
 */
#define WAKELOCK_CAUSE_MAX 64
struct wakelock_resume {
	uint64_t seq;           /* the attempt's number in the daemon's ledger */
	int slept;              /* 1: suspended and resumed; 0: did not sleep */
	int error;              /* 0, EBUSY (aborted by a wakeup event) or the errno */
	uint64_t asleep_ms;     /* time asleep (CLOCK_BOOTTIME) */
	uint32_t missed;        /* attempts since the previous read not reported */
	/* "alarm CLIENT/NAME", "source NAME", "irq N" or "unknown" */
	char cause[WAKELOCK_CAUSE_MAX];
};
int wakelock_resume_fd(wakelock_client *c);
int wakelock_resume_read(wakelock_client *c, struct wakelock_resume *out);

/* A sentence for a value returned by this library (negative or positive
 * errno).  Never NULL; the string is static. */
const char *wakelock_strerror(int err);

/* Detail of the last failure in the calling thread (e.g. why access was
 * refused), or "" if none; or, if it came later, what the library last
 * reported about the daemon going away (registered again after so many
 * ms, or given up), in every thread.  Valid until the next call in this
 * thread. */
const char *wakelock_last_error(void);

#ifdef __cplusplus
}
#endif
#endif /* WAKELOCK_H */
