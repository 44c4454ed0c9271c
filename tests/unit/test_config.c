/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Configuration file and options, policy lists, backoff arithmetic. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "daemon/backoff.h"
#include "daemon/config.h"
#include "daemon/log.h"
#include "daemon/logind.h"
#include "lib/wl_shm.h"
#include "daemon/policy.h"

static char conf_path[64];

static void write_conf(const char *text)
{
	FILE *f;

	strcpy(conf_path, "/tmp/wl-conf-XXXXXX");
	int fd = mkstemp(conf_path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fputs(text, f);
	fclose(f);
}

/* The same with any bytes, NULs included. */
static void write_conf_bytes(const char *text, size_t len)
{
	FILE *f;

	strcpy(conf_path, "/tmp/wl-conf-XXXXXX");
	int fd = mkstemp(conf_path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_int_equal(fwrite(text, 1, len, f), len);
	fclose(f);
}

static int build(struct wld_config *c, char *err, ...)
{
	char *argv[32];
	int argc = 0;
	va_list ap;
	char *a;

	argv[argc++] = "wakelockd";
	va_start(ap, err);
	while ((a = va_arg(ap, char *)))
		argv[argc++] = a;
	va_end(ap);
	argv[argc] = NULL;
	return config_build(argc, argv, c, err, 512);
}

static void test_file_and_override(void **st)
{
	struct wld_config c;
	char err[512] = "";
	(void)st;

	write_conf("; comment\n[suspend]\nstate = mem\nmem_sleep = deep\nmin_awake_ms = 250\n"
	           "backoff_max_ms = 5000\n[access]\ngroup = 4242\ndeny = a, b\ndeny = c\n"
	           "[paths]\nrun_dir = /tmp/x\n[log]\nlevel = debug\n");
	assert_int_equal(build(&c, err, "--config", conf_path, NULL), CONFIG_OK);
	assert_string_equal(c.state, "mem");
	assert_string_equal(c.mem_sleep, "deep");
	assert_int_equal(c.min_awake_ms, 250);
	assert_int_equal(c.backoff_initial_ms, 100);   /* default */
	assert_int_equal(c.backoff_max_ms, 5000);
	assert_int_equal(c.have_gid, 1);
	assert_int_equal(c.gid, 4242);
	assert_int_equal(c.ndeny, 3);
	assert_true(config_is_denied(&c, "c"));
	assert_int_equal(c.log_level, LOG_L_DEBUG);
	assert_int_equal(c.alarm_timeout_ms, 10000);   /* default */
	/* The command line wins over the file. */
	assert_int_equal(build(&c, err, "--config", conf_path, "--min-awake-ms", "7", "--state",
	                       "mem", "--deny", "d", "--log-level", "warn", NULL), CONFIG_OK);
	assert_int_equal(c.min_awake_ms, 7);
	assert_int_equal(c.ndeny, 4);
	assert_int_equal(c.log_level, LOG_L_WARN);
	assert_int_equal(c.hibernate_after_s, 0);       /* default: never */
	if (build(&c, err, "--config", conf_path, "--hibernate-after-s", "7200", NULL) != CONFIG_OK)
		fail_msg("--hibernate-after-s 7200: %s", err);
	assert_int_equal(c.hibernate_after_s, 7200);
	unlink(conf_path);
}

static void expect_error(const char *text, const char *needle)
{
	struct wld_config c;
	char err[512] = "";

	write_conf(text);
	assert_int_equal(build(&c, err, "--config", conf_path, NULL), CONFIG_ERROR);
	if (!strstr(err, needle))
		fail_msg("error '%s' lacks '%s'", err, needle);
	if (!strstr(err, conf_path))
		fail_msg("error '%s' lacks the file name", err);
	unlink(conf_path);
}

static void test_file_errors(void **st)
{
	(void)st;
	expect_error("[suspend]\nstate = mem\nstate = hibernate\n", ":3: [suspend] state: expected freeze, mem or disk");
	expect_error("[suspend]\n\nmin_awake_ms = -4\n", ":3: [suspend] min_awake_ms: expected a non-negative integer");
	expect_error("[suspend]\nbogus = 1\n", ":2: [suspend] bogus: unknown section or key");
	expect_error("[suspend]\nthis line is wrong\nstate = nope\n", ":2: syntax error");
	expect_error("[access]\ndeny = ok, \"bad\"\n", ":2: [access] deny: invalid client name");
	expect_error("[suspend]\nbackoff_initial_ms = 9000\nbackoff_max_ms = 10\n", "exceeds");
	expect_error("[suspend]\nmem_sleep = deep\n", "mem_sleep only applies");
	expect_error("[suspend]\nstate = disk\nhibernate_after_s = 60\n",
	             "hibernate_after_s needs state = freeze or mem");
	expect_error("[suspend]\nhibernate_after_s = 31536001\n",
	             ":2: [suspend] hibernate_after_s: value too large");
	expect_error("[suspend]\nhibernate_after_s = -1\n", ":2: [suspend] hibernate_after_s");
	expect_error("[alarm]\ntimeout_ms = 0\n", "alarm timeout_ms must be at least 1");
	expect_error("[alarm]\ntimeout_ms = 86400001\n", ":2: [alarm] timeout_ms: value too large");
}



/* [wake_grace] NAME = MS rules and [policy] on_ac, from the file and the
 * command line, and their errors. */
static void test_wake_grace_and_on_ac(void **st)
{
	struct wld_config c;
	char err[512] = "";

	(void)st;
	write_conf("[wake_grace]\ngpio-keys = 8000\nirq/45 = 3000\ngpio-keys = 9000\n"
	           "[policy]\non_ac = never\n");
	assert_int_equal(build(&c, err, "--config", conf_path, "--wake-grace", "1-1.2=4000", NULL),
	                 CONFIG_OK);
	unlink(conf_path);
	assert_int_equal(c.ngrace, 3);
	assert_string_equal(c.grace[0].name, "gpio-keys");
	assert_int_equal(c.grace[0].ms, 9000);              /* the later one */
	assert_string_equal(c.grace[1].name, "irq/45");
	assert_string_equal(c.grace[2].name, "1-1.2");
	assert_int_equal(c.grace[2].ms, 4000);
	assert_int_equal(c.on_ac, ON_AC_NEVER);
	expect_error("[wake_grace]\nmodem = soon\n", ":2: [wake_grace] modem: expected a non-negative integer");
	expect_error("[wake_grace]\nmo dem = 5\n", "letters, digits");
	expect_error("[wake_grace]\nirq/x = 5\n", "irq/N with N an interrupt number");
	expect_error("[wake_grace]\nmodem = 600001\n", "value too large");
	expect_error("[policy]\non_ac = sometimes\n", "expected opportunistic, idle or never");
	expect_error("[wake_grace]\na0 = 1\na1 = 1\na2 = 1\na3 = 1\na4 = 1\na5 = 1\na6 = 1\n"
	             "a7 = 1\na8 = 1\na9 = 1\nb0 = 1\nb1 = 1\nb2 = 1\nb3 = 1\nb4 = 1\nb5 = 1\n"
	             "b6 = 1\n", ":18: [wake_grace] b6: too many");
	assert_int_equal(build(&c, err, "--wake-grace", "nonsense", NULL), CONFIG_ERROR);
	assert_non_null(strstr(err, "expected NAME=MS"));
}

static void expect_error_in(const char *err, const char *needle);

/* [policy] on_ac, idle_timeout_ac_ms, critical_battery_percent and
 * critical_action: the defaults of each mode (whichever comes first in the
 * file, and a command line that changes the mode), explicit values, and
 * the errors. */
static void test_power_policy(void **st)
{
	struct wld_config c;
	char err[512] = "";

	(void)st;
	assert_int_equal(build(&c, err, NULL), CONFIG_OK);          /* phone */
	assert_int_equal(c.on_ac, ON_AC_OPPORTUNISTIC);
	assert_int_equal(c.critical_action, CRITICAL_POWEROFF);
	assert_int_equal(c.critical_percent, 5);
	assert_int_equal(c.idle_timeout_ms, 300000);
	assert_int_equal(c.idle_timeout_ac_ms, 600000);
	assert_int_equal(build(&c, err, "--policy", "laptop", NULL), CONFIG_OK);
	assert_int_equal(c.on_ac, ON_AC_IDLE);
	assert_int_equal(c.critical_action, CRITICAL_HIBERNATE);
	assert_int_equal(build(&c, err, "--policy", "appliance", NULL), CONFIG_OK);
	assert_int_equal(c.on_ac, ON_AC_OPPORTUNISTIC);
	assert_int_equal(c.critical_action, CRITICAL_NONE);
	/* The key before the mode, and the mode from the command line. */
	write_conf("[policy]\nidle_timeout_ac_ms = 900000\ncritical_battery_percent = 0\n"
	           "mode = laptop\n");
	assert_int_equal(build(&c, err, "--config", conf_path, NULL), CONFIG_OK);
	assert_int_equal(c.on_ac, ON_AC_IDLE);
	assert_int_equal(c.idle_timeout_ac_ms, 900000);
	assert_int_equal(c.critical_percent, 0);
	assert_int_equal(build(&c, err, "--config", conf_path, "--policy", "phone", "--on-ac",
	                       "idle", "--idle-timeout-ac-ms", "1234", "--critical-action",
	                       "hibernate", "--critical-battery-percent", "12", NULL), CONFIG_OK);
	unlink(conf_path);
	assert_int_equal(c.policy_mode, POLICY_PHONE);
	assert_int_equal(c.on_ac, ON_AC_IDLE);
	assert_int_equal(c.idle_timeout_ac_ms, 1234);
	assert_int_equal(c.critical_action, CRITICAL_HIBERNATE);
	assert_int_equal(c.critical_percent, 12);
	write_conf("[policy]\nmode = laptop\non_ac = opportunistic\ncritical_action = none\n");
	assert_int_equal(build(&c, err, "--config", conf_path, NULL), CONFIG_OK);
	unlink(conf_path);
	assert_int_equal(c.on_ac, ON_AC_OPPORTUNISTIC);
	assert_int_equal(c.critical_action, CRITICAL_NONE);
	assert_string_equal(config_on_ac_name(ON_AC_IDLE), "idle");
	assert_string_equal(config_critical_action_name(CRITICAL_POWEROFF), "poweroff");

	expect_error("[policy]\nidle_timeout_ac_ms = 0\n", ":2: [policy] idle_timeout_ac_ms: must be at least 1");
	expect_error("[policy]\nidle_timeout_ac_ms = 10m\n", "expected a non-negative integer");
	expect_error("[policy]\nidle_timeout_ac_ms = 86400001\n", "value too large");
	expect_error("[policy]\ncritical_battery_percent = 51\n",
	             ":2: [policy] critical_battery_percent: a percentage of 0 (off) to 50");
	expect_error("[policy]\ncritical_battery_percent = 5%\n", "expected a non-negative integer");
	expect_error("[policy]\ncritical_battery_percent = -1\n", "expected a non-negative integer");
	expect_error("[policy]\ncritical_action = shutdown\n",
	             ":2: [policy] critical_action: expected hibernate, poweroff or none");
	expect_error("[policy]\ncritical_action = hybrid-sleep\n", "would not stop the battery");
	expect_error("[policy]\nmode = appliance\non_ac = idle\n",
	             "on_ac = idle needs mode = laptop or phone");
	assert_int_equal(build(&c, err, "--on-ac", "sometimes", NULL), CONFIG_ERROR);
	expect_error_in(err, "option --on-ac: expected opportunistic, idle or never");
	assert_int_equal(build(&c, err, "--idle-timeout-ac-ms", "0", NULL), CONFIG_ERROR);
	expect_error_in(err, "option --idle-timeout-ac-ms: must be at least 1");
	assert_int_equal(build(&c, err, "--critical-action", "", NULL), CONFIG_ERROR);
	expect_error_in(err, "option --critical-action: expected hibernate, poweroff or none");
}

static void expect_error_in(const char *err, const char *needle)
{
	if (!strstr(err, needle))
		fail_msg("error '%s' lacks '%s'", err, needle);
}

/* The parser reads lines into a buffer of about 200 bytes: the tail of a
 * longer line must not be taken as a line of its own. */
static void test_long_lines(void **st)
{
	struct wld_config c;
	char err[512] = "", text[2048], pad[400];
	(void)st;

	/* A comment whose 199 first bytes fill the buffer, with a directive
	 * after them: the comment is one line and means nothing. */
	memset(pad, 'x', sizeof(pad));
	snprintf(text, sizeof(text), "[suspend]\n; %.*sstate = mem\n[paths]\n#%.*sroot = /\n",
	         197, pad, 198, pad);
	write_conf(text);
	assert_int_equal(build(&c, err, "--config", conf_path, NULL), CONFIG_OK);
	assert_string_equal(c.state, "freeze");
	assert_string_equal(c.root, "");
	unlink(conf_path);
	/* Other long lines are an error, reported on their own line. */
	snprintf(text, sizeof(text), "[suspend]\n; %.*s\n[paths]\nroot = /%.*s\nshm = /x\n",
	         300, pad, 300, pad);
	expect_error(text, ":4: line too long");
	snprintf(text, sizeof(text), "[suspend]\nstate = %.*smem\n", 197, pad);
	expect_error(text, ":2: line too long");
	/* An earlier error still comes first. */
	snprintf(text, sizeof(text), "[suspend]\nstate = nope\nstate = %.*s\n", 300, pad);
	expect_error(text, ":2: [suspend] state: expected");
	/* The longest line that fits is accepted: 198 bytes and the newline. */
	snprintf(text, sizeof(text), "[paths]\nroot = /%.*s\n", 190, pad);
	write_conf(text);
	assert_int_equal(strlen(strchr(text, '\n') + 1), 199);
	assert_int_equal(build(&c, err, "--config", conf_path, NULL), CONFIG_OK);
	assert_int_equal(strlen(c.root), 191);
	unlink(conf_path);
}

static void test_not_a_file(void **st)
{
	struct wld_config c;
	char err[512] = "", fifo[64];
	(void)st;

	assert_int_equal(build(&c, err, "--config", "/tmp", NULL), CONFIG_ERROR);
	expect_error_in(err, "/tmp: is a directory");
	/* Would be read for ever. */
	assert_int_equal(build(&c, err, "--config", "/dev/zero", NULL), CONFIG_ERROR);
	expect_error_in(err, "/dev/zero: not a regular file");
	/* Would wait for a writer. */
	snprintf(fifo, sizeof(fifo), "/tmp/wl-fifo-%d", (int)getpid());
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(build(&c, err, "--config", fifo, NULL), CONFIG_ERROR);
	unlink(fifo);
	expect_error_in(err, "not a regular file");
	/* A huge (sparse) file. */
	write_conf("[suspend]\n");
	assert_int_equal(truncate(conf_path, 4L << 20), 0);
	assert_int_equal(build(&c, err, "--config", conf_path, NULL), CONFIG_ERROR);
	expect_error_in(err, "too large");
	unlink(conf_path);
}

static void test_nul_and_junk(void **st)
{
	struct wld_config c;
	char err[512] = "";
	static const char nul[] = "[suspend]\n\nstate = mem\0junk\n";
	static const char junk[] = "[sus\x01pend]\nkey\x1b[2J\xff = 1\n";
	(void)st;

	write_conf_bytes(nul, sizeof(nul) - 1);
	assert_int_equal(build(&c, err, "--config", conf_path, NULL), CONFIG_ERROR);
	expect_error_in(err, ":3: NUL byte");
	unlink(conf_path);
	/* Control bytes are not echoed raw to the terminal. */
	write_conf(junk);
	assert_int_equal(build(&c, err, "--config", conf_path, NULL), CONFIG_ERROR);
	expect_error_in(err, ":2: [sus\\x01pend] key\\x1b[2J\\xff: unknown section or key");
	unlink(conf_path);
	assert_int_equal(build(&c, err, "--\x1b]0;x\a", NULL), CONFIG_ERROR);
	expect_error_in(err, "unknown option '--\\x1b]0;x\\x07'");
	assert_int_equal(build(&c, err, "--group", "no\x1bgroup", NULL), CONFIG_ERROR);
	expect_error_in(err, "group 'no\\x1bgroup' not found");
	for (const char *p = err; *p; p++)
		assert_true(*p >= 0x20 && *p < 0x7f);
}

static void test_group_range(void **st)
{
	struct wld_config c;
	char err[512] = "";
	gid_t g;
	(void)st;

	/* 99999999999999 mod 2^32 would be another group. */
	assert_int_equal(build(&c, err, "--group", "99999999999999", NULL), CONFIG_ERROR);
	expect_error_in(err, "option --group: gid out of range");
	assert_int_equal(build(&c, err, "--group", "4294967295", NULL), CONFIG_ERROR);
	assert_int_equal(build(&c, err, "--group", "184467440737095516160", NULL), CONFIG_ERROR);
	assert_int_equal(build(&c, err, "--group", "4294967294", NULL), CONFIG_OK);
	assert_int_equal(c.have_gid, 1);
	assert_int_equal(c.gid, 4294967294u);
	assert_int_equal(build(&c, err, "--group", "0", NULL), CONFIG_OK);
	assert_int_equal(c.gid, 0);
	expect_error("[access]\ngroup = 4294967296\n", ":2: [access] group: gid out of range");
	expect_error("[access]\nadmin_group = 4294967296\n", ":2: [access] admin_group: gid out of range");
	expect_error("[access]\nmax_clients_per_uid = 0\n", ":2: [access] max_clients_per_uid: must be at least 1");
	expect_error("[access]\nmax_clients_per_uid = 1025\n", ":2: [access] max_clients_per_uid:");
	assert_int_equal(config_resolve_group("99999999999999", &g, err, 512), -ERANGE);
}

static void test_alarm_timeout(void **st)
{
	struct wld_config c;
	char err[512] = "";
	(void)st;

	write_conf("[alarm]\ntimeout_ms = 2500\n");
	assert_int_equal(build(&c, err, "--config", conf_path, NULL), CONFIG_OK);
	assert_int_equal(c.alarm_timeout_ms, 2500);
	assert_int_equal(build(&c, err, "--config", conf_path, "--alarm-timeout-ms", "40", NULL),
	                 CONFIG_OK);
	assert_int_equal(c.alarm_timeout_ms, 40);
	unlink(conf_path);
	assert_int_equal(build(&c, err, "--alarm-timeout-ms", "0", NULL), CONFIG_ERROR);
	assert_non_null(strstr(err, "at least 1"));
	assert_int_equal(build(&c, err, "--alarm-timeout-ms", "-3", NULL), CONFIG_ERROR);
	assert_non_null(strstr(err, "option --alarm-timeout-ms"));
}

static void test_option_errors(void **st)
{
	struct wld_config c;
	char err[512] = "";
	(void)st;

	assert_int_equal(build(&c, err, "--state", "sleepy", NULL), CONFIG_ERROR);
	assert_non_null(strstr(err, "option --state: expected freeze, mem or disk"));
	assert_int_equal(build(&c, err, "--frobnicate", NULL), CONFIG_ERROR);
	assert_non_null(strstr(err, "unknown option"));
	assert_int_equal(build(&c, err, "--config", "/nonexistent/x.conf", NULL), CONFIG_ERROR);
	assert_non_null(strstr(err, "/nonexistent/x.conf"));
	assert_int_equal(build(&c, err, "--group", "no-such-group-xyz", NULL), CONFIG_ERROR);
	assert_non_null(strstr(err, "no-such-group-xyz"));
	assert_int_equal(build(&c, err, "--min-awake-ms", "12x", NULL), CONFIG_ERROR);
	assert_int_equal(build(&c, err, "--root", "relative", NULL), CONFIG_ERROR);
	assert_int_equal(build(&c, err, "--mem-sleep", "deep", "--state", "mem", NULL), CONFIG_OK);
}

static void test_policy(void **st)
{
	struct wld_config c;
	struct policy p;
	char err[512];
	(void)st;

	memset(&p, 0, sizeof(p));
	assert_int_equal(build(&c, err, "--deny", "cfg", NULL), CONFIG_OK);
	assert_true(policy_denied(&p, &c, "cfg"));
	assert_false(policy_denied(&p, &c, "x"));
	policy_deny(&p, "x");
	assert_true(policy_denied(&p, &c, "x"));
	policy_allow(&p, "x");
	assert_false(policy_denied(&p, &c, "x"));
	policy_allow(&p, "cfg");                 /* lifts a configured denial */
	assert_false(policy_denied(&p, &c, "cfg"));
	policy_deny(&p, "cfg");
	assert_true(policy_denied(&p, &c, "cfg"));
}

/* Policy by user: "uid:N" keys deny all of a user's clients, whatever
 * their names; a name denies that name only.  Keys have one spelling. */
static void test_policy_by_uid(void **st)
{
	struct wld_config c;
	struct policy p;
	char err[512], key[WAKELOCK_NAME_MAX];
	(void)st;

	memset(&p, 0, sizeof(p));
	assert_int_equal(build(&c, err, "--deny", "uid:01000,victim", NULL), CONFIG_OK);
	assert_true(policy_denied_client(&p, &c, "anything", 1000));   /* uid:1000 */
	assert_true(policy_denied_client(&p, &c, "victim", 0));        /* by name */
	assert_false(policy_denied_client(&p, &c, "other", 1001));
	assert_false(policy_denied_client(&p, &c, "other", 100));      /* not a prefix match */
	/* The uid is the socket's word: a name cannot borrow another's. */
	assert_false(policy_denied_client(&p, &c, "uid:1001", 0));
	assert_int_equal(policy_deny(&p, "uid:1001"), 0);
	assert_true(policy_denied_client(&p, &c, "renamed", 1001));
	assert_int_equal(policy_allow(&p, "uid:0001001"), 0);         /* the same key */
	assert_false(policy_denied_client(&p, &c, "renamed", 1001));
	assert_int_equal(policy_allow(&p, "uid:1000"), 0);            /* lifts the configured one */
	assert_false(policy_denied_client(&p, &c, "anything", 1000));
	assert_true(policy_denied_client(&p, &c, "victim", 1000));    /* its name still is */
	/* Neither a name nor a uid: refused, nothing changes. */
	assert_int_equal(policy_deny(&p, "uid:"), -EINVAL);
	assert_int_equal(policy_deny(&p, "uid:12x"), -EINVAL);
	assert_int_equal(policy_deny(&p, "uid:-1"), -EINVAL);
	assert_int_equal(policy_deny(&p, "uid:4294967295"), -EINVAL);  /* (uid_t)-1 */
	assert_int_equal(policy_deny(&p, "uid:99999999999"), -EINVAL);
	assert_int_equal(policy_deny(&p, "bad name"), -EINVAL);
	assert_int_equal(p.ndeny, 0);                 /* the allows took uid:1001 out */
	assert_int_equal(p.nallow, 2);
	assert_int_equal(wl_policy_key("uid:0", key), 0);
	assert_string_equal(key, "uid:0");
	assert_int_equal(wl_policy_key("uid:4294967294", key), 0);
	assert_string_equal(key, "uid:4294967294");
	assert_int_equal(wl_policy_key("logind:x", key), 0);          /* names as they are */
	assert_string_equal(key, "logind:x");
	assert_int_equal(build(&c, err, "--deny", "uid:alice", NULL), CONFIG_ERROR);
	assert_non_null(strstr(err, "uid:N"));
}

static void test_backoff(void **st)
{
	struct backoff b;
	uint64_t expect[] = { 100, 200, 400, 800, 1600, 3200, 6400, 12800, 25600, 51200, 60000, 60000 };
	(void)st;

	backoff_init(&b, 100, 2, 60000);
	for (unsigned i = 0; i < sizeof(expect) / sizeof(expect[0]); i++)
		assert_int_equal(backoff_next(&b), expect[i]);
	backoff_reset(&b);
	assert_int_equal(backoff_next(&b), 100);
	backoff_init(&b, 10, 1, 5);              /* max below initial: constant */
	assert_int_equal(backoff_next(&b), 10);
	assert_int_equal(backoff_next(&b), 10);
}

/* [suspend] hook_timeout_ms and --hook-timeout-ms: default 5000, 1 to 3600000. */
static void test_hook_timeout(void **st)
{
	struct wld_config c;
	char err[512] = "";
	(void)st;

	write_conf("[suspend]\n");
	assert_int_equal(build(&c, err, "--config", conf_path, NULL), CONFIG_OK);
	assert_int_equal(c.hook_timeout_ms, 5000);
	unlink(conf_path);
	write_conf("[suspend]\nhook_timeout_ms = 750\n");
	assert_int_equal(build(&c, err, "--config", conf_path, NULL), CONFIG_OK);
	assert_int_equal(c.hook_timeout_ms, 750);
	assert_int_equal(build(&c, err, "--config", conf_path, "--hook-timeout-ms", "20", NULL),
	                 CONFIG_OK);
	assert_int_equal(c.hook_timeout_ms, 20);
	unlink(conf_path);
	assert_int_equal(build(&c, err, "--hook-timeout-ms", "0", NULL), CONFIG_ERROR);
	assert_non_null(strstr(err, "hook_timeout_ms must be at least 1"));
	assert_int_equal(build(&c, err, "--hook-timeout-ms", "3600001", NULL), CONFIG_ERROR);
	assert_non_null(strstr(err, "option --hook-timeout-ms: value too large"));
	write_conf("[suspend]\nhook_timeout_ms = soon\n");
	assert_int_equal(build(&c, err, "--config", conf_path, NULL), CONFIG_ERROR);
	assert_non_null(strstr(err, ":2: [suspend] hook_timeout_ms:"));
	unlink(conf_path);
}

/* [ledger] records (1 to 2^20, default 4096) and claim_window_ms (1 to
 * 60000, default 1000); the old [paths] shm is refused with a reason. */
static void test_ledger_settings(void **st)
{
	struct wld_config c;
	char err[512] = "";
	(void)st;

	write_conf("[ledger]\n");
	assert_int_equal(build(&c, err, "--config", conf_path, NULL), CONFIG_OK);
	assert_int_equal(c.ledger_records, 4096);
	assert_int_equal(c.claim_window_ms, 1000);
	unlink(conf_path);
	write_conf("[ledger]\nrecords = 16\nclaim_window_ms = 250\n");
	assert_int_equal(build(&c, err, "--config", conf_path, NULL), CONFIG_OK);
	assert_int_equal(c.ledger_records, 16);
	assert_int_equal(c.claim_window_ms, 250);
	unlink(conf_path);
	expect_error("[ledger]\nrecords = 0\n", "must be at least 1");
	expect_error("[ledger]\nrecords = 1048577\n", ":2: [ledger] records: value too large");
	expect_error("[ledger]\nclaim_window_ms = 0\n", "must be at least 1");
	expect_error("[ledger]\nclaim_window_ms = 60001\n", "value too large");
	expect_error("[ledger]\nrecords = many\n", ":2: [ledger] records:");
	expect_error("[paths]\nshm = /dev/shm/x\n", "shm is no longer used");
}

/* [logind] mode: on by default (nothing happens without logind), off on
 * request, anything else refused; the option and the file agree. */
static void test_logind_mode(void **st)
{
	struct wld_config c;
	char err[256];
	char *argv[] = { "wakelockd", "--config", conf_path, "--logind", "inhibitors", NULL };

	(void)st;
	config_defaults(&c);
	assert_int_equal(c.logind_mode, LOGIND_INHIBITORS);
	assert_int_equal(c.logind_explicit, 0);
	write_conf("[logind]\nmode = off\n");
	config_defaults(&c);
	assert_int_equal(config_load_file(conf_path, &c, err, sizeof(err)), CONFIG_OK);
	assert_int_equal(c.logind_mode, LOGIND_OFF);
	assert_int_equal(c.logind_explicit, 1);
	/* The command line overrides the file. */
	assert_int_equal(config_build(5, argv, &c, err, sizeof(err)), CONFIG_OK);
	assert_int_equal(c.logind_mode, LOGIND_INHIBITORS);
	unlink(conf_path);
	write_conf("[logind]\nmode = suspend\n");
	config_defaults(&c);
	assert_int_equal(config_load_file(conf_path, &c, err, sizeof(err)), CONFIG_OK);
	assert_int_equal(c.logind_mode, LOGIND_SUSPEND);
	unlink(conf_path);
	expect_error("[logind]\nmode = hybrid-sleep\n",
	             ":2: [logind] mode: expected off, inhibitors or suspend");
	expect_error("[logind]\nmode =\n", "[logind] mode: expected off, inhibitors or suspend");
	expect_error("[logind]\nwhat = sleep\n", ":2: [logind] what: unknown section or key");
}

/* Inhibitors are named by logind's clients: whatever they chose becomes a
 * valid client and hold name, and only sleep/block inhibitors hold. */
static void test_logind_names(void **st)
{
	struct logind_inhibitor inh;
	char name[WAKELOCK_NAME_MAX], tiny[4];
	char longwho[200];

	(void)st;
	logind_clean_name(name, sizeof(name), "GNOME Calls");
	assert_string_equal(name, "GNOME_Calls");
	logind_clean_name(name, sizeof(name), "\x1b[31mred,\"q\"\\\x7f\xc3\xa9");
	assert_string_equal(name, "_[31mred__q_____");
	assert_int_equal(wl_name_check(name), 0);
	logind_clean_name(name, sizeof(name), "");
	assert_string_equal(name, "unnamed");
	logind_clean_name(name, sizeof(name), NULL);
	assert_string_equal(name, "unnamed");
	logind_clean_name(tiny, sizeof(tiny), "abcdef");
	assert_string_equal(tiny, "abc");

	assert_true(logind_what_has_sleep("sleep"));
	assert_true(logind_what_has_sleep("shutdown:sleep"));
	assert_true(logind_what_has_sleep("sleep:idle"));
	assert_false(logind_what_has_sleep("sleepy:idle"));
	assert_false(logind_what_has_sleep("handle-suspend-key"));
	assert_false(logind_what_has_sleep(""));
	assert_false(logind_what_has_sleep(NULL));

	memset(longwho, 'w', sizeof(longwho) - 1);
	longwho[sizeof(longwho) - 1] = '\0';
	assert_int_equal(logind_inhibitor_from(&inh, "shutdown:sleep", longwho, "incoming call",
	                                       "block", 1000, 42), 1);
	assert_int_equal(strlen(inh.name), WAKELOCK_NAME_MAX - 1);
	assert_memory_equal(inh.name, "logind:www", 10);
	assert_int_equal(wl_name_check(inh.name), 0);
	assert_string_equal(inh.hold, "incoming_call");
	assert_int_equal(inh.uid, 1000);
	assert_int_equal(inh.pid, 42);
	memset(&inh, 0x5a, sizeof(inh));
	assert_int_equal(logind_inhibitor_from(&inh, "sleep", "x", "y", "delay", 0, 1), 0);
	assert_int_equal(logind_inhibitor_from(&inh, "shutdown", "x", "y", "block", 0, 1), 0);
	assert_int_equal(logind_inhibitor_from(&inh, "sleep", "x", "y", NULL, 0, 1), 0);
	assert_int_equal(inh.uid, 0x5a5a5a5a);   /* untouched */

	/* "idle" as a word of the list, in block mode only. */
	assert_true(logind_what_has_idle("idle"));
	assert_true(logind_what_has_idle("sleep:idle"));
	assert_false(logind_what_has_idle("idle-ish:handle-lid-switch"));
	assert_false(logind_what_has_idle(NULL));
	assert_int_equal(logind_idle_inhibitor_from(&inh, "idle", "Totem", "Playing video",
	                                            "block", 1000, 77), 1);
	assert_string_equal(inh.name, "logind:Totem");
	assert_string_equal(inh.hold, "Playing_video");
	assert_int_equal(logind_idle_inhibitor_from(&inh, "idle", "x", "y", "delay", 0, 1), 0);
	assert_int_equal(logind_idle_inhibitor_from(&inh, "sleep", "x", "y", "block", 0, 1), 0);
}

/* [policy] session_idle and idle_inhibitors: yes in laptop mode unless
 * set, no in the others unless set. */
static void test_logind_presence_settings(void **st)
{
	struct wld_config c;
	char err[512] = "";

	(void)st;
	assert_int_equal(build(&c, err, "--policy", "laptop", NULL), CONFIG_OK);
	assert_true(config_session_idle(&c));
	assert_true(config_idle_inhibitors(&c));
	assert_int_equal(build(&c, err, NULL), CONFIG_OK);
	assert_false(config_session_idle(&c));
	assert_false(config_idle_inhibitors(&c));
	write_conf("[policy]\nmode = laptop\nsession_idle = no\n");
	assert_int_equal(build(&c, err, "--config", conf_path, NULL), CONFIG_OK);
	unlink(conf_path);
	assert_false(config_session_idle(&c));
	assert_true(config_idle_inhibitors(&c));
	assert_int_equal(build(&c, err, "--session-idle", "yes", "--idle-inhibitors", "on", NULL),
	                 CONFIG_OK);
	assert_true(config_session_idle(&c));
	assert_true(config_idle_inhibitors(&c));
	expect_error("[policy]\nsession_idle = sometimes\n", "expected yes or no");
	assert_int_equal(build(&c, err, "--idle-inhibitors", "maybe", NULL), CONFIG_ERROR);
	assert_non_null(strstr(err, "expected yes or no"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_and_override),
		cmocka_unit_test(test_file_errors),
		cmocka_unit_test(test_wake_grace_and_on_ac),
		cmocka_unit_test(test_power_policy),
		cmocka_unit_test(test_option_errors),
		cmocka_unit_test(test_alarm_timeout),
		cmocka_unit_test(test_long_lines),
		cmocka_unit_test(test_not_a_file),
		cmocka_unit_test(test_nul_and_junk),
		cmocka_unit_test(test_group_range),
		cmocka_unit_test(test_policy),
		cmocka_unit_test(test_backoff),
		cmocka_unit_test(test_hook_timeout),
		cmocka_unit_test(test_ledger_settings),
		cmocka_unit_test(test_logind_mode),
		cmocka_unit_test(test_logind_names),
		cmocka_unit_test(test_logind_presence_settings),
		cmocka_unit_test(test_policy_by_uid),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
