#!/usr/bin/env python3
"""`make bench`: run every measurement of issue 7 (host, then the QEMU
guest), print one table with ratios against peers measured in the same run,
write the raw samples to build/bench/results.json.  See bench/README.md.

    bench/run.py --kernel BZIMAGE --initrd CPIO.GZ [--out build/bench]
                 [--quick] [--skip-host] [--skip-guest]
"""
import argparse
import json
import os
import platform
import re
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

    def feed(self, where, line):
        m = BENCH.search(line)
        if m:
            d = kv(m.group(2))
            d.setdefault('raw', [])
            self.figs[f'{where}.{m.group(1)}'] = d
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


# --- host -----------------------------------------------------------------
def host_phase(res, args):
    bindir = os.path.join(TOP, 'build/host')
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
    daemon = subprocess.Popen([os.path.join(bindir, 'wakelockd'), '--foreground', '--root', tmp,
                               '--run-dir', f'{tmp}/run', '--shm', f'{tmp}/shm',
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
        print('  host: EPOLLWAKEUP round (host kernel, no KASAN/lockdep)')
        run([wlbench, 'epoll', '20000'], res, 'host', env, 60)
        print('  host: reaction latency, and the futex wake-up floor under it')
        run([wlbench, 'latency', '200' if args.quick else '1000', trace], res, 'host', env, 120)
        run([wlbench, 'futex-wake', '1000'], res, 'host', env, 60)
        print('  host: idle cost (10 s)')
        run([wlbench, 'idle', '3' if args.quick else '10'], res, 'host', env, 60)
        if shutil.which('strace'):
            print('  host: strace profiles (idle wake-ups, one reaction)')
            strace_profiles(res, args, wlbench, trace, env, daemon.pid)
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


def strace_profiles(res, args, wlbench, trace, env, dpid):
    """What the daemon does while idle and when it reacts (system calls)."""
    def traced(name, cmd, seconds):
        out = os.path.join(args.out, f'profile-{name}.strace')
        st = subprocess.Popen(['strace', '-f', '-tt', '-T', '-o', out, '-p', str(dpid)],
                              stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        if cmd:
            subprocess.run(cmd, env=dict(env, WLBENCH_MAXRAW='0'), stdout=subprocess.DEVNULL,
                           timeout=60)
        time.sleep(seconds)
        st.send_signal(signal.SIGINT)
        st.wait()
        with open(out) as f:
            return out, f.read().splitlines()
    # Idle: a hold is taken by `wlbench idle` for 3 s; count the power
    # thread's timed futex waits that time out.
    out, lines = traced('idle', [wlbench, 'idle', '3'], 0)
    timeouts = [l for l in lines if 'FUTEX_WAIT,' in l and 'tv_sec=1' in l and 'ETIMEDOUT' in l]
    res.figs['host.profile_idle'] = {'futex_1s_timeouts': len(timeouts), 'seconds': 3,
                                     'file': os.path.relpath(out, TOP), 'raw': []}
    # Reaction: after the wake_seq futex returns, does the daemon block on
    # the segment mutex (the releaser notifies while still holding it)?
    out, lines = traced('react', [wlbench, 'latency', '20', trace], 0)
    seq_wakes = mutex_waits = 0
    for a, b in zip(lines, lines[1:]):
        if 'FUTEX_WAIT,' in a and 'tv_sec=1' in a and '= 0' in a:
            seq_wakes += 1
            if 'FUTEX_WAIT,' in b and 'NULL' in b:
                mutex_waits += 1
    res.figs['host.profile_react'] = {'wake_seq_wakeups': seq_wakes,
                                      'then_blocked_on_mutex': mutex_waits,
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
        if 'wl_hold_acquire' in funcs and (best is None or funcs['wl_hold_acquire'] > best['wl_hold_acquire']):
            best = funcs
    if not best:
        return
    prof = {}
    for fn in ('wl_hold_acquire', 'wl_hold_release', 'wl_client_lock', 'pthread_mutex_lock',
               'pthread_mutex_unlock', 'wl_table_acquire', 'wl_table_release', 'wl_now_mono',
               'wl_now_real'):
        if fn in best:
            prof[fn] = round(best[fn] / pairs, 1)
    res.figs['host.callgrind_per_pair'] = dict(prof, unit='instructions', raw=[])


# --- guest ----------------------------------------------------------------
def guest_phase(res, args):
    from wlguest import Guest, HostActions
    append = 'wlplan=bench kunit.enable=0'
    if args.quick:
        append += ' wlbenchquick=1'
    log = os.path.join(args.out, 'guest-console.log')
    g = Guest(args.kernel, args.initrd, append, log_path=log)
    host = HostActions(g)
    armed = None
    cycles = {}           # phase -> [host monotonic times of "PM: suspend-to-idle"]
    end_seen = failures = False
    deadline = time.monotonic() + args.guest_timeout
    try:
        while time.monotonic() < deadline:
            lines = g.poll(0.05)
            if lines is None:
                break
            for line in lines:
                now = time.monotonic()
                if armed and S2IDLE.search(line):
                    g.modem_write(b'w')           # the wake source, at once
                    cycles[armed].append(now)
                    continue
                m = CTL.search(line)
                if m:
                    if m.group(1) == 'arm':
                        armed = m.group(2)
                        cycles.setdefault(armed, [])
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
    if not end_seen:
        print(f'  ! guest run did not finish (timeout or crash); console log: {log}')
    for phase, ts in cycles.items():
        if len(ts) < 3:
            continue
        gaps = [(b - a) * 1e3 for a, b in zip(ts, ts[1:])]
        rate = (len(ts) - 1) / (ts[-1] - ts[0])
        s = sorted(gaps)
        res.figs[f'guest.cycle_{phase}'] = {
            'n': len(gaps), 'median': statistics.median(s),
            'p99': s[min(len(s) - 1, int(0.99 * (len(s) - 1) + 0.5))], 'unit': 'ms',
            'rate': rate, 'raw': gaps, 'clock': 'host CLOCK_MONOTONIC, console line arrival'}
    return end_seen and not failures


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
    rows = []   # (figure, where, median, p99, unit, ratio text, target, verdict)

    def verdict(ok):
        return '-' if ok is None else ('met' if ok else 'MISSED')

    # 1. hold cost
    h1 = R('host.hold_p1')
    rows.append(('hold acquire+release, 1 proc', 'host', h1, R('host.hold_p1', 'p99'), 'ns',
                 '', '<= 100 ns', verdict(None if h1 is None else h1 <= 100)))
    cpus = os.cpu_count() or 2

    def agg(where, p):
        ops = R(f'{where}.hold_p{p}', 'ops_per_s')
        return None if not ops else min(p, cpus if where == 'host' else 2) * 1e9 / ops

    for p in (2, 8, 64):
        m = R(f'host.hold_p{p}')
        rows.append((f'hold acquire+release, {p} procs', 'host', m, R(f'host.hold_p{p}', 'p99'),
                     'ns', f'x{fmt(ratio(m, h1))} vs 1 proc; all procs: {fmt(agg("host", p))} ns/op/core',
                     '', ''))
    ck = R('host.clock_gettime')
    rows.append(('clock_gettime() (3 per acquire+release)', 'host', ck, R('host.clock_gettime', 'p99'),
                 'ns', f'{fmt(ratio(3 * ck, h1) * 100 if ck and h1 else None)} % of a pair', '', ''))
    hep = R('host.epollwakeup_round')
    rh = ratio(hep, h1)
    rows.append(('EPOLLWAKEUP round (eventfd)', 'host', hep, R('host.epollwakeup_round', 'p99'), 'ns',
                 f'{fmt(rh)}x hold (host kernel)', '>= 10x', verdict(None if rh is None else rh >= 10)))
    g1 = R('guest.hold_p1')
    rows.append(('hold acquire+release, 1 proc', 'guest TCG', g1, R('guest.hold_p1', 'p99'),
                 'ns', '', '', ''))
    for p in (2, 8, 64):
        m = R(f'guest.hold_p{p}')
        rows.append((f'hold acquire+release, {p} procs', 'guest TCG', m,
                     R(f'guest.hold_p{p}', 'p99'), 'ns',
                     f'x{fmt(ratio(m, g1))} vs 1 proc; all procs: {fmt(agg("guest", p))} ns/op/core', '', ''))
    wl = R('guest.wake_lock_pair')
    r1 = ratio(wl, g1)
    rows.append(('/sys/power/wake_lock+wake_unlock', 'guest TCG', wl,
                 R('guest.wake_lock_pair', 'p99'), 'ns', f'{fmt(r1)}x hold', '>= 100x',
                 verdict(None if r1 is None else r1 >= 100)))
    ep = R('guest.epollwakeup_round')
    r2 = ratio(ep, g1)
    rows.append(('EPOLLWAKEUP round (eventfd)', 'guest TCG', ep,
                 R('guest.epollwakeup_round', 'p99'), 'ns', f'{fmt(r2)}x hold', '>= 10x',
                 verdict(None if r2 is None else r2 >= 10)))
    # 2. scale
    for where in ('host', 'guest'):
        base = R(f'{where}.scale_c1')
        for c in (1, 10, 100, 1000):
            f = res.figs.get(f'{where}.scale_c{c}')
            if not f:
                continue
            got = int(f.get('clients', 0))
            note = f'{got} clients, {int(f.get("holds_held", 0))} held'
            if got < c:
                note += f' ({f.get("open_error")})'
            rows.append((f'scale: acquire+release, {c} clients', where + (' TCG' if where == 'guest' else ''),
                         f.get('median'), f.get('p99'), 'ns',
                         f'x{fmt(ratio(f.get("median"), base))} vs 1; ' + note,
                         'flat; 1000 clients' if c == 1000 else '',
                         verdict(got >= c and (ratio(f.get('median'), base) or 9) <= 1.5) if c == 1000 else ''))
        for c in (1, 1000):
            f = res.figs.get(f'{where}.scale_c{c}')
            if f:
                rows.append((f'daemon RSS, {int(f.get("clients", 0))} clients', where, f.get('daemon_rss_kb'),
                             None, 'KiB', f'before clients: {fmt(f.get("daemon_rss_kb_before"))} KiB', '', ''))
                rows.append((f'reaping, {int(f.get("clients", 0))} clients', where,
                             f.get('reap_us_per_client'), None, 'us/client',
                             f'register {fmt(f.get("register_us"))} us/client', '', ''))
    # 3. cycle rate
    dcy, bcy = res.figs.get('guest.cycle_daemon'), res.figs.get('guest.cycle_bare')
    for name, f in (('suspend cycle via wakelockd', dcy), ('suspend cycle, bare loop', bcy)):
        if f:
            rows.append((name, 'guest TCG', f['median'], f['p99'], 'ms',
                         f'{fmt(f["rate"])} cycles/s, n={f["n"]}', '', ''))
    if dcy and bcy:
        r3 = dcy['rate'] / bcy['rate']
        rows.append(('cycle rate wakelockd / bare', 'guest TCG', r3 * 100, None, '%',
                     '', '>= 95 %', verdict(r3 >= 0.95)))
    cpc = res.figs.get('guest.daemon_cpu')
    if cpc:
        rows.append(('daemon CPU per suspend cycle', 'guest TCG', cpc.get('median'), None, 'ms',
                     f'{int(cpc.get("cycles", 0))} cycles, {int(cpc.get("ticks", 0))} ticks', '', ''))
    # 4. reaction latency
    lat = res.figs.get('host.react_latency')
    if lat:
        rows.append(('last release -> /sys/power/state write', 'host', lat.get('median'),
                     lat.get('p99'), 'us', 'daemon share (LD_PRELOAD pwrite hook)', '<= 1 ms p99',
                     verdict(lat.get('p99', 1e9) <= 1000)))
    fw = res.figs.get('host.futex_wake')
    if fw:
        rows.append(('  floor: FUTEX_WAKE -> sleeper runs', 'host', fw.get('median'), fw.get('p99'), 'us',
                     'OS wake-up latency, same run', '', ''))
    pr = res.figs.get('host.profile_react')
    if pr:
        rows.append(('  strace: wake_seq wake-ups then mutex wait', 'host',
                     f'{int(pr["then_blocked_on_mutex"])}/{int(pr["wake_seq_wakeups"])}', None, '',
                     pr['file'], '', ''))
    # 5. idle
    for where in ('host', 'guest'):
        f = res.figs.get(f'{where}.idle_wakeups')
        if f:
            rows.append(('daemon wake-ups while held', where, f.get('median'), None, '/s',
                         f'{int(f.get("voluntary", 0))} vol + {int(f.get("nonvoluntary", 0))} invol in '
                         f'{fmt(f.get("seconds"))} s', '0', verdict(f.get('median', 1) == 0)))
    pi = res.figs.get('host.profile_idle')
    if pi:
        rows.append(('  strace: 1 s futex timeouts while held', 'host', pi['futex_1s_timeouts'], None,
                     f'in {pi["seconds"]} s', pi['file'], '', ''))
    bcy = res.figs.get('guest.bare_cycle')
    if bcy and cpc:
        rows.append(('bare loop CPU per suspend cycle', 'guest TCG', bcy.get('cpu_ms_per_cycle'), None,
                     'ms', f'daemon / bare: x{fmt(ratio(cpc.get("median"), bcy.get("cpu_ms_per_cycle")))}'
                     ' (stime includes the kernel suspend path)', '', ''))
    prof = res.figs.get('host.callgrind_per_pair')

    head = ('figure', 'where', 'median', 'p99', 'unit', 'ratio / note', 'target', 'verdict')
    body = [(a, b, fmt(c), fmt(d), e, f, g, h) for a, b, c, d, e, f, g, h in rows]
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
    ap.add_argument('--guest-timeout', type=float, default=480)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    res = Results()
    t0 = time.monotonic()
    ok = True
    if not args.skip_host:
        print('bench: host')
        host_phase(res, args)
    if not args.skip_guest:
        print('bench: guest (QEMU, TCG)')
        ok = guest_phase(res, args)
    text, rows = table(res)
    print()
    print(text)
    print(f'\n(guest figures: QEMU TCG, slow in absolute terms: compare ratios; '
          f'total {time.monotonic() - t0:.0f} s)')
    out = {'machine': machine(), 'date': time.strftime('%Y-%m-%dT%H:%M:%S%z'),
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
