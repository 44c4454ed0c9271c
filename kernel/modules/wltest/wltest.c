// SPDX-License-Identifier: GPL-2.0
/*
 * wltest - inject wakeup events on demand, for guest tests and benchmarks.
 *
 * Creates one standalone wakeup source ("wltest") and one wakeup-capable
 * platform device ("wltest-dev"), and lets user space drive both through
 * debugfs:
 *
 *   /sys/kernel/debug/wltest/source   standalone source: __pm_* calls
 *   /sys/kernel/debug/wltest/device   device: pm_* calls (honour power/wakeup)
 *
 * Each file accepts "stay", "relax" or "event <ms>" (a wakeup event with a
 * hold of <ms> milliseconds, 0 for an instantaneous one), and "hard" to report
 * a hard wakeup (pm_system_wakeup) that aborts a suspend in progress.
 *
 *   /sys/kernel/debug/wltest/suspend_late_ms
 *
 * makes the device's suspend_late callback sleep that long (0, the default,
 * returns at once): a window after every device's suspend callback (serial
 * ports are suspended and their interrupts armed for wakeup) and before the
 * noirq phase, in which tests inject events, e.g. bytes on a serial port.
 *
 *   /sys/kernel/debug/wltest/prepare_ms
 *
 * makes the device's prepare callback sleep that long: a window after the
 * wakeup_count handshake and the freezing of tasks, before any device is
 * suspended (USB devices suspend asynchronously, so a window in a suspend
 * callback would not keep them awake).
 *
 * The parameter idle_sources=N (at load, at most 1000) registers N more
 * standalone sources, "wltest-idle-0" and on, that are never active: a
 * phone has 100 to 300 wakeup sources, and the benchmarks measure what
 * they cost a power manager that reads /sys/class/wakeup around every
 * suspend.
 */
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/pm_wakeup.h>
#include <linux/slab.h>
#include <linux/suspend.h>
#include <linux/uaccess.h>

static struct wakeup_source *wltest_ws;
static struct platform_device *wltest_pdev;
static struct dentry *wltest_dir;
static u32 wltest_suspend_late_ms;
static u32 wltest_prepare_ms;
static unsigned int idle_sources;
module_param(idle_sources, uint, 0444);
MODULE_PARM_DESC(idle_sources, "register this many never-active wakeup sources (at most 1000)");
static struct wakeup_source **wltest_idle;

/* Sleep @ms in the PM callback @phase, saying so on the console (tests wait
 * for "<phase>: sleeping" to inject their event).
 */
static void wltest_window(struct device *dev, const char *phase, u32 ms)
{
	if (!ms)
		return;
	dev_info(dev, "%s: sleeping %u ms\n", phase, ms);
	msleep(ms);
	dev_info(dev, "%s: done\n", phase);
}

static int wltest_prepare(struct device *dev)
{
	wltest_window(dev, "prepare", READ_ONCE(wltest_prepare_ms));
	return 0;
}

static int wltest_suspend_late(struct device *dev)
{
	wltest_window(dev, "suspend_late", READ_ONCE(wltest_suspend_late_ms));
	return 0;
}

static const struct dev_pm_ops wltest_pm_ops = {
	.prepare = wltest_prepare,
	SET_LATE_SYSTEM_SLEEP_PM_OPS(wltest_suspend_late, NULL)
};

static int wltest_probe(struct platform_device *pdev)
{
	return 0;
}

static struct platform_driver wltest_driver = {
	.probe = wltest_probe,
	.driver = {
		.name = "wltest-dev",
		.pm = &wltest_pm_ops,
	},
};

/* Parse one command; @ws is NULL for the device file. */
static int wltest_command(const char *cmd, struct wakeup_source *ws)
{
	struct device *dev = &wltest_pdev->dev;
	unsigned int msec;

	if (sysfs_streq(cmd, "stay")) {
		if (ws)
			__pm_stay_awake(ws);
		else
			pm_stay_awake(dev);
	} else if (sysfs_streq(cmd, "relax")) {
		if (ws)
			__pm_relax(ws);
		else
			pm_relax(dev);
	} else if (sscanf(cmd, "event %u", &msec) == 1) {
		if (ws)
			__pm_wakeup_event(ws, msec);
		else
			pm_wakeup_event(dev, msec);
	} else if (sysfs_streq(cmd, "hard")) {
		pm_system_wakeup();
	} else {
		return -EINVAL;
	}
	return 0;
}

static ssize_t wltest_write(struct file *file, const char __user *ubuf,
			    size_t len, loff_t *ppos)
{
	struct wakeup_source *ws = file->private_data;
	char buf[32];
	int ret;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	ret = wltest_command(buf, ws);
	return ret ? ret : len;
}

static const struct file_operations wltest_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = wltest_write,
	.llseek = noop_llseek,
};

static void wltest_idle_unregister(unsigned int n)
{
	while (n--)
		wakeup_source_unregister(wltest_idle[n]);
	kfree(wltest_idle);
	wltest_idle = NULL;
}

static int wltest_idle_register(void)
{
	char name[32];
	unsigned int i;

	if (!idle_sources)
		return 0;
	if (idle_sources > 1000)
		return -EINVAL;
	wltest_idle = kcalloc(idle_sources, sizeof(*wltest_idle), GFP_KERNEL);
	if (!wltest_idle)
		return -ENOMEM;
	for (i = 0; i < idle_sources; i++) {
		snprintf(name, sizeof(name), "wltest-idle-%u", i);
		wltest_idle[i] = wakeup_source_register(NULL, name);
		if (!wltest_idle[i]) {
			wltest_idle_unregister(i);
			return -ENOMEM;
		}
	}
	return 0;
}

static int __init wltest_init(void)
{
	int ret;

	ret = wltest_idle_register();
	if (ret)
		return ret;

	wltest_ws = wakeup_source_register(NULL, "wltest");
	if (!wltest_ws) {
		ret = -ENOMEM;
		goto err_idle;
	}

	wltest_pdev = platform_device_register_simple("wltest-dev", -1, NULL, 0);
	if (IS_ERR(wltest_pdev)) {
		ret = PTR_ERR(wltest_pdev);
		goto err_ws;
	}
	ret = device_init_wakeup(&wltest_pdev->dev, true);
	if (ret)
		goto err_pdev;
	ret = platform_driver_register(&wltest_driver);
	if (ret)
		goto err_pdev;

	wltest_dir = debugfs_create_dir("wltest", NULL);
	debugfs_create_file("source", 0200, wltest_dir, wltest_ws, &wltest_fops);
	debugfs_create_file("device", 0200, wltest_dir, NULL, &wltest_fops);
	debugfs_create_u32("suspend_late_ms", 0600, wltest_dir,
			   &wltest_suspend_late_ms);
	debugfs_create_u32("prepare_ms", 0600, wltest_dir, &wltest_prepare_ms);
	return 0;

err_pdev:
	platform_device_unregister(wltest_pdev);
err_ws:
	wakeup_source_unregister(wltest_ws);
err_idle:
	wltest_idle_unregister(idle_sources);
	return ret;
}

static void __exit wltest_exit(void)
{
	debugfs_remove(wltest_dir);
	platform_driver_unregister(&wltest_driver);
	device_init_wakeup(&wltest_pdev->dev, false);
	platform_device_unregister(wltest_pdev);
	wakeup_source_unregister(wltest_ws);
	wltest_idle_unregister(idle_sources);
}

module_init(wltest_init);
module_exit(wltest_exit);
MODULE_DESCRIPTION("Inject wakeup events on demand for wakelockd tests");
MODULE_LICENSE("GPL");
