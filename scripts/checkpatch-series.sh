#!/usr/bin/env bash
# make check's patch-style stage: every patch named in kernel/patches/series,
# and every cover letter, passes the kernel's own scripts/checkpatch.pl
# --strict (from the unpacked linux-source-6.12 in $WL_CACHE, so run it after
# a kernel build has unpacked the tree).  A patch file must also carry a
# Signed-off-by and a commit message, which checkpatch checks.  The test
# modules' sources (kernel/modules/*/*.c) are checked as files.
# Writes build/results/checkpatch.counts as "PASSED FAILED SKIPPED", one count
# per patch; logs in build/logs/checkpatch/.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"
cd "$top"
results=build/results logs=build/logs/checkpatch
mkdir -p "$results" "$logs"
checkpatch=$WL_CACHE/linux-source-6.12/scripts/checkpatch.pl

patches=()
while read -r p; do
	case $p in ''|'#'*) continue ;; esac
	patches+=("kernel/patches/$p")
done <kernel/patches/series

passed=0 failed=0 skipped=0
if [ ! -f "$checkpatch" ]; then
	skipped=${#patches[@]}
	echo "SKIP: $checkpatch missing (no unpacked kernel tree: run make kernel)"
	echo "$passed $failed $skipped" >"$results/checkpatch.counts"
	exit 0
fi
# Cover letters are checked for presence only: checkpatch has nothing to say
# about a patch without a diff.
for d in $(printf '%s\n' "${patches[@]}" | xargs -n1 dirname | sort -u); do
	if [ -f "$d/0000-cover-letter.patch" ] && ! grep -q '\*\*\* SUBJECT HERE \*\*\*\|\*\*\* BLURB HERE \*\*\*' "$d/0000-cover-letter.patch"; then
		echo "ok: $d/0000-cover-letter.patch"
		passed=$((passed + 1))
	else
		echo "FAIL: $d has no filled-in 0000-cover-letter.patch"
		failed=$((failed + 1))
	fi
done
# checkpatch LOG WHAT ARGS...: run checkpatch --strict ARGS outside the
# repository (inside a git work tree it reviews a modified patch file as a
# change to that file); counts a pass when it says nothing.
checkpatch() {
	local log=$1 what=$2; shift 2
	if (cd / && perl "$checkpatch" --strict --no-tree --quiet "$@") >"$log" 2>&1 && ! [ -s "$log" ]; then
		echo "ok: checkpatch --strict $what"
		passed=$((passed + 1))
	else
		echo "FAIL: checkpatch --strict $what:"
		sed 's/^/    /' "$log" | head -20
		failed=$((failed + 1))
	fi
}
for p in "${patches[@]}"; do
	if [ ! -f "$p" ]; then
		echo "FAIL: $p (named in kernel/patches/series) does not exist"
		failed=$((failed + 1))
		continue
	fi
	# Outside a Linux git tree checkpatch cannot look commit ids up, so it
	# would flag every Fixes: tag as UNKNOWN_COMMIT_ID; ids are checked by
	# hand (the series' notes say where each one was established).
	checkpatch "$logs/$(basename "$p").log" "$p" --ignore UNKNOWN_COMMIT_ID "$top/$p"
done
# The out-of-tree test modules are kernel code too: the same style.
for f in kernel/modules/*/*.c; do
	checkpatch "$logs/module-$(basename "$f").log" "-f $f" -f "$top/$f"
done
echo "checkpatch: $passed passed, $failed failed, $skipped skipped"
echo "$passed $failed $skipped" >"$results/checkpatch.counts"
[ "$failed" -eq 0 ]
