/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the power loop needs from the kernel and from time, as two small
 * interfaces, so the loop runs unchanged against /sys/power (sysfs.c)
 * or an in-process fake of the kernel's rules (tests/unit/fake_power.c).
 */
#ifndef WLD_POWER_H
#define WLD_POWER_H

#include <stddef.h>
#include <stdint.h>

struct power_backend {
	/* Step 1: may block while kernel events are in progress; -EINTR
	 * when interrupted (stop requested). */
	int (*read_count)(struct power_backend *be, unsigned *count);
	/* Step 5: -EINVAL when the count is stale or events are in progress. */
	int (*write_count)(struct power_backend *be, unsigned count);
	/* Step 6: enter the sleep state ("freeze", "mem", "disk"); returns
	 * on resume; 0 or -errno. */
	int (*suspend)(struct power_backend *be, const char *state);
	/* Optional: called just before suspend() / after it returned 0. */
	void (*before_suspend)(struct power_backend *be);
	void (*wake_reason)(struct power_backend *be, char *buf, size_t len);
	/* Make a blocked read_count() return -EINTR (called from another thread). */
	void (*interrupt)(struct power_backend *be);
	/* The critical battery level's last resort (daemon/critical.c): sync
	 * and power off.  Returns only if it failed (-errno), or on a backend
	 * that only records it (a test root, tests/unit/fake_power.c): 0.
	 * NULL: cannot power off. */
	int (*poweroff)(struct power_backend *be);
	/* Optional: wake a suspended system at CLOCK_BOOTTIME boot_ns (0:
	 * disarm); 0 or -errno (no RTC alarm, no CAP_WAKE_ALARM).  One such
	 * wake, the daemon's own (hibernate_after.h). */
	int (*arm_wake)(struct power_backend *be, uint64_t boot_ns);

	/* --- The wake ledger's view of the kernel (daemon/wakesrc.c) -------
	 * Optional; NULL reads as "the kernel has no such file".
	 * read_attr: a small file at rel ("/sys/power/pm_wakeup_irq", relative
	 * to the backend's root) into buf, NUL-terminated, cut at the first
	 * newline and to len - 1 bytes; its length or -errno (-ENOENT: no such
	 * file on this kernel).  list_dir: fn(arg, entry, ino) for each entry
	 * of the directory rel but "." names, in no particular order, until fn
	 * returns nonzero; 0 or -errno.  ino: the entry's inode number as the
	 * listing gives it (d_ino), 0 if the backend cannot tell: an entry
	 * listed again with the same nonzero ino is the same file, which
	 * lets wakesrc.c keep a source's name instead of reading it again
	 * (sysfs gives a re-created directory a new inode). */
	int (*read_attr)(struct power_backend *be, const char *rel, char *buf, size_t len);
	int (*list_dir)(struct power_backend *be, const char *rel,
	                int (*fn)(void *arg, const char *entry, uint64_t ino), void *arg);
	/* Optional: rel opened for reading (O_RDONLY | O_CLOEXEC), a
	 * descriptor or -errno, to be read again and again with pread() at
	 * offset 0: a sysfs attribute shows its value anew at each read from
	 * the start (one system call instead of open, read and close), and
	 * fails with ENODEV once its object is gone.  NULL: read_attr. */
	int (*open_attr)(struct power_backend *be, const char *rel);
	/* Optional: like read_attr, but the whole file, newlines kept (a
	 * list, one entry per line); used where open_attr is NULL. */
	int (*read_lines)(struct power_backend *be, const char *rel, char *buf, size_t len);
};

struct power_clock {
	uint64_t (*mono_ns)(struct power_clock *clk);
	uint64_t (*boot_ns)(struct power_clock *clk);
	/* Sleep ns; returns early with -EINTR after wake(). */
	int (*sleep_ns)(struct power_clock *clk, uint64_t ns);
	void (*wake)(struct power_clock *clk);
};

/* The real clock (clock.c): CLOCK_MONOTONIC / CLOCK_BOOTTIME. */
struct power_clock *real_clock_new(void);
void real_clock_free(struct power_clock *clk);

/* sysfs.c */
struct sysfs_backend;
int sysfs_open(const char *root, const char *state, const char *mem_sleep, int wake_reasons,
               struct power_backend **out, char *err, size_t errlen);
/* After a reload: check the state is offered, select mem_sleep. */
int sysfs_reconfigure(struct power_backend *be, const char *state, const char *mem_sleep,
                      int wake_reasons, char *err, size_t errlen);
void sysfs_close(struct power_backend *be);
/* A small sysfs file into buf (NUL-terminated, its first newline cut):
 * its length, or -errno.  oflags: added to O_RDONLY | O_CLOEXEC
 * (O_NOFOLLOW for the awake sources). */
int sysfs_read_small(const char *path, char *buf, size_t len, int oflags);
/* The thread that may block in read_count (for interrupt()). */
void sysfs_set_thread(struct power_backend *be);

#endif
