#!/usr/bin/env bash
# A planted +2 % found at ab's default iterations (3 × 1 s warmup, 5 × 1 s
# measured, one fork a side a round), through the function that decides
# ab's rows. On this project's AMD EPYC VM, otherwise idle.
#
#   bash results/calibration/20261204-onesecond/run.sh   # about 60 min
#
# Spin (a loop of known length) only: 200 rounds duet (20 comparisons at
# ab --duet's default 10 rounds), 100 rounds interleaved (20 comparisons at
# ab's default 5). The 100 ms figures of the same plants, and of the cache
# benchmark, are in ../20261203-onepath. Raw files stay in $WORK.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
work=${WORK:-/tmp/ledgerbench-onesecond}
mkdir -p "$work"
cd "$root"
go build -o "$work/benchctl" ./cmd/benchctl

cal() { # name [flags]
	local name=$1
	shift
	[ -s "$here/$name/calibration.json" ] && return
	rm -rf "$work/$name" # an interrupted run's forks: made again
	mkdir -p "$work/$name"
	"$work/benchctl" calibrate "$@" --suite self --bench '^BenchmarkSpin$' -p extra=0 --group 5 \
		--wait-lock 30m --out "$work/$name" >/dev/null
	mkdir -p "$here/$name"
	cp "$work/$name/calibration.md" "$work/$name/calibration.json" "$here/$name/"
}
cal plant2-duet --duet --plant 2% --trials 40
cal plant2-interleaved --plant 2% --trials 20
