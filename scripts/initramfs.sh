#!/usr/bin/env bash
# Build the guest's initramfs (cpio newc, gzip): busybox-static, /init, the
# guest tests and plans, the project's static binaries and test modules.
#
#   scripts/initramfs.sh OUTPUT [KO_DIR]
# Binaries come from build/guest/bin (make userspace-guest), modules (*.ko)
# from KO_DIR. Anything missing is simply not in the image: a plan that needs
# it fails there, loudly.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"
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
# The archive's "." becomes the guest's /: mktemp made it 0700, which would
# keep every user but root out of /bin.
chmod 755 "$stage"
mkdir -p "$(dirname "$out")"
(cd "$stage" && find . | LC_ALL=C sort | cpio -o -H newc --quiet | gzip -1) >"$out.tmp"
mv "$out.tmp" "$out"
step "initramfs $out ($(du -h "$out" | cut -f1))"
