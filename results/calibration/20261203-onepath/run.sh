#!/usr/bin/env bash
# Re-measured after pairing by round (2026-12-03, late): every figure here
# goes through the function that decides ab's rows (compare.BuildData
# under compare.ABOptions). On this project's AMD EPYC VM, otherwise idle.
#
#   bash results/calibration/20261203-onepath/run.sh   # about 75 min
#   STEP=ab bash …/run.sh    # part 1 only;  STEP=cal bash …/run.sh: 2 and 3
#
# 1. ab itself, 20 times, the same commit on both sides (an A/A), Spin at
#    1x100ms warmup and 5x100ms measured: duet (ab --duet's default 10
#    rounds) and interleaved (ab's default 5 rounds), each file decided
#    again by abtally (the same function ab used for its table).
# 2. calibrate at 100 ms (Spin and the paged cache's ReadRange), A/A and a
#    planted +2 % and +5 %, duet (5 rounds a comparison) and interleaved
#    (5 rounds), 60 comparisons each: ab's verdicts per row.
# 3. The self suite's A/A at 10 ms, 30 comparisons of 5 rounds: ab's
#    verdicts suite-wide (any row changed; exit 1).
# Raw files (ab.txt, aa.txt) stay out of git, in $WORK. ab runs with
# --allow-dirty: both sides are the commit, built from git, whatever the
# working tree holds meanwhile.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
work=${WORK:-/tmp/ledgerbench-onepath}
mkdir -p "$work"
cd "$root"
go build -o "$work/benchctl" ./cmd/benchctl
go build -o "$work/abtally" ./cmd/abtally
head=$(git rev-parse HEAD)

ab_aa() { # mode seed [flags]
	local mode=$1 seed=$2
	shift 2
	local d="$work/ab-$mode-$seed"
	[ -s "$d/ab.txt" ] && return
	rm -rf "$d"
	"$work/benchctl" ab --base "$head" --head "$head" --suite self --bench '^BenchmarkSpin$' -p extra=0 \
		--warmup 1x100ms --measure 5x100ms --seed "$seed" --allow-dirty --wait-lock 30m --out "$d" "$@" >"$d.log" 2>&1 || true
}
step=${STEP:-all}
if [ "$step" != cal ]; then
for seed in $(seq 1 20); do
	ab_aa duet "$seed" --duet
	ab_aa interleaved "$seed"
done
{
	echo "# ab A/A, the same commit on both sides, 20 runs a mode"
	echo
	echo "\`bash results/calibration/20261203-onepath/run.sh\` at $(git rev-parse --short HEAD) on $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))."
	for mode in duet interleaved; do
		echo
		echo "## $mode"
		echo
		"$work/abtally" "$work"/ab-$mode-*/ab.txt
	done
} >"$here/ab-aa.md"
fi
[ "$step" = ab ] && exit 0

cal() { # name [flags]
	local name=$1
	shift
	[ -s "$here/$name/calibration.json" ] && return
	rm -rf "$work/$name" # an interrupted run's forks: made again
	mkdir -p "$work/$name"
	"$work/benchctl" calibrate "$@" --out "$work/$name" >/dev/null
	mkdir -p "$here/$name"
	cp "$work/$name/calibration.md" "$work/$name/calibration.json" "$here/$name/"
}
pair() { # name [flags]
	local name=$1
	shift
	cal "$name" --warmup 1x100ms --measure 3x100ms --suite all \
		--bench '^BenchmarkSpin$|^BenchmarkReadRange$' -p extra=0 -p impl=paged -p batchSize=1000 -p hitPercent=100 --trials 60 --group 5 "$@"
}
# In the order of what they tell: false positives first, then power.
pair aa-duet --duet
pair aa-interleaved
cal suite-aa-10ms --warmup 1x10ms --measure 3x10ms --suite self --trials 30 --group 5
pair plant2-duet --duet --plant 2%
pair plant5-interleaved --plant 5%
pair plant5-duet --duet --plant 5%
pair plant2-interleaved --plant 2%
