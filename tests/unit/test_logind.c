/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * wakelockd following logind's sleep inhibitors, on a private bus.
 *
 * The real dbus-daemon runs with a configuration of our own; a scripted
 * org.freedesktop.login1 (a thread of this test, sd-bus) answers
 * ListInhibitors with whatever a case puts in it, announces changes as
 * logind does (PropertiesChanged on the Manager), or keeps quiet about
 * them, and can leave and rejoin the bus.  wakelockd itself runs against
 * a fake /sys (harness.c), so "suspends" are counted, not made.  The
 * guest test (tests/guest/logind-inhibit.sh) does the same with Debian's
 * elogind; here the peer can be hostile: names with control characters,
 * hundreds of inhibitors, replies of the wrong type.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include <linux/input.h>
#include <systemd/sd-bus.h>
#include "lib/wl_client.h"
#include "harness.h"

#define MAX_ENTRIES 400

struct entry {
	char what[32], who[600], why[600], mode[16];
	uint32_t uid, pid;
};

#define MAX_SESSIONS 80
#define SESSION_IFACE "org.freedesktop.login1.Session"

/* A session as the fake lists it and answers GetAll for it. */
struct fsession {
	int used;
	char id[64], path[96], cls[16], type[16], seat[16];
	int active, idle, locked, remote;
	uint64_t since;          /* IdleSinceHint: 0 = never set */
	uint32_t uid;
	int bad;                 /* Active of the wrong type */
};

/* Signals the fake's thread sends at the next command. */
enum fsig { SIG_NONE, SIG_SESSION_NEW, SIG_SESSION_REMOVED, SIG_SESSION_CHANGED };

/* The scripted logind: its thread owns the bus connection. */
struct fake {
	struct fsession ses[MAX_SESSIONS];
	int sig;                  /* enum fsig, for session sig_session */
	unsigned sig_session;
	unsigned inhibits;        /* Inhibit calls answered */
	char inhibit_args[160];   /* the last one's what/who/why/mode */
	int lid_rd;               /* read end of the last inhibitor's pipe, -1 */
	pthread_t th;
	sd_bus *bus;
	int cmd_fd;               /* eventfd: the test asks for something */
	pthread_mutex_t mu;
	struct entry e[MAX_ENTRIES];
	unsigned n;
	int bad_reply;            /* answer ListInhibitors with a string */
	int announce;             /* emit PropertiesChanged at the next command */
	int own;                  /* 1: own the name, 0: release it */
	int owning;
	int stop;
	unsigned lists;           /* ListInhibitors calls answered */
	unsigned suspends;        /* Suspend calls answered */
};

struct env {
	struct hd d;
	char busdir[64], busaddr[128];
	pid_t dbus;
	struct fake f;
};

static int method_list(sd_bus_message *m, void *ud, sd_bus_error *err)
{
	struct fake *f = ud;
	sd_bus_message *reply = NULL;
	int r;

	(void)err;
	r = sd_bus_message_new_method_return(m, &reply);
	pthread_mutex_lock(&f->mu);
	if (r >= 0 && f->bad_reply) {
		r = sd_bus_message_append(reply, "s", "not an array");
	} else if (r >= 0) {
		r = sd_bus_message_open_container(reply, 'a', "(ssssuu)");
		for (unsigned i = 0; r >= 0 && i < f->n; i++)
			r = sd_bus_message_append(reply, "(ssssuu)", f->e[i].what, f->e[i].who,
			                          f->e[i].why, f->e[i].mode, f->e[i].uid, f->e[i].pid);
		if (r >= 0)
			r = sd_bus_message_close_container(reply);
	}
	f->lists++;
	pthread_mutex_unlock(&f->mu);
	if (r >= 0)
		r = sd_bus_send(NULL, reply, NULL);
	sd_bus_message_unref(reply);
	return r < 0 ? r : 1;
}

/* A plain object callback, not a vtable: sd-bus would refuse to send a
 * reply whose type differs from the declared one, and a hostile logind
 * is exactly what test_bad_reply needs. */
/* Suspend as logind answers it: at once, then PrepareForSleep(true),
 * the sleep (here: nothing), PrepareForSleep(false). */
static int method_suspend(sd_bus_message *m, struct fake *f)
{
	int r = sd_bus_reply_method_return(m, NULL);

	pthread_mutex_lock(&f->mu);
	f->suspends++;
	pthread_mutex_unlock(&f->mu);
	for (int start = 1; r >= 0 && start >= 0; start--)
		r = sd_bus_emit_signal(f->bus, "/org/freedesktop/login1",
		                       "org.freedesktop.login1.Manager", "PrepareForSleep", "b",
		                       start);
	return r < 0 ? r : 1;
}

static int method_list_sessions(sd_bus_message *m, struct fake *f)
{
	sd_bus_message *reply = NULL;
	int r = sd_bus_message_new_method_return(m, &reply);

	if (r >= 0)
		r = sd_bus_message_open_container(reply, 'a', "(susso)");
	pthread_mutex_lock(&f->mu);
	for (unsigned i = 0; r >= 0 && i < MAX_SESSIONS; i++)
		if (f->ses[i].used)
			r = sd_bus_message_append(reply, "(susso)", f->ses[i].id, f->ses[i].uid,
			                          "user", f->ses[i].seat, f->ses[i].path);
	pthread_mutex_unlock(&f->mu);
	if (r >= 0)
		r = sd_bus_message_close_container(reply);
	if (r >= 0)
		r = sd_bus_send(NULL, reply, NULL);
	sd_bus_message_unref(reply);
	return r < 0 ? r : 1;
}

/* Inhibit as logind answers it: a descriptor whose closing ends the
 * inhibitor; the fake keeps the other end to see when that happens. */
static int method_inhibit(sd_bus_message *m, struct fake *f)
{
	const char *what, *who, *why, *mode;
	int p[2], r;

	r = sd_bus_message_read(m, "ssss", &what, &who, &why, &mode);
	if (r < 0 || pipe2(p, O_CLOEXEC) < 0)
		return sd_bus_reply_method_errorf(m, SD_BUS_ERROR_INVALID_ARGS, "bad Inhibit");
	pthread_mutex_lock(&f->mu);
	f->inhibits++;
	snprintf(f->inhibit_args, sizeof(f->inhibit_args), "%s/%s/%s/%s", what, who, why, mode);
	if (f->lid_rd >= 0)
		close(f->lid_rd);
	f->lid_rd = p[0];
	pthread_mutex_unlock(&f->mu);
	r = sd_bus_reply_method_return(m, "h", p[1]);
	close(p[1]);
	return r < 0 ? r : 1;
}

static int on_object(sd_bus_message *m, void *ud, sd_bus_error *err)
{
	if (sd_bus_message_is_method_call(m, "org.freedesktop.login1.Manager", "ListInhibitors"))
		return method_list(m, ud, err);
	if (sd_bus_message_is_method_call(m, "org.freedesktop.login1.Manager", "Suspend"))
		return method_suspend(m, ud);
	if (sd_bus_message_is_method_call(m, "org.freedesktop.login1.Manager", "ListSessions"))
		return method_list_sessions(m, ud);
	if (sd_bus_message_is_method_call(m, "org.freedesktop.login1.Manager", "Inhibit"))
		return method_inhibit(m, ud);
	return 0;
}

static int append_session(sd_bus_message *r, const struct fsession *s)
{
	int k = sd_bus_message_open_container(r, 'a', "{sv}");

	if (k >= 0 && s->bad)
		k = sd_bus_message_append(r, "{sv}", "Active", "s", "yes");
	else if (k >= 0)
		k = sd_bus_message_append(r, "{sv}", "Active", "b", s->active);
	if (k >= 0)
		k = sd_bus_message_append(r, "{sv}{sv}{sv}{sv}{sv}", "IdleHint", "b", s->idle,
		                          "IdleSinceHint", "t", s->since, "IdleSinceHintMonotonic",
		                          "t", s->since, "Class", "s", s->cls, "Type", "s", s->type);
	if (k >= 0)
		k = sd_bus_message_append(r, "{sv}", "LockedHint", "b", s->locked);
	if (k >= 0)
		k = sd_bus_message_append(r, "{sv}{sv}{sv}{sv}", "Seat", "(so)", s->seat,
		                          "/org/freedesktop/login1/seat/x", "User", "(uo)", s->uid,
		                          "/org/freedesktop/login1/user/x", "Remote", "b", s->remote,
		                          "Name", "s", "someone");
	if (k >= 0)
		k = sd_bus_message_close_container(r);
	return k;
}

/* GetAll of a session object (a fallback under .../session). */
static int on_session(sd_bus_message *m, void *ud, sd_bus_error *err)
{
	struct fake *f = ud;
	sd_bus_message *reply = NULL;
	const char *path = sd_bus_message_get_path(m);
	int r = -ENOENT;

	(void)err;
	if (!sd_bus_message_is_method_call(m, "org.freedesktop.DBus.Properties", "GetAll"))
		return 0;
	pthread_mutex_lock(&f->mu);
	for (unsigned i = 0; i < MAX_SESSIONS; i++)
		if (f->ses[i].used && !strcmp(f->ses[i].path, path)) {
			r = sd_bus_message_new_method_return(m, &reply);
			if (r >= 0)
				r = append_session(reply, &f->ses[i]);
		}
	pthread_mutex_unlock(&f->mu);
	if (r == -ENOENT)
		return sd_bus_reply_method_errorf(m, SD_BUS_ERROR_UNKNOWN_OBJECT, "no session");
	if (r >= 0)
		r = sd_bus_send(NULL, reply, NULL);
	sd_bus_message_unref(reply);
	return r < 0 ? r : 1;
}

/* The session signal a case asked for (fake's thread, mu not held). */
static void send_session_signal(struct fake *f, int sig, const struct fsession *s)
{
	if (sig == SIG_SESSION_NEW || sig == SIG_SESSION_REMOVED)
		sd_bus_emit_signal(f->bus, "/org/freedesktop/login1", "org.freedesktop.login1.Manager",
		                   sig == SIG_SESSION_NEW ? "SessionNew" : "SessionRemoved", "so", s->id,
		                   s->path);
	else if (sig == SIG_SESSION_CHANGED)
		sd_bus_emit_signal(f->bus, s->path, "org.freedesktop.DBus.Properties",
		                   "PropertiesChanged", "sa{sv}as", SESSION_IFACE, 1, "IdleHint", "b",
		                   s->idle, 0);
}

static void fake_command(struct fake *f)
{
	struct fsession ses;
	uint64_t v;
	int announce, own, sig;

	if (read(f->cmd_fd, &v, sizeof(v)) < 0)
		return;
	pthread_mutex_lock(&f->mu);
	announce = f->announce;
	f->announce = 0;
	own = f->own;
	sig = f->sig;
	f->sig = SIG_NONE;
	ses = f->ses[f->sig_session];
	pthread_mutex_unlock(&f->mu);
	if (sig != SIG_NONE && f->owning)
		send_session_signal(f, sig, &ses);
	if (own && !f->owning)
		f->owning = sd_bus_request_name(f->bus, "org.freedesktop.login1", 0) >= 0;
	else if (!own && f->owning)
		f->owning = !(sd_bus_release_name(f->bus, "org.freedesktop.login1") >= 0);
	/* As elogind does at every inhibitor start and stop. */
	if (announce && f->owning)
		sd_bus_emit_signal(f->bus, "/org/freedesktop/login1",
		                   "org.freedesktop.DBus.Properties", "PropertiesChanged", "sa{sv}as",
		                   "org.freedesktop.login1.Manager", 1, "BlockInhibited", "s", "sleep",
		                   0);
	sd_bus_flush(f->bus);
}

static void *fake_main(void *arg)
{
	struct fake *f = arg;

	while (!__atomic_load_n(&f->stop, __ATOMIC_SEQ_CST)) {
		struct pollfd p[2] = {
			{ .fd = sd_bus_get_fd(f->bus), .events = (short)sd_bus_get_events(f->bus) },
			{ .fd = f->cmd_fd, .events = POLLIN },
		};

		while (sd_bus_process(f->bus, NULL) > 0)
			;
		if (poll(p, 2, 100) > 0 && (p[1].revents & POLLIN))
			fake_command(f);
	}
	return NULL;
}

/* Apply a change made under f->mu in the fake's thread. */
static void fake_poke(struct fake *f, int announce)
{
	uint64_t one = 1;

	pthread_mutex_lock(&f->mu);
	f->announce = announce;
	pthread_mutex_unlock(&f->mu);
	assert_int_equal(write(f->cmd_fd, &one, sizeof(one)), (int)sizeof(one));
	hd_sleep_ms(50);
}

static void fake_set(struct fake *f, unsigned i, const char *what, const char *who,
                     const char *why, const char *mode, uint32_t uid, uint32_t pid)
{
	struct entry *e = &f->e[i];

	snprintf(e->what, sizeof(e->what), "%s", what);
	snprintf(e->who, sizeof(e->who), "%s", who);
	snprintf(e->why, sizeof(e->why), "%s", why);
	snprintf(e->mode, sizeof(e->mode), "%s", mode);
	e->uid = uid;
	e->pid = pid;
}

/* Replace the list with one entry (n = 1) or none (what NULL), under mu. */
static void fake_one(struct fake *f, const char *what, const char *who, const char *why,
                     const char *mode, uint32_t uid, uint32_t pid, int announce)
{
	pthread_mutex_lock(&f->mu);
	f->n = 0;
	if (what)
		fake_set(f, f->n++, what, who, why, mode, uid, pid);
	pthread_mutex_unlock(&f->mu);
	fake_poke(f, announce);
}

static int start_bus(struct env *e)
{
	char conf[160], sock[128];
	FILE *c;

	strcpy(e->busdir, "/tmp/wl-bus-XXXXXX");
	if (!mkdtemp(e->busdir))
		return -1;
	snprintf(conf, sizeof(conf), "%s/bus.conf", e->busdir);
	snprintf(sock, sizeof(sock), "%s/system_bus_socket", e->busdir);
	snprintf(e->busaddr, sizeof(e->busaddr), "unix:path=%s", sock);
	c = fopen(conf, "w");
	if (!c)
		return -1;
	fprintf(c, "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN\"\n"
	           " \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n"
	           "<busconfig><type>system</type><listen>%s</listen><auth>EXTERNAL</auth>\n"
	           "<policy context=\"default\"><allow user=\"*\"/><allow own=\"*\"/>\n"
	           "<allow send_destination=\"*\"/><allow receive_sender=\"*\"/></policy>\n"
	           "</busconfig>\n", e->busaddr);
	fclose(c);
	e->dbus = fork();
	if (e->dbus == 0) {
		char log[160];
		int fd;

		/* Its complaints (the fd limit, as non-root) go to a file. */
		snprintf(log, sizeof(log), "%s/dbus.log", e->busdir);
		fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 1);
		dup2(fd, 2);
		execlp("dbus-daemon", "dbus-daemon", "--nofork", "--nopidfile", "--nosyslog",
		       "--config-file", conf, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 500; i++) {
		struct stat sb;

		if (stat(sock, &sb) == 0)
			return 0;
		hd_sleep_ms(10);
	}
	return -1;
}

static int start_fake(struct env *e)
{
	struct fake *f = &e->f;
	int r;

	f->cmd_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	r = sd_bus_new(&f->bus);
	if (r >= 0)
		r = sd_bus_set_address(f->bus, e->busaddr);
	if (r >= 0)
		r = sd_bus_set_bus_client(f->bus, 1);
	if (r >= 0)
		r = sd_bus_start(f->bus);
	if (r >= 0)
		r = sd_bus_add_object(f->bus, NULL, "/org/freedesktop/login1", on_object, f);
	if (r >= 0)
		r = sd_bus_add_fallback(f->bus, NULL, "/org/freedesktop/login1/session", on_session, f);
	if (r >= 0)
		r = sd_bus_request_name(f->bus, "org.freedesktop.login1", 0);
	if (r < 0)
		return r;
	f->own = f->owning = 1;
	return pthread_create(&f->th, NULL, fake_main, f) ? -1 : 0;
}

/* The running case's environment: its teardown stops it even when an
 * assertion ended the case early. */
static struct env *current;

/* Bus, scripted logind (with the list set by init, may be NULL), daemon. */
static struct env *start_all(void (*init)(struct fake *), const char *const *extra)
{
	struct env *e = calloc(1, sizeof(*e));

	assert_non_null(e);
	current = e;
	e->f.lid_rd = -1;
	pthread_mutex_init(&e->f.mu, NULL);
	if (start_bus(e) < 0)
		fail_msg("dbus-daemon did not start (is it installed?)");
	if (init)
		init(&e->f);
	assert_int_equal(start_fake(e), 0);
	setenv("DBUS_SYSTEM_BUS_ADDRESS", e->busaddr, 1);
	assert_int_equal(hd_prepare(&e->d), 0);
	if (hd_start(&e->d, extra) < 0)
		fail_msg("daemon did not start (log in %s)", e->d.log);
	return e;
}

/* Stop everything start_all started; the daemon's exit status. */
static int stop_env(struct env *e)
{
	struct fake *f = &e->f;
	char cmd[128];
	int st = hd_stop(&e->d);

	hd_cleanup(&e->d);
	if (f->th) {
		__atomic_store_n(&f->stop, 1, __ATOMIC_SEQ_CST);
		pthread_join(f->th, NULL);
	}
	if (f->bus)
		sd_bus_flush_close_unref(f->bus);
	if (f->cmd_fd > 0)
		close(f->cmd_fd);
	if (f->lid_rd >= 0)
		close(f->lid_rd);
	if (e->dbus > 0) {
		kill(e->dbus, SIGTERM);
		waitpid(e->dbus, NULL, 0);
	}
	if (e->busdir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", e->busdir);
		if (system(cmd)) { /* best effort */ }
	}
	free(e);
	current = NULL;
	return st;
}

/* The end of a case that went well: the daemon must stop cleanly. */
static void stop_all(struct env *e)
{
	assert_int_equal(stop_env(e), 0);
}

static int teardown(void **st)
{
	(void)st;
	if (current)
		stop_env(current);
	return 0;
}

static uint64_t successes(struct env *e)
{
	return __atomic_load_n(&hd_snap(&e->d)->dstats.successes, __ATOMIC_SEQ_CST);
}

static uint64_t aborts(struct env *e)
{
	return __atomic_load_n(&hd_snap(&e->d)->dstats.aborts, __ATOMIC_SEQ_CST);
}

/* The live slots whose name starts with "logind:". */
static unsigned logind_slots(struct env *e)
{
	const struct wl_shm_header *h = hd_snap(&e->d);
	unsigned n = 0;

	for (uint32_t i = 0; i < h->nslots; i++)
		n += h->slots[i].state == WL_SLOT_LIVE && !strncmp(h->slots[i].name, "logind:", 7);
	return n;
}

static const struct wl_shm_slot *slot_named(struct env *e, const char *name)
{
	const struct wl_shm_header *h = hd_snap(&e->d);

	for (uint32_t i = 0; i < h->nslots; i++)
		if (h->slots[i].state == WL_SLOT_LIVE && !strcmp(h->slots[i].name, name))
			return &h->slots[i];
	return NULL;
}

static int has_calls_slot(void *arg)
{
	return slot_named(arg, "logind:GNOME_Calls") != NULL;
}

static int no_logind_slots(void *arg)
{
	return logind_slots(arg) == 0;
}

struct since { struct env *e; uint64_t base; };

static int suspended_since(void *arg)
{
	struct since *s = arg;

	return successes(s->e) > s->base;
}

/* No suspend for ms milliseconds. */
static void assert_no_suspend(struct env *e, unsigned ms)
{
	uint64_t before = successes(e);

	hd_sleep_ms(ms);
	if (successes(e) != before)
		fail_msg("%llu suspends while a block inhibitor was held",
		         (unsigned long long)(successes(e) - before));
}

static void assert_suspends(struct env *e, const char *when)
{
	struct since s = { e, successes(e) };

	if (!hd_wait_for(suspended_since, &s, 3000))
		fail_msg("no suspend within 3 s %s (log %s)", when, e->d.log);
}

static void calls(struct fake *f)
{
	f->n = 1;
	fake_set(f, 0, "shutdown:sleep", "GNOME Calls", "incoming call", "block", 1000, 4242);
}

/* A block inhibitor present at start holds, is shown with logind's
 * who/why/uid/pid, and its release ends the wait at once. */
static void test_block_inhibitor_holds(void **st)
{
	struct env *e = start_all(calls, NULL);
	const struct wl_shm_slot *s;

	(void)st;
	assert_true(hd_wait_for(has_calls_slot, e, 3000));
	assert_no_suspend(e, 300);
	s = slot_named(e, "logind:GNOME_Calls");
	assert_non_null(s);
	assert_int_equal(s->pid, 4242);
	assert_int_equal(s->uid, 1000);
	assert_int_equal(s->allowed, 1);
	assert_int_equal(s->dactive, 1);
	assert_string_equal(s->holds[0].name, "incoming_call");
	assert_int_equal(s->holds[0].owner, WL_HOLD_DAEMON);
	fake_one(&e->f, NULL, NULL, NULL, NULL, 0, 0, 1);
	assert_true(hd_wait_for(no_logind_slots, e, 2000));
	assert_suspends(e, "after the release");
	stop_all(e);
}

/* Delay inhibitors, other "what"s and a name that policy denies keep
 * nothing awake; the denied one is shown, denied. */
static void mixed(struct fake *f)
{
	f->n = 4;
	fake_set(f, 0, "sleep", "player", "music", "delay", 1000, 10);
	fake_set(f, 1, "shutdown", "updater", "upgrading", "block", 0, 11);
	fake_set(f, 2, "idle:handle-lid-switch", "shell", "lid", "block", 1000, 12);
	fake_set(f, 3, "sleep", "nagware", "wants attention", "block", 1000, 13);
}

static int has_denied_slot(void *arg)
{
	return slot_named(arg, "logind:nagware") != NULL;
}

static void test_only_sleep_block_allowed_hold(void **st)
{
	const char *const extra[] = { "--deny", "logind:nagware", NULL };
	struct env *e = start_all(mixed, extra);
	const struct wl_shm_slot *s;

	(void)st;
	assert_true(hd_wait_for(has_denied_slot, e, 3000));
	assert_suspends(e, "with only delay, non-sleep and denied inhibitors");
	assert_int_equal(logind_slots(e), 1);
	s = slot_named(e, "logind:nagware");
	assert_non_null(s);
	assert_int_equal(s->allowed, 0);
	stop_all(e);
}

static int listed_once(void *arg)
{
	struct fake *f = arg;
	unsigned n;

	pthread_mutex_lock(&f->mu);
	n = f->lists;
	pthread_mutex_unlock(&f->mu);
	return n > 0;
}

/* An inhibitor logind does not announce is still seen by the last look
 * before each suspend: the daemon stops suspending, counting aborts. */
static void test_last_look_sees_unannounced(void **st)
{
	struct env *e = start_all(NULL, NULL);
	uint64_t a0;

	(void)st;
	/* The daemon's first list must predate the inhibitor. */
	assert_true(hd_wait_for(listed_once, &e->f, 3000));
	assert_suspends(e, "with no inhibitor");
	a0 = aborts(e);
	fake_one(&e->f, "sleep", "GNOME Calls", "incoming call", "block", 1000, 4242, 0);
	/* An attempt already past its last look may still complete. */
	hd_sleep_ms(200);
	assert_no_suspend(e, 500);
	assert_true(aborts(e) > a0);
	assert_int_equal(logind_slots(e), 0);   /* nobody told the main thread */
	/* The announcement makes it a slot; the release lets it suspend. */
	fake_poke(&e->f, 1);
	assert_true(hd_wait_for(has_calls_slot, e, 2000));
	fake_one(&e->f, NULL, NULL, NULL, NULL, 0, 0, 1);
	assert_suspends(e, "after the release");
	stop_all(e);
}

/* With no system bus when the daemon started, logind is not followed
 * (until a reload) and the last look asks nobody: a bus that appears
 * later sees no connection at all, however many attempts are made.
 * (The look used to try a connection before every attempt.) */
static void test_last_look_needs_the_bus(void **st)
{
	struct env *e = calloc(1, sizeof(*e));
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct since s;
	char dir[] = "/tmp/wl-late-bus-XXXXXX";
	int fd, n = 0;

	(void)st;
	assert_non_null(e);
	assert_non_null(mkdtemp(dir));
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/bus", dir);
	snprintf(e->busaddr, sizeof(e->busaddr), "unix:path=%s", sa.sun_path);
	setenv("DBUS_SYSTEM_BUS_ADDRESS", e->busaddr, 1);
	assert_int_equal(hd_prepare(&e->d), 0);
	if (hd_start(&e->d, NULL) < 0)
		fail_msg("daemon did not start (log in %s)", e->d.log);
	assert_suspends(e, "with no system bus");
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, 64), 0);
	s.e = e;
	s.base = successes(e) + 20;
	if (!hd_wait_for(suspended_since, &s, 5000))
		fail_msg("fewer than 20 suspends in 5 s after the bus appeared (log %s)", e->d.log);
	for (int c; (c = accept(fd, NULL, NULL)) >= 0; n++)
		close(c);
	assert_int_equal(errno, EAGAIN);
	assert_int_equal(n, 0);
	close(fd);
	hd_stop(&e->d);
	hd_cleanup(&e->d);
	unlink(sa.sun_path);
	rmdir(dir);
	free(e);
}

/* Names chosen by logind's clients: control characters, quotes, commas,
 * 600 bytes, 300 inhibitors.  At most 64 become slots, every name is
 * valid, the rest still hold through the last look; nothing crashes. */
static void hostile(struct fake *f)
{
	char who[600];

	for (unsigned i = 0; i < 300; i++) {
		memset(who, 'A' + (int)(i % 26), sizeof(who) - 1);
		who[sizeof(who) - 1] = '\0';
		memcpy(who, "\x1b[2J\r\n\"x\\,", 10);
		memcpy(who + 20, "\xc3\xa9\xe2\x80\xae", 5);   /* é, right-to-left override */
		fake_set(f, i, "sleep", who, i % 2 ? "" : "\x07 bell,\"quote\"", "block", i, i);
	}
	f->n = 300;
}

static void test_hostile_names_and_numbers(void **st)
{
	struct env *e = start_all(hostile, NULL);
	const struct wl_shm_header *h;
	unsigned named = 0;

	(void)st;
	for (int i = 0; i < 300 && logind_slots(e) < 64; i++)
		hd_sleep_ms(10);
	assert_int_equal(logind_slots(e), 64);
	assert_no_suspend(e, 300);
	h = hd_snap(&e->d);
	for (uint32_t i = 0; i < h->nslots; i++) {
		const struct wl_shm_slot *s = &h->slots[i];

		if (s->state != WL_SLOT_LIVE)
			continue;
		assert_int_equal(wl_name_check(s->name), 0);
		assert_int_equal(wl_name_check(s->holds[0].name), 0);
		assert_int_equal(strlen(s->name), WAKELOCK_NAME_MAX - 1);
		named++;
	}
	assert_int_equal(named, 64);
	fake_one(&e->f, NULL, NULL, NULL, NULL, 0, 0, 1);
	assert_true(hd_wait_for(no_logind_slots, e, 2000));
	assert_suspends(e, "after all 300 were released");
	stop_all(e);
}

/* logind leaving the bus takes its inhibitors with it; coming back, it
 * is asked again. */
static void test_logind_leaves_and_returns(void **st)
{
	struct env *e = start_all(calls, NULL);

	(void)st;
	assert_true(hd_wait_for(has_calls_slot, e, 3000));
	pthread_mutex_lock(&e->f.mu);
	e->f.own = 0;
	pthread_mutex_unlock(&e->f.mu);
	fake_poke(&e->f, 0);
	assert_true(hd_wait_for(no_logind_slots, e, 2000));
	assert_suspends(e, "after logind left");
	pthread_mutex_lock(&e->f.mu);
	e->f.own = 1;
	pthread_mutex_unlock(&e->f.mu);
	fake_poke(&e->f, 0);
	assert_true(hd_wait_for(has_calls_slot, e, 2000));
	assert_no_suspend(e, 300);
	stop_all(e);
}

/* A reply of the wrong type is logged and changes nothing. */
static void test_bad_reply(void **st)
{
	struct env *e = start_all(NULL, NULL);
	char cmd[512];

	(void)st;
	pthread_mutex_lock(&e->f.mu);
	e->f.bad_reply = 1;
	fake_set(&e->f, 0, "sleep", "x", "y", "block", 0, 1);
	e->f.n = 1;
	pthread_mutex_unlock(&e->f.mu);
	fake_poke(&e->f, 1);
	hd_sleep_ms(300);
	assert_int_equal(logind_slots(e), 0);
	assert_suspends(e, "after a malformed reply");
	snprintf(cmd, sizeof(cmd), "grep -q 'ListInhibitors reply not understood' %s", e->d.log);
	assert_int_equal(system(cmd), 0);
	stop_all(e);
}

/* With [logind] mode = off the daemon never asks. */
static void test_mode_off(void **st)
{
	const char *const extra[] = { "--logind", "off", NULL };
	struct env *e = start_all(calls, extra);

	(void)st;
	assert_suspends(e, "with logind off");
	assert_int_equal(logind_slots(e), 0);
	pthread_mutex_lock(&e->f.mu);
	assert_int_equal(e->f.lists, 0);
	pthread_mutex_unlock(&e->f.mu);
	stop_all(e);
}

static unsigned suspends_of(struct fake *f)
{
	unsigned n;

	pthread_mutex_lock(&f->mu);
	n = f->suspends;
	pthread_mutex_unlock(&f->mu);
	return n;
}

static struct timespec state_mtime(struct env *e)
{
	char path[400];
	struct stat sb;

	snprintf(path, sizeof(path), "%s/sys/power/state", e->d.dir);
	assert_int_equal(stat(path, &sb), 0);
	return sb.st_mtim;
}

static int same_time(struct timespec a, struct timespec b)
{
	return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

/* Mode suspend: every attempt is logind's Suspend (the daemon never writes
 * the state itself), each counted once; a block inhibitor stops them; with
 * logind gone the daemon writes the state as before. */
static void test_suspend_through_logind(void **st)
{
	const char *const extra[] = { "--logind", "suspend", NULL };
	struct env *e = start_all(NULL, extra);
	struct timespec t0 = state_mtime(e);
	uint64_t ok;
	unsigned n;
	char cmd[512];

	(void)st;
	hd_sleep_ms(20);   /* a write now would change the file's time */
	assert_suspends(e, "through logind");
	assert_suspends(e, "through logind, again");
	ok = successes(e);
	n = suspends_of(&e->f);
	if (n + 1 < ok || ok + 1 < n)
		fail_msg("%llu suspends counted, %u Suspend calls", (unsigned long long)ok, n);
	assert_true(same_time(state_mtime(e), t0));

	fake_one(&e->f, "sleep", "GNOME Calls", "incoming call", "block", 1000, 4242, 1);
	assert_true(hd_wait_for(has_calls_slot, e, 2000));
	n = suspends_of(&e->f);
	assert_no_suspend(e, 300);
	assert_int_equal(suspends_of(&e->f), n);

	fake_one(&e->f, NULL, NULL, NULL, NULL, 0, 0, 0);
	pthread_mutex_lock(&e->f.mu);
	e->f.own = 0;
	pthread_mutex_unlock(&e->f.mu);
	fake_poke(&e->f, 0);
	assert_suspends(e, "after logind left");
	assert_false(same_time(state_mtime(e), t0));
	snprintf(cmd, sizeof(cmd), "grep -q 'logind is not running: suspending by writing' %s",
	         e->d.log);
	assert_int_equal(system(cmd), 0);
	stop_all(e);
}

/* No bus at all: one line in the log, suspends as before. */
static void test_no_bus(void **st)
{
	struct env *e = calloc(1, sizeof(*e));
	char cmd[512];

	(void)st;
	assert_non_null(e);
	current = e;
	e->f.lid_rd = -1;
	setenv("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=/nonexistent/wl-test/bus", 1);
	assert_int_equal(hd_prepare(&e->d), 0);
	assert_int_equal(hd_start(&e->d, NULL), 0);
	assert_suspends(e, "without a bus");
	snprintf(cmd, sizeof(cmd), "grep -q 'logind: no system bus' %s", e->d.log);
	assert_int_equal(system(cmd), 0);
	stop_all(e);
}


/* --- logind's presence: sessions, idle inhibitors, the lid -------------- */

static const char *const LAPTOP[] = { "--policy", "laptop", "--idle-timeout-ms", "1", NULL };

/* The state a source published, "" if there is no such source. */
static const char *state_of(struct env *e, const char *name)
{
	static char buf[128];
	const struct wl_shm_header *h = hd_snap(&e->d);

	buf[0] = 0;
	for (uint32_t i = 0; i < h->nsources && i < WL_MAX_SOURCES; i++)
		if (!strcmp(h->sources[i].name, name))
			snprintf(buf, sizeof(buf), "%s", h->sources[i].state);
	return buf;
}

static int holding_of(struct env *e, const char *name)
{
	const struct wl_shm_header *h = hd_snap(&e->d);

	for (uint32_t i = 0; i < h->nsources && i < WL_MAX_SOURCES; i++)
		if (!strcmp(h->sources[i].name, name))
			return (int)h->sources[i].holding;
	return -1;
}

static const char *want_name, *want_state;

static int state_has(void *arg)
{
	return strstr(state_of(arg, want_name), want_state) != NULL;
}

static int wait_state(struct env *e, const char *name, const char *what, unsigned ms)
{
	want_name = name;
	want_state = what;
	return hd_wait_for(state_has, e, ms);
}

/* Session i as a desktop's: class user, wayland, on seat0, local, its
 * IdleHint set once before (since), active and not idle. */
static void desk_session(struct fake *f, unsigned i, const char *id)
{
	struct fsession *s = &f->ses[i];

	memset(s, 0, sizeof(*s));
	s->used = 1;
	snprintf(s->id, sizeof(s->id), "%s", id);
	snprintf(s->path, sizeof(s->path), "/org/freedesktop/login1/session/_3%s", id);
	snprintf(s->cls, sizeof(s->cls), "user");
	snprintf(s->type, sizeof(s->type), "wayland");
	snprintf(s->seat, sizeof(s->seat), "seat0");
	s->active = 1;
	s->since = 1700000000000000ull;
	s->uid = 1000;
}

static void dumplog(struct env *e)
{
	char cmd[400];

	snprintf(cmd, sizeof(cmd), "cat %s", e->d.log);
	if (system(cmd)) {}
}

static void one_desk(struct fake *f)
{
	desk_session(f, 0, "2");
}

/* Change session i under mu with fn, then send sig about it. */
static void session_signal(struct fake *f, unsigned i, int sig)
{
	pthread_mutex_lock(&f->mu);
	f->sig = sig;
	f->sig_session = i;
	pthread_mutex_unlock(&f->mu);
	fake_poke(f, 0);
}

static void set_idle(struct fake *f, unsigned i, int idle)
{
	pthread_mutex_lock(&f->mu);
	f->ses[i].idle = idle;
	pthread_mutex_unlock(&f->mu);
	session_signal(f, i, SIG_SESSION_CHANGED);
}

static int session_holds(void *arg)
{
	return holding_of(arg, "session") == 1;
}

/* An active session that sets IdleHint holds while not idle; IdleHint
 * true lets go, false holds again; the session removed lets go. */
static void test_session_idle_hint(void **st)
{
	struct env *e = start_all(one_desk, LAPTOP);

	(void)st;
	if (!hd_wait_for(session_holds, e, 3000) && (dumplog(e), 1))
		fail_msg("the session does not hold: \"%s\" (log %s)", state_of(e, "session"),
		         e->d.log);
	assert_string_equal(state_of(e, "session"), "session 2 (wayland, uid 1000) active, not idle");
	assert_no_suspend(e, 300);
	set_idle(&e->f, 0, 1);
	assert_suspends(e, "with the session idle");
	assert_true(wait_state(e, "session", "1 of 1 session sets IdleHint: idle, locked or not active",
	                       1000));
	set_idle(&e->f, 0, 0);
	assert_true(hd_wait_for(session_holds, e, 2000));
	hd_sleep_ms(100);
	assert_no_suspend(e, 300);
	/* Locked (the user pressed Super+L and left): lets go too. */
	pthread_mutex_lock(&e->f.mu);
	e->f.ses[0].locked = 1;
	pthread_mutex_unlock(&e->f.mu);
	session_signal(&e->f, 0, SIG_SESSION_CHANGED);
	assert_suspends(e, "with the session locked");
	pthread_mutex_lock(&e->f.mu);
	e->f.ses[0].locked = 0;
	pthread_mutex_unlock(&e->f.mu);
	session_signal(&e->f, 0, SIG_SESSION_CHANGED);
	assert_true(hd_wait_for(session_holds, e, 2000));
	session_signal(&e->f, 0, SIG_SESSION_REMOVED);
	assert_suspends(e, "after the session was removed");
	assert_true(wait_state(e, "session", "no session that sets IdleHint", 1000));
	stop_all(e);
}

/* Sessions that say nothing of a person keep nothing awake: inactive (a
 * session switched away from), IdleHint never set (no idle agent), a
 * remote one without a seat (root over ssh), a greeter, a tty, one whose
 * properties have the wrong type, and one whose path is not a session's.
 * A qualifying one announced with SessionNew then holds. */
static void quiet_sessions(struct fake *f)
{
	for (unsigned i = 0; i < 7; i++)
		desk_session(f, i, (const char[][2]){ "a", "b", "c", "d", "e", "f", "g" }[i]);
	f->ses[0].active = 0;
	f->ses[1].since = 0;
	f->ses[2].seat[0] = 0;
	f->ses[2].remote = 1;
	snprintf(f->ses[2].type, sizeof(f->ses[2].type), "tty");
	f->ses[2].uid = 0;
	snprintf(f->ses[3].cls, sizeof(f->ses[3].cls), "greeter");
	snprintf(f->ses[4].type, sizeof(f->ses[4].type), "tty");
	f->ses[5].bad = 1;
	snprintf(f->ses[6].path, sizeof(f->ses[6].path), "/org/freedesktop/login1/user/_1000");
}

static void test_sessions_that_do_not_count(void **st)
{
	struct env *e = start_all(quiet_sessions, LAPTOP);

	(void)st;
	/* Six listed (not the one outside the session path), the inactive
	 * one counts but does not hold. */
	if (!wait_state(e, "session", "1 of 6 sessions sets IdleHint: idle, locked or not active", 3000))
		fail_msg("session: \"%s\"", state_of(e, "session"));
	assert_suspends(e, "with no session that counts");
	assert_int_equal(holding_of(e, "session"), 0);
	assert_true(hd_log_has(&e->d, "properties of session f are not understood"));
	/* The inactive one becomes the active one (a VT switch). */
	pthread_mutex_lock(&e->f.mu);
	e->f.ses[0].active = 1;
	pthread_mutex_unlock(&e->f.mu);
	session_signal(&e->f, 0, SIG_SESSION_CHANGED);
	assert_true(hd_wait_for(session_holds, e, 2000));
	hd_sleep_ms(100);
	assert_no_suspend(e, 300);
	pthread_mutex_lock(&e->f.mu);
	e->f.ses[0].active = 0;
	desk_session(&e->f, 7, "h");
	pthread_mutex_unlock(&e->f.mu);
	session_signal(&e->f, 0, SIG_SESSION_CHANGED);
	assert_suspends(e, "with the session inactive again");
	session_signal(&e->f, 7, SIG_SESSION_NEW);
	assert_true(hd_wait_for(session_holds, e, 2000));
	assert_true(wait_state(e, "session", "session h (wayland", 1000));
	stop_all(e);
}

/* 70 sessions, with ids of escape sequences and quotes: 64 are
 * followed (one line says so), the state shown is clean, one of them
 * holds. */
static void many_sessions(struct fake *f)
{
	for (unsigned i = 0; i < 70; i++) {
		desk_session(f, i, "x");
		snprintf(f->ses[i].id, sizeof(f->ses[i].id), "\x1b[2J\"%u\",\\\r\n%040u", i, i);
		snprintf(f->ses[i].path, sizeof(f->ses[i].path),
		         "/org/freedesktop/login1/session/_%u", i);
		f->ses[i].idle = i != 0;
	}
}

static void test_hostile_sessions(void **st)
{
	struct env *e = start_all(many_sessions, LAPTOP);
	const char *state;

	(void)st;
	assert_true(hd_wait_for(session_holds, e, 5000));
	state = state_of(e, "session");
	for (const char *p = state; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
			fail_msg("a control byte in the state: \"%s\"", state);
	assert_non_null(strstr(state, "session _[2J_0___"));
	assert_true(hd_log_has(&e->d, "more than 64 sessions"));
	assert_no_suspend(e, 300);
	stop_all(e);
}

/* The phone policy does not follow sessions, unless asked. */
static void test_session_idle_off_in_phone(void **st)
{
	struct env *e = start_all(one_desk, NULL);

	(void)st;
	assert_suspends(e, "in phone mode with an active session");
	assert_int_equal(holding_of(e, "session"), -1);
	assert_int_equal(holding_of(e, "idle-inhibit"), -1);
	stop_all(e);
}

static void test_session_idle_yes_in_phone(void **st)
{
	const char *const extra[] = { "--session-idle", "yes", NULL };
	struct env *e = start_all(one_desk, extra);

	(void)st;
	assert_true(hd_wait_for(session_holds, e, 3000));
	assert_int_equal(holding_of(e, "idle-inhibit"), -1);
	stop_all(e);
}

static void video(struct fake *f)
{
	f->n = 3;
	fake_set(f, 0, "idle", "Totem", "Playing video", "block", 1000, 77);
	fake_set(f, 1, "idle", "Lazy", "delay is not a block", "delay", 1000, 78);
	fake_set(f, 2, "handle-lid-switch", "shell", "lid", "block", 1000, 79);
	one_desk(f);
}

static int idle_inhibit_holds(void *arg)
{
	return holding_of(arg, "idle-inhibit") == 1;
}

/* A lid switch on a FIFO the daemon reads as an input device. */
static int lid_fifo(struct env *e)
{
	char path[400];
	int fd = -1;

	snprintf(path, sizeof(path), "%s/dev/input/event0", e->d.dir);
	for (int i = 0; i < 200 && fd < 0; i++) {
		fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			hd_sleep_ms(10);
	}
	assert_true(fd >= 0);
	return fd;
}

static void lid(int fd, int closed)
{
	struct input_event ev[2];

	memset(ev, 0, sizeof(ev));
	ev[0].type = EV_SW;
	ev[0].code = SW_LID;
	ev[0].value = closed;
	ev[1].type = EV_SYN;
	ev[1].code = SYN_REPORT;
	assert_int_equal(write(fd, ev, sizeof(ev)), (ssize_t)sizeof(ev));
}

/* Start with a FIFO at dev/input/event0 (made before the daemon). */
static struct env *start_with_lid(void (*init)(struct fake *), const char *const *extra,
                                  int *fd)
{
	struct env *e = calloc(1, sizeof(*e));
	char path[400];

	assert_non_null(e);
	current = e;
	e->f.lid_rd = -1;
	pthread_mutex_init(&e->f.mu, NULL);
	if (start_bus(e) < 0)
		fail_msg("dbus-daemon did not start (is it installed?)");
	if (init)
		init(&e->f);
	assert_int_equal(start_fake(e), 0);
	setenv("DBUS_SYSTEM_BUS_ADDRESS", e->busaddr, 1);
	assert_int_equal(hd_prepare(&e->d), 0);
	hd_put(&e->d, "dev/input/.keep", "");
	snprintf(path, sizeof(path), "%s/dev/input/event0", e->d.dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	if (hd_start(&e->d, extra) < 0)
		fail_msg("daemon did not start (log in %s)", e->d.log);
	*fd = lid_fifo(e);
	return e;
}

/* `wakelock list`'s output has what. */
static int list_has(const char *what)
{
	char cmd[600], line[512];
	FILE *p;
	int found = 0;

	snprintf(cmd, sizeof(cmd), "%s list", hd_bin("wakelock"));
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p))
		found |= strstr(line, what) != NULL;
	pclose(p);
	return found;
}

/* An idle block inhibitor holds, shown with who and why; a delay one
 * does not; a closed lid stops it and the session at once, opened it
 * holds again; released (and the session idle) the system suspends. */
static void test_idle_inhibitor_and_lid(void **st)
{
	int fd;
	struct env *e = start_with_lid(video, LAPTOP, &fd);

	(void)st;
	lid(fd, 0);
	if (!hd_wait_for(idle_inhibit_holds, e, 3000))
		fail_msg("the idle inhibitor does not hold: \"%s\"", state_of(e, "idle-inhibit"));
	assert_string_equal(state_of(e, "idle-inhibit"),
	                    "logind:Totem \"Playing_video\" uid 1000 pid 77");
	assert_true(hd_wait_for(session_holds, e, 2000));
	assert_int_equal(logind_slots(e), 0);   /* presence, not a sleep inhibitor */
	assert_true(list_has("source idle-inhibit holds: logind:Totem \"Playing_video\" uid 1000"));
	assert_true(list_has("source session holds: session 2 (wayland, uid 1000)"));
	assert_no_suspend(e, 300);
	lid(fd, 1);
	assert_suspends(e, "with the lid closed");
	assert_int_equal(holding_of(e, "idle-inhibit"), 0);
	assert_int_equal(holding_of(e, "session"), 0);
	assert_non_null(strstr(state_of(e, "idle-inhibit"), "lid closed: not holding"));
	assert_non_null(strstr(state_of(e, "session"), "lid closed: not holding"));
	lid(fd, 0);
	assert_true(hd_wait_for(idle_inhibit_holds, e, 2000));
	hd_sleep_ms(100);
	assert_no_suspend(e, 300);
	/* The inhibitor alone (the session idle), then nothing. */
	set_idle(&e->f, 0, 1);
	assert_no_suspend(e, 300);
	fake_one(&e->f, NULL, NULL, NULL, NULL, 0, 0, 1);
	assert_suspends(e, "after the video stopped");
	assert_true(wait_state(e, "idle-inhibit", "no idle inhibitor", 1000));
	close(fd);
	stop_all(e);
}

/* deny logind:WHO covers idle inhibitors: denied at start it keeps
 * nothing awake; `wakelock allow` at run time makes it hold. */
static void test_idle_inhibitor_denied(void **st)
{
	const char *const extra[] = { "--policy", "laptop", "--idle-timeout-ms", "1",
	                              "--deny", "logind:Totem", NULL };
	struct env *e = start_all(video, extra);
	char cmd[600];

	(void)st;
	assert_true(hd_wait_for(session_holds, e, 3000));
	set_idle(&e->f, 0, 1);
	assert_suspends(e, "with the idle inhibitor denied");
	assert_string_equal(state_of(e, "idle-inhibit"), "no idle inhibitor");
	snprintf(cmd, sizeof(cmd), "%s allow logind:Totem >/dev/null", hd_bin("wakelock"));
	assert_int_equal(system(cmd), 0);
	assert_true(hd_wait_for(idle_inhibit_holds, e, 2000));
	hd_sleep_ms(100);
	assert_no_suspend(e, 300);
	stop_all(e);
}

static unsigned inhibits_of(struct fake *f)
{
	unsigned n;

	pthread_mutex_lock(&f->mu);
	n = f->inhibits;
	pthread_mutex_unlock(&f->mu);
	return n;
}

static int inhibited(void *arg)
{
	return inhibits_of(arg) > 0;
}

/* 1 if the descriptor the fake handed out for the lid inhibitor is
 * closed everywhere (its pipe's read end hangs up), 0 if held. */
static int lid_released(struct fake *f)
{
	struct pollfd p = { .events = POLLIN };
	int r;

	pthread_mutex_lock(&f->mu);
	p.fd = f->lid_rd;
	pthread_mutex_unlock(&f->mu);
	assert_true(p.fd >= 0);
	r = poll(&p, 1, 0);
	return r > 0 && (p.revents & POLLHUP);
}

/* Laptop mode handles the lid: wakelockd holds logind's
 * handle-lid-switch inhibitor, in block mode, until it exits. */
static void test_lid_inhibitor_laptop(void **st)
{
	struct env *e = start_all(NULL, LAPTOP);
	char args[160];

	(void)st;
	assert_true(hd_wait_for(inhibited, &e->f, 3000));
	pthread_mutex_lock(&e->f.mu);
	snprintf(args, sizeof(args), "%s", e->f.inhibit_args);
	pthread_mutex_unlock(&e->f.mu);
	assert_string_equal(args, "handle-lid-switch/wakelockd/wakelockd handles the lid/block");
	hd_sleep_ms(200);
	assert_int_equal(lid_released(&e->f), 0);
	assert_true(hd_log_has(&e->d, "holding the handle-lid-switch inhibitor"));
	assert_int_equal(hd_stop(&e->d), 0);
	assert_int_equal(lid_released(&e->f), 1);
	assert_true(hd_log_has(&e->d, "handle-lid-switch inhibitor released (wakelockd no longer"));
	assert_int_equal(inhibits_of(&e->f), 1);
	stop_env(e);   /* the daemon stopped already */
}

static int lid_released_pred(void *arg)
{
	return lid_released(arg);
}

/* A reload to [logind] mode = off releases the inhibitor while the
 * daemon runs on; back to inhibitors, it is taken again. */
static void test_lid_inhibitor_reload(void **st)
{
	struct env *e = calloc(1, sizeof(*e));
	const char *conf = "[policy]\nmode = laptop\nidle_timeout_ms = 1\n[logind]\nmode = %s\n";
	char text[160], path[400];
	const char *const extra[] = { "-c", path, NULL };
	FILE *c;

	(void)st;
	assert_non_null(e);
	current = e;
	e->f.lid_rd = -1;
	pthread_mutex_init(&e->f.mu, NULL);
	assert_int_equal(start_bus(e), 0);
	assert_int_equal(start_fake(e), 0);
	setenv("DBUS_SYSTEM_BUS_ADDRESS", e->busaddr, 1);
	assert_int_equal(hd_prepare(&e->d), 0);
	snprintf(path, sizeof(path), "%s", e->d.conf);
	for (int round = 0; round < 3; round++) {
		snprintf(text, sizeof(text), conf, round == 1 ? "off" : "inhibitors");
		c = fopen(path, "w");
		assert_non_null(c);
		fputs(text, c);
		fclose(c);
		if (round == 0)
			assert_int_equal(hd_start(&e->d, extra), 0);
		else
			kill(e->d.pid, SIGHUP);
		if (round == 1) {
			assert_true(hd_wait_for(lid_released_pred, &e->f, 2000));
		} else {
			unsigned want = round ? 2 : 1;

			for (int i = 0; i < 200 && inhibits_of(&e->f) < want; i++)
				hd_sleep_ms(10);
			assert_int_equal(inhibits_of(&e->f), want);
			hd_sleep_ms(100);
			assert_int_equal(lid_released(&e->f), 0);
		}
	}
	stop_all(e);
}

/* logind restarting: the sessions and the lid inhibitor go with it (a
 * log line; the activity source still sees the person), and come back
 * with it: listed again, the inhibitor taken again. */
static void test_logind_restart_presence(void **st)
{
	struct env *e = start_all(one_desk, LAPTOP);

	(void)st;
	assert_true(hd_wait_for(session_holds, e, 3000));
	assert_true(hd_wait_for(inhibited, &e->f, 2000));
	pthread_mutex_lock(&e->f.mu);
	e->f.own = 0;
	pthread_mutex_unlock(&e->f.mu);
	fake_poke(&e->f, 0);
	assert_suspends(e, "after logind left");
	assert_true(hd_log_has(&e->d, "logind left the bus: its inhibitors and sessions are gone"));
	assert_true(hd_log_has(&e->d, "handle-lid-switch inhibitor released (logind left"));
	assert_true(wait_state(e, "session", "logind is not on the bus", 1000));
	assert_int_equal(lid_released(&e->f), 1);
	pthread_mutex_lock(&e->f.mu);
	e->f.own = 1;
	pthread_mutex_unlock(&e->f.mu);
	fake_poke(&e->f, 0);
	assert_true(hd_wait_for(session_holds, e, 2000));
	hd_sleep_ms(200);
	assert_no_suspend(e, 300);
	assert_int_equal(inhibits_of(&e->f), 2);
	assert_int_equal(lid_released(&e->f), 0);
	stop_all(e);
}

/* Who does not handle the lid does not take logind's inhibitor: the
 * phone and appliance policies, and lid_closed = ignore. */
static void no_lid_inhibitor(const char *const *extra)
{
	struct env *e = start_all(NULL, extra);

	assert_suspends(e, "without a hold");
	hd_sleep_ms(200);
	assert_int_equal(inhibits_of(&e->f), 0);
	stop_all(e);
}

static void test_no_lid_inhibitor(void **st)
{
	(void)st;
	no_lid_inhibitor(NULL);
	no_lid_inhibitor((const char *const[]){ "--policy", "appliance", NULL });
	no_lid_inhibitor((const char *const[]){ "--policy", "laptop", "--idle-timeout-ms", "1",
	                                        "--lid-closed", "ignore", NULL });
}

/* No system bus in laptop mode: the sources say so, nothing holds. */
static void test_no_bus_laptop(void **st)
{
	struct env *e = calloc(1, sizeof(*e));

	(void)st;
	assert_non_null(e);
	current = e;
	e->f.lid_rd = -1;
	setenv("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=/nonexistent/wl-test/bus", 1);
	assert_int_equal(hd_prepare(&e->d), 0);
	assert_int_equal(hd_start(&e->d, LAPTOP), 0);
	assert_suspends(e, "without a bus");
	assert_true(wait_state(e, "session", "logind not followed (no system bus", 1000));
	assert_true(wait_state(e, "idle-inhibit", "logind not followed (no system bus", 1000));
	assert_true(hd_log_has(&e->d, "logind: no system bus"));
	stop_all(e);
}

/* Without logind on the bus: a clear state, and suspends as before. */
static void test_presence_without_logind(void **st)
{
	struct env *e = start_all(one_desk, LAPTOP);

	(void)st;
	/* logind gone before anything: as at a start without it. */
	pthread_mutex_lock(&e->f.mu);
	e->f.own = 0;
	pthread_mutex_unlock(&e->f.mu);
	fake_poke(&e->f, 0);
	assert_suspends(e, "without logind");
	assert_true(wait_state(e, "session", "logind is not on the bus", 1000));
	assert_true(wait_state(e, "idle-inhibit", "logind is not on the bus", 1000));
	stop_all(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_block_inhibitor_holds, teardown),
		cmocka_unit_test_teardown(test_only_sleep_block_allowed_hold, teardown),
		cmocka_unit_test_teardown(test_last_look_sees_unannounced, teardown),
		cmocka_unit_test(test_last_look_needs_the_bus),
		cmocka_unit_test_teardown(test_hostile_names_and_numbers, teardown),
		cmocka_unit_test_teardown(test_logind_leaves_and_returns, teardown),
		cmocka_unit_test_teardown(test_bad_reply, teardown),
		cmocka_unit_test_teardown(test_mode_off, teardown),
		cmocka_unit_test_teardown(test_suspend_through_logind, teardown),
		cmocka_unit_test_teardown(test_no_bus, teardown),
		cmocka_unit_test_teardown(test_session_idle_hint, teardown),
		cmocka_unit_test_teardown(test_sessions_that_do_not_count, teardown),
		cmocka_unit_test_teardown(test_hostile_sessions, teardown),
		cmocka_unit_test_teardown(test_session_idle_off_in_phone, teardown),
		cmocka_unit_test_teardown(test_session_idle_yes_in_phone, teardown),
		cmocka_unit_test_teardown(test_idle_inhibitor_and_lid, teardown),
		cmocka_unit_test_teardown(test_idle_inhibitor_denied, teardown),
		cmocka_unit_test_teardown(test_lid_inhibitor_laptop, teardown),
		cmocka_unit_test_teardown(test_lid_inhibitor_reload, teardown),
		cmocka_unit_test_teardown(test_logind_restart_presence, teardown),
		cmocka_unit_test_teardown(test_no_lid_inhibitor, teardown),
		cmocka_unit_test_teardown(test_presence_without_logind, teardown),
		cmocka_unit_test_teardown(test_no_bus_laptop, teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
