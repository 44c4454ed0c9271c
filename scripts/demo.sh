#!/usr/bin/env bash
# `make demo`: boot the patched guest, let wakelockd suspend it as often as it
# can while the host calls its modem for about a minute, and show every call
# answered: a live status line, the table, and a timeline picture
# (build/e2e/demo.svg, and .png when rsvg-convert can render it).
#   DEMO_CALLS=N DEMO_SEED=S DEMO_CONFIGS=u,v scripts/demo.sh
# The client runs as a deployment's would: not root, so without
# CAP_BLOCK_SUSPEND (configuration u). DEMO_CONFIGS=u,v adds the pristine
# kernel side by side, about a minute each (tests/e2e/race.py --help lists
# the others).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"
cd "$top"
calls=${DEMO_CALLS:-120}
seed=${DEMO_SEED:-1}
configs=${DEMO_CONFIGS:-u}
# The examples go into the guest image with the rest of build/guest/bin.
make --no-print-directory examples-guest
for v in $(echo "$configs" | tr ',' '\n' | sed 's/^[acuwxz]$/patched/; s/^[bvy]$/pristine/' | sort -u); do
	make --no-print-directory guest-image VARIANT="$v"
done
# PNG of the timeline: optional, Debian's librsvg2-bin.
command -v rsvg-convert >/dev/null || scripts/deps.sh librsvg2-bin ||
	echo "(no rsvg-convert: the timeline stays SVG only)"
step "incoming calls into the guest's modem while wakelockd suspends it (QEMU, TCG)"
python3 tests/e2e/race.py --configs "$configs" --calls "$calls" --seed "$seed" \
	--live --svg-seconds 70 --out build/e2e/demo
step "timeline: build/e2e/demo.svg$( [ -f build/e2e/demo.png ] && echo ' and build/e2e/demo.png')"
