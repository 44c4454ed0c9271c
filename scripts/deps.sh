#!/usr/bin/env bash
# Install the Debian packages the project needs, only those that are missing.
#   scripts/deps.sh PACKAGE...
# Runs `apt-get update` once (only when something must be installed), then
# `apt-get install -y` for what is missing. Needs root (or sudo).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"

missing=()
for pkg in "$@"; do
	status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
	[ "$status" = installed ] || missing+=("$pkg")
done
if [ ${#missing[@]} -eq 0 ]; then
	step "all ${#} Debian packages present"
	exit 0
fi
sudo=
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null || die "need root to install: ${missing[*]}"
	sudo=sudo
fi
step "installing from Debian: ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
