/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Configuration: defaults < INI file < command line.  The file is parsed
 * with libinih (a well-kept parser, Debian's libinih-dev); this file only
 * gives each key its meaning and reports errors as file:line: reason.
 */
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "config.h"
#include "log.h"
#include "../lib/wl_shm.h"

static void defaults(struct wld_config *c)
{
	memset(c, 0, sizeof(*c));
	strcpy(c->state, "freeze");
	c->backoff_initial_ms = 100;
	c->backoff_factor = 2;
	c->backoff_max_ms = 60000;
	c->wake_reasons = 1;
	c->alarm_timeout_ms = WLD_DEFAULT_ALARM_TIMEOUT_MS;
	c->hook_timeout_ms = WLD_DEFAULT_HOOK_TIMEOUT_MS;
	strcpy(c->run_dir, WLD_DEFAULT_RUN_DIR);
	strcpy(c->shm_path, WLD_DEFAULT_SHM);
	c->log_level = LOG_L_INFO;
}

/* --- value parsers: return NULL or a reason --------------------------- */

static const char *parse_uint(const char *v, unsigned max, unsigned *out)
{
	char *end;
	unsigned long x;

	if (!*v || *v == '-' || *v == '+')
		return "expected a non-negative integer";
	errno = 0;
	x = strtoul(v, &end, 10);
	if (errno || *end)
		return "expected a non-negative integer";
	if (x > max)
		return "value too large";
	*out = (unsigned)x;
	return NULL;
}

static const char *parse_bool(const char *v, int *out)
{
	if (!strcmp(v, "yes") || !strcmp(v, "true") || !strcmp(v, "1") || !strcmp(v, "on"))
		*out = 1;
	else if (!strcmp(v, "no") || !strcmp(v, "false") || !strcmp(v, "0") || !strcmp(v, "off"))
		*out = 0;
	else
		return "expected yes or no";
	return NULL;
}

static const char *set_str(char *dst, size_t len, const char *v)
{
	if (strlen(v) >= len)
		return "value too long";
	strcpy(dst, v);
	return NULL;
}

static const char *set_path(char *dst, size_t len, const char *v)
{
	if (*v && *v != '/')
		return "expected an absolute path";
	return set_str(dst, len, v);
}

static const char *set_state(struct wld_config *c, const char *v)
{
	if (strcmp(v, "freeze") && strcmp(v, "mem") && strcmp(v, "disk"))
		return "expected freeze, mem or disk";
	strcpy(c->state, v);
	return NULL;
}

static const char *set_mem_sleep(struct wld_config *c, const char *v)
{
	if (*v && strcmp(v, "s2idle") && strcmp(v, "shallow") && strcmp(v, "deep"))
		return "expected s2idle, shallow or deep";
	strcpy(c->mem_sleep, v);
	return NULL;
}

static const char *add_deny(struct wld_config *c, const char *v)
{
	/* A comma-separated list; repeated keys accumulate. */
	char buf[1024], *save = NULL;

	if (strlen(v) >= sizeof(buf))
		return "value too long";
	strcpy(buf, v);
	for (char *tok = strtok_r(buf, ", \t", &save); tok; tok = strtok_r(NULL, ", \t", &save)) {
		if (wl_name_check(tok) < 0)
			return "invalid client name in deny list";
		if (config_is_denied(c, tok))
			continue;
		if (c->ndeny >= WLD_MAX_DENY)
			return "too many names in deny list";
		strcpy(c->deny[c->ndeny++], tok);
	}
	return NULL;
}

static const char *set_level(struct wld_config *c, const char *v)
{
	int l = log_level_parse(v);

	if (l < 0)
		return "expected debug, info, warn or error";
	c->log_level = l;
	return NULL;
}

/* One key of one section: shared by the file and the command line. */
static const char *apply_key(struct wld_config *c, const char *sec, const char *key,
                             const char *v)
{
#define KEY(s, k) (!strcmp(sec, s) && !strcmp(key, k))
	if (KEY("suspend", "state"))
		return set_state(c, v);
	if (KEY("suspend", "mem_sleep"))
		return set_mem_sleep(c, v);
	if (KEY("suspend", "min_awake_ms"))
		return parse_uint(v, 86400000u, &c->min_awake_ms);
	if (KEY("suspend", "backoff_initial_ms"))
		return parse_uint(v, 3600000u, &c->backoff_initial_ms);
	if (KEY("suspend", "backoff_factor"))
		return parse_uint(v, 16, &c->backoff_factor);
	if (KEY("suspend", "backoff_max_ms"))
		return parse_uint(v, 86400000u, &c->backoff_max_ms);
	if (KEY("suspend", "short_suspend_ms"))
		return parse_uint(v, 3600000u, &c->short_suspend_ms);
	if (KEY("suspend", "wake_reasons"))
		return parse_bool(v, &c->wake_reasons);
	if (KEY("suspend", "pre_suspend_hook"))
		return set_path(c->pre_suspend_hook, sizeof(c->pre_suspend_hook), v);
	if (KEY("suspend", "post_resume_hook"))
		return set_path(c->post_resume_hook, sizeof(c->post_resume_hook), v);
	if (KEY("suspend", "hook_timeout_ms"))
		return parse_uint(v, 3600000u, &c->hook_timeout_ms);
	if (KEY("alarm", "timeout_ms"))
		return parse_uint(v, 86400000u, &c->alarm_timeout_ms);
	if (KEY("access", "group"))
		return set_str(c->group, sizeof(c->group), v);
	if (KEY("access", "deny"))
		return add_deny(c, v);
	if (KEY("paths", "root"))
		return set_path(c->root, sizeof(c->root), v);
	if (KEY("paths", "run_dir"))
		return set_path(c->run_dir, sizeof(c->run_dir), v);
	if (KEY("paths", "shm"))
		return set_path(c->shm_path, sizeof(c->shm_path), v);
	if (KEY("paths", "stats_file"))
		return set_path(c->stats_file, sizeof(c->stats_file), v);
	if (KEY("log", "level"))
		return set_level(c, v);
	if (KEY("log", "syslog"))
		return parse_bool(v, &c->use_syslog);
#undef KEY
	return "unknown section or key";
}

/* --- INI file --------------------------------------------------------- */

struct file_ctx {
	FILE *f;
	struct wld_config *cfg;
	int line;          /* lines read so far = the line being parsed */
	int err_line;      /* first semantic error */
	char reason[128];
};

static char *reader(char *str, int num, void *stream)
{
	struct file_ctx *x = stream;
	char *r = fgets(str, num, x->f);

	if (r)
		x->line++;
	return r;
}

static int handler(void *user, const char *sec, const char *key, const char *val)
{
	struct file_ctx *x = user;
	const char *why = apply_key(x->cfg, sec, key, val);

	if (why && !x->err_line) {
		x->err_line = x->line;
		snprintf(x->reason, sizeof(x->reason), "[%s] %s: %s", sec, key, why);
	}
	return why == NULL;
}

int config_load_file(const char *path, struct wld_config *cfg, char *err, size_t errlen)
{
	struct file_ctx x = { .cfg = cfg };
	int r;

	x.f = fopen(path, "re");
	if (!x.f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return CONFIG_ERROR;
	}
	r = ini_parse_stream(reader, &x, handler, &x);
	fclose(x.f);
	if (r == 0)
		return CONFIG_OK;
	if (r < 0) {
		snprintf(err, errlen, "%s: cannot parse (error %d)", path, r);
		return CONFIG_ERROR;
	}
	/* inih returns the first failing line; if our handler did not fail
	 * there, the line itself is malformed. */
	if (x.err_line == r)
		snprintf(err, errlen, "%s:%d: %s", path, r, x.reason);
	else
		snprintf(err, errlen, "%s:%d: syntax error (expected [section] or key = value)",
		         path, r);
	return CONFIG_ERROR;
}

int config_is_denied(const struct wld_config *cfg, const char *name)
{
	for (unsigned i = 0; i < cfg->ndeny; i++)
		if (!strcmp(cfg->deny[i], name))
			return 1;
	return 0;
}

/*
 * Group lookup without NSS: fgetgrent() reads /etc/group directly, which
 * also works in the statically linked guest build (getgrnam() would need
 * NSS modules that a static binary cannot load).  Numeric gids too.
 */
int config_resolve_group(const char *group, gid_t *gid, char *err, size_t errlen)
{
	char *end;
	unsigned long n = strtoul(group, &end, 10);
	FILE *f;
	struct group *g;

	if (*group && !*end) {
		*gid = (gid_t)n;
		return 0;
	}
	f = fopen("/etc/group", "re");
	if (f) {
		while ((g = fgetgrent(f))) {
			if (!strcmp(g->gr_name, group)) {
				*gid = g->gr_gid;
				fclose(f);
				return 0;
			}
		}
		fclose(f);
	}
	snprintf(err, errlen, "group '%s' not found in /etc/group", group);
	return -ENOENT;
}

/* --- command line ----------------------------------------------------- */

enum {
	OPT_STATE = 256, OPT_MEM_SLEEP, OPT_MIN_AWAKE, OPT_LOG_LEVEL, OPT_STATS, OPT_GROUP,
	OPT_DENY, OPT_ROOT, OPT_RUN_DIR, OPT_SHM, OPT_BO_INIT, OPT_BO_MAX, OPT_BO_FACTOR,
	OPT_SHORT, OPT_SYSLOG, OPT_CHECK, OPT_PRE, OPT_POST, OPT_NO_WAKE_REASONS,
	OPT_ALARM_TIMEOUT, OPT_HOOK_TIMEOUT,
};

static const struct option opts[] = {
	{ "config", required_argument, NULL, 'c' },
	{ "state", required_argument, NULL, OPT_STATE },
	{ "mem-sleep", required_argument, NULL, OPT_MEM_SLEEP },
	{ "min-awake-ms", required_argument, NULL, OPT_MIN_AWAKE },
	{ "backoff-initial-ms", required_argument, NULL, OPT_BO_INIT },
	{ "backoff-max-ms", required_argument, NULL, OPT_BO_MAX },
	{ "backoff-factor", required_argument, NULL, OPT_BO_FACTOR },
	{ "short-suspend-ms", required_argument, NULL, OPT_SHORT },
	{ "pre-suspend-hook", required_argument, NULL, OPT_PRE },
	{ "post-resume-hook", required_argument, NULL, OPT_POST },
	{ "hook-timeout-ms", required_argument, NULL, OPT_HOOK_TIMEOUT },
	{ "no-wake-reasons", no_argument, NULL, OPT_NO_WAKE_REASONS },
	{ "alarm-timeout-ms", required_argument, NULL, OPT_ALARM_TIMEOUT },
	{ "foreground", no_argument, NULL, 'f' },
	{ "log-level", required_argument, NULL, OPT_LOG_LEVEL },
	{ "syslog", no_argument, NULL, OPT_SYSLOG },
	{ "stats-file", required_argument, NULL, OPT_STATS },
	{ "group", required_argument, NULL, OPT_GROUP },
	{ "deny", required_argument, NULL, OPT_DENY },
	{ "root", required_argument, NULL, OPT_ROOT },
	{ "run-dir", required_argument, NULL, OPT_RUN_DIR },
	{ "shm", required_argument, NULL, OPT_SHM },
	{ "check-config", no_argument, NULL, OPT_CHECK },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

void config_usage(void)
{
	printf("Usage: wakelockd [OPTION]...\n"
	       "Opportunistic-suspend power manager (see wakelockd(8)).\n\n"
	       "  -c, --config FILE          configuration file (default " WLD_DEFAULT_CONFIG ")\n"
	       "      --state S              freeze | mem | disk\n"
	       "      --mem-sleep M          s2idle | shallow | deep\n"
	       "      --min-awake-ms N       stay awake N ms after each resume\n"
	       "      --backoff-initial-ms N --backoff-factor N --backoff-max-ms N\n"
	       "      --short-suspend-ms N   treat suspends shorter than N ms as failures\n"
	       "      --pre-suspend-hook P   --post-resume-hook P\n"
	       "      --hook-timeout-ms N    kill a hook still running after N ms (default 5000)\n"
	       "      --no-wake-reasons      do not scan /sys/class/wakeup around suspends\n"
	       "      --alarm-timeout-ms N   release a fired alarm's hold after N ms (default 10000)\n"
	       "      --group NAME           group allowed to block suspend\n"
	       "      --deny NAME            deny a client by name (repeatable)\n"
	       "      --root DIR             prefix for /sys (tests)\n"
	       "      --run-dir DIR          socket and pid file (default " WLD_DEFAULT_RUN_DIR ")\n"
	       "      --shm PATH             shared segment (default " WLD_DEFAULT_SHM ")\n"
	       "      --stats-file PATH      write statistics as JSON after every cycle\n"
	       "  -f, --foreground           do not detach\n"
	       "      --log-level L          debug | info | warn | error\n"
	       "      --syslog               log to syslog instead of stderr\n"
	       "      --check-config         validate the configuration and exit\n"
	       "  -h, --help, -V, --version\n");
}

static const char *apply_opt(struct wld_config *c, int opt, const char *v)
{
	switch (opt) {
	case OPT_STATE: return apply_key(c, "suspend", "state", v);
	case OPT_MEM_SLEEP: return apply_key(c, "suspend", "mem_sleep", v);
	case OPT_MIN_AWAKE: return apply_key(c, "suspend", "min_awake_ms", v);
	case OPT_BO_INIT: return apply_key(c, "suspend", "backoff_initial_ms", v);
	case OPT_BO_MAX: return apply_key(c, "suspend", "backoff_max_ms", v);
	case OPT_BO_FACTOR: return apply_key(c, "suspend", "backoff_factor", v);
	case OPT_SHORT: return apply_key(c, "suspend", "short_suspend_ms", v);
	case OPT_PRE: return apply_key(c, "suspend", "pre_suspend_hook", v);
	case OPT_POST: return apply_key(c, "suspend", "post_resume_hook", v);
	case OPT_HOOK_TIMEOUT: return apply_key(c, "suspend", "hook_timeout_ms", v);
	case OPT_NO_WAKE_REASONS: c->wake_reasons = 0; return NULL;
	case OPT_ALARM_TIMEOUT: return apply_key(c, "alarm", "timeout_ms", v);
	case OPT_LOG_LEVEL: return apply_key(c, "log", "level", v);
	case OPT_SYSLOG: c->use_syslog = 1; return NULL;
	case OPT_STATS: return apply_key(c, "paths", "stats_file", v);
	case OPT_GROUP: return apply_key(c, "access", "group", v);
	case OPT_DENY: return apply_key(c, "access", "deny", v);
	case OPT_ROOT: return apply_key(c, "paths", "root", v);
	case OPT_RUN_DIR: return apply_key(c, "paths", "run_dir", v);
	case OPT_SHM: return apply_key(c, "paths", "shm", v);
	case OPT_CHECK: c->check_only = 1; return NULL;
	case 'f': c->foreground = 1; return NULL;
	default: return "unknown option";
	}
}

static const char *opt_name(int opt)
{
	for (const struct option *o = opts; o->name; o++)
		if (o->val == opt)
			return o->name;
	return "?";
}

static const char *validate(struct wld_config *c)
{
	if (c->backoff_factor < 1)
		return "backoff_factor must be at least 1";
	if (c->backoff_initial_ms > c->backoff_max_ms)
		return "backoff_initial_ms exceeds backoff_max_ms";
	/* 0 would drop the hold before the client could even be told. */
	if (c->alarm_timeout_ms < 1)
		return "alarm timeout_ms must be at least 1";
	/* 0 would kill every hook before it could do anything. */
	if (c->hook_timeout_ms < 1)
		return "hook_timeout_ms must be at least 1";
	if (c->mem_sleep[0] && strcmp(c->state, "mem"))
		return "mem_sleep only applies to state = mem";
	if (!c->run_dir[0] || !c->shm_path[0])
		return "run_dir and shm must be set";
	return NULL;
}

int config_build(int argc, char **argv, struct wld_config *cfg, char *err, size_t errlen)
{
	struct wld_config c;
	const char *file = NULL, *why;
	int opt, r;

	defaults(&c);
	/* Pass 1: find the config file (and --help/--version). */
	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":c:fhV", opts, NULL)) != -1) {
		if (opt == 'c')
			file = optarg;
		else if (opt == 'h') {
			config_usage();
			return CONFIG_EXIT;
		} else if (opt == 'V') {
			printf("wakelockd %d.%d\n", WL_VERSION_MAJOR, WL_VERSION_MINOR);
			return CONFIG_EXIT;
		} else if (opt == '?') {
			snprintf(err, errlen, "unknown option '%s'", argv[optind - 1]);
			return CONFIG_ERROR;
		} else if (opt == ':') {
			snprintf(err, errlen, "option '%s' needs a value", argv[optind - 1]);
			return CONFIG_ERROR;
		}
	}
	if (optind < argc) {
		snprintf(err, errlen, "unexpected argument '%s'", argv[optind]);
		return CONFIG_ERROR;
	}
	if (file) {
		if (set_str(c.config_file, sizeof(c.config_file), file)) {
			snprintf(err, errlen, "option --config: path too long");
			return CONFIG_ERROR;
		}
		c.config_explicit = 1;
	} else if (access(WLD_DEFAULT_CONFIG, F_OK) == 0) {
		strcpy(c.config_file, WLD_DEFAULT_CONFIG);
	}
	if (c.config_file[0]) {
		r = config_load_file(c.config_file, &c, err, errlen);
		if (r)
			return r;
	}
	/* Pass 2: the command line overrides the file. */
	optind = 0;
	while ((opt = getopt_long(argc, argv, ":c:fhV", opts, NULL)) != -1) {
		if (opt == 'c')
			continue;
		why = apply_opt(&c, opt, optarg ? optarg : "");
		if (why) {
			snprintf(err, errlen, "option --%s: %s", opt_name(opt), why);
			return CONFIG_ERROR;
		}
	}
	why = validate(&c);
	if (why) {
		snprintf(err, errlen, "%s%s%s", c.config_file[0] ? c.config_file : "",
		         c.config_file[0] ? ": " : "", why);
		return CONFIG_ERROR;
	}
	if (c.group[0]) {
		if (config_resolve_group(c.group, &c.gid, err, errlen) < 0)
			return CONFIG_ERROR;
		c.have_gid = 1;
	}
	*cfg = c;
	return CONFIG_OK;
}
