/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef WLD_LOGIND_BUS_H
#define WLD_LOGIND_BUS_H

/*
 * Between logind.c (the main thread's bus connection, the inhibitors)
 * and logind_session.c (the sessions' IdleHint and logind's
 * handle-lid-switch inhibitor), which shares that connection.  Main
 * thread only; built with sd-bus only.
 */
#include <systemd/sd-bus.h>

struct daemon;

#define LOGIN1 "org.freedesktop.login1"
#define LOGIN1_PATH "/org/freedesktop/login1"
#define LOGIN1_MANAGER "org.freedesktop.login1.Manager"

/* Whether a call failed because logind is not running. */
int logind_is_absent(const sd_bus_error *e);
/* A method call to logind, never auto-starting it (logind.c explains);
 * 0 or -errno. */
int logind_call_async(sd_bus *bus, sd_bus_slot **slot, const char *path, const char *iface,
                      const char *member, sd_bus_message_handler_t cb, void *ud,
                      const char *types, ...);

/* The bus is open and subscribed to logind (start, reload): subscribe to
 * the sessions' signals, list them, take the lid inhibitor if wanted. */
int logind_sessions_open(struct daemon *d, sd_bus *bus);
/* logind joined (present 1) or left (0) the bus. */
void logind_sessions_owner(struct daemon *d, int present);
/* The bus is closing: forget the sessions, release the lid inhibitor. */
void logind_sessions_close(struct daemon *d);
/* logind_close: and free what logind_sessions_open allocated. */
void logind_sessions_free(struct daemon *d);

#endif
