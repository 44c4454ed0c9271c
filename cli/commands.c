/* SPDX-License-Identifier: GPL-2.0-or-later */
/* list, stats, status, deny/allow/reload. */
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "lib/wl_json.h"
#include "lib/wl_proto.h"
#include "cli.h"

static const char *dstate_name(uint32_t s)
{
	static const char *const n[] = { "starting", "reading-wakeup-count", "waiting-for-holds",
	                                 "suspending", "grace", "stopped" };
	return s < sizeof(n) / sizeof(n[0]) ? n[s] : "?";
}

static unsigned long long ms(uint64_t ns)
{
	return (unsigned long long)(ns / 1000000u);
}

static int fail(int r)
{
	const char *why = wakelock_last_error();

	fprintf(stderr, "wakelock: %s\n", why[0] ? why : wakelock_strerror(r));
	return r == -ENOTCONN ? 3 : 1;
}

/* The daemon's awake sources that hold besides the clients (the display,
 * a logind session, an idle inhibitor with its who and why), as the last
 * look published them; `status` shows every source. */
static void list_sources(const struct wl_shm_header *h)
{
	for (uint32_t i = 0; i < h->nsources && i < WL_MAX_SOURCES; i++) {
		const struct wl_shm_source *src = &h->sources[i];
		char state[sizeof(src->state)], shown[4 * sizeof(src->state)];

		if (!src->holding || !src->state[0])
			continue;
		/* Cleaned by the daemon already; escaped all the same, as
		 * the holds' names are. */
		snprintf(state, sizeof(state), "%.*s", (int)sizeof(state) - 1, src->state);
		wl_escape(shown, sizeof(shown), state);
		printf("source %-.*s holds: %s\n", WAKELOCK_NAME_MAX - 1, src->name, shown);
	}
}

int cmd_list(const struct cli *cli, int all)
{
	struct snapshot s;
	struct wl_shm_header *h;
	int r = snapshot_take(cli, &s), first = 1, shown = 0;

	if (r < 0)
		return fail(r);
	h = s.hdr;
	if (cli->json)
		printf("{\"counter\":%u,\"holds\":[", h->counter);
	else
		printf("%-20s %7s %6s %-20s %-7s %6s %10s %10s\n", "CLIENT", "PID", "UID", "HOLD",
		       "STATE", "DEPTH", "HELD_MS", "EXPIRES_MS");
	for (uint32_t i = 0; i < h->nslots; i++) {
		struct wl_shm_slot *sl = &h->slots[i];

		if (sl->state != WL_SLOT_LIVE)
			continue;
		for (uint32_t j = 0; j < WAKELOCK_MAX_HOLDS_PER_CLIENT; j++) {
			struct wl_shm_hold *ho = &sl->holds[j];
			const char *st = !ho->active ? "idle" : sl->allowed ? "held" : "denied";
			unsigned long long held = ho->active ? ms(s.now_mono - ho->since) : 0;
			long long exp = ho->deadline > s.now_mono ? (long long)ms(ho->deadline - s.now_mono) : -1;

			if (!ho->in_use || (!all && !ho->active))
				continue;
			shown++;
			if (cli->json) {
				printf("%s{\"client\":", first ? "" : ",");
				wl_json_str(stdout, sl->name);
				printf(",\"pid\":%d,\"uid\":%u,\"client_id\":%llu,\"hold\":", sl->pid,
				       sl->uid, (unsigned long long)sl->client_id);
				wl_json_str(stdout, ho->name);
				printf(",\"state\":\"%s\",\"depth\":%u,\"held_ms\":%llu,\"expires_ms\":%lld}",
				       st, ho->depth, held, exp);
			} else {
				char e[24] = "-";
				if (exp >= 0)
					snprintf(e, sizeof(e), "%lld", exp);
				char cn[4 * WAKELOCK_NAME_MAX], hn[4 * WAKELOCK_NAME_MAX];

				/* Never a client's raw bytes on a terminal. */
				wl_escape(cn, sizeof(cn), sl->name);
				wl_escape(hn, sizeof(hn), ho->name);
				printf("%-20s %7d %6u %-20s %-7s %6u %10llu %10s\n", cn, sl->pid,
				       sl->uid, hn, st, ho->depth, held, e);
			}
			first = 0;
		}
	}
	if (cli->json)
		printf("]}\n");
	else if (!shown)
		printf("(no %sholds; suspend counter %u)\n", all ? "" : "active ", h->counter);
	if (!cli->json)
		list_sources(h);
	snapshot_free(&s);
	return 0;
}

int cmd_stats(const struct cli *cli)
{
	struct snapshot s;
	struct wl_shm_header *h;
	int r = snapshot_take(cli, &s), first = 1;
	char nb[16];

	if (r < 0)
		return fail(r);
	h = s.hdr;
	if (cli->json) {
		printf("{\"daemon\":");
		wl_json_dstats(stdout, &h->dstats);
		printf(",\"clients\":[");
	} else {
		const struct wl_shm_dstats *d = &h->dstats;
		printf("Daemon: %llu attempts, %llu successes, %llu aborts (kernel events), "
		       "%llu failures, %llu read errors\n", (unsigned long long)d->attempts,
		       (unsigned long long)d->successes, (unsigned long long)d->aborts,
		       (unsigned long long)d->failures, (unsigned long long)d->read_errors);
		printf("        asleep %llu ms in total, last %llu ms, woken by: %s\n",
		       ms(d->asleep_ns), ms(d->last_asleep_ns), d->last_wake[0] ? d->last_wake : "-");
		printf("        alarms: %llu fired in %llu wake-ups (%s)\n",
		       (unsigned long long)d->alarm_fires, (unsigned long long)d->alarm_wakeups,
		       d->alarm_wakes ? "they wake the system from suspend"
		                      : "CLOCK_BOOTTIME: they cannot wake the system from suspend");
		for (unsigned i = 0; i < WL_ERRNO_BUCKETS; i++)
			if (d->by_errno[i].count)
				printf("        failures %s: %llu\n",
				       d->by_errno[i].err < 0 ? "other"
				               : wl_errno_name(d->by_errno[i].err, nb, sizeof(nb)),
				       (unsigned long long)d->by_errno[i].count);
		printf("\n%-20s %7s %9s %10s %10s %10s %8s %7s %7s %7s %8s\n", "CLIENT", "PID",
		       "ACQUIRED", "TOTAL_MS", "MAX_MS", "LAST_AGO_S", "PREVENT", "DENIED", "EXPIRED",
		       "ALARMS", "LATE_MS");
	}
	for (uint32_t i = 0; i < h->nslots; i++) {
		struct wl_shm_slot *sl = &h->slots[i];
		uint64_t total = sl->total_held_ns, cur = 0;
		long long ago = -1;

		if (sl->state != WL_SLOT_LIVE)
			continue;
		if (sl->active) {
			/* Count the hold in progress too. */
			cur = s.now_mono - sl->active_since;
			total += cur;
		}
		uint64_t last_rt = wl_slot_last_acquired_rt(sl);
		if (last_rt)
			ago = (long long)((wl_now_real() - last_rt) / 1000000000u);
		if (cli->json) {
			printf("%s{\"name\":", first ? "" : ",");
			wl_json_str(stdout, sl->name);
			printf(",\"pid\":%d,\"uid\":%u,\"allowed\":%s,\"active_holds\":%u,"
			       "\"acquired\":%llu,\"total_held_ms\":%llu,\"max_held_ms\":%llu,"
			       "\"last_acquired_realtime_ms\":%llu,\"prevented\":%llu,\"denied\":%llu,"
			       "\"expired\":%llu,\"alarm_fires\":%llu,\"alarm_late_ms\":%llu,"
			       "\"alarm_late_max_ms\":%llu}", sl->pid, sl->uid,
			       sl->allowed ? "true" : "false",
			       sl->active, (unsigned long long)sl->acquire_count, ms(total),
			       ms(cur > sl->max_held_ns ? cur : sl->max_held_ns),
			       ms(last_rt), (unsigned long long)sl->prevented_count,
			       (unsigned long long)sl->denied_count, (unsigned long long)sl->expire_count,
			       (unsigned long long)sl->alarm_fires, ms(sl->alarm_late_ns),
			       ms(sl->alarm_late_max_ns));
		} else {
			char cn[4 * WAKELOCK_NAME_MAX];

			wl_escape(cn, sizeof(cn), sl->name);
			printf("%-20s %7d %9llu %10llu %10llu %10lld %8llu %7llu %7llu %7llu %8llu%s\n",
			       cn, sl->pid, (unsigned long long)sl->acquire_count, ms(total),
			       ms(cur > sl->max_held_ns ? cur : sl->max_held_ns), ago,
			       (unsigned long long)sl->prevented_count,
			       (unsigned long long)sl->denied_count, (unsigned long long)sl->expire_count,
			       (unsigned long long)sl->alarm_fires, ms(sl->alarm_late_max_ns),
			       sl->allowed ? "" : "  (denied)");
		}
		first = 0;
	}
	if (cli->json)
		printf("],\"kernel\":");
	kernel_sources_print(cli);
	if (cli->json)
		printf("}\n");
	snapshot_free(&s);
	return 0;
}

static const char *policy_name(uint32_t mode)
{
	return mode == 2 ? "laptop" : mode == 1 ? "phone" : mode == 0 ? "appliance" : "unknown";
}

int cmd_status(const struct cli *cli)
{
	struct snapshot s;
	struct wl_shm_header *h;
	unsigned clients = 0, holders = 0, denied = 0, alarms = 0;
	int r = snapshot_take(cli, &s);

	if (r < 0)
		return fail(r);
	h = s.hdr;
	for (uint32_t i = 0; i < h->nslots; i++) {
		if (h->slots[i].state != WL_SLOT_LIVE)
			continue;
		clients++;
		holders += h->slots[i].active > 0;
		denied += !h->slots[i].allowed;
		for (uint32_t j = 0; j < WAKELOCK_MAX_ALARMS_PER_CLIENT; j++)
			alarms += h->slots[i].alarms[j].in_use && h->slots[i].alarms[j].t.due;
	}
	if (cli->json) {
		printf("{\"daemon_pid\":%d,\"abi\":\"%u.%u\",\"state\":\"%s\",\"counter\":%u,"
		       "\"clients\":%u,\"holding\":%u,\"denied\":%u,"
		       "\"attempts\":%llu,\"successes\":%llu,\"asleep_ms\":%llu,"
		       "\"alarms_armed\":%u,\"alarms_wake_system\":%s,\"policy\":\"%s\","
		       "\"sources\":[",
		       h->daemon_pid, h->abi_major, h->abi_minor, dstate_name(h->dstate), h->counter,
		       clients, holders, denied, (unsigned long long)h->dstats.attempts,
		       (unsigned long long)h->dstats.successes, ms(h->dstats.asleep_ns), alarms,
		       h->dstats.alarm_wakes ? "true" : "false", policy_name(h->policy_mode));
		for (uint32_t i = 0; i < h->nsources && i < WL_MAX_SOURCES; i++) {
			char name[WAKELOCK_NAME_MAX], state[sizeof(h->sources[i].state)];

			snprintf(name, sizeof(name), "%.*s", WAKELOCK_NAME_MAX - 1, h->sources[i].name);
			snprintf(state, sizeof(state), "%.*s", (int)sizeof(state) - 1,
			         h->sources[i].state);
			printf("%s{\"name\":", i ? "," : "");
			wl_json_str(stdout, name);
			printf(",\"holding\":%s,\"state\":", h->sources[i].holding ? "true" : "false");
			wl_json_str(stdout, state);
			printf("}");
		}
		printf("]}\n");
	} else {
		printf("wakelockd pid %d (ABI %u.%u): %s\n", h->daemon_pid, h->abi_major,
		       h->abi_minor, dstate_name(h->dstate));
		printf("suspend counter %u; %u clients, %u holding, %u denied\n", h->counter,
		       clients, holders, denied);
		printf("%llu suspends of %llu attempts, %llu ms asleep\n",
		       (unsigned long long)h->dstats.successes,
		       (unsigned long long)h->dstats.attempts, ms(h->dstats.asleep_ns));
		printf("%u wake alarms armed; %s\n", alarms,
		       h->dstats.alarm_wakes ? "they wake the system from suspend"
		               : "they cannot wake the system from suspend (no CLOCK_BOOTTIME_ALARM)");
		printf("policy %s\n", policy_name(h->policy_mode));
		for (uint32_t i = 0; i < h->nsources && i < WL_MAX_SOURCES; i++) {
			const struct wl_shm_source *src = &h->sources[i];

			if (!src->state[0])
				continue;
			printf("  %-10.*s %s%s\n", WAKELOCK_NAME_MAX - 1, src->name,
			       src->holding ? "HOLDS: " : "", src->state);
		}
	}
	snapshot_free(&s);
	return 0;
}

/* A user's uid from /etc/passwd, read directly (no NSS: the guest's
 * CLI is linked statically, as the daemon's group lookup is). */
static int passwd_uid(const char *user, unsigned *uid)
{
	FILE *f = fopen("/etc/passwd", "re");
	struct passwd *pw;
	int r = -ENOENT;

	if (!f)
		return -errno;
	while ((pw = fgetpwent(f)) != NULL) {
		if (!strcmp(pw->pw_name, user)) {
			*uid = (unsigned)pw->pw_uid;
			r = 0;
			break;
		}
	}
	fclose(f);
	return r;
}

/*
 * A deny/allow key as the daemon matches it: a client name, or "uid:N"
 * (a user name after "uid:" is looked up here; the daemon compares
 * numbers).  2 (usage) if it is neither.
 */
static int policy_key(const char *in, char key[WAKELOCK_NAME_MAX])
{
	size_t pre = strlen(WL_UID_PREFIX);
	unsigned uid = 0;
	char en[256];

	if (!strncmp(in, WL_UID_PREFIX, pre) && in[pre] && (in[pre] < '0' || in[pre] > '9') &&
	    passwd_uid(in + pre, &uid) == 0) {
		snprintf(key, WAKELOCK_NAME_MAX, WL_UID_PREFIX "%u", uid);
		return 0;
	}
	if (wl_policy_key(in, key) == 0)
		return 0;
	wl_escape(en, sizeof(en), in);
	fprintf(stderr, "wakelock: '%s' is neither a client name nor uid:UID or uid:USER (a known "
	        "user)\n", en);
	return 2;
}

int cmd_policy(const struct cli *cli, int op, const char *name)
{
	char key[WAKELOCK_NAME_MAX];
	struct wl_msg_rep rep;
	int sock, r;

	if (op != WL_OP_RELOAD) {
		if (policy_key(name, key))
			return 2;
		name = key;
	}
	sock = wl_connect(cli->socket, 5000);
	if (sock < 0)
		return fail(sock);
	r = wl_request(sock, (uint16_t)op, name, &rep, NULL);
	close(sock);
	if (r < 0)
		return fail(r);
	return 0;
}
