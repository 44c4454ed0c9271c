#!/usr/bin/env bash
# The Debian guest's tests disk (its /dev/vdb, mounted on /tests by
# scripts/guest/debian/wl-test-run):
#
#   scripts/debian-tests.sh OUTPUT
#
# The same /tests as the initramfs images (run-plan, tests/guest/*.sh, the
# plans) and the guest programs of build/guest/bin (make userspace-guest:
# static, so they run on Debian's libc too) in /tests/bin.  A disk of its
# own, so that a changed test does not rebuild the Debian image; made with
# mke2fs -d, in about a second.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"
out=${1:?usage: $0 OUTPUT}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/plans" "$stage/bin"
install -m 755 "$top/scripts/guest/run-plan" "$stage/run-plan"
cp "$top"/tests/guest/*.sh "$stage/"
cp "$top"/tests/guest/plans/* "$stage/plans/"
[ -d "$top/build/guest/bin" ] || die "no build/guest/bin: make userspace-guest"
# Test programs only: wakelockd and wakelock are the packaged ones (/usr/sbin,
# /usr/bin), not these static builds.
for f in "$top"/build/guest/bin/*; do
	case ${f##*/} in wakelockd | wakelock) ;; *) cp "$f" "$stage/bin/" ;; esac
done
chmod -R go+rX "$stage"
mkdir -p "$(dirname "$out")"
rm -f "$out.tmp"
mke2fs -q -t ext4 -L wltests -d "$stage" "$out.tmp" 64M || die "mke2fs -d failed"
mv "$out.tmp" "$out"
step "tests disk $out"
