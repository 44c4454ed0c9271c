// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * logind's sessions and its lid switch, on the main thread's bus
 * connection (logind.c opens it; logind_bus.h).
 *
 * Sessions.  Which count (docs/policy.md explains the choice): a session
 * of class "user", of a graphical type (x11, wayland, mir), on a seat,
 * not remote, whose IdleHint has been set since it began (IdleSinceHint
 * or IdleSinceHintMonotonic not 0).  Such a session has an idle agent
 * (gnome-session, swayidle, the compositor) that tells logind when its
 * person left; while it is Active and its IdleHint is false it keeps
 * the system awake.  A session that never set IdleHint says nothing
 * about its person: a root ssh login, a tty, a bare X session have
 * IdleHint false for ever and would keep a phone or laptop awake for
 * ever.  A locked session (LockedHint) holds nothing either: whoever
 * locked it left, even if the idle agent has not said so yet.  logind computes a tty session's idleness from the tty's atime
 * without telling anyone, which only polling would see: the activity
 * source (evdev) covers those.
 *
 * No polling: SessionNew and SessionRemoved on the Manager, and
 * PropertiesChanged on /org/freedesktop/login1/session/... (sent when
 * IdleHint or Active change), each followed by a GetAll of that session;
 * ListSessions when logind joins the bus.  Everything logind says is
 * checked: object paths must be under the session prefix and short,
 * properties of the wrong type make the session not count (logged once),
 * and at most LOGIND_MAX_SESSIONS are followed.
 *
 * The lid.  When wakelockd handles the lid ([policy] mode = laptop,
 * lid_closed = suspend) it holds logind's "handle-lid-switch" inhibitor
 * in block mode, so that logind's HandleLidSwitch does not suspend
 * behind its back (whatever the clients hold); the descriptor logind
 * returns is the inhibitor, kept until the bus closes (exit, [logind]
 * mode = off) or logind leaves, and taken again when logind returns.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "daemon.h"
#include "log.h"
#include "logind.h"
#include "logind_bus.h"

#define LOGIND_MAX_SESSIONS 64u
#define SESSION_PREFIX LOGIN1_PATH "/session/"
#define SESSION_IFACE "org.freedesktop.login1.Session"

struct session {
	struct logind_sessions *ls;
	int used;
	char path[96];           /* checked: under SESSION_PREFIX */
	char id[16];             /* cleaned, for status */
	sd_bus_slot *call;       /* GetAll in flight */
	int again;               /* news while it was */
	int counts, active, idle, locked;
	uint32_t uid;
	char type[12];           /* cleaned */
};

struct logind_sessions {
	struct daemon *d;
	sd_bus *bus;
	sd_bus_slot *match[3];
	sd_bus_slot *list_call;
	int relist;
	struct session s[LOGIND_MAX_SESSIONS];
	int full_logged, bad_logged;
	int lid_wanted;          /* we handle the lid: hold the inhibitor */
	int lid_fd;              /* the inhibitor, -1: none */
	sd_bus_slot *lid_call;   /* Inhibit in flight */
};

/* --- what the power thread sees ---------------------------------------- */

static void publish(struct logind_sessions *ls)
{
	unsigned holding = 0, counted = 0, seen = 0;
	char first[64] = "";

	for (unsigned i = 0; i < LOGIND_MAX_SESSIONS; i++) {
		const struct session *s = &ls->s[i];

		if (!s->used)
			continue;
		seen++;
		counted += s->counts;
		if (s->counts && s->active && !s->idle && !s->locked && !holding++)
			snprintf(first, sizeof(first), "session %s (%s, uid %u) active, not idle",
			         s->id, s->type, s->uid);
	}
	logind_presence_sessions(ls->d->presence, holding, counted, seen, first);
}

/* --- one session ------------------------------------------------------- */

static int session_path_ok(const char *path)
{
	size_t pre = strlen(SESSION_PREFIX);

	return path && !strncmp(path, SESSION_PREFIX, pre) && path[pre] &&
	       strlen(path) < sizeof(((struct session *)0)->path);
}

static struct session *find(struct logind_sessions *ls, const char *path)
{
	for (unsigned i = 0; i < LOGIND_MAX_SESSIONS; i++)
		if (ls->s[i].used && !strcmp(ls->s[i].path, path))
			return &ls->s[i];
	return NULL;
}

static void forget(struct session *s)
{
	s->call = sd_bus_slot_unref(s->call);
	s->used = 0;
}

struct props {
	int active, idle, locked, remote;
	uint64_t since, since_mono;
	const char *cls, *type, *seat;
	uint32_t uid;
};

/* One variant of the basic type t (what logind declares): -EBADMSG if it
 * holds something else. */
static int read_var(sd_bus_message *m, char t, void *out)
{
	char sig[2] = { t, 0 };
	int r = sd_bus_message_enter_container(m, 'v', sig);

	if (r <= 0)
		return -EBADMSG;
	r = sd_bus_message_read_basic(m, t, out);
	if (r <= 0)
		return -EBADMSG;
	return sd_bus_message_exit_container(m);
}

/* A variant "(" t "o)": Seat is (so), User is (uo). */
static int read_pair(sd_bus_message *m, const char *sig, void *first)
{
	const char *path;
	char st[8];
	int r;

	snprintf(st, sizeof(st), "(%so)", sig);
	r = sd_bus_message_enter_container(m, 'v', st);
	if (r <= 0)
		return -EBADMSG;
	r = sd_bus_message_read(m, st, first, &path);
	if (r <= 0)
		return -EBADMSG;
	return sd_bus_message_exit_container(m);
}

static int read_prop(sd_bus_message *m, const char *key, struct props *p)
{
	if (!strcmp(key, "Active"))
		return read_var(m, 'b', &p->active);
	if (!strcmp(key, "IdleHint"))
		return read_var(m, 'b', &p->idle);
	if (!strcmp(key, "LockedHint"))
		return read_var(m, 'b', &p->locked);
	if (!strcmp(key, "Remote"))
		return read_var(m, 'b', &p->remote);
	if (!strcmp(key, "IdleSinceHint"))
		return read_var(m, 't', &p->since);
	if (!strcmp(key, "IdleSinceHintMonotonic"))
		return read_var(m, 't', &p->since_mono);
	if (!strcmp(key, "Class"))
		return read_var(m, 's', &p->cls);
	if (!strcmp(key, "Type"))
		return read_var(m, 's', &p->type);
	if (!strcmp(key, "Seat"))
		return read_pair(m, "s", &p->seat);
	if (!strcmp(key, "User"))
		return read_pair(m, "u", &p->uid);
	return sd_bus_message_skip(m, "v");
}

static int read_props(sd_bus_message *m, struct props *p)
{
	const char *key;
	int r;

	memset(p, 0, sizeof(*p));
	r = sd_bus_message_enter_container(m, 'a', "{sv}");
	if (r <= 0)
		return -EBADMSG;
	while ((r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
		if (sd_bus_message_read(m, "s", &key) <= 0)
			return -EBADMSG;
		r = read_prop(m, key, p);
		if (r < 0) {
			char k[32];

			logind_clean_name(k, sizeof(k), key);   /* logind's words: cleaned */
			log_debug("logind: session property %s: %s", k, strerror(-r));
			return r;
		}
		if (sd_bus_message_exit_container(m) < 0)
			return -EBADMSG;
	}
	return r < 0 ? -EBADMSG : 0;
}

static int graphical(const char *type)
{
	return type && (!strcmp(type, "x11") || !strcmp(type, "wayland") || !strcmp(type, "mir"));
}

/* The rule of the file's comment. */
static int counts(const struct props *p)
{
	return p->cls && !strcmp(p->cls, "user") && graphical(p->type) && p->seat && *p->seat &&
	       !p->remote && (p->since || p->since_mono);
}

static void request_props(struct session *s);

static int on_props(sd_bus_message *reply, void *userdata, sd_bus_error *ret)
{
	struct session *s = userdata;
	struct logind_sessions *ls = s->ls;
	const sd_bus_error *e = sd_bus_message_get_error(reply);
	struct props p;

	(void)ret;
	s->call = sd_bus_slot_unref(s->call);
	if (e) {
		/* Gone meanwhile (SessionRemoved follows), or logind is. */
		log_debug("logind: session %s: %s", s->id, e->message ? e->message : e->name);
		s->counts = 0;
	} else if (read_props(reply, &p) < 0) {
		if (!ls->bad_logged++)
			log_warn("logind: the properties of session %s are not understood: it "
			         "keeps nothing awake", s->id);
		s->counts = 0;
	} else {
		s->counts = counts(&p);
		s->active = p.active;
		s->idle = p.idle;
		s->locked = p.locked;
		s->uid = p.uid;
		logind_clean_name(s->type, sizeof(s->type), p.type);
		log_debug("logind: session %s (%s, uid %u): %s, %s, %s%s", s->id, s->type, s->uid,
		          s->counts ? "counts" : "does not count", p.active ? "active" : "inactive",
		          p.idle ? "idle" : "not idle", p.locked ? ", locked" : "");
	}
	if (s->again) {
		s->again = 0;
		request_props(s);
	}
	publish(ls);
	return 1;
}

static void request_props(struct session *s)
{
	int r;

	if (s->call) {
		s->again = 1;   /* the answer in flight may predate the news */
		return;
	}
	r = logind_call_async(s->ls->bus, &s->call, s->path, "org.freedesktop.DBus.Properties",
	                      "GetAll", on_props, s, "s", SESSION_IFACE);
	if (r < 0)
		log_warn("logind: cannot ask session %s's properties: %s", s->id, strerror(-r));
}

/* A session logind told of: followed from now on (its properties asked
 * for), unless it is known already or there are too many. */
static struct session *add(struct logind_sessions *ls, const char *id, const char *path)
{
	struct session *s;

	if (!session_path_ok(path))
		return NULL;
	s = find(ls, path);
	if (s)
		return s;
	for (unsigned i = 0; i < LOGIND_MAX_SESSIONS && !s; i++)
		if (!ls->s[i].used)
			s = &ls->s[i];
	if (!s) {
		if (!ls->full_logged++)
			log_warn("logind: more than %u sessions: the later ones keep nothing awake",
			         LOGIND_MAX_SESSIONS);
		return NULL;
	}
	memset(s, 0, sizeof(*s));
	s->ls = ls;
	s->used = 1;
	snprintf(s->path, sizeof(s->path), "%s", path);
	logind_clean_name(s->id, sizeof(s->id), id);
	snprintf(s->type, sizeof(s->type), "?");
	request_props(s);
	return s;
}

/* --- the list and the signals ------------------------------------------ */

static void request_list(struct logind_sessions *ls);

static int on_list(sd_bus_message *reply, void *userdata, sd_bus_error *ret)
{
	struct logind_sessions *ls = userdata;
	const sd_bus_error *e = sd_bus_message_get_error(reply);
	unsigned char listed[LOGIND_MAX_SESSIONS] = { 0 };
	const char *id, *user, *seat, *path;
	uint32_t uid;
	int r;

	(void)ret;
	ls->list_call = sd_bus_slot_unref(ls->list_call);
	if (e) {
		if (!logind_is_absent(e))
			log_warn("logind: ListSessions: %s", e->message ? e->message : e->name);
		goto again;
	}
	r = sd_bus_message_enter_container(reply, 'a', "(susso)");
	while (r > 0 &&
	       (r = sd_bus_message_read(reply, "(susso)", &id, &uid, &user, &seat, &path)) > 0) {
		struct session *s = add(ls, id, path);

		if (s)
			listed[s - ls->s] = 1;
	}
	if (r < 0) {
		log_warn("logind: ListSessions reply not understood: %s", strerror(-r));
		goto again;
	}
	/* The list is the truth: what it does not have is gone. */
	for (unsigned i = 0; i < LOGIND_MAX_SESSIONS; i++)
		if (ls->s[i].used && !listed[i])
			forget(&ls->s[i]);
	publish(ls);
again:
	if (ls->relist) {
		ls->relist = 0;
		request_list(ls);
	}
	return 1;
}

static void request_list(struct logind_sessions *ls)
{
	int r;

	if (ls->list_call) {
		ls->relist = 1;
		return;
	}
	r = logind_call_async(ls->bus, &ls->list_call, LOGIN1_PATH, LOGIN1_MANAGER,
	                      "ListSessions", on_list, ls, NULL);
	if (r < 0)
		log_warn("logind: cannot ask ListSessions: %s", strerror(-r));
}

static int on_new(sd_bus_message *m, void *userdata, sd_bus_error *ret)
{
	const char *id, *path;

	(void)ret;
	if (sd_bus_message_read(m, "so", &id, &path) > 0)
		add(userdata, id, path);
	return 0;
}

static int on_removed(sd_bus_message *m, void *userdata, sd_bus_error *ret)
{
	struct logind_sessions *ls = userdata;
	const char *id, *path;
	struct session *s;

	(void)ret;
	if (sd_bus_message_read(m, "so", &id, &path) <= 0 || !(s = find(ls, path)))
		return 0;
	log_debug("logind: session %s removed", s->id);
	forget(s);
	publish(ls);
	return 0;
}

static int on_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret)
{
	struct logind_sessions *ls = userdata;
	const char *iface;
	struct session *s;

	(void)ret;
	if (sd_bus_message_read(m, "s", &iface) <= 0 || strcmp(iface, SESSION_IFACE))
		return 0;
	/* The changed values could be read from the signal; asking for all
	 * of them covers "invalidated" ones too, and is rare. */
	s = find(ls, sd_bus_message_get_path(m) ? sd_bus_message_get_path(m) : "");
	if (s)
		request_props(s);
	return 0;
}

/* --- the lid ------------------------------------------------------------ */

static void lid_release(struct logind_sessions *ls, const char *why)
{
	ls->lid_call = sd_bus_slot_unref(ls->lid_call);
	if (ls->lid_fd < 0)
		return;
	close(ls->lid_fd);
	ls->lid_fd = -1;
	log_info("logind: handle-lid-switch inhibitor released (%s)", why);
}

static int on_inhibit(sd_bus_message *reply, void *userdata, sd_bus_error *ret)
{
	struct logind_sessions *ls = userdata;
	const sd_bus_error *e = sd_bus_message_get_error(reply);
	int fd = -1;

	(void)ret;
	ls->lid_call = sd_bus_slot_unref(ls->lid_call);
	if (e) {
		if (logind_is_absent(e))
			return 1;   /* it is taken when logind joins the bus */
		log_warn("logind: cannot take the handle-lid-switch inhibitor (%s): logind's "
		         "HandleLidSwitch may suspend on a closed lid whatever holds "
		         "(docs/logind.md)", e->message ? e->message : e->name);
		return 1;
	}
	/* The message owns its descriptor: ours is a copy. */
	if (sd_bus_message_read(reply, "h", &fd) <= 0 ||
	    (fd = fcntl(fd, F_DUPFD_CLOEXEC, 3)) < 0) {
		log_warn("logind: Inhibit returned no descriptor: the handle-lid-switch "
		         "inhibitor is not held");
		return 1;
	}
	if (ls->lid_fd >= 0)
		close(ls->lid_fd);
	ls->lid_fd = fd;
	log_info("logind: holding the handle-lid-switch inhibitor: wakelockd handles the lid, "
	         "logind's HandleLidSwitch does not");
	return 1;
}

static void lid_take(struct logind_sessions *ls)
{
	int r;

	if (!ls->lid_wanted || ls->lid_fd >= 0 || ls->lid_call)
		return;
	r = logind_call_async(ls->bus, &ls->lid_call, LOGIN1_PATH, LOGIN1_MANAGER, "Inhibit",
	                      on_inhibit, ls, "ssss", "handle-lid-switch", "wakelockd",
	                      "wakelockd handles the lid", "block");
	if (r < 0)
		log_warn("logind: cannot ask for the handle-lid-switch inhibitor: %s",
		         strerror(-r));
}

/* --- logind_bus.h -------------------------------------------------------- */

/* SessionNew, SessionRemoved and the sessions' PropertiesChanged. */
static int subscribe(struct logind_sessions *ls, sd_bus *bus)
{
	int r = sd_bus_match_signal_async(bus, &ls->match[0], LOGIN1, LOGIN1_PATH, LOGIN1_MANAGER,
	                                  "SessionNew", on_new, NULL, ls);

	if (r >= 0)
		r = sd_bus_match_signal_async(bus, &ls->match[1], LOGIN1, LOGIN1_PATH,
		                              LOGIN1_MANAGER, "SessionRemoved", on_removed, NULL, ls);
	if (r >= 0)
		r = sd_bus_add_match_async(bus, &ls->match[2],
		                           "type='signal',sender='" LOGIN1 "',"
		                           "interface='org.freedesktop.DBus.Properties',"
		                           "member='PropertiesChanged',"
		                           "path_namespace='" LOGIN1_PATH "/session',"
		                           "arg0='" SESSION_IFACE "'",
		                           on_changed, NULL, ls);
	if (r < 0)
		for (unsigned i = 0; i < 3; i++)
			ls->match[i] = sd_bus_slot_unref(ls->match[i]);
	return r;
}

int logind_sessions_open(struct daemon *d, sd_bus *bus)
{
	struct logind_sessions *ls = d->sessions;
	int r;

	if (!ls) {
		ls = d->sessions = calloc(1, sizeof(*ls));
		if (!ls)
			return -ENOMEM;
		ls->lid_fd = -1;
	}
	ls->d = d;
	ls->bus = bus;
	ls->lid_wanted = d->cfg.policy_mode == POLICY_LAPTOP && d->cfg.lid_closed == LID_SUSPEND;
	if (logind_presence_wants_sessions(d->presence)) {
		r = subscribe(ls, bus);
		if (r < 0)
			log_warn("logind: cannot subscribe to the sessions' signals (%s): sessions "
			         "keep nothing awake", strerror(-r));
		else
			request_list(ls);   /* subscribed first: no session is missed */
	}
	lid_take(ls);
	return 0;
}

void logind_sessions_owner(struct daemon *d, int present)
{
	struct logind_sessions *ls = d->sessions;

	if (!ls || !ls->bus)
		return;
	if (!present) {
		for (unsigned i = 0; i < LOGIND_MAX_SESSIONS; i++)
			if (ls->s[i].used)
				forget(&ls->s[i]);
		ls->list_call = sd_bus_slot_unref(ls->list_call);
		ls->relist = 0;
		/* Its inhibitors died with it: ours is only a descriptor now. */
		lid_release(ls, "logind left the bus");
		return;
	}
	if (ls->match[0])
		request_list(ls);
	lid_take(ls);
}

void logind_sessions_close(struct daemon *d)
{
	struct logind_sessions *ls = d->sessions;

	if (!ls)
		return;
	for (unsigned i = 0; i < LOGIND_MAX_SESSIONS; i++)
		if (ls->s[i].used)
			forget(&ls->s[i]);
	for (unsigned i = 0; i < 3; i++)
		ls->match[i] = sd_bus_slot_unref(ls->match[i]);
	ls->list_call = sd_bus_slot_unref(ls->list_call);
	ls->relist = 0;
	lid_release(ls, "wakelockd no longer follows logind");
	ls->bus = NULL;
}

void logind_sessions_free(struct daemon *d)
{
	logind_sessions_close(d);
	free(d->sessions);
	d->sessions = NULL;
}
