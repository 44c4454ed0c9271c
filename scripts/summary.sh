#!/bin/sh
# summary.sh DIR: the totals of `make check` from DIR/*.counts.
# Each counts file holds one line "PASSED FAILED SKIPPED" (a file with two
# numbers, the older form, has no skips).  Prints one line per file, then,
# as the last line, "N passed, N failed, N skipped": the sums over all
# files.  A file that is not two or three non-negative integers counts as
# one failure, and says so.  Exits 1 if anything failed, else 0.
dir=${1:?usage: summary.sh RESULTS_DIR}
passed=0 failed=0 skipped=0
for f in "$dir"/*.counts; do
	[ -e "$f" ] || continue
	name=$(basename "$f" .counts)
	line=$(head -n 1 "$f")
	set -f; set -- $line; set +f
	case $# in 2|3) bad=0 ;; *) bad=1 ;; esac
	for n in "$@"; do
		case $n in ''|*[!0-9]*) bad=1 ;; esac
	done
	if [ "$bad" -eq 1 ]; then
		echo "$name: malformed counts '$line' (want PASSED FAILED SKIPPED): one failure"
		failed=$((failed + 1))
		continue
	fi
	p=$1 q=$2 s=${3:-0}
	# Leading zeros would make $((...)) read octal.
	p=$(expr "$p" + 0) q=$(expr "$q" + 0) s=$(expr "$s" + 0)
	printf '  %-32s %5d passed %5d failed %5d skipped\n' "$name" "$p" "$q" "$s"
	passed=$((passed + p)) failed=$((failed + q)) skipped=$((skipped + s))
done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
