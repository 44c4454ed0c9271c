#!/usr/bin/env bash
# The Debian guest's disk image (docs/debian-guest.md), outside the repository:
#
#   scripts/debian-image.sh DEB_DIR     # prints the image, $WL_CACHE/debian.img
#
# A copy of the cached Debian root (scripts/debian-root.sh) with our
# packages from DEB_DIR (make deb: libwakelock2, wakelockd) installed by
# dpkg inside it, as a user installs them, the service enabled as a user
# enables it, then what the tests need (a group member "modem", the test
# units of scripts/guest/debian), made into an ext4 image by mke2fs -d (no
# loop mount, no root needed for that step).  Rebuilt only when the root,
# the packages' contents, the test units or this script change.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"
debdir=${1:?usage: $0 DEB_DIR}
root=$("$top/scripts/debian-root.sh")
img=$WL_CACHE/debian.img
stage=$WL_CACHE/debian-stage
debs=()
for p in libwakelock2 wakelockd; do
	f=$(ls "$debdir"/${p}_*.deb 2>/dev/null | head -n 1)
	[ -n "$f" ] || die "no $p package in $debdir: run make deb"
	debs+=("$f")
done
# The packages' contents, not their bytes: control files, maintainer
# scripts and md5sums (every file's contents), so that a rebuild of the same
# sources, with other time stamps, is the same image.
content() {
	local d
	d=$(mktemp -d)
	dpkg-deb -e "$1" "$d" && (cd "$d" && LC_ALL=C ls | while read -r f; do echo "== $f"; cat "$f"; done)
	rm -rf "$d"
}
want=$( {
	cat "$root.stamp" "$0" "$top"/scripts/guest/debian/*
	for f in "${debs[@]}"; do content "$f"; done
} | sha256sum | cut -c1-16)
if [ "$(cat "$img.stamp" 2>/dev/null)" = "$want" ] && [ -f "$img" ]; then
	echo "$img"
	exit 0
fi
[ "$(id -u)" -eq 0 ] || die "installing into the root needs root (chroot)"
step "Debian image: $root + ${debs[*]##*/}" >&2
start=$(date +%s)
rm -rf "$stage" "$img.stamp"
cp -a "$root" "$stage"
trap 'rm -rf "$stage"' EXIT
in_root() { chroot "$stage" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C "$@"; }

# Our packages, as a user installs them (all their dependencies are in the
# root already, so dpkg alone resolves them; see scripts/guest/debian/packages).
mkdir -p "$stage/tmp/debs"
cp "${debs[@]}" "$stage/tmp/debs/"
inside=()
for f in "${debs[@]}"; do inside+=("/tmp/debs/${f##*/}"); done
in_root dpkg -i "${inside[@]}" >"$img.log" 2>&1 ||
	fail_log "$img.log" "dpkg -i of our packages in the Debian root failed" >&2
rm -rf "$stage/tmp/debs"
# ... and enabled, as README's "On Debian" says (the package does not).
in_root systemctl enable wakelockd.service >>"$img.log" 2>&1 ||
	fail_log "$img.log" "systemctl enable wakelockd failed" >&2

# The test harness: a member of wakelockd's group (and dialout, for the
# modem port), as the initramfs images have him; the units that hold the
# guest awake until the plan runs and run it.
in_root useradd --create-home --user-group --groups wakelock,dialout modem
install -m 644 "$top"/scripts/guest/debian/wl-test-awake.service \
	"$top"/scripts/guest/debian/wl-test.service "$stage/etc/systemd/system/"
install -D -m 755 "$top/scripts/guest/debian/wl-test-run" "$stage/usr/local/lib/wltest/run"
in_root systemctl enable wl-test-awake.service wl-test.service >>"$img.log" 2>&1
# The console is the plan's: no login prompt on it.  Timers that would
# start maintenance (apt, e2scrub, fstrim) in the middle of a plan, on a
# guest that never stays up long enough to need it.
in_root systemctl mask serial-getty@ttyS0.service apt-daily.timer \
	apt-daily-upgrade.timer e2scrub_all.timer fstrim.timer >>"$img.log" 2>&1
echo wlguest >"$stage/etc/hostname"
printf '/dev/vda / ext4 defaults 0 0\n' >"$stage/etc/fstab"
# A machine id of its own: an empty one would make each boot a first boot.
rm -f "$stage/etc/machine-id"
in_root systemd-machine-id-setup >>"$img.log" 2>&1

# Room for the tests' journal and files: the root's size and half again.
mb=$(( $(du -sm "$stage" | cut -f1) * 3 / 2 + 256 ))
rm -f "$img"
mke2fs -q -t ext4 -L wlroot -d "$stage" "$img.tmp" "${mb}M" >>"$img.log" 2>&1 ||
	fail_log "$img.log" "mke2fs -d failed" >&2
mv "$img.tmp" "$img"
echo "$want" >"$img.stamp"
step "Debian image ready in $(( $(date +%s) - start )) s: $img (${mb} MB, $(du -sh "$img" | cut -f1) used)" >&2
echo "$img"
