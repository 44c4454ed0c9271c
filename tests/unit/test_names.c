/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Names are identities (one live client per name, the daemon's prefixes
 * reserved, policy by uid), and `list` tells how long a hold has been held
 * from the client's own acquire, on the real daemon (harness.c):
 *
 *   a second live client under a victim's name is refused, with a clear
 *   error, and the name is free again once the victim is gone;
 *   names with the daemon's prefixes (logind:, alarm:, uid:) are refused
 *   to clients and to their holds, while the daemon's own alarm holds
 *   still get theirs;
 *   deny uid:N stops all of a user's clients, under any name, new ones
 *   included, and spares the other users' (root only: it runs clients
 *   as another uid);
 *   `wakelock list` shows the time since the acquire, even when nobody
 *   looked meanwhile, and a client's scribbled stamps misreport only
 *   itself, within its own life.
 *
 * Each test starts a holding victim and checks that it is not suspended
 * under, is listed as it registered, and is suspended after its release.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "lib/wl_client.h"
#include "harness.h"

struct env {
	struct hd d;
};

static int setup_with(void **st, const char *conf)
{
	struct env *e = calloc(1, sizeof(*e));
	const char *extra[] = { "--config", NULL, NULL };
	FILE *f;

	assert_non_null(e);
	assert_int_equal(hd_prepare(&e->d), 0);
	f = fopen(e->d.conf, "w");
	assert_non_null(f);
	fputs(conf, f);
	fclose(f);
	extra[1] = e->d.conf;
	if (hd_start(&e->d, extra) < 0)
		fail_msg("daemon did not start (log in %s)", e->d.log);
	*st = e;
	return 0;
}

static int setup(void **st)
{
	return setup_with(st, "");
}

/* Clients of uid 1000 in group 4242 may register. */
static int setup_group(void **st)
{
	return setup_with(st, "[access]\ngroup = 4242\n");
}

static int teardown(void **st)
{
	struct env *e = *st;

	hd_cleanup(&e->d);
	free(e);
	return 0;
}

static uint64_t attempts(struct env *e)
{
	return __atomic_load_n(&hd_snap(&e->d)->dstats.attempts, __ATOMIC_SEQ_CST);
}

/* The live slots called name, and the last of them. */
static unsigned slots_named(struct env *e, const char *name, const struct wl_shm_slot **out)
{
	const struct wl_shm_header *h = hd_snap(&e->d);
	unsigned n = 0;

	for (uint32_t i = 0; i < h->nslots; i++) {
		const struct wl_shm_slot *s = &h->slots[i];

		if (s->state == WL_SLOT_LIVE && !strncmp(s->name, name, WAKELOCK_NAME_MAX)) {
			n++;
			if (out)
				*out = s;
		}
	}
	return n;
}

struct victim {
	wakelock_client *c;
	wakelock_hold *h;
	uint64_t a0;     /* attempts before it held */
};

static void victim_hold(struct env *e, struct victim *v, const char *name)
{
	assert_int_equal(wakelock_client_open(NULL, name, &v->c), 0);
	assert_int_equal(wakelock_hold_create(v->c, "call", &v->h), 0);
	assert_int_equal(wakelock_hold_acquire(v->h), 0);
	v->a0 = attempts(e);
}

/* Not suspended under, and listed once, as it registered. */
static void victim_unharmed(struct env *e, struct victim *v, const char *name)
{
	const struct wl_shm_slot *s = NULL;

	assert_int_equal(attempts(e), v->a0);
	assert_int_equal(slots_named(e, name, &s), 1);
	assert_int_equal(s->pid, getpid());
	assert_int_equal(s->uid, getuid());
	assert_true(s->allowed);
	assert_true(s->holding);
}

static struct env *cur_env;
static uint64_t cur_a0;

static int attempted_since(void *arg)
{
	(void)arg;
	return attempts(cur_env) > cur_a0;
}

/* Released: a suspend within a second. */
static void victim_release(struct env *e, struct victim *v)
{
	assert_int_equal(wakelock_hold_release(v->h), 0);
	cur_env = e;
	cur_a0 = v->a0;
	assert_true(hd_wait_for(attempted_since, NULL, 1000));
}

struct gone {
	struct env *e;
	const char *name;
};

static int name_gone(void *arg)
{
	struct gone *g = arg;

	return slots_named(g->e, g->name, NULL) == 0;
}

/*
 * An impostor registering under the victim's name is refused, and says
 * why; the victim keeps its name, its holds and its listing.  The name
 * is free again once the victim is reaped.
 */
static void test_impostor_refused(void **st)
{
	struct env *e = *st;
	const char *longname = "0123456789abcdefghijklmnopqrstu";   /* 31 bytes */
	struct gone g = { e, "victim" };
	wakelock_client *imp, *l1, *l2;
	struct victim v;

	victim_hold(e, &v, "victim");
	assert_int_equal(wakelock_client_open(NULL, "victim", &imp), -EADDRINUSE);
	assert_string_equal(wakelock_last_error(), "a live client is already registered as victim");
	victim_unharmed(e, &v, "victim");
	/* The longest name, equal to another's, is refused the same way. */
	assert_int_equal(wakelock_client_open(NULL, longname, &l1), 0);
	assert_int_equal(wakelock_client_open(NULL, longname, &l2), -EADDRINUSE);
	assert_int_equal(slots_named(e, longname, NULL), 1);
	/* Names differing in case or by a suffix are other names. */
	assert_int_equal(wakelock_client_open(NULL, "Victim", &imp), 0);
	wakelock_client_close(imp);
	victim_unharmed(e, &v, "victim");
	victim_release(e, &v);
	wakelock_client_close(v.c);
	wakelock_client_close(l1);
	/* Reaped: anyone may take the name now. */
	assert_true(hd_wait_for(name_gone, &g, 1000));
	assert_int_equal(wakelock_client_open(NULL, "victim", &imp), 0);
	assert_int_equal(slots_named(e, "victim", NULL), 1);
	wakelock_client_close(imp);
	assert_int_equal(hd_stop(&e->d), 0);
}

/*
 * The daemon's own prefixes: a client cannot pass for a logind
 * inhibitor, an alarm's hold or a policy key.  The daemon still names
 * its own alarm holds "alarm:NAME".
 */
static void test_reserved_names_refused(void **st)
{
	struct env *e = *st;
	static const char *const names[] = { "logind:victim", "alarm:victim", "uid:0" };
	const struct wl_shm_slot *s = NULL;
	wakelock_client *c;
	wakelock_hold *h;
	wakelock_alarm *a;
	struct victim v;
	int found = 0;

	victim_hold(e, &v, "victim");
	for (unsigned i = 0; i < 3; i++) {
		assert_int_equal(wakelock_client_open(NULL, names[i], &c), -EPERM);
		assert_non_null(strstr(wakelock_last_error(), "wakelockd's own"));
		assert_int_equal(slots_named(e, names[i], NULL), 0);
	}
	/* Holds of a client, likewise. */
	for (unsigned i = 0; i < 3; i++) {
		assert_int_equal(wakelock_hold_create(v.c, names[i], &h), -EPERM);
		assert_non_null(strstr(wakelock_last_error(), names[i]));
	}
	/* The daemon's own "alarm:" hold is still made, and a client hold
	 * made after the refusals works. */
	assert_int_equal(wakelock_alarm_create(v.c, "tick", &a), 0);
	assert_int_equal(wakelock_hold_create(v.c, "after", &h), 0);
	assert_int_equal(slots_named(e, "victim", &s), 1);
	for (unsigned j = 0; j < WAKELOCK_MAX_HOLDS_PER_CLIENT; j++) {
		const struct wl_shm_hold *ho = &s->holds[j];

		if (!ho->in_use)
			continue;
		if (!strcmp(ho->name, "alarm:tick"))
			found |= ho->owner == WL_HOLD_DAEMON ? 1 : 4;
		else if (!strcmp(ho->name, "after"))
			found |= ho->owner == WL_HOLD_CLIENT ? 2 : 4;
		else if (strcmp(ho->name, "call"))
			found |= 4;      /* a refused name was recorded after all */
	}
	assert_int_equal(found, 3);
	victim_unharmed(e, &v, "victim");
	victim_release(e, &v);
	wakelock_alarm_destroy(a);
	wakelock_client_close(v.c);
	assert_int_equal(hd_stop(&e->d), 0);
}

/* `wakelock ARGS...` as root; its exit status. */
static int cli(const char *args)
{
	char cmd[1024];
	int r;

	snprintf(cmd, sizeof(cmd), "%s %s 2>/dev/null", hd_bin("wakelock"), args);
	r = system(cmd);
	return WIFEXITED(r) ? WEXITSTATUS(r) : -1;
}

/* `wakelock run --name NAME -- sleep 30` as uid 1000 in group 4242, in a
 * process group of its own (so that the sleep goes too). */
static pid_t run_as_1000(const char *name)
{
	pid_t pid = fork();

	if (pid == 0) {
		gid_t g[1] = { 4242 };

		setpgid(0, 0);
		if (setgroups(1, g) || setgid(4242) || setuid(1000))
			_exit(200);
		execl(hd_bin("wakelock"), "wakelock", "run", "--name", name, "--", "sleep", "30",
		      (char *)NULL);
		_exit(127);
	}
	assert_true(pid > 0);
	return pid;
}

struct listed {
	struct env *e;
	const char *name;
};

static int listed_holding(void *arg)
{
	struct listed *l = arg;
	const struct wl_shm_slot *s = NULL;

	return slots_named(l->e, l->name, &s) == 1 && s->holding;
}

static int slot_allowed(struct env *e, const char *name)
{
	const struct wl_shm_slot *s = NULL;

	assert_int_equal(slots_named(e, name, &s), 1);
	return (int)s->allowed;
}

static void reap(pid_t pid)
{
	int status;

	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
}

/*
 * deny by name cannot stop a client that registers again under another
 * name; deny uid:N stops every client of that user, new names too, and
 * nobody else's.  The impostor cannot take the victim's name either, so
 * denying a name never denies a victim for an impostor.
 */
static void test_deny_by_uid(void **st)
{
	struct env *e = *st;
	struct listed l1 = { e, "imp" }, l2 = { e, "imp2" };
	char dir[320], *slash;
	struct victim v;
	pid_t imp, imp2, dup;
	uint64_t a;
	int status;

	if (geteuid() != 0) {
		print_message("needs root: only root can run clients as another uid\n");
		skip();
	}
	/* Let uid 1000 reach the socket (the daemon checks the group). */
	snprintf(dir, sizeof(dir), "%s", e->d.sock);
	slash = strrchr(dir, '/');
	*slash = 0;
	assert_int_equal(chmod(dir, 0755), 0);
	assert_int_equal(chmod(e->d.dir, 0755), 0);

	victim_hold(e, &v, "victim");
	/* The impostor under the victim's name: refused. */
	dup = run_as_1000("victim");
	assert_int_equal(waitpid(dup, &status, 0), dup);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
	/* Under its own name it holds, and holds the system awake. */
	imp = run_as_1000("imp");
	assert_true(hd_wait_for(listed_holding, &l1, 5000));
	assert_true(slot_allowed(e, "imp"));
	/* Deny the impostor's uid: it no longer counts, the victim still does. */
	assert_int_equal(cli("deny uid:1000"), 0);
	assert_false(slot_allowed(e, "imp"));
	assert_true(slot_allowed(e, "victim"));
	/* A new name does not help: denied from its registration. */
	imp2 = run_as_1000("imp2");
	assert_true(hd_wait_for(listed_holding, &l2, 5000));
	assert_false(slot_allowed(e, "imp2"));
	victim_unharmed(e, &v, "victim");
	/* Only denied clients hold once the victim lets go: it suspends. */
	victim_release(e, &v);
	/* Allowed again: the impostors keep it awake once more. */
	assert_int_equal(cli("allow uid:1000"), 0);
	assert_true(slot_allowed(e, "imp"));
	assert_true(slot_allowed(e, "imp2"));
	hd_sleep_ms(100);        /* an attempt under way when allowed ends */
	a = attempts(e);
	hd_sleep_ms(300);
	assert_int_equal(attempts(e), a);
	/* Keys the daemon would not match are refused by the CLI. */
	assert_int_equal(cli("deny uid:no-such-user-xyz"), 2);
	assert_int_equal(cli("deny uid:12x"), 2);
	assert_true(slot_allowed(e, "imp"));
	/* A user name is resolved to its uid (root is in every passwd). */
	assert_int_equal(cli("deny uid:root"), 0);
	assert_false(slot_allowed(e, "victim"));
	assert_true(slot_allowed(e, "imp"));
	assert_int_equal(cli("allow uid:0"), 0);
	assert_true(slot_allowed(e, "victim"));
	reap(imp);
	reap(imp2);
	wakelock_client_close(v.c);
	assert_int_equal(hd_stop(&e->d), 0);
}

/* A configured "deny = uid:1000" denies that user's clients from their
 * registration. */
static void test_config_deny_uid(void **st)
{
	struct env *e = *st;
	struct listed l = { e, "late" };
	char dir[320], *slash;
	struct victim v;
	pid_t imp;

	if (geteuid() != 0) {
		print_message("needs root: only root can run clients as another uid\n");
		skip();
	}
	snprintf(dir, sizeof(dir), "%s", e->d.sock);
	slash = strrchr(dir, '/');
	*slash = 0;
	assert_int_equal(chmod(dir, 0755), 0);
	assert_int_equal(chmod(e->d.dir, 0755), 0);
	victim_hold(e, &v, "victim");
	imp = run_as_1000("late");
	assert_true(hd_wait_for(listed_holding, &l, 5000));
	assert_false(slot_allowed(e, "late"));
	victim_unharmed(e, &v, "victim");
	victim_release(e, &v);
	reap(imp);
	wakelock_client_close(v.c);
	assert_int_equal(hd_stop(&e->d), 0);
}

static int setup_deny_1000(void **st)
{
	return setup_with(st, "[access]\ngroup = 4242\ndeny = uid:1000\n");
}

/* held_ms of hold `hold` of client `client` in `wakelock list --json`,
 * or -1. */
static long long list_held_ms(const char *client, const char *hold)
{
	char cmd[1024], out[65536], pat[128], *p;
	size_t n;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "%s --json list", hd_bin("wakelock"));
	f = popen(cmd, "r");
	assert_non_null(f);
	n = fread(out, 1, sizeof(out) - 1, f);
	pclose(f);
	out[n] = 0;
	snprintf(pat, sizeof(pat), "{\"client\":\"%s\",", client);
	for (p = strstr(out, pat); p; p = strstr(p + 1, pat)) {
		char *end = strchr(p, '}'), hp[96], *q;

		snprintf(hp, sizeof(hp), "\"hold\":\"%s\",", hold);
		q = strstr(p, hp);
		if (q && end && q < end && (q = strstr(q, "\"held_ms\":")) && q < end)
			return strtoll(q + 10, NULL, 10);
	}
	return -1;
}

/*
 * `wakelock list` shows the time since the acquire, as the client
 * stamped it, although the daemon first looks 2 s later.  A client that
 * scribbles its stamps misreports itself only, and within its own life:
 * never held since before it registered, never since the future.
 */
static void test_list_shows_time_since_acquire(void **st)
{
	struct env *e = *st;
	wakelock_hold *early, *future;
	uint64_t t_reg, t_now;
	struct victim v;
	long long ms;

	t_reg = hd_now_ns();
	assert_int_equal(wakelock_client_open(NULL, "victim", &v.c), 0);
	assert_int_equal(wakelock_hold_create(v.c, "call", &v.h), 0);
	assert_int_equal(wakelock_hold_acquire(v.h), 0);
	/* Nobody looks for 2 s (the power loop does not mirror). */
	hd_sleep_ms(2000);
	ms = list_held_ms("victim", "call");
	assert_true(ms >= 1700 && ms <= 2300);
	v.a0 = attempts(e);
	victim_unharmed(e, &v, "victim");
	/* Scribbled stamps: before the registration, and an hour ahead. */
	assert_int_equal(wakelock_hold_create(v.c, "early", &early), 0);
	assert_int_equal(wakelock_hold_create(v.c, "future", &future), 0);
	assert_int_equal(wakelock_hold_acquire(early), 0);
	assert_int_equal(wakelock_hold_acquire(future), 0);
	((struct wl_region_hold *)(void *)early)->since = 1;
	((struct wl_region_hold *)(void *)future)->since = hd_now_ns() + 3600000000000ull;
	ms = list_held_ms("victim", "early");
	t_now = hd_now_ns();
	assert_true(ms >= 1700);
	assert_true(ms <= (long long)((t_now - t_reg) / 1000000u) + 50);
	ms = list_held_ms("victim", "future");
	assert_true(ms >= 0 && ms <= 300);
	/* The honest hold is unaffected. */
	ms = list_held_ms("victim", "call");
	assert_true(ms >= 1700 && ms <= 2800);
	victim_unharmed(e, &v, "victim");
	assert_int_equal(wakelock_hold_release(early), 0);
	assert_int_equal(wakelock_hold_release(future), 0);
	victim_release(e, &v);
	wakelock_client_close(v.c);
	assert_int_equal(hd_stop(&e->d), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_impostor_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reserved_names_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deny_by_uid, setup_group, teardown),
		cmocka_unit_test_setup_teardown(test_config_deny_uid, setup_deny_1000, teardown),
		cmocka_unit_test_setup_teardown(test_list_shows_time_since_acquire, setup, teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	if (getenv("WL_TEST"))
		cmocka_set_test_filter(getenv("WL_TEST"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
