#!/usr/bin/env bash
# Unpack Debian's dbus-daemon and elogind for the guest image that runs them
# (scripts/initramfs.sh --logind), outside the repository:
#
#   scripts/logind-root.sh      # prints the directory, $WL_CACHE/logind-root
#
# The packages are fetched with `apt-get download` (nothing is installed on
# this machine: elogind would fight the host's own logind) and unpacked with
# dpkg-deb.  Shared libraries they need that are not among them come from
# this machine's own Debian packages of the same release, found when the
# image is built.  Redone only when the candidate versions change.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"

# dbus-daemon: the system bus; dbus-bin: dbus-send and dbus-uuidgen (the
# machine id the bus wants); dbus-system-bus-common: system.conf;
# libdbus-1-3: dbus-daemon's library; elogind: logind, elogind-inhibit,
# loginctl, busctl; libelogind0: libsystemd.so.0 as an elogind system has it
# (wakelockd's sd-bus comes from it in the guest).
pkgs=(dbus-daemon dbus-bin dbus-system-bus-common libdbus-1-3 elogind libelogind0)

root=$WL_CACHE/logind-root
debs=$WL_CACHE/logind-debs
mkdir -p "$WL_CACHE"
want=$(for p in "${pkgs[@]}"; do
	v=$(apt-cache policy "$p" 2>/dev/null | sed -n 's/^ *Candidate: //p')
	[ -n "$v" ] && [ "$v" != "(none)" ] || die "no candidate version of $p: run 'apt-get update'"
	echo "$p=$v"
done | tr '\n' ' ')
if [ "$(cat "$root.stamp" 2>/dev/null)" = "$want" ] && [ -x "$root/lib/elogind/elogind" ]; then
	echo "$root"
	exit 0
fi
step "fetching ${pkgs[*]} for the logind guest image" >&2
rm -rf "$debs" "$root" "$root.stamp"
mkdir -p "$debs" "$root"
# shellcheck disable=SC2046
(cd "$debs" && apt-get download -q -o APT::Sandbox::User=root $(echo "$want") >&2) ||
	die "apt-get download failed for: $want"
for f in "$debs"/*.deb; do
	dpkg-deb -x "$f" "$root" || die "cannot unpack $f"
done
echo "$want" >"$root.stamp"
echo "$root"
