// SPDX-License-Identifier: GPL-2.0
/*
 * wlring - a phone's ring line as a gpio-keys key, for wakelockd's tests.
 *
 * On the PinePhone and the Librem 5 the modem's ring indicator drives a
 * GPIO that the device tree describes as a gpio-keys key, along the lines of
 *
 *	gpio-keys {
 *		compatible = "gpio-keys";
 *		ring {
 *			label = "ring";
 *			linux,code = <KEY_PHONE>;
 *			gpios = <&gpio1 12 GPIO_ACTIVE_LOW>;
 *			wakeup-source;
 *		};
 *	};
 *
 * A QEMU PC has neither a device tree nor that GPIO.  This module gives
 * gpio-keys the same description as software nodes, with line 0 of the
 * gpio-sim bank labelled "wlring-modem" as the GPIO: the test makes that
 * bank in configfs and rings by writing the line's sysfs "pull".  gpiolib
 * resolves a software node reference by the node's name against the chip
 * labels, so the node below names no real device; gpio-keys defers its
 * probe until the bank exists.
 *
 * The device is "gpio-keys" and its input device "wlring".  wakeup=0 leaves
 * "wakeup-source" out: a key that must not count as a wakeup event, the
 * tests' negative control.
 */
#include <linux/err.h>
#include <linux/gpio/machine.h>
#include <linux/gpio/property.h>
#include <linux/input.h>
#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/property.h>

static bool wakeup = true;
module_param(wakeup, bool, 0444);
MODULE_PARM_DESC(wakeup, "describe the key with wakeup-source (default: yes)");

/* Stands for the GPIO controller: only its name matters (the bank's label). */
static const struct software_node wlring_modem_node = {
	.name = "wlring-modem",
};

static const struct property_entry wlring_keys_props[] = {
	PROPERTY_ENTRY_STRING("label", "wlring"),
	{ }
};

static const struct software_node wlring_keys_node = {
	.name = "wlring-keys",
	.properties = wlring_keys_props,
};

/* The modem pulls its ring indicator low while it rings. */
static const struct property_entry wlring_ring_wake_props[] = {
	PROPERTY_ENTRY_STRING("label", "ring"),
	PROPERTY_ENTRY_U32("linux,code", KEY_PHONE),
	PROPERTY_ENTRY_GPIO("gpios", &wlring_modem_node, 0, GPIO_ACTIVE_LOW),
	PROPERTY_ENTRY_BOOL("wakeup-source"),
	{ }
};

static const struct property_entry wlring_ring_props[] = {
	PROPERTY_ENTRY_STRING("label", "ring"),
	PROPERTY_ENTRY_U32("linux,code", KEY_PHONE),
	PROPERTY_ENTRY_GPIO("gpios", &wlring_modem_node, 0, GPIO_ACTIVE_LOW),
	{ }
};

static struct software_node wlring_ring_node = {
	.name = "ring",
	.parent = &wlring_keys_node,
};

static const struct software_node *wlring_nodes[] = {
	&wlring_modem_node,
	&wlring_keys_node,
	&wlring_ring_node,
	NULL
};

static struct platform_device *wlring_pdev;

static int __init wlring_init(void)
{
	struct platform_device_info info = {
		.name = "gpio-keys",
		.id = PLATFORM_DEVID_NONE,
	};
	int ret;

	wlring_ring_node.properties = wakeup ? wlring_ring_wake_props :
					       wlring_ring_props;
	ret = software_node_register_node_group(wlring_nodes);
	if (ret)
		return ret;

	info.fwnode = software_node_fwnode(&wlring_keys_node);
	wlring_pdev = platform_device_register_full(&info);
	if (IS_ERR(wlring_pdev)) {
		software_node_unregister_node_group(wlring_nodes);
		return PTR_ERR(wlring_pdev);
	}
	return 0;
}

static void __exit wlring_exit(void)
{
	platform_device_unregister(wlring_pdev);
	software_node_unregister_node_group(wlring_nodes);
}

module_init(wlring_init);
module_exit(wlring_exit);
MODULE_DESCRIPTION("A modem's ring line as a gpio-keys key, for wakelockd's tests");
MODULE_LICENSE("GPL");
