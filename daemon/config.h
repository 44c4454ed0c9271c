/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef WLD_CONFIG_H
#define WLD_CONFIG_H

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>
#include "wakelock.h"
#include "awake.h"

#define WLD_MAX_DENY 64
#define WLD_DEFAULT_CONFIG "/etc/wakelockd.conf"
#define WLD_DEFAULT_RUN_DIR "/run/wakelockd"
#define WLD_DEFAULT_ALARM_TIMEOUT_MS 10000u
#define WLD_DEFAULT_HOOK_TIMEOUT_MS 5000u
#define WLD_DEFAULT_MAX_CLIENTS_PER_UID 128u

struct wld_config {
	char config_file[PATH_MAX];  /* "" = none */
	int config_explicit;         /* given with --config: must exist */
	/* [suspend] */
	char state[8];               /* freeze | mem | disk */
	char mem_sleep[16];          /* "" = leave as is; s2idle | shallow | deep */
	unsigned min_awake_ms;
	unsigned start_grace_ms;     /* awake after every start (clients re-register) */
	unsigned backoff_initial_ms;
	unsigned backoff_factor;
	unsigned backoff_max_ms;
	unsigned short_suspend_ms;   /* 0 = off */
	/* Suspend-then-hibernate (hibernate_after.h): hibernate once asleep
	 * this long in one spell of sleep; 0 = off. */
	unsigned hibernate_after_s;
	int wake_reasons;            /* scan /sys/class/wakeup around suspends */
	char pre_suspend_hook[PATH_MAX];
	char post_resume_hook[PATH_MAX];
	unsigned hook_timeout_ms;    /* a hook still running then is killed */
	/* [policy] (docs/policy.md) */
	int policy_mode;             /* enum policy_mode */
	unsigned display_off_delay_ms; /* awake this long after the last display went off */
	unsigned idle_timeout_ms;    /* laptop: awake this long after the last input event */
	int lid_closed;              /* enum lid_action */
	/* logind's presence (daemon/logind_presence.c): -1 = the mode's
	 * default (yes in laptop mode), 0 no, 1 yes. */
	int session_idle;            /* an active session not idle keeps awake */
	int idle_inhibitors;         /* logind "idle" block inhibitors keep awake */
	int on_ac;                   /* enum on_ac_mode; ON_AC_DEFAULT: by mode */
	unsigned idle_timeout_ac_ms; /* on_ac = idle: the idle timeout while on AC */
	unsigned critical_percent;   /* battery level of the critical action, 0: off */
	int critical_action;         /* enum critical_action; CRITICAL_DEFAULT: by mode */
	/* [wake_grace]: NAME = MS (daemon/wake_grace.c) */
	struct wake_grace_rule grace[WAKE_GRACE_MAX];
	unsigned ngrace;
	/* [logind] (docs/logind.md) */
	int logind_mode;             /* enum logind_mode */
	int logind_explicit;         /* set by the file or command line */
	/* [alarm] */
	unsigned alarm_timeout_ms;   /* hold of a fired alarm lapses after this */
	/* [ledger] (docs/ledger.md) */
	unsigned ledger_records;     /* ring size; fixed at start */
	unsigned claim_window_ms;    /* a wake is unclaimed after this */
	/* [access] */
	char group[64];              /* "" = root only */
	gid_t gid;
	int have_gid;
	char admin_group[64];        /* may deny/allow/reload; "" = root only */
	gid_t admin_gid;
	int have_admin_gid;
	unsigned max_clients_per_uid; /* registered clients of one uid at once */
	char deny[WLD_MAX_DENY][WAKELOCK_NAME_MAX];
	unsigned ndeny;
	/* [paths] */
	char root[PATH_MAX];         /* prefix for /sys; "" = / */
	char run_dir[PATH_MAX];
	char stats_file[PATH_MAX];
	/* [log] */
	int log_level;
	int use_syslog;
	int foreground;
	int check_only;
};

enum config_result { CONFIG_OK = 0, CONFIG_ERROR = 1, CONFIG_EXIT = 2 };
/* What keeps the system awake besides holds (docs/policy.md). */
enum policy_mode { POLICY_APPLIANCE = 0, POLICY_PHONE = 1, POLICY_LAPTOP = 2 };
/* What a closed lid does (laptop): the presence sources stop holding, or not. */
enum lid_action { LID_SUSPEND = 0, LID_IGNORE = 1 };
/* session_idle or idle_inhibitors as set, or the mode's default. */
int config_session_idle(const struct wld_config *c);
int config_idle_inhibitors(const struct wld_config *c);
/* What mains or USB power online changes ([policy] on_ac). */
enum on_ac_mode { ON_AC_DEFAULT = -1, ON_AC_OPPORTUNISTIC = 0, ON_AC_IDLE = 1, ON_AC_NEVER = 2 };
/* What a battery at its critical level does (daemon/critical.c). */
enum critical_action { CRITICAL_DEFAULT = -1, CRITICAL_NONE = 0, CRITICAL_HIBERNATE = 1,
                       CRITICAL_POWEROFF = 2 };
#define WLD_DEFAULT_DISPLAY_OFF_DELAY_MS 5000u
#define WLD_DEFAULT_IDLE_TIMEOUT_MS 300000u
#define WLD_DEFAULT_IDLE_TIMEOUT_AC_MS 600000u
#define WLD_DEFAULT_CRITICAL_PERCENT 5u

/*
 * Build the configuration: defaults, then the file (--config or the
 * default if it exists), then the command line, which overrides it.
 * On error returns CONFIG_ERROR with "file:line: reason" or
 * "option --x: reason" in err.  CONFIG_EXIT for --help/--version.
 */
int config_build(int argc, char **argv, struct wld_config *cfg, char *err, size_t errlen);

/* Parse one INI file on top of cfg (used by config_build; exposed for tests). */
int config_load_file(const char *path, struct wld_config *cfg, char *err, size_t errlen);

/* The same for the text of a file (len bytes, any bytes); name is the
 * file name for messages. */
int config_load_text(const char *text, size_t len, const char *name,
                     struct wld_config *cfg, char *err, size_t errlen);
/* The built-in defaults. */
void config_defaults(struct wld_config *c);

/* The names of enum on_ac_mode and enum critical_action ("idle"). */
const char *config_on_ac_name(int on_ac);
const char *config_critical_action_name(int action);

int config_is_denied(const struct wld_config *cfg, const char *name);
int config_resolve_group(const char *group, gid_t *gid, char *err, size_t errlen);
void config_usage(void);

#endif
