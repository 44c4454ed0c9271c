// SPDX-License-Identifier: GPL-2.0
/*
 * wlpresence - a backlight for the presence policy's guest tests.
 *
 * QEMU's PC has no panel, so the guest has no backlight class device for
 * wakelockd's display source to read.  This module registers one,
 * "wlpresence", with no hardware behind it: user space sets it through the
 * class's own attributes, as a compositor would,
 *
 *   /sys/class/backlight/wlpresence/brightness   0..255 (0 at load)
 *   /sys/class/backlight/wlpresence/bl_power     0 (on) or 4 (powerdown)
 *
 * and the backlight core sends the uevent a brightness change sends on a
 * phone.  At load the backlight is dark (brightness 0), so loading the
 * module alone keeps nothing awake.
 */
#include <linux/backlight.h>
#include <linux/err.h>
#include <linux/module.h>

static struct backlight_device *wlpresence_bl;

/* Nothing to drive: the core already stored the new state in bd->props. */
static int wlpresence_update_status(struct backlight_device *bd)
{
	return 0;
}

static const struct backlight_ops wlpresence_ops = {
	.update_status = wlpresence_update_status,
};

static int __init wlpresence_init(void)
{
	struct backlight_properties props = {
		.type = BACKLIGHT_RAW,
		.max_brightness = 255,
		.brightness = 0,
		.power = BACKLIGHT_POWER_ON,
	};

	wlpresence_bl = backlight_device_register("wlpresence", NULL, NULL,
						  &wlpresence_ops, &props);
	return PTR_ERR_OR_ZERO(wlpresence_bl);
}

static void __exit wlpresence_exit(void)
{
	backlight_device_unregister(wlpresence_bl);
}

module_init(wlpresence_init);
module_exit(wlpresence_exit);
MODULE_DESCRIPTION("A backlight with no hardware, for wakelockd's presence tests");
MODULE_LICENSE("GPL");
