#!/usr/bin/env bash
# The main job's large effects, run after run: the README's main job
# (`benchctl run --suite cache --quick`, the binary built from this
# checkout) N times, idle or beside a CPU hog, each run's time and whether
# its sec/op tables call the seed's large effects changed: InsertAtTail
# (2 rows), CatchUp/op=all and InsertAndEvict (4 rows).
#
#   bash results/calibration/20261204-mainjob/run.sh N idle
#   bash results/calibration/20261204-mainjob/run.sh N hog   # `yes > /dev/null` beside it: one core's worth of load
#   bash results/calibration/20261204-mainjob/run.sh N hog --until-decided --budget 4m40s   # flags after --quick
#   bash results/calibration/20261204-mainjob/run.sh N idle --until-decided=false   # the fixed design (5 forks)
#
# Since 2026-12-06 --quick alone is --until-decided within 4m40s; before,
# it was the fixed design.
#
# Appends a line per run to runs.tsv beside this script (so runs made in
# several sittings add up) and keeps each run's tables in $WORK/<stamp>.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
n=$1 mode=$2
shift 2
flags=("$@") # added to the main job's command line, and to the mode column
work=${WORK:-/tmp/ledgerbench-mainjob}
mkdir -p "$work"
(cd "$root" && go build -o "$work/benchctl" ./cmd/benchctl)
# The commit measured, "-dirty" when anything but runs.tsv itself (which
# the runs append to) differs from it.
commit=$(git -C "$root" describe --always)
if [ -n "$(git -C "$root" status --porcelain -- . ":(exclude)results/calibration/20261204-mainjob/runs.tsv")" ]; then
	commit=$commit-dirty
fi
[ -s "$here/runs.tsv" ] || printf 'stamp\tcommit\tmode\tload1\tseconds\texit\tInsertAtTail\tCatchUp\tInsertAndEvict\theadline\n' > "$here/runs.tsv"
for _ in $(seq "$n"); do
	stamp=$(date -u +%Y%m%dT%H%M%SZ)
	hog=
	if [ "$mode" = hog ]; then
		yes > /dev/null &
		hog=$!
	fi
	load=$(cut -d' ' -f1 /proc/loadavg)
	start=$(date +%s.%N)
	status=0
	(cd "$root" && "$work/benchctl" run --suite cache --quick "${flags[@]}" --out "$work/$stamp" > "$work/$stamp.md" 2> "$work/$stamp.err") || status=$?
	end=$(date +%s.%N)
	[ -n "$hog" ] && kill "$hog"
	# The sec/op tables' rows of the three benchmarks: changed of all.
	count() {
		awk -v pat="$1" '/^\*\*/ {t = ($0 ~ /^\*\*sec\/op\*\*/)} t && $0 ~ pat {n++; if ($0 ~ /\*\*changed\*\*/) c++} END {printf "%d/%d", c, n}' "$work/$stamp.md"
	}
	headline=$(grep -m1 'time comparisons changed' "$work/$stamp.md" | tr -d '*' || true)
	printf '%s\t%s\t%s\t%s\t%.0f\t%d\t%s\t%s\t%s\t%s\n' "$stamp" "$commit" "$(echo "$mode ${flags[*]}" | sed 's/ *$//')" "$load" "$(echo "$end - $start" | bc)" "$status" \
		"$(count '^\| InsertAtTail/')" "$(count '^\| CatchUp/op=all ')" "$(count '^\| InsertAndEvict/')" "$headline" | tee -a "$here/runs.tsv"
done
