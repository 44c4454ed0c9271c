# Shared helpers for the project's shell scripts (sourced, not run).
# shellcheck shell=bash

# Where kernel trees, builds and guest images live: outside the repository.
WL_CACHE=${WL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/wakelockd}
export WL_CACHE

step() { printf '==> %s\n' "$*"; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# fail_log LOG MESSAGE: show the end of a build log, then fail.
fail_log() {
	printf -- '---- last 40 lines of %s ----\n' "$1" >&2
	tail -n 40 "$1" >&2
	die "$2 (full log: $1)"
}
