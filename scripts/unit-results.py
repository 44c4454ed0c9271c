#!/usr/bin/env python3
"""Count the cmocka cases of `meson test` runs: make check's unit stage.

    scripts/unit-results.py RESULTS_DIR VARIANT:BUILD_DIR...

meson counts test programs; each of ours holds many cmocka cases, and a
program whose cases partly skip still exits 0.  This reads each build
directory's meson-logs/testlog.json (run with --no-stdsplit, so a skipped
case's reason comes before its SKIPPED line), counts the cases from cmocka's
summary lines, prints a line per program and each skipped case with what it
printed before skipping, and writes RESULTS_DIR/unit.counts as
"PASSED FAILED SKIPPED".  A program that failed, crashed or timed out
without a cmocka failure line counts as one failure; so does a build
directory without a test log.  Exits 1 if anything failed.
"""
import json
import os
import re
import sys

SUMMARY = {
    'passed': re.compile(r'^\[  PASSED  \] (\d+) test', re.M),
    'failed': re.compile(r'^\[  FAILED  \] (\d+) test', re.M),
    'skipped': re.compile(r'^\[  SKIPPED \] (\d+) test', re.M),
}
RUN = re.compile(r'^\[ RUN      \] (\S+)')
SKIP = re.compile(r'^\[  SKIPPED \] (\S+)$')


def last_count(kind, text):
    found = SUMMARY[kind].findall(text)
    return int(found[-1]) if found else 0


def skip_reasons(text):
    """(case, reason) for each skipped case: the lines between its RUN and
    SKIPPED lines."""
    out, name, why = [], None, []
    for line in text.splitlines():
        m = RUN.match(line)
        if m:
            name, why = m.group(1), []
            continue
        m = SKIP.match(line)
        if m and name is not None and m.group(1) == name:
            out.append((name, '; '.join(why) or '(no reason printed)'))
            name = None
            continue
        if line.startswith('['):
            name = None
        elif name is not None:
            why.append(line)
    return out


def count_program(entry):
    """(passed, failed, skipped, output) of one testlog.json entry."""
    text = entry.get('stdout') or ''
    if entry.get('stderr'):
        text += '\n' + entry['stderr']
    p, f, s = (last_count(k, text) for k in ('passed', 'failed', 'skipped'))
    if (entry.get('returncode') != 0 or entry.get('result') not in ('OK', 'SKIP')) and f == 0:
        f = 1
    return p, f, s, text


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    results, specs = argv[1], argv[2:]
    os.makedirs(results, exist_ok=True)
    total = [0, 0, 0]
    for spec in specs:
        variant, _, build = spec.partition(':')
        log = os.path.join(build, 'meson-logs', 'testlog.json')
        try:
            with open(log) as fh:
                entries = [json.loads(line) for line in fh if line.strip()]
        except (OSError, ValueError) as e:
            print(f'FAIL  {variant:6} no test log: {e}')
            total[1] += 1
            continue
        for entry in entries:
            name = entry.get('name', '?').split(' / ')[-1]
            p, f, s, text = count_program(entry)
            total = [total[0] + p, total[1] + f, total[2] + s]
            status = 'ok' if f == 0 else 'FAIL'
            print(f'{status:5} {variant:6} {name:16} {p:3} passed {f:3} failed {s:3} skipped')
            for case, why in skip_reasons(text):
                print(f'      [{variant}] skipped: {case}: {why}')
            if f:
                for line in text.splitlines()[-40:]:
                    print('      | ' + line)
    with open(os.path.join(results, 'unit.counts'), 'w') as fh:
        fh.write('%d %d %d\n' % tuple(total))
    print('unit tests: %d passed, %d failed, %d skipped' % tuple(total))
    return 1 if total[1] else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
