/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * wakelockd: start-up, signals, reload and shutdown.  Two threads:
 *   main  - epoll on the socket (registrations, hang-ups = reaping, CLI
 *           requests) and a signalfd (SIGTERM/SIGINT stop, SIGHUP reload,
 *           SIGUSR1 writes the stats file);
 *   power - the suspend loop (powerloop.c), which may block for long in
 *           the kernel (wakeup_count read, suspend itself), hence its own
 *           thread so reaping never waits for it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "awake.h"
#include "critical.h"
#include "daemon.h"
#include "logind.h"
#include "log.h"
#include "presence.h"
#include "sdnotify.h"
#include "lib/wl_region.h"
#include "ledger.h"
#include "wakesrc.h"

static void to_params(const struct wld_config *c, struct power_params *p)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->state, sizeof(p->state), "%s", c->state);
	p->min_awake_ms = c->min_awake_ms;
	p->backoff_initial_ms = c->backoff_initial_ms;
	p->backoff_factor = c->backoff_factor;
	p->backoff_max_ms = c->backoff_max_ms;
	p->short_suspend_ms = c->short_suspend_ms;
	p->hibernate_after_s = c->hibernate_after_s;
	snprintf(p->pre_hook, sizeof(p->pre_hook), "%s", c->pre_suspend_hook);
	snprintf(p->post_hook, sizeof(p->post_hook), "%s", c->post_resume_hook);
	p->hook_timeout_ms = c->hook_timeout_ms;
	p->wake_reasons = c->wake_reasons;
}

/* SIGHUP or `wakelock reload`: all or nothing. */
int daemon_reload(struct daemon *d)
{
	struct wld_config n;
	struct power_params p;
	char err[512];

	sd_notify_send("RELOADING=1");
	if (config_build(d->argc, d->argv, &n, err, sizeof(err)) != CONFIG_OK) {
		log_error("reload: %s; keeping the previous configuration", err);
		sd_notify_send("READY=1");
		return -EINVAL;
	}
	if (sysfs_reconfigure(d->be, n.state, n.mem_sleep, n.wake_reasons, err, sizeof(err)) < 0) {
		log_error("reload: %s; keeping the previous configuration", err);
		sysfs_reconfigure(d->be, d->cfg.state, d->cfg.mem_sleep, d->cfg.wake_reasons,
		                  err, sizeof(err));
		sd_notify_send("READY=1");
		return -EINVAL;
	}
	if (n.ledger_records != d->cfg.ledger_records)
		log_warn("reload: [ledger] records changes only on restart");
	char real[PATH_MAX];

	/* Ours is resolved (open_run_dir). */
	if (realpath(n.run_dir, real))
		snprintf(n.run_dir, sizeof(n.run_dir), "%s", real);
	if (strcmp(n.root, d->cfg.root) || strcmp(n.run_dir, d->cfg.run_dir) ||
	    strcmp(n.group, d->cfg.group) ||
	    strcmp(n.stats_file, d->cfg.stats_file) || n.use_syslog != d->cfg.use_syslog)
		log_warn("reload: paths, group and log target change only on restart");
	/* The awake sources were made at start with these. */
	if (n.policy_mode != d->cfg.policy_mode ||
	    n.display_off_delay_ms != d->cfg.display_off_delay_ms ||
	    n.idle_timeout_ms != d->cfg.idle_timeout_ms || n.lid_closed != d->cfg.lid_closed ||
	    config_session_idle(&n) != config_session_idle(&d->cfg) ||
	    config_idle_inhibitors(&n) != config_idle_inhibitors(&d->cfg) ||
	    n.on_ac != d->cfg.on_ac || n.idle_timeout_ac_ms != d->cfg.idle_timeout_ac_ms ||
	    n.critical_percent != d->cfg.critical_percent ||
	    n.critical_action != d->cfg.critical_action || n.ngrace != d->cfg.ngrace ||
	    memcmp(n.grace, d->cfg.grace, sizeof(n.grace)))
		log_warn("reload: [policy] and [wake_grace] change only on restart");
	n.policy_mode = d->cfg.policy_mode;
	n.display_off_delay_ms = d->cfg.display_off_delay_ms;
	n.idle_timeout_ms = d->cfg.idle_timeout_ms;
	n.lid_closed = d->cfg.lid_closed;
	n.session_idle = d->cfg.session_idle;
	n.idle_inhibitors = d->cfg.idle_inhibitors;
	n.on_ac = d->cfg.on_ac;
	n.idle_timeout_ac_ms = d->cfg.idle_timeout_ac_ms;
	n.critical_percent = d->cfg.critical_percent;
	n.critical_action = d->cfg.critical_action;
	n.ngrace = d->cfg.ngrace;
	memcpy(n.grace, d->cfg.grace, sizeof(n.grace));
	/* Keep what cannot change at run time. */
	memcpy(n.root, d->cfg.root, sizeof(n.root));
	n.ledger_records = d->cfg.ledger_records;
	memcpy(n.run_dir, d->cfg.run_dir, sizeof(n.run_dir));
	memcpy(n.stats_file, d->cfg.stats_file, sizeof(n.stats_file));
	memcpy(n.group, d->cfg.group, sizeof(n.group));
	n.gid = d->cfg.gid;
	n.have_gid = d->cfg.have_gid;
	n.use_syslog = d->cfg.use_syslog;
	n.foreground = d->cfg.foreground;
	d->cfg = n;
	log_set_level(n.log_level);
	to_params(&n, &p);
	powerloop_set_params(&d->pl, &p);
	server_apply_policy(d);
	alarms_set_timeout(d);
	/* Follows a changed [logind] mode; a bus that was missing or lost
	 * is looked for again. */
	logind_open(d);
	ledger_set_window(d->ledger, n.claim_window_ms);
	log_info("configuration reloaded (state %s, min_awake %u ms, %u denied)", n.state,
	         n.min_awake_ms, n.ndeny);
	sd_notify_send("READY=1");
	return 0;
}

static void after_cycle(struct powerloop *pl, void *arg)
{
	struct daemon *d = arg;

	(void)pl;
	stats_write_file(d->stats_path, d->seg.hdr);
}

/* logind's inhibitors as an awake source: their holds are daemon-owned
 * slots (logind.c); what the source adds is the last look, asking logind
 * once more after the count is written. */
static int logind_src_last_look(struct awake_source *s)
{
	return logind_last_look(s->priv);
}

/* logind's sessions and idle inhibitors (logind_presence.c), where
 * [policy] session_idle and idle_inhibitors want them. */
static void add_logind_presence(struct daemon *d)
{
	struct awake_source *s[2] = { logind_presence_session_source(d->presence),
	                              logind_presence_inhibit_source(d->presence) };

	for (unsigned i = 0; i < 2; i++)
		if (s[i] && awake_add(&d->pl, s[i]) < 0)
			log_warn("%s: more than %u awake sources: it keeps nothing awake", s[i]->name,
			         (unsigned)WL_MAX_SOURCES);
}

/* Sources that live as long as the daemon (freed at stop). */
static struct awake_source *power, *grace;

static void *power_main(void *arg)
{
	struct daemon *d = arg;
	sigset_t ss;
	int r;

	sigemptyset(&ss);
	sigaddset(&ss, SIGUSR2);
	pthread_sigmask(SIG_UNBLOCK, &ss, NULL);
	sysfs_set_thread(d->be);
	r = powerloop_run(&d->pl);
	if (r < 0) {
		log_error("power loop failed: %s; stopping", strerror(-r));
		kill(getpid(), SIGTERM);
	}
	return NULL;
}

/*
 * The run directory holds the socket and the pid file, which root
 * creates, writes and locks: whoever can write the directory, or any
 * directory above it, can swap them (a symlink that makes root write
 * elsewhere, a socket of their own that root's `wakelock list` then talks
 * to, a pid file they lock to stop start-up).  So each directory on the
 * way, symlinks resolved, must be root's or ours and not writable by
 * others (but for a sticky one like /tmp: others cannot rename what is
 * ours there), and the run dir itself not writable by group or others at
 * all.  It is opened component by component without following links, and
 * the pid file is created under that descriptor.
 */
static int run_dir_fd = -1;
/* [policy] mode = laptop: input activity and the lid, else NULL. */
static struct awake_source *activity;

static int trusted_dir(int fd, const char *path, int last, char *err, size_t errlen)
{
	uid_t me = geteuid();
	struct stat st;

	if (fstat(fd, &st) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -errno;
	}
	if ((st.st_uid != 0 && st.st_uid != me) ||
	    ((st.st_mode & 022) && (last || !(st.st_mode & S_ISVTX)))) {
		snprintf(err, errlen, "%s %s is owned by uid %u with mode %04o: it must be owned "
		         "by root%s and not writable by group or others%s",
		         last ? "run dir" : "directory", path, (unsigned)st.st_uid,
		         (unsigned)(st.st_mode & 07777), me ? " or by this daemon's uid" : "",
		         last ? "" : " (unless sticky)");
		return -EPERM;
	}
	return 0;
}

static int open_run_dir(struct daemon *d, char *err, size_t errlen)
{
	char real[PATH_MAX], left[PATH_MAX], walked[PATH_MAX];
	char *p, *next;
	int fd, r;

	if (mkdir(d->cfg.run_dir, 0755) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "%s: %s", d->cfg.run_dir, strerror(errno));
		return -errno;
	}
	if (!realpath(d->cfg.run_dir, real)) {
		snprintf(err, errlen, "%s: %s", d->cfg.run_dir, strerror(errno));
		return -errno;
	}
	fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || (r = trusted_dir(fd, "/", !real[1], err, errlen)) < 0) {
		if (fd < 0)
			snprintf(err, errlen, "/: %s", strerror(errno));
		r = fd < 0 ? -errno : r;
		if (fd >= 0)
			close(fd);
		return r;
	}
	walked[0] = 0;
	memcpy(left, real, sizeof(left));
	for (p = left + 1; *p; p = next) {
		int sub;

		next = strchrnul(p, '/');
		if (*next)
			*next++ = 0;
		snprintf(walked + strlen(walked), sizeof(walked) - strlen(walked), "/%s", p);
		/* No link is followed here: realpath() resolved them all, so
		 * one now is a swap since. */
		sub = openat(fd, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		if (sub < 0) {
			snprintf(err, errlen, "%s: %s", walked, strerror(errno));
			return -errno;
		}
		fd = sub;
		r = trusted_dir(fd, walked, !*next, err, errlen);
		if (r < 0) {
			close(fd);
			return r;
		}
	}
	/* The socket (server.c) is bound under the path just checked. */
	snprintf(d->cfg.run_dir, sizeof(d->cfg.run_dir), "%s", real);
	run_dir_fd = fd;
	return 0;
}

/*
 * One instance per run directory: an flock()ed pid file.  Mode 0600:
 * flock() needs no write access, so a file others may open for reading
 * is one they may lock, and stop us from starting.
 */
static int lock_pidfile(struct daemon *d, char *err, size_t errlen)
{
	struct stat st;
	char buf[32];
	int n;

	snprintf(d->pid_path, sizeof(d->pid_path), "%s/wakelockd.pid", d->cfg.run_dir);
	d->pid_fd = openat(run_dir_fd, "wakelockd.pid",
	                   O_RDWR | O_CREAT | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
	if (d->pid_fd < 0) {
		snprintf(err, errlen, "%s: %s", d->pid_path,
		         errno == ELOOP ? "is a symbolic link" : strerror(errno));
		return -errno;
	}
	if (fstat(d->pid_fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1 ||
	    st.st_uid != geteuid()) {
		snprintf(err, errlen, "%s: not a regular file of ours with one link", d->pid_path);
		close(d->pid_fd);
		d->pid_fd = -1;
		return -EPERM;
	}
	/* One an earlier version left readable. */
	if ((st.st_mode & 077) && fchmod(d->pid_fd, 0600) < 0)
		log_warn("cannot make %s private: %s", d->pid_path, strerror(errno));
	if (flock(d->pid_fd, LOCK_EX | LOCK_NB) < 0) {
		n = (int)pread(d->pid_fd, buf, sizeof(buf) - 1, 0);
		buf[n > 0 ? n : 0] = 0;
		buf[strcspn(buf, "\n")] = 0;
		snprintf(err, errlen, "another wakelockd is running (pid %s, lock %s)",
		         buf[0] ? buf : "?", d->pid_path);
		close(d->pid_fd);
		d->pid_fd = -1;
		return -EEXIST;
	}
	/* A clean exit removes the file; one left with a pid in it means the
	 * previous daemon died (kill -9, crash) with clients holding. */
	n = (int)pread(d->pid_fd, buf, sizeof(buf) - 1, 0);
	d->unclean_start = n > 0;
	n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	if (ftruncate(d->pid_fd, 0) < 0 || pwrite(d->pid_fd, buf, (size_t)n, 0) < 0)
		log_warn("cannot write %s", d->pid_path);
	return 0;
}

static void unlink_pidfile(void)
{
	if (run_dir_fd >= 0)
		unlinkat(run_dir_fd, "wakelockd.pid", 0);
}

/* Detach, but let the parent exit only once we are ready (or failed), so
 * `wakelockd && wakelock status` works. */
static int daemonize(int *ready_fd)
{
	int p[2];
	char c = 1;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid > 0) {
		close(p[1]);
		_exit(read(p[0], &c, 1) == 1 && c == 0 ? 0 : 1);
	}
	close(p[0]);
	setsid();
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		close(null);
	}
	*ready_fd = p[1];
	return 0;
}

static void ready(int *ready_fd)
{
	char c = 0;

	sd_notify_send("READY=1\nSTATUS=waiting for holds to clear");
	if (*ready_fd >= 0) {
		if (write(*ready_fd, &c, 1) < 0) { /* parent gone: nothing to tell */ }
		close(*ready_fd);
		*ready_fd = -1;
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (null >= 0) {
			dup2(null, 2);
			close(null);
		}
	}
}

/* One descriptor per connection (WLD_MAX_CONNS) and per wake alarm, one
 * per kernel wakeup source the ledger keeps open (wakesrc.c), plus our
 * own: if the default (often 1024) is short, raise the limit, the hard
 * one too when we may (root), else the soft one as far as the hard one. */
static void raise_nofile(void)
{
	struct rlimit rl;
	rlim_t want = WLD_MAX_CONNS + WL_MAX_CLIENTS * WAKELOCK_MAX_ALARMS_PER_CLIENT +
	              WAKESRC_MAX + 64;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= want)
		return;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want) {
		/* Root (CAP_SYS_RESOURCE) may raise the hard limit too. */
		struct rlimit both = { .rlim_cur = want, .rlim_max = want };

		if (setrlimit(RLIMIT_NOFILE, &both) == 0)
			return;
	}
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= want ? want : rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur < want)
		log_warn("descriptor limit %llu: fewer than %u clients can register, or "
		         "fewer than %u alarms each", (unsigned long long)rl.rlim_cur,
		         (unsigned)WL_MAX_CLIENTS, (unsigned)WAKELOCK_MAX_ALARMS_PER_CLIENT);
}

static int start(struct daemon *d, char *err, size_t errlen)
{
	struct power_params p;
	sigset_t ss;
	int r;

	raise_nofile();

	r = open_run_dir(d, err, errlen);
	if (r < 0)
		return r;
	r = lock_pidfile(d, err, errlen);
	if (r < 0)
		return r;
	r = sysfs_open(d->cfg.root[0] ? d->cfg.root : "/", d->cfg.state, d->cfg.mem_sleep,
	               d->cfg.wake_reasons, &d->be, err, errlen);
	if (r < 0)
		return r;
	/* An anonymous memfd, sealed: no path anyone could squat or open. */
	r = wl_seg_create(&d->seg, WL_MAX_CLIENTS);
	if (r < 0) {
		snprintf(err, errlen, "cannot create the shared segment (memfd): %s", strerror(-r));
		return r;
	}
	d->clk = real_clock_new();
	if (!d->clk)
		return -ENOMEM;

	sigemptyset(&ss);
	sigaddset(&ss, SIGTERM);
	sigaddset(&ss, SIGINT);
	sigaddset(&ss, SIGHUP);
	sigaddset(&ss, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &ss, NULL);
	signal(SIGPIPE, SIG_IGN);
	d->sig_fd = signalfd(-1, &ss, SFD_CLOEXEC | SFD_NONBLOCK);
	d->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (d->sig_fd < 0 || d->epfd < 0) {
		snprintf(err, errlen, "signalfd/epoll: %s", strerror(errno));
		return -errno;
	}
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = IDX_SIGNAL };
	epoll_ctl(d->epfd, EPOLL_CTL_ADD, d->sig_fd, &ev);
	snprintf(d->stats_path, sizeof(d->stats_path), "%s", d->cfg.stats_file);
	to_params(&d->cfg, &p);
	r = powerloop_init(&d->pl, d->seg.hdr, d->regions, d->be, d->clk, &p);
	if (r < 0) {
		snprintf(err, errlen, "eventfd: %s", strerror(-r));
		return r;
	}
	/* A fixed cost, paid once (docs/ledger.md: 2.33 MiB for 4096). */
	d->ledger = ledger_new(d->cfg.ledger_records, d->cfg.claim_window_ms);
	if (!d->ledger || powerloop_set_ledger(&d->pl, d->ledger) < 0) {
		snprintf(err, errlen, "wake ledger of %u records: out of memory",
		         d->cfg.ledger_records);
		return -ENOMEM;
	}
	r = server_open(d, err, errlen);
	if (r < 0)
		return r;
	r = alarms_open(d, err, errlen);
	if (r < 0)
		return r;
	d->pl.after_cycle = after_cycle;
	d->pl.arg = d;
	/* logind's word on a person: made before logind_open, which follows
	 * it on the bus; its sources are registered below. */
	d->presence = logind_presence_new(d, config_session_idle(&d->cfg),
	                                  config_idle_inhibitors(&d->cfg));
	if (!d->presence && (config_session_idle(&d->cfg) || config_idle_inhibitors(&d->cfg))) {
		snprintf(err, errlen, "logind presence: out of memory");
		return -ENOMEM;
	}
	/* Before the power thread starts: it reads the mirror's state. */
	r = logind_open(d);
	if (r < 0) {
		snprintf(err, errlen, "logind: %s", strerror(-r));
		return r;
	}
	d->logind_src.name = "logind";
	d->logind_src.last_look = logind_src_last_look;
	d->logind_src.fd = -1;
	d->logind_src.priv = d;
	awake_add(&d->pl, &d->logind_src);
	add_logind_presence(d);
	d->seg.hdr->policy_mode = (uint32_t)d->cfg.policy_mode;
	if (d->cfg.policy_mode == POLICY_PHONE || d->cfg.policy_mode == POLICY_LAPTOP) {
		d->display = display_source_new(d->cfg.root[0] ? d->cfg.root : "/",
		                                d->cfg.display_off_delay_ms);
		if (!d->display) {
			snprintf(err, errlen, "display source: out of memory");
			return -ENOMEM;
		}
		awake_add(&d->pl, d->display);
	}
	/* The power supply: holds with on_ac = never, sets the activity's
	 * timeout with idle, finds the critical battery level (its fd is the
	 * main thread's: on_power); shown in every mode but appliance.  Made
	 * before the activity, which starts from its AC state. */
	if (d->cfg.on_ac != ON_AC_OPPORTUNISTIC || d->cfg.policy_mode != POLICY_APPLIANCE ||
	    (d->cfg.critical_percent && d->cfg.critical_action != CRITICAL_NONE)) {
		struct power_supply_params pp = {
			.on_ac = d->cfg.on_ac,
			.critical_percent = d->cfg.critical_percent,
			.critical_action = d->cfg.critical_action,
		};
		struct epoll_event pev = { .events = EPOLLIN, .data.u32 = IDX_POWER };

		power = power_supply_source_new(d->cfg.root[0] ? d->cfg.root : "/", &pp);
		if (!power) {
			snprintf(err, errlen, "power supply source: out of memory");
			return -ENOMEM;
		}
		if (power_supply_fd(power) >= 0)
			epoll_ctl(d->epfd, EPOLL_CTL_ADD, power_supply_fd(power), &pev);
	}
	/* Laptop: a person at the keys, and the lid (daemon/activity.c).  A
	 * phone with on_ac = idle: activity counts on AC only, the lid not
	 * at all (a phone's cover switch is no laptop lid). */
	if (d->cfg.policy_mode == POLICY_LAPTOP ||
	    (d->cfg.policy_mode == POLICY_PHONE && d->cfg.on_ac == ON_AC_IDLE)) {
		int laptop = d->cfg.policy_mode == POLICY_LAPTOP;
		unsigned ac_ms = d->cfg.on_ac == ON_AC_IDLE ? d->cfg.idle_timeout_ac_ms :
		                 d->cfg.idle_timeout_ms;

		activity = activity_source_new(d->cfg.root[0] ? d->cfg.root : "/",
		                               laptop ? d->cfg.idle_timeout_ms : 0, ac_ms,
		                               laptop ? d->cfg.lid_closed : LID_IGNORE);
		if (!activity) {
			snprintf(err, errlen, "activity source: %s", strerror(errno));
			return -ENOMEM;
		}
		awake_add(&d->pl, activity);
		if (laptop)
			awake_add(&d->pl, activity_lid_source(activity));
	}
	/* Past WL_MAX_SOURCES on_ac = never holds nothing; the critical
	 * level, on the main thread, is watched all the same. */
	if (power && awake_add(&d->pl, power) < 0)
		log_warn("power: more than %u awake sources: on_ac = never keeps nothing awake",
		         (unsigned)WL_MAX_SOURCES);
	/* A wake that needs time to deliver (daemon/wake_grace.c). */
	if (d->cfg.ngrace) {
		grace = wake_grace_source_new(d->cfg.grace, d->cfg.ngrace, d->ledger);
		if (!grace) {
			snprintf(err, errlen, "wake grace: out of memory");
			return -ENOMEM;
		}
		awake_add(&d->pl, grace);
	}
	d->pl.suspend_via = logind_suspend;
	d->pl.suspend_via_arg = d;
	/* Every start, not only after an unclean exit: the pid file that
	 * tells of one is gone when systemd removed the run dir (`systemctl
	 * stop`, then start), and the clients that held come back all the
	 * same (docs/design.md §3). */
	unsigned grace = d->cfg.start_grace_ms;

	if (d->unclean_start) {
		if (grace < WLD_RESTART_GRACE_MS)
			grace = WLD_RESTART_GRACE_MS;
		log_warn("previous wakelockd did not exit cleanly: staying awake %u ms for its "
		         "clients to re-register", grace);
	} else if (grace) {
		log_info("staying awake %u ms for clients of a previous daemon to re-register",
		         grace);
	}
	d->pl.start_grace_ns = (uint64_t)grace * 1000000u;
	r = pthread_create(&d->power_thread, NULL, power_main, d);
	if (r) {
		snprintf(err, errlen, "pthread_create: %s", strerror(r));
		return -r;
	}
	return 0;
}

static void stop(struct daemon *d)
{
	struct timespec ts;
	int keep_pid_file = 0;

	sd_notify_send("STOPPING=1");
	powerloop_request_stop(&d->pl);
	/* The power thread may sit in a blocking read of wakeup_count: keep
	 * interrupting it until it has left. */
	for (;;) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 50000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		if (pthread_timedjoin_np(d->power_thread, NULL, &ts) == 0)
			break;
		powerloop_request_stop(&d->pl);
	}
	stats_write_file(d->stats_path, d->seg.hdr);
	/* Clients still registered will re-register with our successor
	 * (lib/watch.c): leave the pid file, so that it waits for them as
	 * after a crash, also across a clean restart. */
	for (unsigned i = 0; i < WLD_MAX_CONNS; i++)
		if (d->conns[i].fd >= 0 && d->conns[i].slot >= 0)
			keep_pid_file = 1;
	server_close(d);
	alarms_close(d);
	logind_close(d);
	/* Clients waiting on our phase, or about to, see that we are gone. */
	__atomic_store_n(&d->seg.hdr->dstate, WL_D_STOPPED, __ATOMIC_RELAXED);
	__atomic_store_n(&d->seg.hdr->gone, 1, __ATOMIC_SEQ_CST);
	wl_phase_wake(d->seg.hdr);
	for (unsigned i = 0; i < WL_MAX_CLIENTS; i++)
		wl_region_unmap(d->regions[i]);
	wl_seg_unmap(&d->seg);
	powerloop_destroy(&d->pl);
	ledger_free(d->ledger);
	real_clock_free(d->clk);
	/* The power thread has stopped: its kept descriptors go first. */
	wakesrc_forget();
	sysfs_close(d->be);
	display_source_free(d->display);
	power_supply_source_free(power);
	wake_grace_source_free(grace);
	activity_source_free(activity);
	logind_presence_free(d->presence);
	if (!keep_pid_file)
		unlink_pidfile();
	close(d->pid_fd);
	close(run_dir_fd);
}

/* The power supply's descriptor (or, forced, at start): what changed
 * makes the loop look again; the critical battery level is acted on here,
 * on the main thread (power_supply.c says why). */
static void on_power(struct daemon *d, int force)
{
	struct power_critical c;
	int r;

	if (!power)
		return;
	r = power_supply_update(power, force, &c);
	if (r & PS_CRITICAL) {
		critical_take(d->be, d->clk, d->seg.hdr, d->ledger, &c, d->cfg.critical_percent);
		r |= PS_CHANGED;
	}
	if (r & PS_CHANGED)
		powerloop_kick(&d->pl);
}

/* Returns 1 to stop. */
static int on_signal(struct daemon *d)
{
	struct signalfd_siginfo si;

	while (read(d->sig_fd, &si, sizeof(si)) == sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGTERM:
		case SIGINT:
			log_info("signal %d: stopping", (int)si.ssi_signo);
			return 1;
		case SIGHUP:
			daemon_reload(d);
			break;
		case SIGUSR1:
			stats_write_file(d->stats_path, d->seg.hdr);
			break;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct daemon d;
	char err[512];
	int ready_fd = -1, r;

	d.argc = argc;
	d.argv = argv;
	d.listen_fd = d.epfd = d.sig_fd = d.pid_fd = d.alarm_fd = -1;
	r = config_build(argc, argv, &d.cfg, err, sizeof(err));
	if (r == CONFIG_EXIT)
		return 0;
	if (r != CONFIG_OK) {
		fprintf(stderr, "wakelockd: %s\n", err);
		return 2;
	}
	if (d.cfg.check_only) {
		printf("configuration OK\n");
		return 0;
	}
	log_setup(d.cfg.log_level, d.cfg.use_syslog);
	if (!d.cfg.foreground && daemonize(&ready_fd) < 0) {
		fprintf(stderr, "wakelockd: cannot detach: %s\n", strerror(errno));
		return 1;
	}
	r = start(&d, err, sizeof(err));
	if (r < 0) {
		log_error("cannot start: %s", err);
		if (d.pid_fd >= 0 && r != -EEXIST)
			unlink_pidfile();
		return 1;
	}
	log_info("running: state %s%s%s, socket %s", d.cfg.state,
	         d.cfg.mem_sleep[0] ? "/" : "", d.cfg.mem_sleep, d.sock_path);
	ready(&ready_fd);
	/* A battery already critical at start (no uevent tells of it). */
	on_power(&d, 1);

	for (;;) {
		struct epoll_event evs[32];
		int n = epoll_wait(d.epfd, evs, 32, logind_timeout_ms(&d));

		if (n < 0 && errno != EINTR) {
			log_error("epoll_wait: %s", strerror(errno));
			break;
		}
		for (int i = 0; i < n; i++) {
			if (evs[i].data.u32 == IDX_SIGNAL) {
				if (on_signal(&d))
					goto out;
			} else if (evs[i].data.u32 == IDX_LOGIND) {
				logind_dispatch(&d);
			} else if (evs[i].data.u32 == IDX_POWER) {
				on_power(&d, 0);
			} else {
				server_event(&d, evs[i].data.u32, evs[i].events);
			}
		}
		/* sd-bus's own timeouts (a method call without reply). */
		if (n == 0)
			logind_dispatch(&d);
	}
out:
	stop(&d);
	log_info("stopped");
	return 0;
}
