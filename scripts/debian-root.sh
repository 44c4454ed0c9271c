#!/usr/bin/env bash
# A Debian 12 root with systemd for the Debian guest (scripts/debian-image.sh,
# docs/debian-guest.md), outside the repository:
#
#   scripts/debian-root.sh      # prints the directory, $WL_CACHE/debian-root
#
# debootstrap's minbase plus scripts/guest/debian/packages, from the mirror
# this machine's apt uses.  Downloaded packages are kept in
# $WL_CACHE/debian-debs, so a root rebuilt after a list change fetches only
# what is new.  Redone only when the package list or this script changes;
# the stamp also names the versions installed (debian-root.versions).
# Needs root (debootstrap makes device nodes and chroots): scripts/deps.sh
# installs debootstrap, as make guest-image-debian does.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"

list=$top/scripts/guest/debian/packages
root=$WL_CACHE/debian-root
debs=$WL_CACHE/debian-debs
suite=bookworm
pkgs=$(sed 's/#.*//' "$list" | tr -s ' \n' '\n' | grep . | paste -sd, -)
want=$(cat "$list" "$0" | sha256sum | cut -c1-16)
if [ "$(cat "$root.stamp" 2>/dev/null)" = "$want" ] && [ -x "$root/lib/systemd/systemd" ]; then
	echo "$root"
	exit 0
fi
[ "$(id -u)" -eq 0 ] || die "debootstrap needs root (run make guest-image-debian as root)"
command -v debootstrap >/dev/null || die "no debootstrap: scripts/deps.sh debootstrap"
# The mirror of this machine's own Debian sources (deb822 or one-line).
mirror=$(sed -n 's/^URIs: *\([^ ]*\).*/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null |
	grep -v security | head -n 1)
[ -n "$mirror" ] || mirror=$(awk '$1 == "deb" && $0 !~ /security/ { print $2; exit }' \
	/etc/apt/sources.list 2>/dev/null)
mirror=${mirror:-http://deb.debian.org/debian}
step "debootstrap $suite (minbase + $pkgs) from $mirror into $root" >&2
start=$(date +%s)
rm -rf "$root" "$root.stamp"
mkdir -p "$debs"
debootstrap --variant=minbase --include="$pkgs" --cache-dir="$debs" \
	"$suite" "$root" "$mirror" >"$root.log" 2>&1 ||
	fail_log "$root.log" "debootstrap failed" >&2
# The image is booted, never updated: apt's lists and caches are dead weight.
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*_Packages
chroot "$root" dpkg-query -W -f='${Package}=${Version}\n' >"$root.versions"
echo "$want" >"$root.stamp"
step "Debian root ready in $(( $(date +%s) - start )) s ($(du -sh "$root" | cut -f1), $(wc -l <"$root.versions") packages)" >&2
echo "$root"
