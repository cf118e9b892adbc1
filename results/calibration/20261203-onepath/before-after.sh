#!/usr/bin/env bash
# The ab files of run.sh decided twice: by compare at 9174770 (pairs by
# rank: the i-th smallest fork of each side) and by today's compare (pairs
# by round). Per mode: rows called changed, rows rejected at α (p < 0.05),
# and the median half-width of the interval of the change.
#
#   bash results/calibration/20261203-onepath/before-after.sh > …/before-after.md
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
work=${WORK:-/tmp/ledgerbench-onepath}
if [ ! -x "$work/benchctl-9174770" ]; then
	rm -rf "$work/src-9174770"
	git -C "$root" worktree add -q --detach "$work/src-9174770" 9174770
	(cd "$work/src-9174770" && go build -o "$work/benchctl-9174770" ./cmd/benchctl)
	git -C "$root" worktree remove --force "$work/src-9174770"
fi
row() { # binary file: the Spin row of the sec/op table
	"$1" compare --col toolchain --format md "$2" 2>/dev/null | awk '/^\*\*sec\/op\*\*/ {on = 1; next} /^\*\*/ {on = 0} on' | grep '^| Spin'
}
echo "| mode | pairing | files | changed | p < 0.05 | median half-width of the interval |"
echo "|:--|:--|--:|--:|--:|--:|"
for mode in duet interleaved; do
	for which in "by rank (9174770):$work/benchctl-9174770" "by round (today):$work/benchctl"; do
		name=${which%%:*} bin=${which#*:}
		n=0 changed=0 rejected=0 widths=""
		for f in "$work"/ab-$mode-*/ab.txt; do
			r=$(row "$bin" "$f")
			n=$((n + 1))
			grep -q '\*\*changed\*\*' <<<"$r" && changed=$((changed + 1))
			grep -Eq '\(p(<0\.0[0-4]|=0\.0[0-4][0-9])' <<<"$r" && rejected=$((rejected + 1))
			widths+="$(awk -v r="$r" 'BEGIN { if (match(r, /\[[-+][0-9.]+, [-+][0-9.]+\]/)) { s = substr(r, RSTART + 1, RLENGTH - 2); split(s, a, ", "); print (a[2] - a[1]) / 2 } }')"$'\n'
		done
		median=$(sort -g <<<"$widths" | grep . | awk '{ x[NR] = $1 } END { print (NR % 2) ? x[(NR + 1) / 2] : (x[NR / 2] + x[NR / 2 + 1]) / 2 }')
		printf '| %s | %s | %d | %d | %d | ±%.2f %% |\n' "$mode" "$name" "$n" "$changed" "$rejected" "$median"
	done
done
