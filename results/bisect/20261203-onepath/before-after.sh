#!/usr/bin/env bash
# The confirmations (good against bad) of run.sh's flat histories decided
# twice: by the compare of 9174770, which paired forks by rank, and by
# today's, which pairs them by round. Run after run.sh; the pre-fix
# benchctl is built (once) by results/calibration/20261203-onepath/before-after.sh.
#
#   bash results/bisect/20261203-onepath/before-after.sh > …/before-after.md
set -euo pipefail
work=${WORK:-/tmp/ledgerbench-histories-onepath}
bins=${BINS:-/tmp/ledgerbench-onepath}
row() { # binary file: the WorkLoop row of the sec/op table, change and verdict
	"$1" compare --col toolchain --format md "$2" 2>/dev/null | awk '/^\*\*sec\/op\*\*/ {on = 1; next} /^\*\*/ {on = 0} on' |
		grep '^| WorkLoop' | awk -F'|' '{gsub(/^ +| +$/, "", $5); gsub(/^ +| +$/, "", $6); print $5 " \\| " $6}'
}
echo "| history | by rank (9174770) | by round (today) |"
echo "|:--|:--|:--|"
for f in "$work"/8-commits*.bisect/steps/00-confirm/ab.txt; do
	h=$(basename "$(dirname "$(dirname "$(dirname "$f")")")" .bisect)
	echo "| $h | $(row "$bins/benchctl-9174770" "$f") | $(row "$bins/benchctl" "$f") |"
done
