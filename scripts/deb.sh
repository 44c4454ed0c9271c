#!/usr/bin/env bash
# Debian packages (debian/).
#   scripts/deb.sh build   dpkg-buildpackage -us -uc -b in a copy of the
#                          tree (the source tree stays clean); the .debs,
#                          .buildinfo, .changes and lintian's report go to
#                          build/deb/
#   scripts/deb.sh check   install the built packages with dpkg into a
#                          throw-away root (dpkg --root, maintainer scripts
#                          run with DPKG_ROOT) and check what they did:
#                          files in place, the group created by the
#                          sysusers.d snippet, the packaged unit passes
#                          systemd-analyze verify, the installed daemon
#                          answers --version and --check-config.
#                          Writes build/results/deb.counts.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
. scripts/lib.sh
out=build/deb
version=$(dpkg-parsechangelog -S Version)
arch=$(dpkg --print-architecture)

build() {
	local src=build/deb-src
	rm -rf "$src" "$out"
	mkdir -p "$src/wakelockd" "$out"
	# The sources without the kernel work or any build output.
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git ls-files -z --cached --others --exclude-standard | grep -zv '^kernel/' |
			xargs -0 cp --parents -t "$src/wakelockd"
	else
		tar -c --exclude=./build --exclude=./kernel . | tar -x -C "$src/wakelockd"
	fi || die "cannot copy the tree"
	step "dpkg-buildpackage -us -uc -b (log: $out/build.log)"
	(cd "$src/wakelockd" && dpkg-buildpackage -us -uc -b) >"$out/build.log" 2>&1 ||
		{ tail -30 "$out/build.log"; die "dpkg-buildpackage failed"; }
	mv "$src"/*.deb "$src"/*.buildinfo "$src"/*.changes "$out"/
	rm -rf "$src"
	ls -1 "$out"/*.deb
	step "lintian"
	lintian --info "$out"/wakelockd_"${version}"_"$arch".changes >"$out/lintian.txt" 2>&1
	cat "$out/lintian.txt"
	if grep -q '^E: ' "$out/lintian.txt"; then
		die "lintian reports errors"
	fi
	echo "lintian: $(grep -c '^E: ' "$out/lintian.txt") errors, $(grep -c '^W: ' "$out/lintian.txt") warnings"
}

check() {
	local results=${WL_RESULTS:-build/results} passed=0 failed=0
	mkdir -p "$results"
	root=$(mktemp -d)
	trap 'rm -rf "$root"' EXIT
	ok() { echo "ok: $*"; passed=$((passed + 1)); }
	bad() { echo "FAIL: $*"; failed=$((failed + 1)); }
	# A root with an empty dpkg database and the files the maintainer scripts
	# look at; dpkg runs them outside a chroot, with DPKG_ROOT set.
	mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" "$root/etc"
	: >"$root/var/lib/dpkg/status"
	printf 'root:x:0:\n' >"$root/etc/group"
	printf 'root:x:0:0:root:/root:/bin/sh\n' >"$root/etc/passwd"
	if dpkg --root="$root" --force-script-chrootless --force-depends --force-not-root \
		--log=/dev/null -i "$out"/libwakelock2_*.deb "$out"/libwakelock-dev_*.deb \
		"$out"/wakelockd_*.deb >"$root.log" 2>&1; then
		ok "dpkg -i of the three packages into a throw-away root"
	else
		bad "dpkg -i:"; sed 's/^/    /' "$root.log"
	fi
	local st
	st=$(dpkg --root="$root" -l 'wakelockd' 'libwakelock2' 'libwakelock-dev' 2>/dev/null | grep -c '^ii')
	[ "$st" = 3 ] && ok "all three installed and configured (ii)" || bad "dpkg -l: $st of 3 configured"
	if grep -q '^wakelock:' "$root/etc/group"; then
		ok "the postinst created the group: $(grep '^wakelock:' "$root/etc/group")"
	else
		bad "no wakelock group in the root's /etc/group"
	fi
	# systemd-analyze verify --root checks the unit against that root: give
	# it what a system running systemd has (the host's units, kill(1)).
	local unit=$root/lib/systemd/system/wakelockd.service
	mkdir -p "$root/bin"
	cp -n /lib/systemd/system/*.target /lib/systemd/system/*.slice "$root/lib/systemd/system/" 2>/dev/null
	cp /bin/kill "$root/bin/kill"
	if [ -f "$unit" ] && v=$(systemd-analyze verify --man=no --root="$root" /lib/systemd/system/wakelockd.service 2>&1) &&
		! echo "$v" | grep -qi 'error\|fail'; then
		ok "systemd-analyze verify of the packaged unit${v:+ ($v)}"
	else
		bad "systemd-analyze verify: ${v:-no unit}"
	fi
	grep -q "^ExecStart=/usr/sbin/wakelockd " "$unit" && ok "the unit starts /usr/sbin/wakelockd" ||
		bad "ExecStart: $(grep ExecStart "$unit")"
	[ ! -e "$root/etc/systemd/system/multi-user.target.wants/wakelockd.service" ] &&
		ok "the service is not enabled by installing" || bad "the package enabled the service"
	if LD_LIBRARY_PATH=$(dirname "$(find "$root/usr/lib" -name 'libwakelock.so.2' | head -1)") \
		"$root/usr/sbin/wakelockd" --config "$root/etc/wakelockd.conf" --group 0 --check-config >"$root.log" 2>&1; then
		ok "the packaged daemon accepts the packaged /etc/wakelockd.conf"
	else
		bad "packaged daemon --check-config:"; sed 's/^/    /' "$root.log"
	fi
	# Removal: the prerm stops a running daemon (debhelper's own stop is
	# gone with --no-start: debian/wakelockd.prerm), and a purge takes the
	# group, in that root only (DPKG_ROOT), not this machine's.
	local ctl host_group
	ctl=$(mktemp -d)
	dpkg-deb -e "$out"/wakelockd_*.deb "$ctl"
	if grep -q 'stop wakelockd.service' "$ctl/prerm" 2>/dev/null; then
		ok "the prerm stops wakelockd.service on removal"
	else
		bad "the package's prerm does not stop the service: $(cat "$ctl/prerm" 2>&1)"
	fi
	rm -rf "$ctl"
	host_group=$(getent group wakelock || true)
	if dpkg --root="$root" --force-script-chrootless --force-depends --force-not-root \
		--log=/dev/null --purge wakelockd >"$root.log" 2>&1 &&
		! grep -q '^wakelock:' "$root/etc/group"; then
		ok "dpkg --purge removed the group from the root"
	else
		bad "after dpkg --purge: $(grep '^wakelock:' "$root/etc/group")"; sed 's/^/    /' "$root.log"
	fi
	[ "$(getent group wakelock || true)" = "$host_group" ] &&
		ok "the purge left this machine's group database alone" ||
		bad "the purge in a root changed this machine's group wakelock"
	rm -f "$root.log"
	echo "$passed $failed 0" >"$results/deb.counts"
	echo "deb: $passed passed, $failed failed, 0 skipped"
	[ "$failed" -eq 0 ]
}

case ${1:-} in
build) build ;;
check) check ;;
*) echo "usage: $0 build|check" >&2; exit 2 ;;
esac
