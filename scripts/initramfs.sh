#!/usr/bin/env bash
# Build the guest's initramfs (cpio newc, gzip): busybox-static, /init, the
# guest tests and plans, the project's static binaries and test modules.
#
#   scripts/initramfs.sh [--logind] OUTPUT [KO_DIR]
# Binaries come from build/guest/bin (make userspace-guest), modules (*.ko)
# from KO_DIR. Anything missing is simply not in the image: a plan that needs
# it fails there, loudly.
# --logind adds Debian's dbus-daemon and elogind (scripts/logind-root.sh)
# with the shared libraries they need, and the builds with sd-bus of
# wakelockd, wakelock, modem-client and wl-inhibit-bench in /usr/local/bin
# (build/guest/logind-bin, make userspace-logind); start_logind
# (tests/guest/lib.sh) puts them first in PATH.  The image of the plan
# "logind", of the race configuration l and of make bench.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"
logind=
if [ "${1:-}" = --logind ]; then logind=1; shift; fi
out=$1
kodir=${2:-}
busybox=/bin/busybox
[ -x "$busybox" ] && file -L "$busybox" 2>/dev/null | grep -q 'statically linked' ||
	ldd "$busybox" 2>&1 | grep -q 'not a dynamic' || die "$busybox is not busybox-static: run 'make deps'"

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,run,tmp,etc,lib/modules,tests/plans}
cp "$busybox" "$stage/bin/busybox"
for applet in $("$busybox" --list); do
	[ -e "$stage/bin/$applet" ] || ln -s busybox "$stage/bin/$applet"
done
install -m 755 "$top/scripts/guest/init" "$stage/init"
install -m 755 "$top/scripts/guest/run-plan" "$stage/tests/run-plan"
cp "$top"/tests/guest/*.sh "$stage/tests/"
cp "$top"/tests/guest/plans/* "$stage/tests/plans/"
[ -d "$top/build/guest/bin" ] && cp "$top"/build/guest/bin/* "$stage/usr/bin/" 2>/dev/null || true
[ -n "$kodir" ] && [ -d "$kodir" ] && find "$kodir" -name '*.ko' -exec cp {} "$stage/lib/modules/" \;
# "modem" is the unprivileged client of the end-to-end test: a member of the
# daemon's group (wakelock) and of the modem's (dialout), no capabilities.
cat >"$stage/etc/passwd" <<'EOF'
root:x:0:0:root:/:/bin/sh
modem:x:1000:1000:modem:/:/bin/sh
nobody:x:65534:65534:nobody:/:/bin/sh
EOF
cat >"$stage/etc/group" <<'EOF'
root:x:0:
dialout:x:20:modem
wakelock:x:70:modem
modem:x:1000:
nobody:x:65534:
EOF
if [ -n "$logind" ]; then
	lroot=$("$top/scripts/logind-root.sh")
	for f in usr/bin/dbus-daemon usr/bin/dbus-send usr/bin/dbus-uuidgen usr/bin/dbus-monitor \
		usr/share/dbus-1 bin/elogind-inhibit bin/loginctl usr/bin/busctl lib/elogind etc/elogind \
		lib/x86_64-linux-gnu; do
		[ -e "$lroot/$f" ] || die "$lroot has no $f: the Debian packages changed?"
		mkdir -p "$stage/$(dirname "$f")"
		cp -a "$lroot/$f" "$stage/$(dirname "$f")/"
	done
	mkdir -p "$stage/usr/local/bin"
	for p in wakelockd wakelock modem-client wl-inhibit-bench; do
		[ -x "$top/build/guest/logind-bin/$p" ] || die "no build/guest/logind-bin/$p: make userspace-logind"
		cp "$top/build/guest/logind-bin/$p" "$stage/usr/local/bin/$p"
	done
	# Shared libraries, transitively: the image's own first (elogind's
	# RUNPATH is /lib/elogind), then this machine's (the same Debian
	# release; Makefile's deps install those not already there).
	resolve() {
		local lib=$1 d
		for d in lib/elogind lib/x86_64-linux-gnu usr/lib/x86_64-linux-gnu lib64; do
			[ -e "$stage/$d/$lib" ] && return 0
		done
		# Ours (modem-client links libwakelock, as a user's program does).
		if [ -e "$top/build/guest/logind-bin/$lib" ]; then
			mkdir -p "$stage/usr/lib/x86_64-linux-gnu"
			cp "$top/build/guest/logind-bin/$lib" "$stage/usr/lib/x86_64-linux-gnu/$lib"
			echo "$stage/usr/lib/x86_64-linux-gnu/$lib"
			return 0
		fi
		for d in /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu /lib64; do
			if [ -e "$d/$lib" ]; then
				mkdir -p "$stage$d"
				cp -L "$d/$lib" "$stage$d/$lib"
				echo "$stage$d/$lib"
				return 0
			fi
		done
		die "shared library $lib (needed in the logind image) not found on this machine"
	}
	todo=$(find "$stage" -type f \( -perm -u+x -o -name '*.so*' \) -exec sh -c \
		'head -c 4 "$1" | grep -q ELF && echo "$1"' _ {} \;)
	while [ -n "$todo" ]; do
		next=
		for f in $todo; do
			for lib in $(objdump -p "$f" 2>/dev/null | awk '$1 == "NEEDED" { print $2 }'); do
				got=$(resolve "$lib")
				next="$next $got"
			done
		done
		todo=$next
	done
	mkdir -p "$stage/lib64" "$stage/var/lib/dbus" "$stage/run/dbus"
	[ -e "$stage/lib64/ld-linux-x86-64.so.2" ] || cp -L /lib64/ld-linux-x86-64.so.2 "$stage/lib64/"
	# The bus runs as messagebus, as on Debian.
	echo 'messagebus:x:101:101:messagebus:/nonexistent:/bin/false' >>"$stage/etc/passwd"
	echo 'messagebus:x:101:' >>"$stage/etc/group"
fi
# The archive's "." becomes the guest's /: mktemp made it 0700, which would
# keep every user but root out of /bin.
chmod 755 "$stage"
mkdir -p "$(dirname "$out")"
(cd "$stage" && find . | LC_ALL=C sort | cpio -o -H newc --quiet | gzip -1) >"$out.tmp"
mv "$out.tmp" "$out"
step "initramfs $out ($(du -h "$out" | cut -f1))"
