#!/usr/bin/env python3
"""The incoming-call race test (docs/design.md §6, docs/e2e.md).

Boots the guest once per configuration, writes numbered "incoming calls"
("CALL <n>\\n") into its modem port (ttyS1) on a seeded random schedule -
exponential gaps, bursts of back-to-back calls, quiet spells long enough for
several suspend cycles - while a power manager suspends the guest as often as
it can, and reads the answers ("ANSWER <n>\\n") the guest's client writes back
on the same line. Per call: latency from the host's write to the answer's
arrival; a call not answered within the bound is deferred. Per run: suspend
cycles (the kernel's suspend_stats/success, read in the guest before and after)
and the share of time asleep (between the kernel's "PM: suspend-to-idle" and
"PM: resume from suspend-to-idle" console lines, on the host's clock).

Configurations (same seed, same schedule):
  u  patched kernel + wakelockd in phone policy (vkms's display off) + modem-client
     run as an unprivileged user
     (uid "modem", in the daemon's group, no CAP_BLOCK_SUSPEND: the kernel
     ignores its EPOLLWAKEUP), as a deployment runs it
  v  pristine 6.12, the same unprivileged client
  z  like u with the port's kernel hold set to 0 ms: the negative control
  a  patched kernel + wakelockd + modem-client as root (EPOLLWAKEUP + hold)
  b  pristine 6.12 + wakelockd + modem-client as root
  c  naive suspend loop (no wakeup_count handshake) + naive client (read())
and, to show the test can fail on purpose:
  x  patched + wakelockd + modem-client --no-epollwakeup --no-hold, with the
     port's kernel hold set to 0 ms (wakeup_hold_ms=0)
  y  pristine + wakelockd + modem-client --no-epollwakeup --no-hold
  w  like x with the port's default kernel hold (500 ms): the patched kernel
     alone covers a client whose work is shorter than the hold

    tests/e2e/race.py --configs u,v --calls 250 --seed 1 --out build/e2e/race

Writes OUT.json (everything), OUT.svg (timeline; OUT.png too when
rsvg-convert is installed), OUT.txt (the table). With --check, exits 1 unless
each judged configuration (--judge, default u) answered every call within the
bound, stranded none and completed at least --min-cycles suspend cycles, and
each negative control (--expect-race) did defer or strand calls. Other configurations
are measured: in the table, not judged, not counted. --counts FILE gets
"PASSED FAILED SKIPPED" (judged checks only) for `make check`.
"""
import argparse
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(TOP, 'scripts'))
from wlguest import Guest, GuestError, SplatFilter  # noqa: E402

WL_CACHE = os.environ.get('WL_CACHE') or os.path.join(
    os.environ.get('XDG_CACHE_HOME') or os.path.expanduser('~/.cache'), 'wakelockd')

CONFIGS = {
    'u': ('patched', 'wle2e=wakelockd wluser=modem wldaemon=--policy,phone',
          'patched kernel + wakelockd (phone policy, display off) + unprivileged modem-client',
          'patched, unprivileged client'),
    'v': ('pristine', 'wle2e=wakelockd wlkernel=pristine wluser=modem',
          'pristine 6.12 + wakelockd + unprivileged modem-client', 'pristine, unprivileged client'),
    'z': ('patched', 'wle2e=wakelockd wluser=modem wlhold=0',
          'patched (port hold 0 ms) + wakelockd + unprivileged modem-client',
          'port hold 0, unprivileged client'),
    'a': ('patched', 'wle2e=wakelockd',
          'patched kernel + wakelockd + root modem-client', 'patched, root client'),
    'b': ('pristine', 'wle2e=wakelockd wlkernel=pristine',
          'pristine 6.12 + wakelockd + root modem-client', 'pristine, root client'),
    'c': ('patched', 'wle2e=naive',
          'naive suspend loop + naive client', 'naive loop + naive client'),
    'x': ('patched', 'wle2e=wakelockd wlclient=--no-epollwakeup,--no-hold wlhold=0',
          'patched (hold 0 ms) + wakelockd + client w/o EPOLLWAKEUP, no hold',
          'hold 0, client w/o EPOLLWAKEUP'),
    'w': ('patched', 'wle2e=wakelockd wlclient=--no-epollwakeup,--no-hold',
          'patched (hold 500 ms) + wakelockd + client w/o EPOLLWAKEUP, no hold',
          'patched, client w/o EPOLLWAKEUP'),
    'y': ('pristine', 'wle2e=wakelockd wlkernel=pristine wlclient=--no-epollwakeup,--no-hold',
          'pristine + wakelockd + client w/o EPOLLWAKEUP, no hold',
          'pristine, client w/o EPOLLWAKEUP'),
    # A program that keeps the system awake through logind only (root: the
    # image has no polkit), on the image with Debian's dbus-daemon and
    # elogind (docs/logind.md).
    'l': ('patched', 'wle2e=wakelockd wllogind=1 wlclient=--no-epollwakeup,--no-hold,--logind,block',
          'patched + wakelockd + elogind + client with a logind block inhibitor, no hold',
          'patched, logind inhibitor client'),
    # The same without the port's hold: nothing covers the time from the
    # byte's arrival to the inhibitor (measured, docs/logind.md).
    'm': ('patched', 'wle2e=wakelockd wllogind=1 wlhold=0 '
          'wlclient=--no-epollwakeup,--no-hold,--logind,block',
          'patched (port hold 0 ms) + wakelockd + elogind + logind inhibitor client, no hold',
          'port hold 0, logind inhibitor client'),
}

CAP_BLOCK_SUSPEND = 36      # linux/capability.h
# Who claims a wake the modem caused, as the ledger names it: modem-client's
# hold, or its logind inhibitor mirrored by wakelockd (configuration l).
CLAIMERS = {('modem-client', 'call'), ('logind:modem-client', 'incoming_call')}

SLEEP_START = re.compile(r'PM: suspend-to-idle$')
SLEEP_END = re.compile(r'PM: resume from suspend-to-idle$')
E2E = re.compile(r'@@E2E (READY|END|DAEMON|WAKE|IDLE|RESUME) ?(.*)$')
RESUME = re.compile(r'attempt (\d+): (slept|aborted|failed), \d+ ms asleep, woken by .* \((\d+) not reported\)$')
KV = re.compile(r'(\w+)=(\S+)')
FAIL = re.compile(r'^# (FAIL: .*)|^(not ok .*)|^(Bail out!.*)')


# --- the schedule ------------------------------------------------------------
def make_schedule(n, seed, mean_gap, burst_p, burst_max, quiet_p, quiet_min, quiet_max):
    """Call times in seconds from the start, sorted. Same seed, same schedule."""
    rng = random.Random(seed)
    t, times = 0.5, []
    while len(times) < n:
        if rng.random() < quiet_p:
            t += rng.uniform(quiet_min, quiet_max)        # quiet spell
        else:
            t += rng.expovariate(1.0 / mean_gap)
        if rng.random() < burst_p:                       # back-to-back calls
            for _ in range(rng.randint(2, burst_max)):
                times.append(t)
                t += rng.uniform(0.002, 0.060)
        else:
            times.append(t)
    return times[:n]


def percentile(sorted_vals, p):
    if not sorted_vals:
        return None
    k = max(0, min(len(sorted_vals) - 1, math.ceil(p / 100 * len(sorted_vals)) - 1))
    return sorted_vals[k]


# --- one configuration ---------------------------------------------------------
class Run:
    def __init__(self, name, args, schedule):
        variant, append, label, self.short = CONFIGS[name]
        self.name, self.label, self.variant = name, label, variant
        self.args, self.schedule = args, schedule
        kdir = args.kernel_dir or os.path.join(WL_CACHE, 'out')
        self.kernel = os.path.join(kdir, variant, 'bzImage')
        image = '-logind' if 'wllogind=1' in append else ''
        self.initrd = os.path.join(args.initrd_dir or os.path.join(TOP, 'build', 'guest'),
                                   f'initramfs-{variant}{image}.cpio.gz')
        extra = f' wlwork={args.work_ms}'
        if args.client_args and 'wlclient=' not in append:
            extra += ' wlclient=' + args.client_args.replace(' ', ',')
        if args.port_hold_ms is not None and 'wlhold=' not in append:
            extra += f' wlhold={args.port_hold_ms}'
            if variant == 'patched':
                self.label += f' [port hold {args.port_hold_ms} ms]'
                self.short += f', hold {args.port_hold_ms} ms'
        if 'wle2e=naive' in append:
            # The naive loop ends itself when the schedule (plus the bound)
            # is over; see tests/guest/e2e-race.sh.
            extra += f' wlrunms={int((schedule[-1] + args.bound_ms / 1000 + 1.5) * 1000)}'
        self.append = f'wlplan=e2e-race kunit.enable=0 {append}{extra} {args.append}'.strip()
        self.sent = [None] * len(schedule)       # host time of each call's write
        self.answered = [None] * len(schedule)   # host time of its answer
        self.intervals = []                      # (start, end) asleep, host time
        self.sleep_start = None
        self.ready = self.end = None             # guest stats at start / end
        self.daemon = None
        self.problems = []
        self.splats = SplatFilter()
        self.wakes = []          # the daemon's wake ledger, a dict per attempt
        self.resumes = []        # a listening client's resume notifications
        self.idle = False        # the client has exited; the daemon still runs
        self.injected = None     # when the wake nobody claims was sent
        self.ready_at = None     # host time of READY
        self.t0 = self.t_stop = None
        self.rx = b''
        self.unknown_answers = 0

    def log(self, msg):
        print(f'[{self.name}] {msg}', file=sys.stderr, flush=True)

    def _console(self, line, now):
        if SLEEP_START.search(line):
            self.sleep_start = now
        elif SLEEP_END.search(line):
            if self.sleep_start is not None:
                self.intervals.append((self.sleep_start, now))
            self.sleep_start = None
        m = E2E.search(line)
        if m:
            kind, rest = m.groups()
            if kind == 'DAEMON':
                try:
                    self.daemon = json.loads(rest)
                except ValueError:
                    self.daemon = rest
            elif kind == 'WAKE':
                try:
                    self.wakes.append(json.loads(rest))
                except ValueError:
                    self.problems.append('guest: unreadable ledger record: ' + rest[:80])
            elif kind == 'IDLE':
                self.idle = True
            elif kind == 'RESUME':
                self.resumes.append(rest.strip())
            else:
                kv = dict(KV.findall(rest))
                if kind == 'READY':
                    self.ready = kv
                    self.ready_at = now
                else:
                    self.end = kv
        if self.splats.is_splat(line):
            self.problems.append('kernel: ' + line.strip())
        m = FAIL.search(line)
        if m:
            self.problems.append('guest: ' + line.strip())

    def _modem(self, now):
        data = bytes(self.guest.modem_rx)
        del self.guest.modem_rx[:]
        self.rx += data
        while b'\n' in self.rx:
            raw, self.rx = self.rx.split(b'\n', 1)
            words = raw.decode(errors='replace').strip().split()
            if len(words) == 2 and words[0] == 'ANSWER' and words[1].isdigit():
                i = int(words[1])
                if 0 <= i < len(self.answered) and self.answered[i] is None \
                        and self.sent[i] is not None:
                    self.answered[i] = now
                else:
                    self.unknown_answers += 1

    def _tick(self, timeout):
        lines = self.guest.poll(timeout)
        now = time.monotonic()
        if lines is None:
            raise GuestError('QEMU exited')
        for line in lines:
            self._console(line, now)
            if self.args.verbose:
                print(f'[{self.name}] {line}', file=sys.stderr)
        if self.guest.modem_rx:
            self._modem(now)
        return now

    def status(self, now, final=False):
        sent = sum(1 for s in self.sent if s is not None)
        ans = sum(1 for a in self.answered if a is not None)
        bound = self.args.bound_ms / 1000
        deferred = sum(1 for s, a in zip(self.sent, self.answered)
                       if s is not None and ((a is None and now - s > bound)
                                             or (a is not None and a - s > bound)))
        asleep = self.asleep_seconds(self.t0, now) if self.t0 else 0
        span = (now - self.t0) if self.t0 else 0
        pct = 100 * asleep / span if span > 0 else 0
        return (f'[{self.name}] {now - self.t0 if self.t0 else 0:6.1f}s  calls {sent}/{len(self.sent)}'
                f'  answered {ans}  deferred {deferred}  suspend cycles {len(self.intervals)}'
                f'  asleep {pct:4.1f}%')

    def asleep_seconds(self, lo, hi):
        total = 0.0
        for s, e in self.intervals:
            s, e = max(s, lo), min(e, hi)
            if e > s:
                total += e - s
        if self.sleep_start is not None and self.sleep_start < hi:
            total += hi - max(self.sleep_start, lo)
        return total

    def run(self):
        args = self.args
        for f in (self.kernel, self.initrd):
            if not os.path.exists(f):
                raise GuestError(f'missing {f}: run make guest-image VARIANT={self.variant}')
        os.makedirs(os.path.dirname(args.out) or '.', exist_ok=True)
        self.console_log = f'{args.out}-{self.name}.console.log'
        self.log(f'{self.label}: booting {self.variant} ({self.append})')
        self.guest = Guest(self.kernel, self.initrd, self.append, log_path=self.console_log,
                           accel=args.accel)
        try:
            self._run()
        finally:
            self.guest.close()

    def _run(self):
        args = self.args
        deadline = time.monotonic() + args.boot_timeout
        ping = time.monotonic() + 15
        while self.ready is None:
            now = self._tick(0.2)
            if now > ping:       # should not be needed: set-up holds a wake lock
                self.guest.modem_write(b'PING\n')
                ping = now + 1
            if self.problems:
                raise GuestError('; '.join(self.problems[:3]))
            if now > deadline:
                raise GuestError(f'guest not ready after {args.boot_timeout} s')
        self.log(f'guest ready: {self.ready}')
        self.t0 = time.monotonic()
        start = self.t0 + 0.3
        live = args.live or (args.live is None and sys.stderr.isatty())
        next_status = 0
        i, n = 0, len(self.schedule)
        bound = args.bound_ms / 1000
        while True:
            now = time.monotonic()
            while i < n and now >= start + self.schedule[i]:
                self.guest.modem_write(f'CALL {i}\n'.encode())
                self.sent[i] = time.monotonic()
                i += 1
            if i >= n:
                last = max(self.sent)
                if all(a is not None for a in self.answered) or now > last + bound + 0.5:
                    break
                wait = 0.05
            else:
                wait = min(0.05, max(0.0, start + self.schedule[i] - now))
            now = self._tick(wait)
            if self.end is not None:
                raise GuestError('the guest ended the run early (did the client die?)')
            if live and now >= next_status:
                print('\r' + self.status(now) + '   ', end='', file=sys.stderr, flush=True)
                next_status = now + 0.5
        self.t_stop = time.monotonic()
        if live:
            print('\r' + self.status(self.t_stop) + '   ', file=sys.stderr, flush=True)
        # Stop: "EXIT" on the modem makes the client exit; the guest then
        # stops its power manager and reports. Repeat it (with the modem
        # bytes it also wakes a sleeping guest) until the report arrives.
        # A client that fell behind works off its backlog first.
        backlog = sum(1 for a in self.answered if a is None)
        grace = 60 + 2 * backlog * args.work_ms / 1000
        deadline, ping = time.monotonic() + grace, 0
        while self.end is None and not self.idle:
            now = self._tick(0.05)
            if now >= ping:
                self.guest.modem_write(b'EXIT\n')
                ping = now + 0.5
            if now > deadline:
                raise GuestError(f'guest did not report its end statistics within {grace:.0f} s')
        if self.idle:
            self._unclaimed_wake()
        deadline, ping = time.monotonic() + 60, 0
        while self.end is None:
            now = self._tick(0.05)
            if self.idle and now >= ping:
                self.guest.modem_write(b'DONE\n')
                ping = now + 0.5
            if now > deadline:
                raise GuestError('guest did not report its end statistics within 60 s')
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                self._tick(0.2)
            except GuestError:
                break            # QEMU exited: powered off
        if self.sleep_start is not None:
            self.intervals.append((self.sleep_start, self.t_stop))
            self.sleep_start = None

    def _unclaimed_wake(self):
        """The client has exited and the daemon goes on suspending: once the
        guest is asleep, wake it through ttyS1, where nobody will take a hold,
        and wait past the claim window (2 s in this run) before saying DONE."""
        deadline = time.monotonic() + 30
        while self.sleep_start is None or time.monotonic() < self.sleep_start + 0.3:
            if self._tick(0.05) > deadline:
                self.log('the guest did not suspend after the client exited: no unclaimed wake')
                return
        self.guest.modem_write(b'WAKE\n')
        self.injected = time.monotonic()
        end = self.injected + 3.5
        while time.monotonic() < end:
            self._tick(0.05)

    def ledger(self):
        """The daemon's wake ledger against what the host saw.  Each sleep the
        host saw (suspend-to-idle .. resume) is matched, by time, to the
        attempt whose record ends just after it: the guest's CLOCK_BOOTTIME
        at READY (/proc/uptime) against the host's clock then gives the
        offset.  A call that arrived while the guest slept agrees when that
        record names ttyS1's wakeup source as a cause and modem-client's hold
        "call" as a claim."""
        if not self.wakes:
            return None
        try:
            offset = self.ready_at - float(self.ready['boot_s'])
        except (KeyError, TypeError, ValueError):
            return {'error': 'no boot_s in READY'}
        recs = sorted(self.wakes, key=lambda w: w.get('end_boottime_ms', 0))

        def record_after(host_t):
            g = host_t - offset
            best = None
            for w in recs:
                d = w.get('end_boottime_ms', 0) / 1000 - g
                if -0.1 <= d <= 0.6 and (best is None or d < best[0]):
                    best = (d, w)
            return best[1] if best else None

        def interval_of(t):
            for k, (st, e) in enumerate(self.intervals):
                if st < t < e:
                    return k
            return None

        def woken_by_port(rec):
            # ttyS1's sources: the tty device's, and since series v3 the
            # port's own for received data (ttyS1-rx).
            return isinstance(rec.get('sources'), list) and bool(
                {'ttyS1', 'ttyS1-rx'} & set(rec['sources']))

        matched = sum(1 for _, e in self.intervals if record_after(e) is not None)
        during, agree, lat, misses = 0, 0, [], []
        for i, s in enumerate(self.sent):
            k = interval_of(s) if s is not None else None
            if k is None:
                continue
            during += 1
            rec = record_after(self.intervals[k][1])
            claims = [c for c in (rec or {}).get('claims', [])
                      if (c.get('client'), c.get('hold')) in CLAIMERS]
            if rec and woken_by_port(rec) and claims:
                agree += 1
                lat.append(claims[0]['latency_us'] / 1000)
            else:
                misses.append({'call': i, 'record': rec and {k2: rec.get(k2) for k2 in
                               ('seq', 'outcome', 'sources', 'claim', 'claims')}})
        inj = None
        if self.injected is not None:
            k = interval_of(self.injected)
            rec = record_after(self.intervals[k][1]) if k is not None else None
            inj = {'found': rec is not None,
                   'claim': rec.get('claim') if rec else None,
                   'by_port': woken_by_port(rec) if rec else False}
        lat.sort()
        # Resume notifications: each attempt accounted for exactly once
        # (a notification reports the latest attempt and how many before it
        # went unreported), each reported one with its record's outcome.
        outcome = {w.get('seq'): w.get('outcome') for w in self.wakes}
        want = {'slept': 'resumed', 'aborted': 'aborted', 'failed': 'failed'}
        covered, bad, reported = [], [], 0
        for line in self.resumes:
            m = RESUME.match(line)
            if not m:
                bad.append(line[:80])
                continue
            seq, how, missed = int(m.group(1)), m.group(2), int(m.group(3))
            reported += 1
            covered.extend(range(seq - missed, seq + 1))
            if outcome.get(seq) != want[how]:
                bad.append(f'{seq}: notified {how}, ledger {outcome.get(seq)}')
        notes = {'lines': len(self.resumes), 'reported': reported,
                 'missed': len(covered) - reported, 'bad': bad[:5],
                 'each_once': sorted(covered) == sorted(outcome)}
        return {'records': len(self.wakes), 'notifications': notes,
                'resumed': sum(1 for w in self.wakes if w.get('outcome') == 'resumed'),
                'sleeps_seen': len(self.intervals), 'sleeps_matched': matched,
                'calls_during_sleep': during, 'agree': agree, 'misses': misses[:20],
                'claim_ms_p50': percentile(lat, 50) if lat else None,
                'claim_ms_p99': percentile(lat, 99) if lat else None,
                'unclaimed': sum(1 for w in self.wakes if w.get('claim') == 'unclaimed'),
                'injected': inj}

    def summary(self):
        bound = self.args.bound_ms / 1000
        lat = sorted(a - s for s, a in zip(self.sent, self.answered)
                     if s is not None and a is not None)
        deferred = [i for i, (s, a) in enumerate(zip(self.sent, self.answered))
                    if s is not None and (a is None or a - s > bound)]
        # Stranded: the guest went to sleep with the call unanswered (entered
        # suspend-to-idle after the call was written, stayed asleep > 100 ms
        # before the answer) - the race itself, as opposed to a slow answer.
        stranded = 0
        for s, a in zip(self.sent, self.answered):
            if s is None:
                continue
            end = a if a is not None else (self.t_stop or s)
            if any(st > s and min(e, end) - st > 0.1 for st, e in self.intervals if st < end):
                stranded += 1
        cycles = None
        if self.ready and self.end:
            cycles = int(self.end['success']) - int(self.ready['success'])
        client = client_privileges(self.ready, self.append)
        span = (self.t_stop - self.t0) if self.t_stop else 0
        asleep = self.asleep_seconds(self.t0, self.t_stop) if self.t_stop else 0
        return {
            'config': self.name, 'label': self.label, 'short': self.short,
            'kernel': self.variant, 'append': self.append,
            'calls': len(self.schedule),
            'answered': len(lat),
            'answered_in_time': len(lat) - sum(1 for i in deferred if self.answered[i] is not None),
            'deferred': len(deferred),
            'unanswered': sum(1 for a in self.answered if a is None),
            'stranded': stranded,
            'deferred_ids': deferred[:200],
            'latency_ms': {'p50': ms(percentile(lat, 50)), 'p99': ms(percentile(lat, 99)),
                           'max': ms(lat[-1] if lat else None),
                           'mean': ms(sum(lat) / len(lat) if lat else None)},
            'suspend_cycles': cycles,
            'port_hold_ms': (self.ready or {}).get('port_hold_ms'),
            'client': client,
            'suspend_cycles_seen': len(self.intervals),
            'asleep_pct': round(100 * asleep / span, 1) if span else None,
            'duration_s': round(span, 1),
            'guest_start': self.ready, 'guest_end': self.end, 'daemon_stats': self.daemon,
            'unknown_answers': self.unknown_answers,
            'ledger': self.ledger(),
            'problems': self.problems,
            'console_log': getattr(self, 'console_log', None),
        }

    def timeline(self):
        t0 = self.t0 or 0
        return {
            'asleep': [(round(s - t0, 4), round(e - t0, 4)) for s, e in self.intervals],
            'calls': [(i, round(s - t0, 4), round(a - t0, 4) if a is not None else None)
                      for i, (s, a) in enumerate(zip(self.sent, self.answered)) if s is not None],
            'end': round((self.t_stop or t0) - t0, 4),
        }


def ms(v):
    return None if v is None else round(v * 1000, 1)


def client_privileges(ready, append):
    """Who the client ran as (the guest reads /proc/PID/status at READY) and
    what became of its EPOLLWAKEUP: the kernel drops the flag silently for a
    caller without CAP_BLOCK_SUSPEND."""
    ready = ready or {}
    uid, capeff = ready.get('client_uid'), ready.get('client_capeff')
    cap = None
    if capeff is not None:
        try:
            cap = bool(int(capeff, 16) >> CAP_BLOCK_SUSPEND & 1)
        except ValueError:
            cap = None
    if 'wle2e=naive' in append:
        epw = '-'                   # read(), no epoll at all
    elif '--no-epollwakeup' in append:
        epw = 'not asked'
    elif cap is None:
        epw = '?'
    else:
        epw = 'honoured' if cap else 'stripped'
    return {'uid': None if uid is None else int(uid), 'capeff': capeff,
            'cap_block_suspend': cap, 'epollwakeup': epw,
            'unprivileged_requested': 'wluser=' in append}


# --- output --------------------------------------------------------------------
def role(name, args):
    if name in args.judged:
        return 'judged'
    if name in args.expect_race_list:
        return 'must race'
    return 'measured'


def table(summaries, args):
    head = ['config', 'role', 'client', 'EPOLLWAKEUP', 'port hold', 'calls', 'answered',
            'deferred', 'stranded', 'p50 ms', 'p99 ms', 'max ms', 'suspend cycles', '% asleep']
    rows, notes = [], []
    for s in summaries:
        first = [f"({s['config']}) {s['label']}", role(s['config'], args)]
        if 'error' in s and 'latency_ms' not in s:
            rows.append(first + ['ERROR: ' + s['error'][:60]] + [''] * (len(head) - 3))
            continue
        if 'error' in s:
            notes.append(f"({s['config']}): {s['error']}")
        lat = s['latency_ms']
        fmt = (lambda v: '-' if v is None else f'{v:.0f}')
        cl = s['client']
        who = '?' if cl['uid'] is None else 'root' if cl['uid'] == 0 else f"uid {cl['uid']}"
        hold = s.get('port_hold_ms') or '?'
        rows.append(first + [who, cl['epollwakeup'],
                             hold if hold in ('none', '?') else f'{hold} ms',
                             str(s['calls']), str(s['answered']),
                     str(s['deferred']), str(s['stranded']), fmt(lat['p50']), fmt(lat['p99']), fmt(lat['max']),
                     '-' if s['suspend_cycles'] is None else str(s['suspend_cycles']),
                     '-' if s['asleep_pct'] is None else f"{s['asleep_pct']:.1f}"])
    widths = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]
    out = [f'incoming-call race: seed {args.seed}, {args.calls} calls, client work {args.work_ms} ms; '
           f'deferred = not answered within {args.bound_ms} ms; stranded = the guest fell '
           f'asleep with the call unanswered']
    line = '  '.join(h.ljust(widths[0]) if i == 0 else h.rjust(widths[i]) for i, h in enumerate(head))
    out += [line, '-' * len(line)]
    for r in rows:
        out.append('  '.join(c.ljust(widths[0]) if i == 0 else c.rjust(widths[i])
                             for i, c in enumerate(r)))
    out += ['note ' + n for n in notes]
    out += ['judged: must answer every call in time, strand none; must race: a negative '
            'control, must defer or strand calls; measured: shown, not judged, not counted',
            "port hold: ttyS1's wakeup_hold_ms (none: the pristine kernel has no such hold)"]
    return '\n'.join(out)


def svg(results, args, window):
    """Timeline: one lane per configuration; asleep intervals dark, awake
    light; each call a tick above the lane, its answer a tick below, joined
    by a line (green in time, red deferred or never answered)."""
    W, left, right, lane_h, gap, top = 1500, 360, 20, 46, 34, 56
    span = window
    sx = (W - left - right) / span
    H = top + len(results) * (lane_h + gap) + 40
    bound = args.bound_ms / 1000
    o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
         f'viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">',
         f'<rect width="{W}" height="{H}" fill="white"/>',
         f'<text x="10" y="20" font-size="15" font-weight="bold">incoming-call race, seed '
         f'{args.seed}: first {span:.0f} s of each run</text>',
         '<text x="10" y="40" fill="#444">dark = asleep (suspend-to-idle), light = awake; '
         'tick above = call written by the host, tick below = answer received; '
         'green = answered within bound, red = deferred</text>']
    for k, (s, tl) in enumerate(results):
        y = top + k * (lane_h + gap) + 14
        o.append(f'<text x="10" y="{y + lane_h / 2 - 4}" font-weight="bold">({s["config"]}) '
                 f'{esc(s["short"][:34])}</text>')
        if 'latency_ms' not in s:
            o.append(f'<text x="10" y="{y + lane_h / 2 + 12}" fill="#b00">error</text>')
            continue
        o.append(f'<text x="10" y="{y + lane_h / 2 + 12}" fill="#444">{s["deferred"]} deferred '
                 f'({s["stranded"]} stranded), {s["suspend_cycles"]} cycles, '
                 f'{s["asleep_pct"]}% asleep</text>')
        end = min(tl['end'], span)
        o.append(f'<rect x="{left}" y="{y}" width="{end * sx:.1f}" height="{lane_h}" fill="#fdf3c4"/>')
        for a, b in tl['asleep']:
            if a >= span:
                continue
            b = min(b, span)
            o.append(f'<rect x="{left + a * sx:.2f}" y="{y}" width="{max(0.6, (b - a) * sx):.2f}" '
                     f'height="{lane_h}" fill="#27408b"/>')
        for i, t, a in tl['calls']:
            if t >= span:
                continue
            late = a is None or a - t > bound
            col = '#d62728' if late else '#2ca02c'
            x = left + t * sx
            o.append(f'<line x1="{x:.2f}" y1="{y - 10}" x2="{x:.2f}" y2="{y}" stroke="{col}"/>')
            xa = left + min(a if a is not None else span, span) * sx
            o.append(f'<line x1="{x:.2f}" y1="{y - 2}" x2="{xa:.2f}" y2="{y + lane_h + 2}" '
                     f'stroke="{col}" stroke-width="{1.6 if late else 0.8}" opacity="0.8"/>')
            if a is not None and a < span:
                o.append(f'<line x1="{xa:.2f}" y1="{y + lane_h}" x2="{xa:.2f}" '
                         f'y2="{y + lane_h + 10}" stroke="{col}"/>')
    ya = top + len(results) * (lane_h + gap) + 4
    step = 5 if span <= 90 else 10 if span <= 200 else 60
    t = 0
    while t <= span + 1e-9:
        x = left + t * sx
        o.append(f'<line x1="{x:.1f}" y1="{ya - 6}" x2="{x:.1f}" y2="{ya}" stroke="#333"/>')
        o.append(f'<text x="{x:.1f}" y="{ya + 14}" text-anchor="middle">{t:g} s</text>')
        t += step
    o.append('</svg>')
    return '\n'.join(o)


def esc(s):
    return s.replace('&', '&amp;').replace('<', '&lt;').replace('>', '&gt;')


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--configs', default='u,v', help='comma-separated: ' + ' '.join(CONFIGS))
    p.add_argument('--calls', type=int, default=250)
    p.add_argument('--seed', type=int, default=1)
    p.add_argument('--mean-gap-ms', type=float, default=500, help='mean exponential gap')
    p.add_argument('--burst-p', type=float, default=0.10, help='share of bursts')
    p.add_argument('--burst-max', type=int, default=6, help='longest burst')
    p.add_argument('--quiet-p', type=float, default=0.05, help='share of quiet spells')
    p.add_argument('--quiet-s', default='2,4', help='quiet spell length range, s')
    p.add_argument('--bound-ms', type=int, default=2000, help='deferred if no answer by then')
    p.add_argument('--work-ms', type=int, default=20, help="the client's work per call")
    p.add_argument('--client-args', default='', help='extra modem-client options')
    p.add_argument('--port-hold-ms', '--hold-ms', type=int, metavar='MS',
                   help="ttyS1's wakeup_hold_ms on the patched kernel (guest's wlhold=), "
                   "for the configurations that do not set it themselves (z sets 0)")
    p.add_argument('--append', default='', help='extra kernel command line')
    p.add_argument('--kernel-dir', help='dir with VARIANT/bzImage (default $WL_CACHE/out)')
    p.add_argument('--initrd-dir', help='dir with initramfs-VARIANT.cpio.gz (default build/guest)')
    p.add_argument('--accel', default=os.environ.get('WL_ACCEL', 'tcg'))
    p.add_argument('--boot-timeout', type=float, default=120)
    p.add_argument('--out', default='build/e2e/race', help='output prefix')
    p.add_argument('--svg-seconds', type=float, default=60, help='timeline window')
    p.add_argument('--check', action='store_true', help='judge the --judge configurations')
    p.add_argument('--judge', default='u', help='configurations that must not defer')
    p.add_argument('--expect-race', default='', metavar='CONFIGS',
                   help='negative controls: configurations that must defer or strand calls')
    p.add_argument('--min-cycles', type=int, default=20)
    p.add_argument('--counts', help='write "PASSED FAILED SKIPPED" here (judged checks only)')
    p.add_argument('--live', action='store_true', default=None, help='live status line')
    p.add_argument('-v', '--verbose', action='store_true', help='echo the guest console')
    args = p.parse_args()
    names = [c for c in args.configs.split(',') if c]
    args.judged = [c for c in args.judge.split(',') if c]
    args.expect_race_list = [c for c in args.expect_race.split(',') if c]
    for c in names + args.judged + args.expect_race_list:
        if c not in CONFIGS:
            p.error(f'unknown configuration {c!r} (have {", ".join(CONFIGS)})')
    both = set(args.judged) & set(args.expect_race_list)
    if both:
        p.error(f'{",".join(sorted(both))}: judged and expected to race at once')
    qmin, qmax = (float(v) for v in args.quiet_s.split(','))
    schedule = make_schedule(args.calls, args.seed, args.mean_gap_ms / 1000, args.burst_p,
                             args.burst_max, args.quiet_p, qmin, qmax)
    print(f'race: {args.calls} calls over {schedule[-1]:.0f} s per configuration, seed '
          f'{args.seed}, configurations {",".join(names)}', file=sys.stderr, flush=True)
    results = []
    for c in names:
        r = Run(c, args, schedule)
        try:
            r.run()
            s = r.summary()
        except (GuestError, OSError) as e:
            r.log(f'error: {e}')
            s = r.summary() if r.t_stop else {'config': c, 'label': r.label,
                                              'short': r.short, 'kernel': r.variant}
            s['error'] = str(e)
        results.append((s, r.timeline()))
        if 'error' not in s:
            r.log(f"{s['answered']}/{s['calls']} answered, {s['deferred']} deferred, "
                  f"{s['suspend_cycles']} suspend cycles, {s['asleep_pct']}% asleep"
                  + (f"; problems: {s['problems'][:3]}" if s['problems'] else ''))
    summaries = [s for s, _ in results]
    text = table(summaries, args)
    for s in summaries:
        lg = s.get('ledger')
        if lg:
            inj = lg['injected'] or {}
            if 'error' in lg:
                text += f"\nwake ledger ({s['config']}): {lg['error']}"
                continue
            text += (f"\nwake ledger ({s['config']}): {lg['records']} records, {lg['resumed']} resumed "
                     f"(host saw {lg['sleeps_seen']} sleeps, {lg['sleeps_matched']} matched); {lg['agree']} of "
                     f"{lg['calls_during_sleep']} calls during suspend woken by ttyS1 and claimed "
                     f"by modem-client (claim p50 {lg['claim_ms_p50']} ms, p99 "
                     f"{lg['claim_ms_p99']} ms); {lg['unclaimed']} unclaimed; injected wake: "
                     f"{inj.get('claim', 'none')}")
    print(text)
    os.makedirs(os.path.dirname(args.out) or '.', exist_ok=True)
    with open(args.out + '.txt', 'w') as f:
        f.write(text + '\n')
    with open(args.out + '.json', 'w') as f:
        json.dump({'args': vars(args), 'schedule_s': [round(t, 4) for t in schedule],
                   'results': [dict(s, timeline=tl) for s, tl in results]}, f, indent=1)
    window = min(args.svg_seconds, max((tl['end'] for _, tl in results), default=1) or 1)
    with open(args.out + '.svg', 'w') as f:
        f.write(svg(results, args, window))
    outputs = [args.out + '.txt', args.out + '.json', args.out + '.svg']
    if shutil.which('rsvg-convert'):
        if subprocess.run(['rsvg-convert', '-o', args.out + '.png', args.out + '.svg']).returncode == 0:
            outputs.append(args.out + '.png')
    print('wrote ' + ', '.join(outputs))

    if not (args.check or args.counts):
        return 0
    passed = failed = 0

    def judge(ok, what):
        nonlocal passed, failed
        print(f"{'ok' if ok else 'FAIL'}: {what}")
        if ok:
            passed += 1
        else:
            failed += 1

    def valid_run(s, control=False):
        """The checks that make a run meaningful, judged or negative control:
        it ran, no kernel splat, it suspended (judged runs: a run that never
        slept cannot pass), and the client was who the configuration says."""
        c = s['config']
        if 'error' in s:
            judge(False, f"({c}) ran: {s['error']}")
            return False
        judge(not s['problems'], f"({c}) no kernel splat or guest failure"
              + (f": {s['problems'][:2]}" if s['problems'] else ''))
        cyc = s['suspend_cycles'] or 0
        if not control:
            judge(cyc >= args.min_cycles, f"({c}) suspended: {cyc} cycles "
                  f"(need >= {args.min_cycles}), {s['asleep_pct']}% asleep")
        cl = s['client']
        if cl['unprivileged_requested']:
            judge(cl['uid'] not in (None, 0) and cl['cap_block_suspend'] is False,
                  f"({c}) client unprivileged: uid {cl['uid']}, CapEff {cl['capeff']}, "
                  f"no CAP_BLOCK_SUSPEND (EPOLLWAKEUP {cl['epollwakeup']})")
        asked = re.findall(r'(?:^| )wlhold=(\S+)', s['append'])
        if asked:
            judge(s.get('port_hold_ms') == asked[-1], f"({c}) ttyS1 wakeup_hold_ms is "
                  f"{asked[-1]} as asked (the guest reports {s.get('port_hold_ms')})")
        return True

    def judge_ledger(s):
        """wakelockd's wake ledger agrees with the host (docs/ledger.md)."""
        c, lg = s['config'], s.get('ledger')
        if 'wle2e=wakelockd' not in CONFIGS[c][1] or ('--no-hold' in CONFIGS[c][1] and
                                                     '--logind' not in CONFIGS[c][1]):
            return           # no daemon, or a client that keeps nothing awake
        if not lg:
            judge(False, f"({c}) the guest reported its wake ledger")
            return
        if 'error' in lg:
            judge(False, f"({c}) ledger: {lg['error']}")
            return
        judge(lg['sleeps_matched'] == lg['sleeps_seen'], f"({c}) ledger: each of the "
              f"{lg['sleeps_seen']} sleeps the host saw has its record ({lg['sleeps_matched']} found)")
        d, a = lg['calls_during_sleep'], lg['agree']
        judge(d > 0 and a >= 0.99 * d, f"({c}) ledger: {a} of {d} calls that arrived during "
              f"suspend have a record woken by ttyS1 and claimed by modem-client's hold or inhibitor "
              f"(need >= 99 %; claim latency p50 {lg['claim_ms_p50']} ms, p99 {lg['claim_ms_p99']} ms)")
        nt = lg['notifications']
        judge(nt['each_once'] and not nt['bad'] and nt['reported'] > 0,
              f"({c}) resume notifications: every one of the {lg['records']} attempts accounted for "
              f"exactly once ({nt['reported']} reported, {nt['missed']} counted as missed), each "
              f"with its record's outcome" + (f"; wrong: {nt['bad']}" if nt['bad'] else ''))
        inj = lg['injected'] or {}
        judge(inj.get('found') and inj.get('by_port') and inj.get('claim') == 'unclaimed',
              f"({c}) ledger: the wake nobody handled is recorded, woken by ttyS1, as "
              f"unclaimed (got {inj or 'no injected wake'})")

    # Measured configurations are in the table only: not judged, not counted.
    for s in summaries:
        c = s['config']
        if c in args.judged:
            if not valid_run(s):
                continue
            judge(s['deferred'] == 0, f"({c}) 0 deferred calls (got {s['deferred']} of "
                  f"{s['calls']}, bound {args.bound_ms} ms)")
            judge(s['stranded'] == 0, f"({c}) 0 calls stranded by a suspend (got "
                  f"{s['stranded']})")
            judge_ledger(s)
        elif c in args.expect_race_list:
            if not valid_run(s, control=True):
                continue
            # What the judged configurations must not do. Beware: on a host
            # loaded by other work a guest can stall for seconds, which
            # defers calls without any race (docs/e2e.md).
            judge(s['deferred'] + s['stranded'] > 0, f"({c}) negative control defers or "
                  f"strands calls, as it must (deferred {s['deferred']}, stranded "
                  f"{s['stranded']} of {s['calls']})")
    for c in args.judged + args.expect_race_list:
        if c not in [s['config'] for s in summaries]:
            judge(False, f'({c}) judged but not run')
    if args.counts:
        os.makedirs(os.path.dirname(args.counts) or '.', exist_ok=True)
        with open(args.counts, 'w') as f:
            f.write(f'{passed} {failed} 0\n')
    print(f'{passed} passed, {failed} failed, 0 skipped')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
