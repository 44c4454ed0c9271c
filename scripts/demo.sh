#!/usr/bin/env bash
# `make demo`: boot the patched guest, let wakelockd suspend it as often as it
# can while the host calls its modem for about a minute, and show every call
# answered: a live status line, the table, and a timeline picture
# (build/e2e/demo.svg, and .png when rsvg-convert can render it).
#   DEMO_CALLS=N DEMO_SEED=S DEMO_CONFIGS=a,b,c scripts/demo.sh
# (DEMO_CONFIGS=a,b,c adds the pristine kernel and the naive loop side by
# side, about a minute each.)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"
cd "$top"
calls=${DEMO_CALLS:-120}
seed=${DEMO_SEED:-1}
configs=${DEMO_CONFIGS:-a}
# The examples go into the guest image with the rest of build/guest/bin.
make --no-print-directory examples-guest
for v in $(echo "$configs" | tr ',' '\n' | sed 's/^[acwx]$/patched/; s/^[by]$/pristine/' | sort -u); do
	make --no-print-directory guest-image VARIANT="$v"
done
# PNG of the timeline: optional, Debian's librsvg2-bin.
command -v rsvg-convert >/dev/null || scripts/deps.sh librsvg2-bin ||
	echo "(no rsvg-convert: the timeline stays SVG only)"
step "incoming calls into the guest's modem while wakelockd suspends it (QEMU, TCG)"
python3 tests/e2e/race.py --configs "$configs" --calls "$calls" --seed "$seed" \
	--live --svg-seconds 70 --out build/e2e/demo
step "timeline: build/e2e/demo.svg$( [ -f build/e2e/demo.png ] && echo ' and build/e2e/demo.png')"
