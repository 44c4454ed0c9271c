/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Configuration: defaults < INI file < command line.  The file is parsed
 * with libinih (a well-kept parser, Debian's libinih-dev); this file only
 * gives each key its meaning and reports errors as file:line: reason.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "config.h"
#include "powerloop.h"
#include "logind.h"
#include "log.h"
#include "lib/wl_json.h"
#include "lib/wl_shm.h"
#include "ledger.h"

void config_defaults(struct wld_config *c)
{
	memset(c, 0, sizeof(*c));
	strcpy(c->state, "freeze");
	c->backoff_initial_ms = 100;
	c->start_grace_ms = WLD_RESTART_GRACE_MS;
	c->backoff_factor = 2;
	c->backoff_max_ms = 60000;
	c->wake_reasons = 1;
	c->logind_mode = LOGIND_INHIBITORS;
	/* Never suspend under a person's hands: a display that is on keeps
	 * the system awake unless the configuration says appliance. */
	c->policy_mode = POLICY_PHONE;
	c->display_off_delay_ms = WLD_DEFAULT_DISPLAY_OFF_DELAY_MS;
	c->idle_timeout_ms = WLD_DEFAULT_IDLE_TIMEOUT_MS;
	c->lid_closed = LID_SUSPEND;
	c->session_idle = c->idle_inhibitors = -1;
	c->on_ac = ON_AC_DEFAULT;
	c->idle_timeout_ac_ms = WLD_DEFAULT_IDLE_TIMEOUT_AC_MS;
	c->critical_percent = WLD_DEFAULT_CRITICAL_PERCENT;
	c->critical_action = CRITICAL_DEFAULT;
	c->alarm_timeout_ms = WLD_DEFAULT_ALARM_TIMEOUT_MS;
	c->hook_timeout_ms = WLD_DEFAULT_HOOK_TIMEOUT_MS;
	c->ledger_records = LEDGER_DEFAULT_CAP;
	c->claim_window_ms = LEDGER_DEFAULT_WINDOW_MS;
	c->max_clients_per_uid = WLD_DEFAULT_MAX_CLIENTS_PER_UID;
	strcpy(c->run_dir, WLD_DEFAULT_RUN_DIR);
	c->log_level = LOG_L_INFO;
}

/* logind's presence counts by default where a person at a desk is what
 * keeps the machine awake (laptop); on a phone the display says it, and
 * an appliance has holds only. */
int config_session_idle(const struct wld_config *c)
{
	return c->session_idle >= 0 ? c->session_idle : c->policy_mode == POLICY_LAPTOP;
}

int config_idle_inhibitors(const struct wld_config *c)
{
	return c->idle_inhibitors >= 0 ? c->idle_inhibitors : c->policy_mode == POLICY_LAPTOP;
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

/*
 * A group is a name or a gid.  All digits make a gid, which must fit
 * gid_t without being (gid_t)-1 ("no group" to chown); strtoul alone
 * would wrap 99999999999999 to some other group.
 */
static const char *parse_gid(const char *v, gid_t *gid)
{
	unsigned long long x;
	char *end;

	if (!*v || strspn(v, "0123456789") != strlen(v))
		return "not a number";
	errno = 0;
	x = strtoull(v, &end, 10);
	if (errno == ERANGE || x >= (unsigned long long)(gid_t)-1)
		return "gid out of range (at most 4294967294)";
	*gid = (gid_t)x;
	return NULL;
}

static const char *set_group(char *dst, size_t len, const char *v)
{
	gid_t g;

	if (!*v)
		return set_str(dst, len, v);
	if (strspn(v, "0123456789") == strlen(v)) {
		const char *why = parse_gid(v, &g);
		if (why)
			return why;
	}
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
		char key[WAKELOCK_NAME_MAX];

		/* A client name, or uid:N for every client of that user. */
		if (wl_policy_key(tok, key) < 0)
			return "invalid client name in deny list (a name, or uid:N for a user's clients)";
		if (config_is_denied(c, key))
			continue;
		if (c->ndeny >= WLD_MAX_DENY)
			return "too many names in deny list";
		strcpy(c->deny[c->ndeny++], key);
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

static const char *set_logind_mode(struct wld_config *c, const char *v)
{
	if (!strcmp(v, "off"))
		c->logind_mode = LOGIND_OFF;
	else if (!strcmp(v, "inhibitors"))
		c->logind_mode = LOGIND_INHIBITORS;
	else if (!strcmp(v, "suspend"))
		c->logind_mode = LOGIND_SUSPEND;
	else
		return "expected off, inhibitors or suspend";
	c->logind_explicit = 1;
	return NULL;
}

static const char *set_policy_mode(struct wld_config *c, const char *v)
{
	if (!strcmp(v, "phone"))
		c->policy_mode = POLICY_PHONE;
	else if (!strcmp(v, "appliance"))
		c->policy_mode = POLICY_APPLIANCE;
	else if (!strcmp(v, "laptop"))
		c->policy_mode = POLICY_LAPTOP;
	else
		return "expected phone, laptop or appliance";
	return NULL;
}

static const char *set_lid_closed(struct wld_config *c, const char *v)
{
	if (!strcmp(v, "suspend"))
		c->lid_closed = LID_SUSPEND;
	else if (!strcmp(v, "ignore"))
		c->lid_closed = LID_IGNORE;
	else
		return "expected suspend or ignore";
	return NULL;
}

static const char *const on_ac_names[] = { "opportunistic", "idle", "never" };
static const char *const critical_names[] = { "none", "hibernate", "poweroff" };

const char *config_on_ac_name(int on_ac)
{
	return on_ac >= 0 && on_ac <= ON_AC_NEVER ? on_ac_names[on_ac] : "default";
}

const char *config_critical_action_name(int action)
{
	return action >= 0 && action <= CRITICAL_POWEROFF ? critical_names[action] : "default";
}

static const char *set_on_ac(struct wld_config *c, const char *v)
{
	for (int i = 0; i <= ON_AC_NEVER; i++) {
		if (!strcmp(v, on_ac_names[i])) {
			c->on_ac = i;
			return NULL;
		}
	}
	return "expected opportunistic, idle or never";
}

static const char *set_critical_action(struct wld_config *c, const char *v)
{
	for (int i = 0; i <= CRITICAL_POWEROFF; i++) {
		if (!strcmp(v, critical_names[i])) {
			c->critical_action = i;
			return NULL;
		}
	}
	/* UPower's names for what wakelockd does not do itself. */
	if (!strcmp(v, "suspend") || !strcmp(v, "hybrid-sleep") || !strcmp(v, "hybridsleep"))
		return "expected hibernate, poweroff or none (a suspend would not stop the "
		       "battery from draining)";
	return "expected hibernate, poweroff or none";
}

/*
 * Defaults that depend on the mode, once the file and the command line
 * are read (either may set the mode after the key): a laptop stays awake
 * longer on AC and hibernates at the critical level, a phone powers off
 * there (it rarely has swap to hibernate to), an appliance does what it is
 * told only.
 */
static void mode_defaults(struct wld_config *c)
{
	if (c->on_ac == ON_AC_DEFAULT)
		c->on_ac = c->policy_mode == POLICY_LAPTOP ? ON_AC_IDLE : ON_AC_OPPORTUNISTIC;
	if (c->critical_action == CRITICAL_DEFAULT)
		c->critical_action = c->policy_mode == POLICY_LAPTOP ? CRITICAL_HIBERNATE :
		                     c->policy_mode == POLICY_PHONE ? CRITICAL_POWEROFF :
		                     CRITICAL_NONE;
}

/* [wake_grace] NAME = MS: NAME a wakeup source's name as the kernel shows
 * it in /sys/class/wakeup (letters, digits, '.', '-', '_'), or irq/N (a
 * '/' is in no sysfs name; ':' would end the key for the INI parser); a
 * name given twice takes the later time. */
static const char *add_grace(struct wld_config *c, const char *name, const char *v)
{
	unsigned ms, k;
	const char *why = parse_uint(v, 600000u, &ms);

	if (why)
		return why;
	if (!*name || strlen(name) >= sizeof(c->grace[0].name))
		return "a wakeup source name of 1 to 31 characters";
	if (!strncmp(name, "irq/", 4)) {
		char *end;

		if (!isdigit((unsigned char)name[4]) || (strtoul(name + 4, &end, 10), *end))
			return "irq/N with N an interrupt number";
	} else {
		for (const char *p = name; *p; p++)
			if (!isalnum((unsigned char)*p) && !strchr(".-_", *p))
				return "a wakeup source name has letters, digits, '.', '-' and '_' "
				       "only (or irq/N)";
	}
	for (k = 0; k < c->ngrace && strcmp(c->grace[k].name, name); k++)
		;
	if (k == WAKE_GRACE_MAX)
		return "too many [wake_grace] rules (16 at most)";
	snprintf(c->grace[k].name, sizeof(c->grace[k].name), "%s", name);
	c->grace[k].ms = ms;
	if (k == c->ngrace)
		c->ngrace++;
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
	if (KEY("suspend", "start_grace_ms"))
		return parse_uint(v, 600000u, &c->start_grace_ms);
	if (KEY("suspend", "backoff_initial_ms"))
		return parse_uint(v, 3600000u, &c->backoff_initial_ms);
	if (KEY("suspend", "backoff_factor"))
		return parse_uint(v, 16, &c->backoff_factor);
	if (KEY("suspend", "backoff_max_ms"))
		return parse_uint(v, 86400000u, &c->backoff_max_ms);
	if (KEY("suspend", "short_suspend_ms"))
		return parse_uint(v, 3600000u, &c->short_suspend_ms);
	/* A year: longer is a typo, and the seconds stay far from overflow
	 * as nanoseconds. */
	if (KEY("suspend", "hibernate_after_s"))
		return parse_uint(v, 31536000u, &c->hibernate_after_s);
	if (KEY("suspend", "wake_reasons"))
		return parse_bool(v, &c->wake_reasons);
	if (KEY("suspend", "pre_suspend_hook"))
		return set_path(c->pre_suspend_hook, sizeof(c->pre_suspend_hook), v);
	if (KEY("suspend", "post_resume_hook"))
		return set_path(c->post_resume_hook, sizeof(c->post_resume_hook), v);
	if (KEY("suspend", "hook_timeout_ms"))
		return parse_uint(v, 3600000u, &c->hook_timeout_ms);
	if (KEY("logind", "mode"))
		return set_logind_mode(c, v);
	if (KEY("policy", "mode"))
		return set_policy_mode(c, v);
	if (KEY("policy", "display_off_delay_ms"))
		return parse_uint(v, 3600000u, &c->display_off_delay_ms);
	if (KEY("policy", "idle_timeout_ms")) {
		/* 0 would let a laptop suspend between two key presses. */
		const char *why = parse_uint(v, 86400000u, &c->idle_timeout_ms);
		return why ? why : c->idle_timeout_ms ? NULL : "must be at least 1";
	}
	if (KEY("policy", "lid_closed"))
		return set_lid_closed(c, v);
	if (KEY("policy", "session_idle"))
		return parse_bool(v, &c->session_idle);
	if (KEY("policy", "idle_inhibitors"))
		return parse_bool(v, &c->idle_inhibitors);
	if (KEY("policy", "idle_timeout_ac_ms")) {
		const char *why = parse_uint(v, 86400000u, &c->idle_timeout_ac_ms);
		return why ? why : c->idle_timeout_ac_ms ? NULL : "must be at least 1";
	}
	if (KEY("policy", "on_ac"))
		return set_on_ac(c, v);
	if (KEY("policy", "critical_battery_percent")) {
		/* Above half a battery, the "critical" level is a typo. */
		const char *why = parse_uint(v, 50, &c->critical_percent);
		return why && !strcmp(why, "value too large") ? "a percentage of 0 (off) to 50" : why;
	}
	if (KEY("policy", "critical_action"))
		return set_critical_action(c, v);
	if (!strcmp(sec, "wake_grace"))
		return add_grace(c, key, v);
	if (KEY("alarm", "timeout_ms"))
		return parse_uint(v, 86400000u, &c->alarm_timeout_ms);
	if (KEY("ledger", "records")) {
		const char *why = parse_uint(v, LEDGER_MAX_CAP, &c->ledger_records);
		return why ? why : c->ledger_records ? NULL : "must be at least 1";
	}
	if (KEY("ledger", "claim_window_ms")) {
		const char *why = parse_uint(v, 60000u, &c->claim_window_ms);
		return why ? why : c->claim_window_ms ? NULL : "must be at least 1";
	}
	if (KEY("access", "group"))
		return set_group(c->group, sizeof(c->group), v);
	if (KEY("access", "admin_group"))
		return set_group(c->admin_group, sizeof(c->admin_group), v);
	if (KEY("access", "max_clients_per_uid")) {
		const char *why = parse_uint(v, WL_MAX_CLIENTS, &c->max_clients_per_uid);
		return why ? why : c->max_clients_per_uid ? NULL : "must be at least 1";
	}
	if (KEY("access", "deny"))
		return add_deny(c, v);
	if (KEY("paths", "root"))
		return set_path(c->root, sizeof(c->root), v);
	if (KEY("paths", "run_dir"))
		return set_path(c->run_dir, sizeof(c->run_dir), v);
	if (KEY("paths", "shm"))
		return "shm is no longer used: the segment is a memfd passed over the socket "
		       "(remove the setting)";
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

/* A configuration file is a few hundred bytes; anything this big is a
 * mistake (or /dev/zero), not a configuration. */
#define CONF_MAX_BYTES (1024 * 1024)

struct file_ctx {
	struct wld_config *cfg;
	const char *text;  /* the whole file, no NUL byte in it */
	size_t len, pos;
	int line;          /* lines read so far = the line being parsed */
	int err_line;      /* first semantic error */
	int long_line;     /* first line too long for the parser, 0 = none */
	int max_line;      /* the parser's line buffer (bytes, with the NUL) */
	char reason[256];
};

/* A comment line, by the parser's rules: first non-blank ';' or '#'. */
static int is_comment(const char *p, size_t n, int first)
{
	size_t i = 0;

	if (first && n >= 3 && !memcmp(p, "\xEF\xBB\xBF", 3))
		i = 3;       /* the parser skips a UTF-8 BOM on line 1 */
	while (i < n && isspace((unsigned char)p[i]))
		i++;
	return i < n && (p[i] == ';' || p[i] == '#');
}

/*
 * libinih reads lines into a fixed buffer of num bytes (its INI_MAX_LINE,
 * fixed when the library was built) and parses whatever does not fit as a
 * line of its own: the tail of a long comment would take effect.  So hand
 * it one whole line at a time from memory: a comment too long for the
 * buffer is passed as an empty line (it means nothing either way), any
 * other long line ends the parse and is reported with its number.
 */
static char *reader(char *str, int num, void *stream)
{
	struct file_ctx *x = stream;
	const char *p, *nl;
	size_t n;

	if (x->pos >= x->len || x->long_line || num < 2)
		return NULL;
	p = x->text + x->pos;
	nl = memchr(p, '\n', x->len - x->pos);
	n = nl ? (size_t)(nl - p) + 1 : x->len - x->pos;
	x->pos += n;
	x->line++;
	if (n >= (size_t)num) {
		if (!is_comment(p, n, x->line == 1)) {
			x->long_line = x->line;
			x->max_line = num;
			return NULL;
		}
		n = 0;
		if (nl)
			str[n++] = '\n';
	} else {
		memcpy(str, p, n);
	}
	str[n] = 0;
	return str;
}

static int handler(void *user, const char *sec, const char *key, const char *val)
{
	struct file_ctx *x = user;
	const char *why = apply_key(x->cfg, sec, key, val);

	if (why && !x->err_line) {
		char es[64], ek[64];

		wl_escape(es, sizeof(es), sec);
		wl_escape(ek, sizeof(ek), key);
		x->err_line = x->line;
		snprintf(x->reason, sizeof(x->reason), "[%s] %s: %s", es, ek, why);
	}
	return why == NULL;
}

/*
 * Read the whole file: a regular file (not a directory, which read()s as
 * nothing on some systems and fails on others, nor a device or a FIFO that
 * may never end), of at most CONF_MAX_BYTES.  O_NONBLOCK keeps open() of a
 * FIFO from waiting for a writer; fstat() then refuses it.
 */
static int read_conf(const char *path, const char *epath, char **text, size_t *len,
                     char *err, size_t errlen)
{
	struct stat st;
	char *buf = NULL;
	size_t n = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", epath, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0) {
		snprintf(err, errlen, "%s: %s", epath, strerror(errno));
		goto fail;
	}
	if (S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: is a directory, not a configuration file", epath);
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", epath);
		goto fail;
	}
	if (st.st_size > CONF_MAX_BYTES)
		goto too_large;
	/* One byte more than allowed, to see a file that grew meanwhile. */
	buf = malloc(CONF_MAX_BYTES + 2);
	if (!buf) {
		snprintf(err, errlen, "%s: %s", epath, strerror(ENOMEM));
		goto fail;
	}
	for (;;) {
		ssize_t r = read(fd, buf + n, CONF_MAX_BYTES + 1 - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(err, errlen, "%s: %s", epath, strerror(errno));
			goto fail;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > CONF_MAX_BYTES)
			goto too_large;
	}
	close(fd);
	buf[n] = 0;
	*text = buf;
	*len = n;
	return 0;
too_large:
	snprintf(err, errlen, "%s: too large for a configuration file (more than %d bytes)",
	         epath, CONF_MAX_BYTES);
fail:
	free(buf);
	close(fd);
	return -1;
}

int config_load_text(const char *text, size_t len, const char *name,
                     struct wld_config *cfg, char *err, size_t errlen)
{
	struct file_ctx x = { .cfg = cfg, .text = text, .len = len };
	char ename[256];
	const char *nul;
	int r;

	wl_escape(ename, sizeof(ename), name);
	/* A NUL would silently end its line for the parser. */
	nul = memchr(text, 0, len);
	if (nul) {
		int line = 1;

		for (const char *p = text; p < nul; p++)
			line += *p == '\n';
		snprintf(err, errlen, "%s:%d: NUL byte (binary file?)", ename, line);
		return CONFIG_ERROR;
	}
	r = ini_parse_stream(reader, &x, handler, &x);
	if (r < 0) {
		snprintf(err, errlen, "%s: cannot parse (error %d)", ename, r);
		return CONFIG_ERROR;
	}
	/* Errors before the long line come first. */
	if (x.long_line && (r == 0 || r > x.long_line)) {
		snprintf(err, errlen, "%s:%d: line too long (at most %d bytes with its newline)",
		         ename, x.long_line, x.max_line - 1);
		return CONFIG_ERROR;
	}
	if (r == 0)
		return CONFIG_OK;
	/* inih returns the first failing line; if our handler did not fail
	 * there, the line itself is malformed. */
	if (x.err_line == r)
		snprintf(err, errlen, "%s:%d: %s", ename, r, x.reason);
	else
		snprintf(err, errlen, "%s:%d: syntax error (expected [section] or key = value)",
		         ename, r);
	return CONFIG_ERROR;
}

int config_load_file(const char *path, struct wld_config *cfg, char *err, size_t errlen)
{
	char epath[256];
	char *text;
	size_t len;
	int r;

	wl_escape(epath, sizeof(epath), path);
	if (read_conf(path, epath, &text, &len, err, errlen) < 0)
		return CONFIG_ERROR;
	r = config_load_text(text, len, path, cfg, err, errlen);
	free(text);
	return r;
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
	char eg[256];
	FILE *f;
	struct group *g;
	const char *why;

	wl_escape(eg, sizeof(eg), group);
	if (*group && strspn(group, "0123456789") == strlen(group)) {
		why = parse_gid(group, gid);
		if (why)
			snprintf(err, errlen, "group '%s': %s", eg, why);
		return why ? -ERANGE : 0;
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
	snprintf(err, errlen, "group '%s' not found in /etc/group", eg);
	return -ENOENT;
}

/* --- command line ----------------------------------------------------- */

enum {
	OPT_STATE = 256, OPT_MEM_SLEEP, OPT_MIN_AWAKE, OPT_LOG_LEVEL, OPT_STATS, OPT_GROUP,
	OPT_DENY, OPT_ROOT, OPT_RUN_DIR, OPT_SHM, OPT_BO_INIT, OPT_BO_MAX, OPT_BO_FACTOR,
	OPT_SHORT, OPT_HIBERNATE_AFTER, OPT_SYSLOG, OPT_CHECK, OPT_PRE, OPT_POST, OPT_NO_WAKE_REASONS,
	OPT_ALARM_TIMEOUT, OPT_HOOK_TIMEOUT, OPT_LOGIND, OPT_START_GRACE, OPT_POLICY,
	OPT_DISPLAY_OFF_DELAY, OPT_ON_AC, OPT_WAKE_GRACE, OPT_IDLE_TIMEOUT, OPT_LID_CLOSED,
	OPT_SESSION_IDLE, OPT_IDLE_INHIBITORS,
	OPT_IDLE_TIMEOUT_AC, OPT_CRITICAL_PERCENT, OPT_CRITICAL_ACTION,
};

static const struct option opts[] = {
	{ "config", required_argument, NULL, 'c' },
	{ "state", required_argument, NULL, OPT_STATE },
	{ "mem-sleep", required_argument, NULL, OPT_MEM_SLEEP },
	{ "min-awake-ms", required_argument, NULL, OPT_MIN_AWAKE },
	{ "start-grace-ms", required_argument, NULL, OPT_START_GRACE },
	{ "backoff-initial-ms", required_argument, NULL, OPT_BO_INIT },
	{ "backoff-max-ms", required_argument, NULL, OPT_BO_MAX },
	{ "backoff-factor", required_argument, NULL, OPT_BO_FACTOR },
	{ "short-suspend-ms", required_argument, NULL, OPT_SHORT },
	{ "hibernate-after-s", required_argument, NULL, OPT_HIBERNATE_AFTER },
	{ "pre-suspend-hook", required_argument, NULL, OPT_PRE },
	{ "post-resume-hook", required_argument, NULL, OPT_POST },
	{ "hook-timeout-ms", required_argument, NULL, OPT_HOOK_TIMEOUT },
	{ "no-wake-reasons", no_argument, NULL, OPT_NO_WAKE_REASONS },
	{ "alarm-timeout-ms", required_argument, NULL, OPT_ALARM_TIMEOUT },
	{ "logind", required_argument, NULL, OPT_LOGIND },
	{ "policy", required_argument, NULL, OPT_POLICY },
	{ "display-off-delay-ms", required_argument, NULL, OPT_DISPLAY_OFF_DELAY },
	{ "on-ac", required_argument, NULL, OPT_ON_AC },
	{ "wake-grace", required_argument, NULL, OPT_WAKE_GRACE },
	{ "idle-timeout-ms", required_argument, NULL, OPT_IDLE_TIMEOUT },
	{ "lid-closed", required_argument, NULL, OPT_LID_CLOSED },
	{ "session-idle", required_argument, NULL, OPT_SESSION_IDLE },
	{ "idle-inhibitors", required_argument, NULL, OPT_IDLE_INHIBITORS },
	{ "idle-timeout-ac-ms", required_argument, NULL, OPT_IDLE_TIMEOUT_AC },
	{ "critical-battery-percent", required_argument, NULL, OPT_CRITICAL_PERCENT },
	{ "critical-action", required_argument, NULL, OPT_CRITICAL_ACTION },
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
	       "      --start-grace-ms N     stay awake N ms after start for clients to\n"
	       "                             re-register (default 3000)\n"
	       "      --backoff-initial-ms N --backoff-factor N --backoff-max-ms N\n"
	       "      --short-suspend-ms N   treat suspends shorter than N ms as failures\n"
	       "      --hibernate-after-s N  hibernate after N s of one spell of sleep\n"
	       "                             (state freeze or mem; 0: never)\n"
	       "      --pre-suspend-hook P   --post-resume-hook P\n"
	       "      --hook-timeout-ms N    kill a hook still running after N ms (default 5000)\n"
	       "      --no-wake-reasons      do not scan /sys/class/wakeup around suspends\n"
	       "      --alarm-timeout-ms N   release a fired alarm's hold after N ms (default 10000)\n"
	       "      --logind MODE          off | inhibitors | suspend: logind's sleep inhibitors\n"
	       "                             hold (default inhibitors); suspend: through logind\n"
	       "      --policy MODE          phone | laptop | appliance: a display that is on\n"
	       "                             keeps the system awake (phone, default), and\n"
	       "                             input activity and the lid (laptop), or not\n"
	       "      --display-off-delay-ms N  awake N ms after the last display went off\n"
	       "                             (default 5000)\n"
	       "      --on-ac MODE           opportunistic | idle | never: on AC nothing\n"
	       "                             changes, the AC idle timeout, or awake (laptop:\n"
	       "                             idle, else opportunistic)\n"
	       "      --wake-grace NAME=MS   awake MS after a wake by wakeup source NAME (or irq/N)\n"
	       "      --idle-timeout-ms N    laptop: awake N ms after the last input event\n"
	       "                             (default 300000)\n"
	       "      --idle-timeout-ac-ms N on_ac = idle: the same on AC (default 600000)\n"
	       "      --critical-battery-percent N  act at N %% discharging (default 5, 0: off)\n"
	       "      --critical-action A    hibernate | poweroff | none (laptop: hibernate,\n"
	       "                             phone: poweroff, appliance: none)\n"
	       "      --lid-closed A         laptop: suspend | ignore: a closed lid stops the\n"
	       "                             display and activity from holding (suspend)\n"
	       "      --session-idle B       yes | no: an active logind session that set\n"
	       "                             IdleHint keeps awake while not idle (laptop: yes)\n"
	       "      --idle-inhibitors B    yes | no: logind \"idle\" block inhibitors keep\n"
	       "                             awake (laptop: yes)\n"
	       "      --group NAME           group allowed to block suspend\n"
	       "      --deny NAME            deny a client by name (repeatable)\n"
	       "      --root DIR             prefix for /sys (tests)\n"
	       "      --run-dir DIR          socket and pid file (default " WLD_DEFAULT_RUN_DIR ")\n"
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
	case OPT_START_GRACE: return apply_key(c, "suspend", "start_grace_ms", v);
	case OPT_BO_INIT: return apply_key(c, "suspend", "backoff_initial_ms", v);
	case OPT_BO_MAX: return apply_key(c, "suspend", "backoff_max_ms", v);
	case OPT_BO_FACTOR: return apply_key(c, "suspend", "backoff_factor", v);
	case OPT_SHORT: return apply_key(c, "suspend", "short_suspend_ms", v);
	case OPT_HIBERNATE_AFTER: return apply_key(c, "suspend", "hibernate_after_s", v);
	case OPT_PRE: return apply_key(c, "suspend", "pre_suspend_hook", v);
	case OPT_POST: return apply_key(c, "suspend", "post_resume_hook", v);
	case OPT_HOOK_TIMEOUT: return apply_key(c, "suspend", "hook_timeout_ms", v);
	case OPT_NO_WAKE_REASONS: c->wake_reasons = 0; return NULL;
	case OPT_ALARM_TIMEOUT: return apply_key(c, "alarm", "timeout_ms", v);
	case OPT_LOGIND: return apply_key(c, "logind", "mode", v);
	case OPT_POLICY: return apply_key(c, "policy", "mode", v);
	case OPT_DISPLAY_OFF_DELAY: return apply_key(c, "policy", "display_off_delay_ms", v);
	case OPT_ON_AC: return apply_key(c, "policy", "on_ac", v);
	case OPT_WAKE_GRACE: {
		char name[64];
		const char *eq = strchr(v, '=');

		if (!eq || (size_t)(eq - v) >= sizeof(name))
			return "expected NAME=MS";
		snprintf(name, sizeof(name), "%.*s", (int)(eq - v), v);
		return apply_key(c, "wake_grace", name, eq + 1);
	}
	case OPT_IDLE_TIMEOUT: return apply_key(c, "policy", "idle_timeout_ms", v);
	case OPT_LID_CLOSED: return apply_key(c, "policy", "lid_closed", v);
	case OPT_SESSION_IDLE: return apply_key(c, "policy", "session_idle", v);
	case OPT_IDLE_INHIBITORS: return apply_key(c, "policy", "idle_inhibitors", v);
	case OPT_IDLE_TIMEOUT_AC: return apply_key(c, "policy", "idle_timeout_ac_ms", v);
	case OPT_CRITICAL_PERCENT: return apply_key(c, "policy", "critical_battery_percent", v);
	case OPT_CRITICAL_ACTION: return apply_key(c, "policy", "critical_action", v);
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
	if (c->hibernate_after_s && !strcmp(c->state, "disk"))
		return "hibernate_after_s needs state = freeze or mem (with state = disk every "
		       "attempt hibernates)";
	if (!c->run_dir[0])
		return "run_dir must be set";
	if (c->on_ac == ON_AC_IDLE && c->policy_mode == POLICY_APPLIANCE)
		return "on_ac = idle needs mode = laptop or phone (appliance watches no activity)";
	return NULL;
}

int config_build(int argc, char **argv, struct wld_config *cfg, char *err, size_t errlen)
{
	struct wld_config c;
	const char *file = NULL, *why;
	char ea[128];
	int opt, r;

	config_defaults(&c);
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
			printf("wakelockd %d.%d\n", WAKELOCK_VERSION_MAJOR, WAKELOCK_VERSION_MINOR);
			return CONFIG_EXIT;
		} else if (opt == '?') {
			wl_escape(ea, sizeof(ea), argv[optind - 1]);
			snprintf(err, errlen, "unknown option '%s'", ea);
			return CONFIG_ERROR;
		} else if (opt == ':') {
			wl_escape(ea, sizeof(ea), argv[optind - 1]);
			snprintf(err, errlen, "option '%s' needs a value", ea);
			return CONFIG_ERROR;
		}
	}
	if (optind < argc) {
		wl_escape(ea, sizeof(ea), argv[optind]);
		snprintf(err, errlen, "unexpected argument '%s'", ea);
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
	mode_defaults(&c);
	why = validate(&c);
	if (why) {
		char ef[256];

		wl_escape(ef, sizeof(ef), c.config_file);
		snprintf(err, errlen, "%s%s%s", ef, c.config_file[0] ? ": " : "", why);
		return CONFIG_ERROR;
	}
	if (c.group[0]) {
		if (config_resolve_group(c.group, &c.gid, err, errlen) < 0)
			return CONFIG_ERROR;
		c.have_gid = 1;
	}
	if (c.admin_group[0]) {
		if (config_resolve_group(c.admin_group, &c.admin_gid, err, errlen) < 0)
			return CONFIG_ERROR;
		c.have_admin_gid = 1;
	}
	*cfg = c;
	return CONFIG_OK;
}
