#!/usr/bin/env bash
# make check's install stage (make check-install): `meson install` of
# build/host into a temporary DESTDIR, then use what was installed, as a
# packager or a user of the library would:
#   - every file a package ships is there (library and its soname link,
#     header, pkg-config file, daemon, CLI, man pages, config, systemd unit,
#     sysusers.d snippet); the library exports wakelock_* names only;
#   - an example client builds with `pkg-config libwakelock` alone and holds
#     the system awake through the installed daemon (on a fake /sys/power);
#   - our header compiles and links beside libwayland's client and server
#     headers, and the program runs;
#   - the installed config passes the installed daemon's --check-config;
#   - `man -l` renders each installed page without a warning.
# Writes build/results/install.counts as "PASSED FAILED SKIPPED".
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
results=${WL_RESULTS:-build/results}
mkdir -p "$results"
passed=0 failed=0 skipped=0
work=$(mktemp -d)
daemon_pid=
cleanup() {
	[ -n "$daemon_pid" ] && kill "$daemon_pid" 2>/dev/null && wait "$daemon_pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
ok() { echo "ok: $*"; passed=$((passed + 1)); }
bad() { echo "FAIL: $*"; failed=$((failed + 1)); }
finish() {
	echo "$passed $failed $skipped" >"$results/install.counts"
	echo "install: $passed passed, $failed failed, $skipped skipped"
	[ "$failed" -eq 0 ]
	exit
}

dest=$work/dest
if ! meson install -C build/host --destdir "$dest" >"$work/install.log" 2>&1; then
	bad "meson install into a DESTDIR:"; sed 's/^/    /' "$work/install.log" | tail -20
	finish
fi
prefix=$(meson introspect --buildoptions build/host |
	python3 -c 'import json,sys; o={x["name"]: x["value"] for x in json.load(sys.stdin)}; print(o["prefix"])')
root=$dest$prefix
pc=$(find "$dest" -name libwakelock.pc | head -1)
libdir=$(dirname "$(dirname "$pc")")

# 1. What a package ships.
missing=()
for f in include/wakelock.h sbin/wakelockd bin/wakelock \
	share/man/man1/wakelock.1 share/man/man3/libwakelock.3 \
	share/man/man5/wakelockd.conf.5 share/man/man8/wakelockd.8; do
	[ -e "$root/$f" ] || missing+=("$prefix/$f")
done
[ -n "$pc" ] || missing+=(libwakelock.pc)
[ -L "$libdir/libwakelock.so.2" ] && [ -L "$libdir/libwakelock.so" ] &&
	[ -f "$(readlink -f "$libdir/libwakelock.so.2")" ] || missing+=("libwakelock.so.2 -> libwakelock.so.2.*")
for f in wakelockd.conf; do
	find "$dest" -path "*/etc/$f" | grep -q . || missing+=("etc/$f")
done
find "$dest" -path '*/systemd/system/wakelockd.service' | grep -q . || missing+=(wakelockd.service)
find "$dest" -path '*/sysusers.d/wakelockd.conf' | grep -q . || missing+=(sysusers.d/wakelockd.conf)
if [ ${#missing[@]} -eq 0 ]; then
	ok "installed: library, header, pkg-config file, daemon, CLI, 4 man pages, config, unit, sysusers.d"
else
	bad "not installed: ${missing[*]}"
fi

# 2. The library exports the API and nothing else; its soname is the major.
soname=$(readelf -d "$libdir/libwakelock.so.2" 2>/dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
others=$(nm -D --defined-only "$libdir/libwakelock.so.2" 2>/dev/null | awk '{print $3}' |
	grep -v -e '^wakelock_' -e '^WAKELOCK_[0-9.]*$' || true)
exported=$(nm -D --defined-only "$libdir/libwakelock.so.2" 2>/dev/null | grep -c ' T wakelock_')
if [ "$soname" = libwakelock.so.2 ] && [ -z "$others" ] && [ "$exported" -gt 0 ]; then
	ok "libwakelock.so.2: soname $soname, $exported functions, all wakelock_*, versioned"
else
	bad "library exports: soname '$soname', $exported wakelock_* functions, others: $others"
fi

# 3. An example client from pkg-config alone, run against the installed daemon.
export PKG_CONFIG_PATH=$(dirname "$pc") PKG_CONFIG_SYSROOT_DIR=$dest
flags=$(pkg-config --cflags --libs libwakelock)
fake=$work/fake
mkdir -p "$fake/sys/power" "$fake/run"
echo 7 >"$fake/sys/power/wakeup_count"
echo "freeze mem" >"$fake/sys/power/state"
: >"$work/empty.conf"
built=1
for ex in example-hold example-alarm example-resume; do
	cc -std=c11 -Wall -Wextra -Werror -pedantic -o "$work/$ex" "examples/$ex.c" $flags \
		-Wl,-rpath,"$libdir" 2>"$work/cc.log" && continue
	bad "$ex with \`pkg-config libwakelock\` alone ($flags):"; sed 's/^/    /' "$work/cc.log"
	built=
done
if [ -n "$built" ]; then
	"$root/sbin/wakelockd" --foreground --root "$fake" --run-dir "$fake/run" \
		--config "$work/empty.conf" --stats-file "$work/stats.json" 2>"$work/daemon.log" &
	daemon_pid=$!
	export WAKELOCK_SOCKET=$fake/run/wakelockd.sock
	for _ in $(seq 100); do [ -S "$WAKELOCK_SOCKET" ] && break; sleep 0.05; done
	"$work/example-hold" installed-example 1500 2>"$work/example.log" &
	ex=$!
	listed=
	for _ in $(seq 40); do
		if "$root/bin/wakelock" list 2>/dev/null | grep -q 'installed-example.*example'; then
			listed=1; break
		fi
		sleep 0.05
	done
	wait "$ex"; rc=$?
	if [ -n "$listed" ] && [ $rc -eq 0 ]; then
		ok "3 examples built with pkg-config alone; example-hold's hold listed by the installed wakelock"
	else
		bad "installed example client: exit $rc, listed '${listed:-no}'"
		sed 's/^/    /' "$work/example.log" "$work/daemon.log" | tail -10
	fi
	kill "$daemon_pid"; wait "$daemon_pid" 2>/dev/null; daemon_pid=
fi

# 4. Beside libwayland.
if ! pkg-config --exists wayland-client wayland-server 2>/dev/null &&
	! PKG_CONFIG_SYSROOT_DIR= PKG_CONFIG_PATH= pkg-config --exists wayland-client wayland-server; then
	echo "skip: no libwayland headers (Debian: libwayland-dev)"; skipped=$((skipped + 1))
else
	wl=$(PKG_CONFIG_SYSROOT_DIR= PKG_CONFIG_PATH= pkg-config --cflags --libs wayland-client wayland-server)
	if cc -std=c11 -Wall -Wextra -Werror -pedantic -o "$work/beside" tests/install/wayland-beside.c \
		$wl $flags -Wl,-rpath,"$libdir" 2>"$work/beside.log" && out=$("$work/beside" 2>&1); then
		ok "<wakelock.h> with <wayland-client.h> and <wayland-server.h>: built, linked, ran ($out)"
	else
		bad "beside libwayland:"; sed 's/^/    /' "$work/beside.log"; echo "    ${out:-}"
	fi
fi
# What the header declares or defines (comments aside: they may tell the
# history of the prefix).
if echo '#include <wakelock.h>' | cc -E -dD -P -I"$root/include" - | grep -nE '\b(wl|WL)_'; then
	bad "the installed header still declares wl_/WL_ names (above)"
else
	ok "the installed header declares and defines no wl_/WL_ name"
fi

# 5. The shipped config is valid (its group need not exist here).
conf=$(find "$dest" -path '*/etc/wakelockd.conf' | head -1)
if out=$("$root/sbin/wakelockd" --config "$conf" --group 0 --check-config 2>&1); then
	ok "installed wakelockd.conf passes --check-config"
else
	bad "installed wakelockd.conf: $out"
fi

# 6. Each page renders, without warnings.
for page in $(find "$root/share/man" -type f | sort); do
	warn=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$page" 2>&1 >"$work/page.txt")
	if [ -s "$work/page.txt" ] && [ -z "$warn" ]; then
		ok "man -l $(basename "$page") ($(wc -l <"$work/page.txt") lines)"
	else
		bad "man -l $(basename "$page"): ${warn:-empty output}"
	fi
done
finish
