/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libwakelock in the same translation unit as libwayland's client and
 * server headers, as a Wayland compositor or shell would use it
 * (scripts/install-check.sh builds this against the installed tree).  It
 * compiles only if no name of <wakelock.h> collides with libwayland's,
 * and it runs only if the dynamic linker finds no clash between the
 * libraries.  Exit 0 and a line of output: both libraries worked.
 */
#include <errno.h>
#include <stdio.h>
#include <wayland-client.h>
#include <wayland-server.h>
#include <wakelock.h>

int main(void)
{
	/* Each library's opaque client type, distinct types. */
	struct wl_client *wayland_client = NULL;
	wakelock_client *wakelock = NULL;
	struct wl_display *display = wl_display_create();
	int r;

	if (!display)
		return 1;
	/* No daemon at this socket: libwakelock must say so cleanly. */
	r = wakelock_client_open("/nonexistent/wakelockd.sock", "beside-wayland", &wakelock);
	printf("wayland display %s, client %p; wakelock_client_open: %s\n",
	       wl_display_get_serial(display) == 0 ? "created" : "odd",
	       (void *)wayland_client, wakelock_strerror(r));
	wl_display_destroy(display);
	return r < 0 && !wakelock ? 0 : 1;
}
