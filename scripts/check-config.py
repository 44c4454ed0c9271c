#!/usr/bin/env python3
"""Print every option a config fragment asks for that the final .config lacks.

Kconfig silently drops options whose dependencies are unmet, so a fragment can
ask for CONFIG_KASAN=y and get a kernel without it. Exit 1 if any is missing.

    check-config.py [--known SYMBOLS_FILE] .config FRAGMENT...
"""
import re
import sys


def read(path):
    opts = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            m = re.match(r'^(CONFIG_\w+)=(.*)$', line)
            if m:
                opts[m.group(1)] = m.group(2)
                continue
            m = re.match(r'^# (CONFIG_\w+) is not set$', line)
            if m:
                opts[m.group(1)] = 'n'
    return opts


def main():
    args = sys.argv[1:]
    known = None
    if args[0] == '--known':
        # Options this tree does not define at all (they come with patches the
        # pristine variant lacks) are not asked of it.
        with open(args[1]) as f:
            known = set(f.read().split())
        args = args[2:]
    final = read(args[0])
    missing = []
    for frag in args[1:]:
        for name, want in read(frag).items():
            if known is not None and name[len('CONFIG_'):] not in known:
                continue
            got = final.get(name, 'n')
            if got != want:
                missing.append(f'  {name}={want} (asked by {frag}), got {name}={got}')
    print('\n'.join(missing))
    return 1 if missing else 0


if __name__ == '__main__':
    sys.exit(main())
