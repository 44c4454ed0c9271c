/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The wake ledger's record (docs/ledger.md): one per suspend attempt, kept
 * by the daemon in a fixed ring (daemon/ledger.c) and shown by the CLI.
 * This header and lib/ledger_rec.c hold what both sides need and that does
 * no I/O of its own: the record, its JSON and wire forms, the summary.
 * Not part of the public API (the version script, lib/libwakelock.map,
 * keeps it out of what the .so exports).
 */
#ifndef WL_LEDGER_H
#define WL_LEDGER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <wakelock.h>

#define WL_LEDGER_SOURCES 4u      /* moved wakeup sources named per record */
#define WL_LEDGER_SRC_NAME 40u    /* bytes per source name, with the NUL */
#define WL_LEDGER_CLAIMS 4u       /* claims kept per record */

enum wl_ledger_outcome {
	WL_LO_OPEN = 0,       /* begun, not ended yet */
	WL_LO_RESUMED,        /* suspend() returned 0 */
	WL_LO_ABORTED,        /* -EBUSY: a wakeup event during the entry */
	WL_LO_FAILED,         /* any other error (err) */
	WL_LO_CRITICAL,       /* the critical battery action (critical_*; err: it failed) */
};

enum wl_ledger_claim_state {
	WL_LCS_NONE = 0,      /* failed attempt, or not ended: no window */
	WL_LCS_OPEN,          /* the claim window is still open */
	WL_LCS_CLAIMED,       /* closed, with at least one claim */
	WL_LCS_UNCLAIMED,     /* closed without a claim */
};

/* What held last in the awake period before the attempt (ended_by). */
enum wl_ledger_ended_kind {
	WL_LEK_UNKNOWN = 0,   /* not said: a record of wire version 1 (an older daemon) */
	WL_LEK_NONE,          /* nothing held at any look since the last attempt */
	WL_LEK_CLIENT,        /* a client's slot: its holds, or a daemon-owned hold of
	                       * it (an alarm's; logind's inhibitors are slots
	                       * "logind:WHO") */
	WL_LEK_SOURCE,        /* one of the daemon's awake sources ("display") */
};

enum wl_ledger_asleep_src {
	WL_LAS_NONE = 0,      /* no measure: neither clocks nor suspend_stats */
	WL_LAS_CLOCKS,        /* CLOCK_BOOTTIME - CLOCK_MONOTONIC across it */
	WL_LAS_HW_SLEEP,      /* suspend_stats/total_hw_sleep moved */
};

/* The state an attempt wrote (wire version 4; 0: not said). */
enum wl_ledger_state {
	WL_LS_UNKNOWN = 0,
	WL_LS_FREEZE,
	WL_LS_MEM,
	WL_LS_DISK,
};

/* cause bits */
#define WL_LC_IRQ          0x01u  /* wakeup_irq: pm_wakeup_irq was set */
#define WL_LC_SOURCES      0x02u  /* sources[]: wakeup sources moved */
#define WL_LC_ALARM        0x04u  /* alarm_client/alarm_name was due */
#define WL_LC_HIBERNATE    0x08u  /* the daemon's own wake to hibernate was due
                                   * (suspend-then-hibernate) */
#define WL_LC_NO_IRQ_FILE  0x10u  /* kernel without pm_wakeup_irq */
#define WL_LC_NO_SOURCES   0x20u  /* kernel without /sys/class/wakeup */
#define WL_LC_SRC_TRUNC    0x40u  /* more sources than a snapshot holds */

struct wl_ledger_claim {
	char client[WAKELOCK_NAME_MAX];
	char hold[WAKELOCK_NAME_MAX];
	uint64_t latency_ns;          /* from resume (end_mono_ns) */
};

/*
 * 624 bytes (asserted in ledger_rec.c).  Names are raw bytes as the kernel
 * or the client gave them, NUL-terminated and bounded; every output
 * escapes them (JSON, table, SVG).
 */
struct wl_ledger_record {
	uint64_t seq;                 /* 1, 2, ...: never reused */
	uint64_t start_real_ns;       /* CLOCK_REALTIME at the start (display) */
	uint64_t start_mono_ns, start_boot_ns;
	uint64_t end_mono_ns, end_boot_ns;   /* right after suspend() returned */
	uint64_t asleep_ns;
	int32_t err;                  /* errno (> 0) of ABORTED / FAILED */
	union {
		int32_t wakeup_irq;           /* with WL_LC_IRQ */
		int32_t critical_capacity;    /* WL_LO_CRITICAL: the battery's percent */
	};
	uint32_t cause;               /* WL_LC_* */
	uint16_t nsources_moved;      /* all that moved; the first few named */
	uint16_t nclaims_total;       /* claims in the window; the first kept */
	uint8_t outcome, asleep_src, claim_state, nsources, nclaims;
	uint8_t ended_kind;           /* WL_LEK_* */
	uint8_t ended_holders;        /* how many held at that look (up to 255) */
	union {
		uint8_t critical_action;  /* WL_LO_CRITICAL: 1 hibernate, 2 poweroff */
		uint8_t state;            /* any other: the state written, WL_LS_* */
	};
	char sources[WL_LEDGER_SOURCES][WL_LEDGER_SRC_NAME];
	char alarm_client[WAKELOCK_NAME_MAX], alarm_name[WAKELOCK_NAME_MAX];
	struct wl_ledger_claim claims[WL_LEDGER_CLAIMS];  /* by latency */
	/* The awake period before the attempt ended when the last holder
	 * seen at a look let go: this is who held at the last look that
	 * found anyone holding (the first of them in the look's order when
	 * several did: clients, then sources).  Empty unless ended_kind is
	 * CLIENT or SOURCE. */
	char ended_by[WAKELOCK_NAME_MAX];
};

#define WL_LEDGER_RECORD_BYTES 624u

const char *wl_ledger_outcome_name(unsigned outcome);      /* "resumed" */
const char *wl_ledger_claim_state_name(unsigned state);    /* "unclaimed" */
const char *wl_ledger_asleep_src_name(unsigned src);       /* "clocks" */
const char *wl_ledger_ended_kind_name(unsigned kind);      /* "source" */
const char *wl_ledger_critical_action_name(unsigned a);    /* "hibernate" */
const char *wl_ledger_state_name(unsigned s);              /* "disk"; NULL: unknown */
/* WL_LS_* of a /sys/power/state word (WL_LS_UNKNOWN if none). */
unsigned wl_ledger_state_of(const char *word);

/*
 * The cause a record is counted under in the summary, by priority:
 *   "battery N%: ACTION" the critical battery action (WL_LO_CRITICAL);
 *   "hibernate_after"    the daemon's own wake to hibernate (WL_LC_HIBERNATE);
 *   "alarm CLIENT/NAME"  a daemon alarm was due;
 *   "source NAME"        the first named moved source (those whose
 *                        wakeup_count moved come first);
 *   "irq N"              pm_wakeup_irq;
 *   "unknown"            none of these.
 * Raw bytes (names unescaped), cut to len - 1.
 */
#define WL_LEDGER_CAUSE_MAX (8u + 2u * WAKELOCK_NAME_MAX)
void wl_ledger_cause_key(const struct wl_ledger_record *r, char *buf, size_t len);

/* One record as a JSON object (no newline). */
void wl_ledger_json_record(FILE *f, const struct wl_ledger_record *r);

/* --- summary: a pure function of the records ----------------------------- */

#define WL_LEDGER_SUMMARY_MAX 32u     /* causes; the rest go to "other" */

struct wl_ledger_cause_stat {
	char cause[WL_LEDGER_CAUSE_MAX];
	uint32_t count;               /* resumed + aborted */
	uint32_t resumed, aborted;
	uint32_t claimed, unclaimed;  /* closed windows only */
	uint64_t claim_p50_ns, claim_p99_ns;  /* first claim's latency; claimed > 0 */
	uint64_t asleep_p50_ns;       /* resumed > 0 */
};

struct wl_ledger_summary {
	uint32_t records;             /* all records given */
	uint32_t failed, open;        /* not counted under a cause */
	uint32_t ncauses;
	struct wl_ledger_cause_stat c[WL_LEDGER_SUMMARY_MAX];  /* count desc, cause asc */
};

/*
 * Percentiles are nearest-rank: the p-th of n sorted values is value
 * number ceil(p * n / 100) (1-based), so the median of 1, 2, 3, 4 is 2
 * and the p99 of 1..100 is 99.  Returns 0, or -ENOMEM (scratch space).
 */
int wl_ledger_summarize(const struct wl_ledger_record *r, size_t n, struct wl_ledger_summary *out);
uint64_t wl_ledger_percentile(uint64_t *v, size_t n, unsigned p);  /* sorts v */
void wl_ledger_json_summary(FILE *f, const struct wl_ledger_summary *s);

/* --- wire form, for the daemon -> CLI transport --------------------------
 * Little-endian, no padding, names as a length byte and bytes.
 * Version 1:
 *   u8 version=1, u8 outcome, u8 asleep_src, u8 claim_state,
 *   u64 seq, start_real_ns, start_mono_ns, start_boot_ns, end_mono_ns,
 *       end_boot_ns, asleep_ns,
 *   i32 err, i32 wakeup_irq, u32 cause, u16 nsources_moved, u16 nclaims_total,
 *   u8 nsources, nsources x name, name alarm_client, name alarm_name,
 *   u8 nclaims, nclaims x (name client, name hold, u64 latency_ns).
 * Version 2: version=2, the same, then
 *   u8 ended_kind, u8 ended_holders, name ended_by.
 * A client asks for the newest version it reads (wl_msg_arg.wire of
 * WL_OP_WAKES; 0 from a library that predates the field: version 1), so
 * a library loaded before an upgrade of the daemon still reads its
 * records.  Decoding takes either and checks every count and length
 * against the record's bounds; version 1 leaves ended_kind UNKNOWN.
 * Version 3: version=3, the same, then
 *   u8 critical_action (0 but for outcome critical, which only version 3
 *   has: an older reader gets such a record as failed, errno ECANCELED
 *   unless its action failed; its critical_capacity is wakeup_irq's).
 * Version 4: version=4, the same, then
 *   u8 state (WL_LS_*; 0 for outcome critical). */
#define WL_LEDGER_WIRE_VERSION 4u
#define WL_LEDGER_WIRE_MAX_V1 (4u + 7u * 8u + 16u + 1u + WL_LEDGER_SOURCES * WL_LEDGER_SRC_NAME + \
                               2u * WAKELOCK_NAME_MAX + 1u + \
                               WL_LEDGER_CLAIMS * (2u * WAKELOCK_NAME_MAX + 8u))
#define WL_LEDGER_WIRE_MAX (WL_LEDGER_WIRE_MAX_V1 + 2u + WAKELOCK_NAME_MAX + 1u + 1u)
/* Bytes written in the newest version, or 0 if len is too small. */
size_t wl_ledger_encode(const struct wl_ledger_record *r, uint8_t *buf, size_t len);
/* The same in version (1..WL_LEDGER_WIRE_VERSION; 0 if unknown). */
size_t wl_ledger_encode_version(const struct wl_ledger_record *r, unsigned version, uint8_t *buf,
                                size_t len);
/* Bytes consumed, or -EBADMSG on a malformed or truncated record. */
int wl_ledger_decode(const uint8_t *buf, size_t len, struct wl_ledger_record *r);

/* ledger_fetch.c: the records on a connected socket (WL_OP_WAKES), all
 * or the newest `newest` (> 0), decoded and checked; *out is malloc'ed. */
int wl_ledger_fetch(int sock, unsigned newest, struct wl_ledger_record **out, size_t *n);

#endif
