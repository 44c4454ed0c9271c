// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * wl-dpms: a display that a test turns on and off as a compositor does
 * (the guest plan "policy", tests/guest/policy-display.sh), through
 * libdrm on a DRM device (default /dev/dri/card0; vkms in the guest).
 * Commands on stdin, one per line:
 *
 *   on      light the first connector that has a mode: a framebuffer on a
 *           CRTC routed to it (the connector's sysfs "enabled" reads
 *           enabled), DPMS On
 *   off     DPMS Off on it: the panel blanks, the routing stays (what a
 *           compositor does at its screen-off timeout)
 *   unset   take the CRTC off the connector ("enabled" reads disabled)
 *
 * Prints "ready" once it is the device's master (the first opener of a
 * device with none) and "ok CMD" or "fail CMD: WHY" after each command.
 * It keeps the device open: the framebuffer is the opener's, and the
 * kernel takes it off the CRTC when its last user closes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <xf86drm.h>
#include <xf86drmMode.h>

struct screen {
	int fd;
	uint32_t conn, crtc, fb, dpms_prop;
	drmModeModeInfo mode;
};

/* The id of the connector's property NAME, or 0. */
static uint32_t property_id(int fd, drmModeConnector *c, const char *name)
{
	uint32_t id = 0;

	for (int i = 0; i < c->count_props && !id; i++) {
		drmModePropertyRes *p = drmModeGetProperty(fd, c->props[i]);

		if (p && !strcmp(p->name, name))
			id = p->prop_id;
		drmModeFreeProperty(p);
	}
	return id;
}

/* A CRTC the connector's first encoder can drive, or 0. */
static uint32_t pick_crtc(int fd, drmModeRes *res, drmModeConnector *c)
{
	drmModeEncoder *enc = c->count_encoders ? drmModeGetEncoder(fd, c->encoders[0]) : NULL;
	uint32_t crtc = 0;

	for (int i = 0; enc && i < res->count_crtcs && !crtc; i++)
		if (enc->possible_crtcs & (1u << i))
			crtc = res->crtcs[i];
	drmModeFreeEncoder(enc);
	return crtc;
}

/* Find the first connector with a mode, its CRTC, and make a framebuffer. */
static const char *find(struct screen *s)
{
	drmModeRes *res = drmModeGetResources(s->fd);
	uint32_t handle, pitch;
	uint64_t size;

	if (!res)
		return "no KMS resources";
	for (int i = 0; i < res->count_connectors && !s->conn; i++) {
		drmModeConnector *c = drmModeGetConnector(s->fd, res->connectors[i]);

		if (c && c->count_modes && (s->crtc = pick_crtc(s->fd, res, c))) {
			s->conn = c->connector_id;
			s->mode = c->modes[0];
			s->dpms_prop = property_id(s->fd, c, "DPMS");
		}
		drmModeFreeConnector(c);
	}
	drmModeFreeResources(res);
	if (!s->conn)
		return "no connector with a mode and a CRTC";
	if (!s->dpms_prop)
		return "the connector has no DPMS property";
	if (drmModeCreateDumbBuffer(s->fd, s->mode.hdisplay, s->mode.vdisplay, 32, 0, &handle,
	                            &pitch, &size))
		return "cannot create a dumb buffer";
	if (drmModeAddFB(s->fd, s->mode.hdisplay, s->mode.vdisplay, 24, 32, pitch, handle, &s->fb))
		return "cannot add a framebuffer";
	return NULL;
}

static int run(struct screen *s, const char *cmd)
{
	if (!strcmp(cmd, "on"))
		return drmModeSetCrtc(s->fd, s->crtc, s->fb, 0, 0, &s->conn, 1, &s->mode) ||
		       drmModeConnectorSetProperty(s->fd, s->conn, s->dpms_prop, DRM_MODE_DPMS_ON);
	if (!strcmp(cmd, "off"))
		return drmModeConnectorSetProperty(s->fd, s->conn, s->dpms_prop, DRM_MODE_DPMS_OFF);
	if (!strcmp(cmd, "unset"))
		return drmModeSetCrtc(s->fd, s->crtc, 0, 0, 0, NULL, 0, NULL);
	errno = EINVAL;
	return -1;
}

int main(int argc, char **argv)
{
	const char *dev = argc > 1 ? argv[1] : "/dev/dri/card0";
	struct screen s = { .fd = -1 };
	const char *why;
	char line[64];

	if (argc > 2) {
		fprintf(stderr, "usage: wl-dpms [DEVICE] <COMMANDS (on, off, unset)\n");
		return 2;
	}
	s.fd = open(dev, O_RDWR | O_CLOEXEC);
	if (s.fd < 0) {
		fprintf(stderr, "wl-dpms: %s: %s\n", dev, strerror(errno));
		return 1;
	}
	if (!drmIsMaster(s.fd)) {
		fprintf(stderr, "wl-dpms: %s has another master\n", dev);
		return 1;
	}
	why = find(&s);
	if (why) {
		fprintf(stderr, "wl-dpms: %s: %s\n", dev, why);
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\n")] = 0;
		if (run(&s, line))
			printf("fail %s: %s\n", line, strerror(errno));
		else
			printf("ok %s\n", line);
		fflush(stdout);
	}
	return 0;
}
