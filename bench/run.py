#!/usr/bin/env python3
"""`make bench`: run every measurement (host, then the QEMU guest), print one
table with ratios against peers measured in the same run, each row with the
kernel it was measured on, and write the raw samples to
build/bench/results.json.  See bench/README.md.

    bench/run.py --kernel BZIMAGE --initrd CPIO.GZ [--variant NAME]
                 [--kernel-config .config] [--out build/bench]
                 [--quick] [--skip-host] [--skip-guest] [--plan NAME]
                 [--build DIR]

A ratio against a kernel peer gets a verdict ("met"/"MISSED") only when the
kernel it was measured on has no debugging instrumentation (KASAN, lockdep):
those tax every system call of the peers and nothing of libwakelock's fast
path, so under them the ratio is flattering by an unknown factor and is
printed as "not judged (debug kernel)".
"""
import gzip
import argparse
import json
import os
import platform
import random
import re
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, 'scripts'))

BENCH = re.compile(r'BENCH (\S+) (.*)$')
RAW = re.compile(r'RAW (\S+) (.*)$')
CTL = re.compile(r'BENCHCTL (\w+)(?: (\S+))?')
KINFO = re.compile(r'BENCHKERNEL (.*)$')
# Boot lines that only an instrumented kernel prints.
KASAN_BOOT = 'KernelAddressSanitizer initialized'
LOCKDEP_BOOT = 'Lock dependency validator'
# Options that make a kernel a debug kernel for the purpose of judging ratios.
DEBUG_OPTS = ('KASAN', 'PROVE_LOCKING', 'LOCKDEP', 'DEBUG_ATOMIC_SLEEP', 'KCSAN')
S2IDLE = re.compile(r'PM: suspend-to-idle$')


def kv(text):
    out = {}
    for word in text.split():
        if '=' in word:
            k, v = word.split('=', 1)
            try:
                out[k] = float(v) if '.' in v or v.lstrip('-').isdigit() else v
            except ValueError:
                out[k] = v
    return out


class Results:
    def __init__(self):
        self.figs = {}     # "host.hold_p1" -> dict(summary..., raw=[...])
        self.cond = {}     # "host"/"guest" -> Conditions
        self.ran = set()   # phases run: "host", "guest"
        self.partial = False   # only some host phases: rows without a figure are left out

    def feed(self, where, line):
        m = BENCH.search(line)
        if m:
            d = kv(m.group(2))
            d.setdefault('raw', [])
            key = f'{where}.{m.group(1)}'
            old = self.figs.get(key)
            # A figure measured more than once in a run (the guest's CPU
            # per cycle, interleaved with its peers): the run with the
            # lowest CPU per cycle (the bare loop's) or median is kept,
            # every run's is noted.
            by = 'cpu_ms_per_cycle' if 'cpu_ms_per_cycle' in d else 'median'
            if old and by in old and by in d:
                runs = old.get('runs', [old[by]]) + [d[by]]
                if d[by] >= old[by]:
                    d = old
                d['runs'] = runs
            self.figs[key] = d
            return True
        m = RAW.search(line)
        if m:
            d = self.figs.setdefault(f'{where}.{m.group(1)}', {'raw': []})
            d['raw'].extend(float(x) for x in m.group(2).split())
            return True
        return False

    def get(self, name, key='median'):
        d = self.figs.get(name)
        return None if d is None else d.get(key)


def run(cmd, res, where, env, timeout):
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=timeout)
    for line in p.stdout.splitlines():
        res.feed(where, line)
    if p.returncode:
        print(f'  ! {" ".join(cmd)}: exit {p.returncode}: {p.stderr.strip()[-300:]}')
    return p


# --- conditions: which kernel a figure was measured on ---------------------
def read_kconfig(path):
    """{'KASAN': True, ...} for the options in DEBUG_OPTS and PM_SLEEP, from
    a .config (plain or gzip, e.g. /proc/config.gz); None if unreadable."""
    try:
        opener = gzip.open if path.endswith('.gz') else open
        with opener(path, 'rt') as f:
            text = f.read()
    except OSError:
        return None
    return {o: bool(re.search(rf'^CONFIG_{o}=y', text, re.M)) for o in DEBUG_OPTS + ('PM_SLEEP',)}


class Conditions:
    """What a row was measured on: a kernel (debug or not) and a machine."""

    def __init__(self, where):
        self.where = where
        self.name = ''          # "host 6.1.0-x" / "bench (base)"
        self.release = None     # the guest kernel's uname -r, as it reported it
        self.kasan = None       # True/False/None (unknown)
        self.lockdep = None
        self.tcg = where == 'guest'
        self.pm_sleep = None

    @property
    def debug(self):
        """True, False, or None when the kernel's config is unknown."""
        if self.kasan or self.lockdep:
            return True
        if self.kasan is None or self.lockdep is None:
            return None
        return False

    def text(self):
        def onoff(v):
            return '?' if v is None else ('on' if v else 'off')
        t = f'{self.name}: KASAN {onoff(self.kasan)}, lockdep {onoff(self.lockdep)}'
        return t + (', QEMU TCG' if self.tcg else '')

    def as_dict(self):
        return {'name': self.name, 'release': self.release, 'kasan': self.kasan, 'lockdep': self.lockdep,
                'tcg': self.tcg, 'pm_sleep': self.pm_sleep, 'text': self.text()}


def host_conditions():
    c = Conditions('host')
    c.name = f'host {platform.release()}'
    cfg = read_kconfig('/proc/config.gz') or read_kconfig(f'/boot/config-{platform.release()}')
    if cfg:
        c.kasan = cfg['KASAN']
        c.lockdep = cfg['PROVE_LOCKING'] or cfg['LOCKDEP']
        c.pm_sleep = cfg['PM_SLEEP']
    return c


def guest_conditions(args):
    """From the build: variant, fragments, .config.  guest_phase() adds what
    the booted kernel itself shows (boot lines, /proc/lockdep)."""
    c = Conditions('guest')
    variant = args.variant or os.path.basename(os.path.dirname(os.path.abspath(args.kernel)))
    frags = subprocess.run([os.path.join(TOP, 'scripts/kernel.sh'), '--fragments', variant],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    names = [os.path.basename(f).replace('.config', '') for f in frags.stdout.split()
             ] if frags.returncode == 0 else []
    c.name = f'{variant} ({"+".join(names) if names else "fragments unknown"})'
    kcfg = args.kernel_config
    if not kcfg:
        cache = os.environ.get('WL_CACHE') or os.path.join(
            os.environ.get('XDG_CACHE_HOME') or os.path.expanduser('~/.cache'), 'wakelockd')
        # Only when the kernel booted is the one built there.
        if os.path.abspath(args.kernel) == os.path.abspath(os.path.join(cache, 'out', variant, 'bzImage')):
            kcfg = os.path.join(cache, f'build-{variant}', '.config')
    cfg = read_kconfig(kcfg) if kcfg else None
    if cfg:
        c.kasan = cfg['KASAN']
        c.lockdep = cfg['PROVE_LOCKING'] or cfg['LOCKDEP']
        c.pm_sleep = cfg['PM_SLEEP']
    return c


# --- host -----------------------------------------------------------------
HOST_PHASES = ('core', 'display', 'input', 'wakesrc')


def host_phase(res, args):
    want = set(args.host_phases.split(','))
    unknown = want - set(HOST_PHASES)
    if unknown:
        raise SystemExit(f'bench: unknown host phase(s) {", ".join(sorted(unknown))}')
    res.partial = want != set(HOST_PHASES)
    bindir = os.path.abspath(args.build)
    wlbench = os.path.join(bindir, 'bench/wlbench')
    if 'core' in want:
        core_phase(res, args)
    if 'display' in want:
        print('  host: power thread wake-ups with a display on, then off (awake sources)')
        display_phase(res, args, wlbench)
    if 'input' in want:
        print(f'  host: daemon CPU under a flood of {FLOOD_RATE} input events/s (laptop policy)')
        input_phase(res, args, wlbench)
    if 'wakesrc' in want:
        print(f'  host: daemon CPU per suspend cycle with 0 and {MANY_SOURCES} kernel wakeup sources')
        wakesrc_phase(res, args, wlbench)


def core_phase(res, args):
    """Hold cost, scale, reaction, idle: one daemon on a fake /sys."""
    bindir = os.path.abspath(args.build)
    wlbench = os.path.join(bindir, 'bench/wlbench')
    shim = os.path.join(bindir, 'bench/trace_shim.so')
    tmp = tempfile.mkdtemp(prefix='wlbench-')
    os.makedirs(f'{tmp}/sys/power')
    for name, text in (('wakeup_count', '7\n'), ('state', 'freeze mem disk\n'),
                       ('mem_sleep', 's2idle [deep]\n')):
        with open(f'{tmp}/sys/power/{name}', 'w') as f:
            f.write(text)
    trace = f'{tmp}/trace'
    with open(trace, 'wb') as f:
        f.write(b'\0' * 4096)
    env = dict(os.environ, WAKELOCK_SOCKET=f'{tmp}/run/wakelockd.sock')
    denv = dict(env, LD_PRELOAD=shim, WLBENCH_TRACE=trace)
    log = open(f'{tmp}/daemon.log', 'w')
    # --min-awake-ms 5: on a fake /sys a "suspend" returns at once; without
    # a pause the daemon would spin when nothing is held.
    # 1000 clients of one user for the scale figures.
    with open(f'{tmp}/bench.conf', 'w') as f:
        f.write('[access]\nmax_clients_per_uid = 1024\n')
    daemon = subprocess.Popen([os.path.join(bindir, 'daemon/wakelockd'), '--foreground', '--root', tmp,
                               '--config', f'{tmp}/bench.conf',
                               '--run-dir', f'{tmp}/run',
                               '--min-awake-ms', '5', '--log-level', 'warn'],
                              env=denv, stderr=log)
    env['WLBENCH_DAEMON_PID'] = str(daemon.pid)
    try:
        deadline = time.monotonic() + 10
        while not os.path.exists(f'{tmp}/run/wakelockd.sock'):
            if time.monotonic() > deadline or daemon.poll() is not None:
                raise RuntimeError('host wakelockd did not start: ' + open(f'{tmp}/daemon.log').read())
            time.sleep(0.02)
        time.sleep(0.1)
        secs = '0.5' if args.quick else '2'
        for p in (1, 2, 8, 64):
            print(f'  host: hold, {p} process(es)')
            run([wlbench, 'hold', str(p), secs, '64'], res, 'host', env, 120)
        for c in (1, 10, 100, 1000):
            print(f'  host: scale, {c} client(s)')
            run([wlbench, 'scale', str(c), '0.5' if args.quick else '1'], res, 'host', env, 120)
        run([wlbench, 'clock', '5000'], res, 'host', env, 60)
        print(f'  host: eventfd + epoll round with EPOLLWAKEUP ({res.cond["host"].text()})')
        run([wlbench, 'epoll', '20000'], res, 'host', env, 60)
        print('  host: reaction latency, and the futex wake-up floor under it')
        run([wlbench, 'latency', '200' if args.quick else '1000', trace], res, 'host', env, 120)
        run([wlbench, 'futex-wake', '1000'], res, 'host', env, 60)
        print('  host: idle cost (10 s)')
        run([wlbench, 'idle', '3' if args.quick else '10'], res, 'host', env, 60)
        if shutil.which('strace'):
            print('  host: strace of the daemon reacting to releases')
            strace_react(res, args, wlbench, trace, env, daemon.pid)
        if shutil.which('valgrind') and not args.quick:
            print('  host: callgrind profile of one acquire+release')
            profile_hold(res, wlbench, env, tmp)
    finally:
        daemon.send_signal(signal.SIGTERM)
        try:
            daemon.wait(10)
        except subprocess.TimeoutExpired:
            daemon.kill()
            daemon.wait()
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)


def input_phase(res, args, wlbench):
    """User activity as an awake source (daemon/activity.c, laptop policy):
    the real wakelockd in laptop mode on a fake root whose
    dev/input/event0 is a FIFO, and `wlbench input-flood` writing
    FLOOD_RATE struct input_event a second into it, one evdev packet (a
    REL_X motion and its SYN_REPORT) a write, for SECS.  The daemon's CPU
    (every thread's schedstat) over the flood, then, in the same
    invocation, that of a bare reader woken by every write (the peer)."""
    bindir = os.path.abspath(args.build)
    secs = 3 if args.quick else 10
    tmp = fake_root('wlbench-input-')
    os.makedirs(f'{tmp}/dev/input')
    os.mkfifo(f'{tmp}/dev/input/event0', 0o600)
    env = dict(os.environ, WAKELOCK_SOCKET=f'{tmp}/run/wakelockd.sock')
    log = open(f'{tmp}/daemon.log', 'w')
    d = None
    try:
        # The default idle timeout (5 min): the flood holds anyway.
        d = start_daemon(bindir, tmp, ['--policy', 'laptop'], env, log)
        env['WLBENCH_DAEMON_PID'] = str(d.pid)
        run([wlbench, 'input-flood', f'{tmp}/dev/input/event0', str(FLOOD_RATE), str(secs), '2'],
            res, 'host', env, 3 * secs + 30)
    finally:
        stop_daemon(d, log, tmp)


FLOOD_RATE = 10000          # input events a second (the flood)
MANY_SOURCES = 300          # kernel wakeup sources of a phone: 100-300
# wakesrc_phase's runs: figure key, sources, with the kernel's list
WAKESRC_RUNS = (('s0', 0, False), (f's{MANY_SOURCES}', MANY_SOURCES, True),
                (f's{MANY_SOURCES}_nolist', MANY_SOURCES, False))


def wakesrc_phase(res, args, wlbench):
    """The daemon's own CPU per suspend cycle, nothing held, on a fake root
    with N kernel wakeup sources (sys/class/wakeup/wakeupN/{name,
    event_count,wakeup_count}, as the kernel lays them out; none of them
    moves): the wake ledger reads them around every attempt.  The
    appliance policy (no display, no activity source), min_awake_ms 5.
    `wlbench cycle-cpu` divides the daemon's CPU (schedstat, all
    threads) by the attempts it counted.  MANY sources twice: with
    sys/power/wakeup_count_sources (our pm series; empty, as nothing
    moves), so that the ledger reads only what it lists, and without it,
    a kernel without the series, where every source is read.  Runs each
    twice, interleaved, and keeps the lower (the machine is shared)."""
    bindir = os.path.abspath(args.build)
    secs = 2 if args.quick else 5
    for key, n, listed in WAKESRC_RUNS + WAKESRC_RUNS:
        tmp = fake_root('wlbench-wakesrc-')
        if listed:
            with open(f'{tmp}/sys/power/wakeup_count_sources', 'w'):
                pass
        for i in range(n):
            d = f'{tmp}/sys/class/wakeup/wakeup{i}'
            os.makedirs(d)
            for name, text in (('name', f'source{i}\n'), ('event_count', f'{3 * i}\n'),
                               ('wakeup_count', '0\n')):
                with open(f'{d}/{name}', 'w') as f:
                    f.write(text)
        env = dict(os.environ, WAKELOCK_SOCKET=f'{tmp}/run/wakelockd.sock')
        log = open(f'{tmp}/daemon.log', 'w')
        d = None
        try:
            d = start_daemon(bindir, tmp, ['--policy', 'appliance'], env, log)
            env['WLBENCH_DAEMON_PID'] = str(d.pid)
            run([wlbench, 'cycle-cpu', str(secs)], res, 'host', env, secs + 30)
            f = res.figs.pop('host.cycle_cpu', None)
            key = f'host.cycle_cpu_{key}'
            if f:
                f['sources'] = n
                old = res.figs.get(key)
                f['runs'] = (old or {}).get('runs', []) + [f['median']]
                if not old or f['median'] < old['median']:
                    res.figs[key] = f
                else:
                    old['runs'] = f['runs']
        finally:
            stop_daemon(d, log, tmp)


def runs_note(f):
    """'; runs A, B ms, the lowest kept' for a figure measured more than
    once in the run (Results.feed), else ''."""
    runs = f.get('runs')
    if not runs or len(runs) < 2:
        return ''
    return '; runs ' + ', '.join(fmt(r) for r in runs) + ' ms, the lowest kept'


def stop_daemon(d, log, tmp):
    """End a host phase: SIGTERM the daemon (killed after 10 s), close its
    log, remove its fake root."""
    if d:
        d.send_signal(signal.SIGTERM)
        try:
            d.wait(10)
        except subprocess.TimeoutExpired:
            d.kill()
            d.wait()
    log.close()
    shutil.rmtree(tmp, ignore_errors=True)


def fake_root(prefix):
    """A fake root for wakelockd --root, as tests/unit/harness.c makes it:
    <root>/sys/power/{wakeup_count,state,mem_sleep} and a private run dir
    (mode 0700, ours)."""
    tmp = tempfile.mkdtemp(prefix=prefix)
    os.makedirs(f'{tmp}/sys/power')
    for name, text in (('wakeup_count', '7\n'), ('state', 'freeze mem disk\n'),
                       ('mem_sleep', 's2idle [deep]\n')):
        with open(f'{tmp}/sys/power/{name}', 'w') as f:
            f.write(text)
    os.mkdir(f'{tmp}/run', 0o700)
    return tmp


def start_daemon(bindir, tmp, extra, env, log):
    d = subprocess.Popen([os.path.join(bindir, 'daemon/wakelockd'), '--foreground', '--root', tmp,
                          '--run-dir', f'{tmp}/run', '--start-grace-ms', '0',
                          '--min-awake-ms', '5', '--log-level', 'info'] + extra,
                         env=env, stderr=log)
    deadline = time.monotonic() + 10
    while not os.path.exists(f'{tmp}/run/wakelockd.sock'):
        if time.monotonic() > deadline or d.poll() is not None:
            d.kill()
            raise RuntimeError('host wakelockd did not start: ' + open(log.name).read())
        time.sleep(0.02)
    time.sleep(0.1)
    return d


def display_phase(res, args, wlbench):
    """The display as an awake source (daemon/display.c): while a DRM
    connector's dpms reads On the power thread looks again once a second;
    while every display is off it should not wake at all.  The real
    wakelockd on a fake root with one connector,
    <root>/sys/class/drm/card0-Virtual-1/dpms, and one client holding (so
    that it never suspends); `wlbench power-wakeups` counts the power
    thread's context switches (/proc/PID/task/TID/status) over SECS:
      display_on         started with the connector On
      display_off_after  the same daemon, dpms written Off, measured from
                         the end of display_off_delay_ms (+1.5 s)
      display_off        a fresh daemon started with the connector Off"""
    bindir = os.path.abspath(args.build)
    secs = 3 if args.quick else 10
    delay_ms = 5000          # WLD_DEFAULT_DISPLAY_OFF_DELAY_MS, given explicitly
    for tag, first in (('on', 'On'), ('off', 'Off')):
        tmp = fake_root('wlbench-disp-')
        conn = f'{tmp}/sys/class/drm/card0-Virtual-1'
        os.makedirs(conn)
        with open(f'{conn}/dpms', 'w') as f:
            f.write(first + '\n')
        # Driven by a CRTC: a connector counts only then (daemon/display.c).
        with open(f'{conn}/enabled', 'w') as f:
            f.write('enabled\n')
        env = dict(os.environ, WAKELOCK_SOCKET=f'{tmp}/run/wakelockd.sock')
        log = open(f'{tmp}/daemon.log', 'w')
        d = None
        try:
            d = start_daemon(bindir, tmp, ['--display-off-delay-ms', str(delay_ms)], env, log)
            env['WLBENCH_DAEMON_PID'] = str(d.pid)
            cond = {'connector': 'card0-Virtual-1', 'dpms': first, 'seconds': secs,
                    'off_delay_ms': delay_ms}

            def measure(name, **more):
                p = run([wlbench, 'power-wakeups', str(secs)], res, 'host', env, secs + 30)
                f = res.figs.pop('host.power_wakeups', None)
                if f:
                    f.update(cond, **more)
                    res.figs[f'host.{name}'] = f
            measure(f'display_{tag}')
            if tag == 'on':
                # The same daemon: the display goes off.  The loop finds
                # it off at its next look (<= 1 s), stays awake for the
                # off delay, then should stop looking.
                with open(f'{conn}/dpms', 'w') as f:
                    f.write('Off\n')
                time.sleep(delay_ms / 1000 + 1.5)
                cond['dpms'] = 'On, then Off'
                measure('display_off_after', wait_s=delay_ms / 1000 + 1.5)
        finally:
            stop_daemon(d, log, tmp)


def strace_react(res, args, wlbench, trace, env, dpid):
    """How the daemon reacts to a release: the releaser sends WL_OP_KICK on
    its own connection, the daemon's main thread reads it and writes the
    power loop's eventfd, the power thread returns from poll() on it;
    counted here is how often the next system call of that thread is a
    FUTEX_WAIT (it would then be waiting for its own lock, held by the
    main thread): clients hold no lock the daemon could wait for.  A call
    strace shows as "<unfinished ...>" and "resumed" (another thread ran
    in between, as the main thread now does) is joined back together."""
    out = os.path.join(args.out, 'profile-react.strace')
    st = subprocess.Popen(['strace', '-f', '-tt', '-T', '-o', out, '-p', str(dpid)],
                          stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    subprocess.run([wlbench, 'latency', '20', trace], env=dict(env, WLBENCH_MAXRAW='0'),
                   stdout=subprocess.DEVNULL, timeout=60)
    st.send_signal(signal.SIGINT)
    st.wait()
    with open(out) as f:
        lines = f.read().splitlines()
    calls, pending = {}, {}           # tid -> [completed call text], unfinished call
    for line in lines:
        m = re.match(r'(\d+)\s+\S+\s+(.*)$', line)
        if not m:
            continue
        tid, text = m.groups()
        if text.endswith('<unfinished ...>'):
            pending[tid] = text[:-len('<unfinished ...>')].rstrip()
            continue
        r = re.match(r'<\.\.\. \w+ resumed>(.*)$', text)
        if r:
            text = pending.pop(tid, '') + r.group(1)
        calls.setdefault(tid, []).append(text)
    woke = re.compile(r'poll\(\[\{fd=\d+, events=POLLIN\}.*?\], \d+, -?\d+\)\s*=\s*[1-9]')
    wakes = lock_waits = 0
    for seq in calls.values():
        for a, b in zip(seq, seq[1:] + ['']):
            if not woke.match(a):
                continue
            wakes += 1
            if b.startswith('futex(') and 'FUTEX_WAIT' in b:
                lock_waits += 1
    res.figs['host.profile_react'] = {'eventfd_wakeups': wakes, 'then_lock_wait': lock_waits,
                                      'file': os.path.relpath(out, TOP), 'raw': []}


def profile_hold(res, wlbench, env, tmp):
    """Instructions per acquire+release (callgrind, inclusive) in the child
    that does 1000 warm-up + 10000 measured pairs."""
    pairs = 11000
    pre = f'{tmp}/cg'
    subprocess.run(['valgrind', '--tool=callgrind', f'--callgrind-out-file={pre}.%p',
                    wlbench, 'hold', '1', '0.0', '10000'],
                   env=dict(env, WLBENCH_MAXRAW='0'), stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=300)
    best = None
    for name in os.listdir(tmp):
        if not name.startswith('cg.'):
            continue
        ann = subprocess.run(['callgrind_annotate', '--inclusive=yes', f'{tmp}/{name}'],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
        funcs = {}
        for line in ann.splitlines():
            m = re.match(r'\s*([\d,]+) \([\d. ]+%\)\s+\S*?:(\w+)(?:@@\S+)? \[', line)
            if m:
                funcs.setdefault(m.group(2), int(m.group(1).replace(',', '')))
        if 'wakelock_hold_acquire' in funcs and (best is None or funcs['wakelock_hold_acquire'] > best['wakelock_hold_acquire']):
            best = funcs
    if not best:
        return
    prof = {}
    for fn in ('wakelock_hold_acquire', 'wakelock_hold_release', 'wl_now_coarse', 'clock_gettime',
               'wl_client_wait_open', 'wl_client_kick'):
        if fn in best:
            prof[fn] = round(best[fn] / pairs, 1)
    res.figs['host.callgrind_per_pair'] = dict(prof, unit='instructions', raw=[])


# --- guest ----------------------------------------------------------------
def guest_phase(res, args):
    from wlguest import Guest, HostActions
    append = f'wlplan={args.plan} kunit.enable=0'
    if args.quick:
        append += ' wlbenchquick=1'
    log = os.path.join(args.out, 'guest-console.log')
    g = Guest(args.kernel, args.initrd, append, log_path=log)
    host = HostActions(g)
    armed = None
    cycles = {}           # phase -> [host monotonic times of "PM: suspend-to-idle"]
    end_seen = failures = False
    boot = {'kasan': False, 'lockdep': False}   # instrumented-kernel boot lines seen
    kinfo = None                                # the guest's BENCHKERNEL line
    energy = Energy(g, args.quick)
    deadline = time.monotonic() + args.guest_timeout
    try:
        while time.monotonic() < deadline:
            lines = g.poll(0.02)
            if lines is None:
                break
            energy.tick()
            for line in lines:
                now = time.monotonic()
                if energy.line(line):
                    continue
                if armed and S2IDLE.search(line):
                    g.modem_write(b'w')           # the wake source, at once
                    cycles[armed].append(now)
                    continue
                if KASAN_BOOT in line:
                    boot['kasan'] = True
                if LOCKDEP_BOOT in line:
                    boot['lockdep'] = True
                m = KINFO.search(line)
                if m:
                    kinfo = kv(m.group(1))
                    continue
                m = CTL.search(line)
                if m:
                    if m.group(1) == 'arm':
                        armed = m.group(2)
                        # Armed again: a new run of the same loop, whose
                        # first gap is not a cycle.
                        cycles.setdefault(armed, []).append(None)
                    elif m.group(1) == 'disarm':
                        armed = None
                    continue
                if host.request(line):
                    continue
                host.tick(line)
                if res.feed('guest', line):
                    continue
                if line.startswith('not ok'):
                    failures = True
                    print('  guest: ' + line)
                if 'BENCHMSG' in line or line.startswith('# FAIL'):
                    print('  guest: ' + line.split('BENCHMSG ', 1)[-1])
                if line.startswith('# WLTEST END'):
                    end_seen = True
            host.tick(None)
            if end_seen:
                break
    finally:
        g.close()
    energy.figures(res)
    if energy.qmp_errors:
        print('  ! QMP: ' + '; '.join(energy.qmp_errors[:3]))
    if not end_seen:
        print(f'  ! guest run did not finish (timeout or crash); console log: {log}')
    # What the booted kernel shows wins over its .config (a kernel given
    # with BENCH_KERNEL may not be the one built there); either saying
    # "instrumented" is enough to call it a debug kernel.
    c = res.cond['guest']
    for key in ('kasan', 'lockdep'):
        seen = boot[key] or bool(kinfo and kinfo.get(key) == 1)
        if seen or kinfo is not None:
            setattr(c, key, seen or bool(getattr(c, key)))
    if kinfo:
        c.release = str(kinfo.get('release'))
    for phase, ts in cycles.items():
        pairs = [(a, b) for a, b in zip(ts, ts[1:]) if a is not None and b is not None]
        if len(pairs) < 2:
            continue
        gaps = [(b - a) * 1e3 for a, b in pairs]
        rate = len(gaps) / (sum(gaps) / 1e3)
        s = sorted(gaps)
        res.figs[f'guest.cycle_{phase}'] = {
            'n': len(gaps), 'median': statistics.median(s),
            'p99': s[min(len(s) - 1, int(0.99 * (len(s) - 1) + 0.5))], 'unit': 'ms',
            'rate': rate, 'raw': gaps, 'clock': 'host CLOCK_MONOTONIC, console line arrival'}
    return end_seen and not failures


# --- energy (guest, ACPI S3) ------------------------------------------------
ECTL = re.compile(r'BENCHCTL energy (\S+)(?: (\S+))?')
ELEDGER = re.compile(r'ELEDGER (\S+) (\{.*\})\s*$')
ANSWER = re.compile(rb'ANSWER (\d+)')
CALIB_RESCUE_S = 15.0  # the bare loop: wake the guest if the RTC has not after this long
RING_S = 0.3           # a call that found the guest in S3 is written this long after its wake-up
CALL_SEED = 14


class Energy:
    """The host side of the energy figures (tests/guest/bench-energy.sh).

    Time asleep is QEMU's: its QMP events SUSPEND (the guest entered S3)
    and WAKEUP (it left it), stamped by QEMU on the host's clock.  The host
    also plays the modem: during the "calls" workload it places a call
    ("CALL <id>" into the modem port) at random times (exponential gaps).
    If the guest is in S3 then, or enters it while a call is unanswered,
    the host wakes it (QEMU wakes S3 on its RTC but not on a serial byte)
    and writes the call RING_S after the wake-up (a byte that arrives in
    S3 or during the resume is lost: the UART is reset).  The modem client
    answers each copy; the first answer counts.
    """

    def __init__(self, guest, quick):
        self.g = guest
        self.quick = quick
        self.buf = b''
        self.events = []         # (kind, host realtime) of SUSPEND / WAKEUP
        self.marks = {}          # "calib"/"calib-end"/"begin TAG"/"end TAG" -> host realtime
        self.suspended = False
        self.wake_sent = False
        self.calib = False
        self.wake_at = None      # host realtime to wake the guest (bare loop)
        self.calls_on = False
        self.calls = []          # {'id', 'sent', 'answered', 'asleep_when_sent', 'woken'}
        self.next_call = None
        self.ring_at = None
        self.rescued = 0
        self.rng = random.Random(CALL_SEED)
        self.mean_gap = 6.0 if quick else 12.0
        self.ledger = {}         # TAG -> [records]
        self.ledger_bad = 0      # ledger lines that did not parse (console interleaving)
        self.qmp_errors = []

    # QMP: our own reader, so that no event is lost (Guest.qmp skips them).
    def _qmp_poll(self):
        s = self.g.qmp_sock
        while True:
            r, _, _ = select.select([s], [], [], 0)
            if not r:
                break
            data = s.recv(65536)
            if not data:
                break
            self.buf += data
        while b'\n' in self.buf:
            raw, self.buf = self.buf.split(b'\n', 1)
            try:
                msg = json.loads(raw)
            except ValueError:
                continue
            ev = msg.get('event')
            if 'error' in msg:
                self.qmp_errors.append(str(msg['error']))
            if ev not in ('SUSPEND', 'WAKEUP'):
                continue
            ts = msg.get('timestamp') or {}
            t = ts.get('seconds', 0) + ts.get('microseconds', 0) / 1e6 if ts else time.time()
            self.events.append((ev, t))
            if ev == 'SUSPEND':
                self.suspended, self.wake_sent = True, False
                if self.calib:
                    self.wake_at = time.time() + CALIB_RESCUE_S
            else:
                self.suspended, self.wake_sent = False, False
                self.wake_at = None
                if any(c['answered'] is None for c in self.calls):
                    self.ring_at = time.time() + RING_S

    def _wake(self):
        if self.suspended and not self.wake_sent:
            self.g.qmp_sock.sendall(b'{"execute": "system_wakeup"}\n')
            self.wake_sent = True
            return True
        return False

    def _answers(self):
        rx = self.g.modem_rx
        while b'\n' in rx:
            i = rx.index(b'\n')
            line = bytes(rx[:i])
            del rx[:i + 1]
            m = ANSWER.search(line)
            if m:
                for c in self.calls:
                    if c['id'] == int(m.group(1)) and c['answered'] is None:
                        c['answered'] = time.time()

    def line(self, line):
        """A console line; True if it was ours."""
        m = ECTL.search(line)
        if m:
            now = time.time()
            what, tag = m.group(1), m.group(2)
            self.marks[f'{what} {tag}' if tag else what] = now
            if what == 'calib':
                self.calib = True
            elif what == 'calib-end':
                self.calib, self.wake_at = False, None
            elif what == 'begin' and tag == 'calls':
                self.calls_on = True
                self.next_call = now + 1.0 + self.rng.expovariate(1 / self.mean_gap)
            elif what == 'end' and tag == 'calls':
                self.calls_on = False
            return True
        m = ELEDGER.search(line)
        if m:
            try:
                self.ledger.setdefault(m.group(1), []).append(json.loads(m.group(2)))
            except ValueError:
                self.ledger_bad += 1
            return True
        return False

    def tick(self):
        self._qmp_poll()
        self._answers()
        now = time.time()
        if self.wake_at is not None and now >= self.wake_at and self.suspended:
            if self._wake():
                self.wake_at = None
                self.rescued += 1
        if self.calls_on and self.next_call is not None and now >= self.next_call:
            cid = len(self.calls) + 1
            asleep = self.suspended
            if not asleep:
                self.g.modem_write(f'CALL {cid}\n'.encode())
            self.calls.append({'id': cid, 'sent': now, 'answered': None,
                               'asleep_when_sent': asleep, 'woken': 0, 'rings': 0 if asleep else 1})
            self.next_call = now + max(1.0, self.rng.expovariate(1 / self.mean_gap))
        pending = [c for c in self.calls if c['answered'] is None]
        if pending and self.suspended and self._wake():
            pending[0]['woken'] += 1
        if pending and not self.suspended and self.ring_at is not None and now >= self.ring_at:
            for c in pending:
                self.g.modem_write(f'CALL {c["id"]}\n'.encode())
                c['rings'] += 1
            self.ring_at = None

    # --- figures ------------------------------------------------------------
    def figures(self, res):
        ev = self.events
        m = self.marks
        # Cost of a wake-up: QEMU's WAKEUP to the next SUSPEND, bare loop
        # ("calib wW": W ms of work after each resume; the workload's work,
        # and none).
        for key, t0 in list(m.items()):
            if not key.startswith('calib w') or f'calib-end {key[6:]}' not in m:
                continue
            t1 = m[f'calib-end {key[6:]}']
            seq = [(k, t) for k, t in ev if t0 <= t <= t1]
            costs = [(b_[1] - a_[1]) * 1e3 for a_, b_ in zip(seq, seq[1:])
                     if a_[0] == 'WAKEUP' and b_[0] == 'SUSPEND']
            if costs:
                s = sorted(costs)
                w = int(key[7:])
                res.figs[f'guest.energy_cycle_cost_w{w}'] = {
                    'n': len(s), 'median': statistics.median(s), 'p99': s[-1], 'unit': 'ms',
                    'work_ms': w, 'rescued': self.rescued,
                    'raw': costs, 'clock': 'host, QMP WAKEUP -> next SUSPEND (bare S3 loop)'}
        res.figs['guest.energy_qmp'] = {'events': ev, 'marks': m, 'raw': [], 'ledger_bad_lines': self.ledger_bad,
                                        'clock': 'host CLOCK_REALTIME (QEMU event stamps, line arrival)'}
        work = (res.figs.get('guest.energy_one') or {}).get('work_ms')
        cost = res.get(f'guest.energy_cycle_cost_w{int(work)}') if work is not None else None
        seen = 0
        for tag in ('one', 'ten', 'calls'):
            b, e = m.get(f'begin {tag}'), m.get(f'end {tag}')
            if b is None or e is None:
                continue
            seq = [(k, t) for k, t in ev if b <= t <= e]
            wakes = [t for k, t in seq if k == 'WAKEUP']
            d = {'begin': b, 'end': e, 'wakeups': len(wakes), 'raw': [],
                 'suspends': sum(1 for k, _ in seq if k == 'SUSPEND'), 'host_s': e - b}
            # Measured over whole cycles: first wake-up to last wake-up.
            if len(wakes) >= 2:
                start, stop = wakes[0], wakes[-1]
                asleep, last_s = 0.0, None
                for k, t in seq:
                    if not start <= t <= stop:
                        continue
                    if k == 'SUSPEND':
                        last_s = t
                    elif last_s is not None:
                        asleep += t - last_s
                        last_s = None
                d.update(start=start, stop=stop, asleep_s=asleep, share=asleep / (stop - start),
                         cycles=len(wakes) - 1)
                # Awake per wake-up: WAKEUP to the next SUSPEND (aborted
                # attempts in between included).
                aw = [(b_[1] - a_[1]) * 1e3 for a_, b_ in zip(seq, seq[1:])
                      if a_[0] == 'WAKEUP' and b_[0] == 'SUSPEND' and start <= a_[1] < stop]
                d['awake_per_wake_ms'] = aw
                d['awake_per_wake_median_ms'] = statistics.median(aw) if aw else None
            recs = self.ledger.get(tag) or []
            new = [r for r in recs if r.get('seq', 0) > seen]
            if recs:
                seen = max(r.get('seq', 0) for r in recs)
            d['ledger'] = {o: sum(1 for r in new if r.get('outcome') == o)
                           for o in ('resumed', 'aborted', 'failed')}
            d['ledger']['errnos'] = sorted({str(r.get('errno')) for r in new if r.get('errno')})
            # Why attempts aborted, from the wakeup sources that moved:
            # the alarm timer refusing (an alarm due within 2 s), the
            # daemon's timerfd firing during the entry, a modem byte.
            why = {}
            for r in new:
                if r.get('outcome') != 'aborted':
                    continue
                src = r.get('sources') if isinstance(r.get('sources'), list) else []
                k = ('alarmtimer' if 'alarmtimer.0.auto' in src else 'timerfd' if '[timerfd]' in src
                     else 'ttyS1' if 'ttyS1' in src else 'other')
                why[k] = why.get(k, 0) + 1
            d['ledger']['aborted_by'] = why
            d['ledger']['asleep_ms'] = sum(r.get('asleep_ms', 0) for r in new)
            d['ledger']['causes'] = {}
            for r in new:
                if r.get('outcome') == 'resumed':
                    d['ledger']['causes'][r.get('cause')] = d['ledger']['causes'].get(r.get('cause'), 0) + 1
            sched = res.figs.get(f'guest.energy_{tag}')
            if tag == 'calls':
                d['calls'] = self.calls
            if sched and cost and 'start' in d:
                d['ideal'] = ideal(sched, b, d['start'], d['stop'], (cost - work) / 1e3,
                                   self.calls if tag == 'calls' else [],
                                   (res.get('guest.energy_call_work') or 0) / 1e3)
            res.figs[f'guest.energy_run_{tag}'] = d


def ideal(sched, begin, start, stop, cost, calls, call_work):
    """The ideal share asleep over [start, stop] (host clock) for the schedule
    of a workload: awake only for the work that is due, plus one cycle's
    cost per wake-up, with the fewest wake-ups the alarm windows allow.
    cost: what a wake-up costs beyond its work, measured in the same run by
    the bare S3 loop doing the workload's work after each resume (WAKEUP to
    the next SUSPEND, minus the work): work that overlaps the kernel's own
    resume is not counted twice.

    Alarm group k (all N clients) must be served inside the windows' common
    part [FIRST + SPREAD + k*P, FIRST + WINDOW + k*P] after the workload
    began (host time: the begin line; the guest's CLOCK_BOOTTIME is taken
    to run with the host's).  An incoming call needs a wake-up at once; a
    group whose common part overlaps the call's work is served by that
    wake-up (a call that found the guest in S3 reaches it RING_S after the
    wake-up, as the harness delivers it).  Every other group costs a
    wake-up of its own.  Awake: the
    union of [wake, wake + cost + work] clipped to [start, stop]."""
    P, W, S = sched['period_ms'] / 1e3, sched['window_ms'] / 1e3, sched['spread_ms'] / 1e3
    first, work = sched['first_ms'] / 1e3, sched['work_ms'] / 1e3
    groups = []
    k = 0
    while begin + first + k * P <= stop + P:
        groups.append((begin + first + S + k * P, begin + first + W + k * P))
        k += 1
    intervals, served = [], set()
    for c in calls:
        t = c['sent']
        if not start <= t <= stop:
            continue
        # A call that found the guest in S3 reaches it RING_S after the
        # wake-up (the harness's modem; see Energy): the platform's delay.
        span = call_work + (RING_S if c['woken'] else 0)
        for i, (lo, hi) in enumerate(groups):
            if i not in served and lo <= t + call_work and hi >= t:
                served.add(i)
                span = max(span, max(lo, t) - t + work)
        intervals.append((t, t + cost + span))
    for i, (lo, hi) in enumerate(groups):
        if i not in served:
            intervals.append((hi, hi + cost + work))
    intervals.sort()
    awake, cur_s, cur_e = 0.0, None, None
    wakes = 0
    for s, e in intervals:
        s, e = max(s, start), min(e, stop)
        if e <= s:
            continue
        wakes += 1
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                awake += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        awake += cur_e - cur_s
    return {'share': 1 - awake / (stop - start), 'awake_s': awake, 'wakeups': wakes,
            'groups': len([g for g in groups if start <= g[1] <= stop]), 'cost_s': cost}


# --- table ----------------------------------------------------------------
def fmt(v, unit=''):
    if v is None:
        return '-'
    if isinstance(v, str):
        return v
    if abs(v) >= 100:
        s = f'{v:.0f}'
    elif abs(v) >= 10:
        s = f'{v:.1f}'
    else:
        s = f'{v:.2f}'
    return s + (f' {unit}' if unit else '')


def ratio(a, b):
    if a is None or b is None or not b:
        return None
    return a / b


def table(res):
    R = res.get
    rows = []   # (figure, where, median, p99, unit, ratio / note, target, verdict, kernel)
    hc = res.cond.get('host') or Conditions('host')
    gc = res.cond.get('guest') or Conditions('guest')

    def verdict(ok):
        return '-' if ok is None else ('met' if ok else 'MISSED')

    def peer_verdict(ok, cond):
        """A ratio against a kernel peer: judged on an uninstrumented kernel only."""
        if ok is None:
            return '-'
        if cond.debug is None:
            return 'not judged (kernel config unknown)'
        if cond.debug:
            return 'not judged (debug kernel)'
        return verdict(ok)

    def add(figure, where, median, p99, unit, note='', target='', verd='', cond=None):
        if median is None and (where not in res.ran or res.partial):
            return        # that phase was skipped
        rows.append((figure, where, median, p99, unit, note, target, verd,
                     (cond or (gc if where.startswith('guest') else hc)).text()))

    cpus = os.cpu_count() or 2

    def agg(where, p, name='hold_p'):
        ops = R(f'{where}.{name}{p}', 'ops_per_s')
        return None if not ops else min(p, cpus if where == 'host' else 2) * 1e9 / ops

    def excess_rows(where, label, what, ns, name, floor_name, judged, complete=None):
        """The library's excess over the memory floor measured in the same
        run (median of the pair - median of the floor), for each N against
        N = ns[0]: the verdicts of the scale rows judge this, not the pair
        alone, whose growth can be the machine's (bench/README.md)."""
        def get(n):
            m, f = R(f'{where}.{name}{n}'), R(f'{where}.{floor_name}{n}')
            return m, f, (None if m is None or f is None else m - f)
        m1, f1, e1 = get(ns[0])
        for n in ns:
            m, f, e = get(n)
            if e is None:
                continue
            if n == ns[0]:
                add(f'  excess of the pair over its floor (pair - floor), {what(n)}', label, e, None, 'ns',
                    f'pair {fmt(m)} - floor {fmt(f)} ns')
                continue
            de = None if e1 is None else e - e1
            ok = None if e1 is None else (e <= 1.2 * e1 or de <= 2)
            if complete and not complete(n):     # e.g. not every client registered
                ok = False
            add(f'  excess of the pair over its floor (pair - floor), {what(n)}', label, e, None, 'ns',
                f'pair {fmt(m)} (x{fmt(ratio(m, m1))}), floor {fmt(f)} (x{fmt(ratio(f, f1))}), '
                f'excess x{fmt(ratio(e, e1)) if e1 and e1 > 0 and e > 0 else "-"} / '
                f'{"+" if de is not None and de >= 0 else ""}{fmt(de)} ns vs {what(ns[0])}',
                '<= x1.2 or <= +2 ns' if judged else '', verdict(ok) if judged else '')

    def hold_rows(where, label):
        base = R(f'{where}.hold_p1')
        add('wakelock_hold_acquire+wakelock_hold_release, 1 process', label, base, R(f'{where}.hold_p1', 'p99'),
            'ns', 'untimed; the client goes 0 -> 1 -> 0 holds; another client keeps the daemon waiting',
            '<= 25 ns' if where == 'host' else '',
            verdict(None if base is None else base <= 25) if where == 'host' else '')
        for p in (2, 8, 64):
            m = R(f'{where}.hold_p{p}')
            add(f'  the same, {p} processes, each on its own region', label, m,
                R(f'{where}.hold_p{p}', 'p99'), 'ns',
                f'x{fmt(ratio(m, base))} vs 1 process; all processes: {fmt(agg(where, p))} ns/pair/core')
        # The floor of these rows, measured right after the pair by the same
        # processes at once (wlbench.c: floor_hold_pair): the pair's atomics
        # on a line of each process's own memory, nothing else.
        fbase = R(f'{where}.hold_floor_p1')
        for p in (1, 2, 8, 64):
            f = res.figs.get(f'{where}.hold_floor_p{p}')
            if f:
                add(f'  memory floor: the pair\'s atomics on a private line, {p} process' + 'es' * (p > 1)
                    + ' at once', label, f.get('median'), f.get('p99'), 'ns',
                    f'x{fmt(ratio(f.get("median"), fbase))} vs 1 process; seq_cst add, seq_cst load, '
                    f'CAS, seq_cst load; all processes: {fmt(agg(where, p, "hold_floor_p"))} ns/pair/core')
        # Judged on the host only: in the guest, TCG (bench/README.md).
        excess_rows(where, label, lambda p: f'{p} process' + 'es' * (p > 1), (1, 2, 8, 64),
                    'hold_p', 'hold_floor_p', where == 'host')
        return base

    def epoll_row(where, label, hold, cond):
        f = res.figs.get(f'{where}.epollwakeup_round')
        if not f:
            return
        kept = f.get('wakeup_kept')
        r = ratio(f.get('median'), hold)
        if kept == 0:
            add('eventfd write+epoll_wait+read; EPOLLWAKEUP dropped by the kernel', label,
                f.get('median'), f.get('p99'), 'ns',
                f'{fmt(r)}x hold; a plain epoll round (no PM_SLEEP: no wakeup source), not the peer',
                '', '-', cond)
            return
        add('eventfd write+epoll_wait+read, EPOLLWAKEUP item', label, f.get('median'), f.get('p99'),
            'ns', f'{fmt(r)}x hold' + ('' if kept == 1 else ' (EPOLLWAKEUP kept: unknown)'),
            '>= 20x', peer_verdict(None if r is None else r >= 20, cond), cond)

    # 1. hold cost and its peers
    h1 = hold_rows('host', 'host')
    ck = R('host.clock_mono')
    add('clock_gettime(CLOCK_MONOTONIC), one call', 'host', ck, R('host.clock_mono', 'p99'), 'ns',
        'for scale: the hold pair reads only CLOCK_MONOTONIC_COARSE, twice')
    epoll_row('host', 'host', h1, hc)
    g1 = hold_rows('guest', 'guest')
    wl = R('guest.wake_lock_pair')
    r1 = ratio(wl, g1)
    add('write /sys/power/wake_lock + wake_unlock, one name', 'guest', wl,
        R('guest.wake_lock_pair', 'p99'), 'ns', f'{fmt(r1)}x hold', '>= 100x',
        peer_verdict(None if r1 is None else r1 >= 100, gc))
    epoll_row('guest', 'guest', g1, gc)
    ih, ihh = R('guest.inhibit_pair'), R('guest.inhibit_hold_pair')
    add('logind Inhibit("sleep", "block") + close of its fd, real bus (elogind)', 'guest', ih,
        R('guest.inhibit_pair', 'p99'), 'ns',
        f'{fmt(ratio(ih, ihh))}x the libwakelock pair measured beside it ({fmt(ihh)} ns)', '', '-')
    # 2. scale
    for where in ('host', 'guest'):
        base = R(f'{where}.scale_c1')
        for c in (1, 10, 100, 1000):
            f = res.figs.get(f'{where}.scale_c{c}')
            if not f:
                continue
            got = int(f.get('clients', 0))
            note = f'{got} registered, {int(f.get("holds_held", 0))} holds held'
            if got < c:
                note += f' ({f.get("open_error")})'
            add(f'acquire+release of a random client\'s free hold, {c} client' + 's' * (c > 1), where,
                f.get('median'), f.get('p99'), 'ns',
                f'x{fmt(ratio(f.get("median"), base))} vs 1; ' + note)
        # The pattern's memory floor, measured alone after the pair in
        # the same run (wlbench.c: floor_pair): how much of the growth is the
        # library's and how much any layout would pay.
        fbase = R(f'{where}.scale_floor_c1')
        for c in (1, 10, 100, 1000):
            fl = res.figs.get(f'{where}.scale_floor_c{c}')
            if fl:
                add(f'memory floor of that pattern (depth add+sub, stats store), {c} client' + 's' * (c > 1),
                    where, fl.get('median'), fl.get('p99'), 'ns',
                    f'x{fmt(ratio(fl.get("median"), fbase))} vs 1')
        # Judged on the host, as the process rows: in the guest QEMU's
        # software TLB, not the library, sets the growth.  A count of
        # clients that could not all register is MISSED whatever the times.
        excess_rows(where, where, lambda c: f'{c} client' + 's' * (c > 1), (1, 10, 100, 1000),
                    'scale_c', 'scale_floor_c', where == 'host',
                    lambda c: int(res.figs[f'{where}.scale_c{c}'].get('clients', 0)) >= c)
        for c in (1, 1000):
            f = res.figs.get(f'{where}.scale_c{c}')
            if f:
                n = int(f.get('clients', 0))
                add(f'daemon VmRSS with {n} client{"s" * (n > 1)} registered', where, f.get('daemon_rss_kb'),
                    None, 'KiB', f'before: {fmt(f.get("daemon_rss_kb_before"))} KiB')
                add(f'reaping after {n} client socket{"s" * (n > 1)} closed, per client', where,
                    f.get('reap_us_per_client'), None, 'us',
                    f'first close -> all slots freed; registration {fmt(f.get("register_us"))} us/client')
    # 3. cycle rate
    dcy, bcy = res.figs.get('guest.cycle_daemon'), res.figs.get('guest.cycle_bare')
    for name, f in (('suspend-to-idle cycle through wakelockd', dcy),
                    ('suspend-to-idle cycle, bare wakeup_count+freeze loop', bcy)):
        if f:
            add(name, 'guest', f['median'], f['p99'], 'ms', f'{fmt(f["rate"])} cycles/s, n={f["n"]}')
    if dcy and bcy:
        r3 = dcy['rate'] / bcy['rate']
        add('cycle rate, wakelockd / bare loop', 'guest', r3 * 100, None, '%', '', '>= 95 %',
            peer_verdict(r3 >= 0.95, gc))
    cpc = res.figs.get('guest.daemon_cpu')
    if cpc:
        add('daemon CPU (utime+stime) per suspend cycle', 'guest', cpc.get('median'), None, 'ms',
            f'{int(cpc.get("cycles", 0))} cycles, {int(cpc.get("ticks", 0))} ticks' + runs_note(cpc))
    c3 = res.figs.get('guest.daemon_cpu_300ws')
    if c3 and cpc:
        r = ratio(c3.get('median'), cpc.get('median'))
        add('daemon CPU per suspend cycle, 300 more wakeup sources', 'guest', c3.get('median'), None,
            'ms', f'x{fmt(r)} of the same without them; {int(c3.get("cycles", 0))} cycles'
            + runs_note(c3), '<= x1.2', verdict(None if r is None else r <= 1.2))
    bc = res.figs.get('guest.bare_cycle')
    if bc and cpc:
        rb = ratio(cpc.get('median'), bc.get('cpu_ms_per_cycle'))
        add('bare loop CPU per suspend cycle', 'guest', bc.get('cpu_ms_per_cycle'), None, 'ms',
            f'daemon / bare: x{fmt(rb)} (stime includes the kernel suspend path)' + runs_note(bc),
            'daemon <= x1.2', verdict(None if rb is None else rb <= 1.2))
    # 4. reaction latency
    lat = res.figs.get('host.react_latency')
    if lat:
        add('last release -> daemon writes /sys/power/state', 'host', lat.get('median'),
            lat.get('p99'), 'us', 'fake /sys; stamp by an LD_PRELOAD pwrite hook', '<= 1 ms p99',
            verdict(lat.get('p99', 1e9) <= 1000))
    fw = res.figs.get('host.futex_wake')
    if fw:
        add('  floor: FUTEX_WAKE -> the sleeping process runs', 'host', fw.get('median'),
            fw.get('p99'), 'us', 'OS wake-up latency, same run')
    pr = res.figs.get('host.profile_react')
    if pr:
        add('  strace: power thread woken by its eventfd (the main thread\'s kick), then waits for a lock', 'host',
            f'{int(pr["then_lock_wait"])}/{int(pr["eventfd_wakeups"])}', None, 'wake-ups',
            'clients share no lock with the daemon; ' + pr['file'])
    # 5. idle
    for where in ('host', 'guest'):
        f = res.figs.get(f'{where}.idle_wakeups')
        if f:
            add('daemon context switches while a hold is held', where, f.get('median'), None, '/s',
                f'{int(f.get("voluntary", 0))} vol + {int(f.get("nonvoluntary", 0))} invol in '
                f'{fmt(f.get("seconds"))} s', '0', verdict(f.get('median', 1) == 0))
    # 5b. the display as an awake source: the power thread's wake-ups
    for key, label, target, ok in (
            ('display_on', 'a display on (dpms On)', '<= 1 /s', lambda r: r <= 1.0),
            ('display_off_after', 'the display turned off, after the off delay', '0', lambda r: r == 0),
            ('display_off', 'every display off from the start (dpms Off)', '0', lambda r: r == 0)):
        f = res.figs.get(f'host.{key}')
        if f:
            add(f'daemon wake-ups while a hold is held, {label}', 'host', f.get('median'), None, '/s',
                f'power thread {int(f.get("voluntary", 0))} vol + {int(f.get("nonvoluntary", 0))} invol '
                f'in {fmt(f.get("seconds"))} s (whole daemon {int(f.get("proc_voluntary", 0))} + '
                f'{int(f.get("proc_nonvoluntary", 0))}); fake root, sys/class/drm/{f.get("connector")}/dpms '
                f'{f.get("dpms")}, off delay {fmt(f.get("off_delay_ms"))} ms',
                target, verdict(ok(f.get('median', 1e9)) if 'median' in f else None))
    # 5c. a flood of input events (the activity source, laptop policy)
    fl, bare = res.figs.get('host.input_flood'), res.figs.get('host.input_flood_bare')
    if fl:
        rate = fl.get('events', 0) / fl['seconds'] if fl.get('seconds') else 0
        # A flood the FIFO did not take at the rate asked is no measure of it.
        full = rate >= 0.99 * fl.get('rate', FLOOD_RATE)
        pct = fl.get('median')
        add(f'daemon CPU under a flood of {int(fl.get("rate", FLOOD_RATE))} input events/s (laptop policy)',
            'host', pct, None, '% core',
            f'x{fmt(ratio(pct, 2.0))} of the target; {fmt(fl.get("cpu_ms"))} ms in {fmt(fl.get("seconds"))} s '
            f'(schedstat, all threads; utime+stime {int(fl.get("ticks", 0))} ticks of 10 ms); '
            f'{int(fl.get("events", 0))} events ({fmt(rate)}/s), {int(fl.get("per_write", 2))} a write, '
            f'into a FIFO as dev/input/event0 of a fake root; daemon {fmt(fl.get("wakeups_per_s"))} wake-ups/s',
            '<= 2 %', verdict(None if pct is None else pct <= 2.0 and full))
    if bare:
        add('  peer: a bare reader of the same flood, woken by every write (epoll, 128-record reads)',
            'host', bare.get('median'), None, '% core',
            f'daemon / bare reader: x{fmt(ratio(fl.get("median") if fl else None, bare.get("median")))}; '
            f'{fmt(bare.get("cpu_ms"))} ms in {fmt(bare.get("seconds"))} s, '
            f'{fmt(bare.get("wakeups_per_s"))} wake-ups/s')
    # 5d. the daemon's CPU per cycle against the number of wakeup sources
    c0 = res.figs.get('host.cycle_cpu_s0')
    for key, n, listed in WAKESRC_RUNS:
        f = res.figs.get(f'host.cycle_cpu_{key}')
        if not f:
            continue
        r = ratio(f.get('median'), c0.get('median') if c0 else None)
        what = ('' if not n else ', with the kernel\'s list' if listed
                else ', no list (a kernel without pm/0004: every source read)')
        # The bound is the daemon's with the kernel's help; without the
        # list, the figure says what that help is worth.
        target = '<= x1.2 vs 0 sources' if n and listed else ''
        add(f'daemon CPU per suspend cycle, nothing held, {n} kernel wakeup sources{what}', 'host',
            f.get('median'), None, 'us',
            (f'x{fmt(r)} vs 0 sources; ' if n else '')
            + f'{int(f.get("cycles", 0))} cycles in {fmt(f.get("seconds"))} s ({fmt(f.get("cycles_per_s"))}/s), '
            f'{fmt(f.get("pct"))} % of a core (schedstat, all threads); runs '
            + ', '.join(fmt(v) for v in f.get('runs', [])) + ' us, the lower kept; fake /sys whose '
            'state write returns at once: the daemon\'s own work only',
            target, verdict(None if r is None else r <= 1.2) if target else '')
    # 6. energy (ACPI S3)
    for key, f in sorted(res.figs.items()):
        if key.startswith('guest.energy_cycle_cost_w'):
            w = f['work_ms']
            add(f'energy: one wake-up, bare S3 loop, resume + {w} ms work + suspend' if w else
                'energy: one wake-up, bare S3 loop, resume + suspend', 'guest', f['median'], f['p99'],
                'ms', f'n={f["n"]}, woken by the RTC; host clock: QMP WAKEUP -> next SUSPEND'
                + ('; minus the work: the ideal\'s cost per wake-up' if w else ''))
    runs = {t: res.figs.get(f'guest.energy_run_{t}') for t in ('one', 'ten', 'calls')}

    def ledger_note(d):
        lg = d.get('ledger') or {}
        t = f'ledger: {lg.get("resumed", 0)} resumed, {lg.get("aborted", 0)} aborted, {lg.get("failed", 0)} failed'
        if lg.get('errnos'):
            t += ' (' + ','.join(lg['errnos']) + ')'
        if lg.get('aborted_by'):
            t += ', aborted by: ' + ', '.join(f'{k} {v}' for k, v in sorted(lg['aborted_by'].items()))
        return t

    e = runs['calls']
    if e and 'share' in e:
        sched = res.figs.get('guest.energy_calls') or {}
        calls = [c for c in e.get('calls', []) if e['start'] <= c['sent'] <= e['stop']]
        lat = sorted((c['answered'] - c['sent']) * 1e3 for c in calls if c['answered'])
        add('energy: share of time asleep, 10 clients + random calls', 'guest', e['share'] * 100, None, '%',
            f'{e["cycles"]} wake-ups in {e["stop"] - e["start"]:.1f} s (host clock, QMP SUSPEND..WAKEUP); '
            f'{len(calls)} calls, {len(lat)} answered'
            + (f' (median {fmt(statistics.median(lat))} ms)' if lat else '')
            + f', {sum(1 for c in calls if c["woken"])} found it asleep; awake per wake-up '
            f'{fmt(e.get("awake_per_wake_median_ms"))} ms (median); {ledger_note(e)}')
        idl = e.get('ideal')
        if idl:
            add('  ideal share asleep, the same schedule', 'guest', idl['share'] * 100, None, '%',
                f'{idl["wakeups"]} wake-ups x ({fmt(idl["cost_s"] * 1e3)} ms + work); '
                f'period {fmt(sched.get("period_ms"))} ms, window {fmt(sched.get("window_ms"))} ms')
            r6 = e['share'] / idl['share'] if idl['share'] > 0 else None
            add('  measured / ideal', 'guest', None if r6 is None else r6 * 100, None, '%', '',
                '>= 95 %', verdict(None if r6 is None else r6 >= 0.95))
    w1, w10 = runs['one'], runs['ten']
    for label, d in (('1 client', w1), ('10 aligned clients, overlapping windows', w10)):
        if d:
            sc = res.figs.get('guest.energy_' + ('one' if d is w1 else 'ten')) or {}
            add(f'energy: wake-ups, {label}', 'guest', str(d['wakeups']), None, 'wake-ups',
                (f'x{fmt(ratio(d["wakeups"], w1["wakeups"]))} vs 1 client; ' if d is w10 and w1 else '')
                + f'alarms only, {fmt(d["host_s"])} s; period {fmt(sc.get("period_ms"))} ms, '
                f'window {fmt(sc.get("window_ms"))} ms; fires {int(sc.get("fires", 0))}; {ledger_note(d)}'
                + (f'; awake per wake-up {fmt(d.get("awake_per_wake_median_ms"))} ms (median)'
                   if d.get('awake_per_wake_median_ms') else '')
                + (f'; share asleep {fmt(d["share"] * 100)} %' if 'share' in d else '')
                + (f' (ideal {fmt(d["ideal"]["share"] * 100)} %)' if 'ideal' in d else ''),
                '<= 1.2x 1 client' if d is w10 else '',
                verdict(None if not w1 or not w1['wakeups'] else d['wakeups'] <= 1.2 * w1['wakeups'])
                if d is w10 else '')
    prof = res.figs.get('host.callgrind_per_pair')

    head = ('figure', 'where', 'median', 'p99', 'unit', 'ratio / note', 'target', 'verdict',
            'kernel measured on')
    body = [(a, b, fmt(c), fmt(d), e, f, g, h, k) for a, b, c, d, e, f, g, h, k in rows]
    widths = [max(len(str(r[i])) for r in [head] + body) for i in range(len(head))]
    lines = ['  '.join(str(c).ljust(w) for c, w in zip(head, widths)).rstrip(),
             '  '.join('-' * w for w in widths)]
    for r in body:
        lines.append('  '.join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip())
    if prof:
        lines.append('')
        lines.append('callgrind, instructions per acquire+release (inclusive): ' +
                     ', '.join(f'{k} {v}' for k, v in prof.items() if k != 'unit' and k != 'raw'))
    return '\n'.join(lines), rows


def machine():
    cpu = ''
    try:
        with open('/proc/cpuinfo') as f:
            for line in f:
                if line.startswith('model name'):
                    cpu = line.split(':', 1)[1].strip()
                    break
    except OSError:
        pass
    return {'host': platform.node(), 'kernel': platform.release(), 'cpu': cpu,
            'cpus': os.cpu_count(), 'python': platform.python_version(),
            'guest': 'QEMU TCG, -smp 2 -m 512M (scripts/wlguest.py)'}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--kernel')
    ap.add_argument('--initrd')
    ap.add_argument('--out', default=os.path.join(TOP, 'build/bench'))
    ap.add_argument('--quick', action='store_true')
    ap.add_argument('--skip-host', action='store_true')
    ap.add_argument('--skip-guest', action='store_true')
    ap.add_argument('--host-phases', default=','.join(HOST_PHASES),
                    help='the host phases to run, comma-separated (default: all of '
                    + ', '.join(HOST_PHASES) + ')')
    ap.add_argument('--build', default=os.path.join(TOP, 'build/host'),
                    help='the meson build directory of the host binaries (default: build/host; '
                    'configured with -Dbench=true)')
    ap.add_argument('--guest-timeout', type=float, default=1800)
    ap.add_argument('--plan', default='bench', help='the guest plan (default: bench; a plan of '
                    'bench-energy alone is handy while working on the energy figures)')
    ap.add_argument('--variant', help='name of the guest kernel variant (default: the '
                    'directory of --kernel, as in ~/.cache/wakelockd/out/VARIANT/bzImage)')
    ap.add_argument('--kernel-config', help='its .config (default: the build directory '
                    'of VARIANT, when --kernel is that variant\'s bzImage)')
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if not args.skip_guest and not (args.kernel and args.initrd):
        ap.error('the guest phase needs --kernel and --initrd (make bench passes them), '
                 'or --skip-guest')
    res = Results()
    load0 = os.getloadavg()
    res.cond['host'] = host_conditions()
    if args.kernel:
        res.cond['guest'] = guest_conditions(args)
    t0 = time.monotonic()
    ok = True
    if not args.skip_host:
        print('bench: host')
        res.ran.add('host')
        host_phase(res, args)
    if not args.skip_guest:
        print(f'bench: guest ({res.cond["guest"].text()})')
        res.ran.add('guest')
        ok = guest_phase(res, args)
    text, rows = table(res)
    print()
    print(text)
    print()
    for where, c in res.cond.items():
        print(f'{where} kernel: {c.text()}' + (f' (uname -r {c.release})' if c.release else ''))
    load1 = os.getloadavg()
    print(f'machine load average (1 min) at start {load0[0]:.2f}, at end {load1[0]:.2f} '
          f'on {os.cpu_count()} CPUs (other work on the machine shows in p99s)')
    print(f'(guest figures: QEMU TCG, slow in absolute terms: compare ratios; a ratio against a '
          f'kernel peer is judged on a kernel without KASAN/lockdep only; '
          f'total {time.monotonic() - t0:.0f} s)')
    out = {'machine': dict(machine(), loadavg_start=load0, loadavg_end=load1),
           'date': time.strftime('%Y-%m-%dT%H:%M:%S%z'),
           'conditions': {w: c.as_dict() for w, c in res.cond.items()},
           'table': text, 'figures': res.figs}
    path = os.path.join(args.out, 'results.json')
    with open(path, 'w') as f:
        json.dump(out, f, indent=1)
    with open(os.path.join(args.out, 'table.txt'), 'w') as f:
        f.write(text + '\n')
    print(f'raw samples: {os.path.relpath(path, TOP)}')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
