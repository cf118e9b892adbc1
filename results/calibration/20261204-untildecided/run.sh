#!/usr/bin/env bash
# ab --until-decided's rule, replayed on measured rounds (issue: verdicts
# that may be looked at every round). Every look is decided by the
# function that decides ab's rows under --until-decided (ab.Verdicts:
# compare.BuildData with the anytime-valid test and e-BH). On this
# project's AMD EPYC VM, otherwise idle.
#
#   bash results/calibration/20261204-untildecided/run.sh   # about 55 min
#
# 1. The self suite's A/A (10 rows: every benchmark, a group's ops), 1600
#    interleaved rounds at 1x5ms warmup and 3x5ms measured, replayed as
#    comparisons of every row at once that may stop at any round from the
#    3rd up to the 40th.
# 2. Spin planted +2 %, +5 %, +20 % and slowed to twice (+100 %), 300
#    rounds each at 1x10ms and 3x10ms, the same replay, beside the rounds
#    the fixed-n design needs for the same power. A −50 % change is a
#    side B twice as fast: run 2's +100 % seen from B (the same
#    e-value, as the test is symmetric in the sign of the log ratio).
# Raw files (aa.txt) stay out of git, in $WORK; `calibrate --from
# $WORK/NAME/aa.txt --until-decided 40` reports on them again.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
work=${WORK:-/tmp/ledgerbench-untildecided}
mkdir -p "$work"
cd "$root"
go build -o "$work/benchctl" ./cmd/benchctl

cal() { # name [flags]
	local name=$1
	shift
	[ -s "$here/$name/calibration.json" ] && return
	rm -rf "$work/$name"
	mkdir -p "$work/$name"
	"$work/benchctl" calibrate "$@" --until-decided 40 --wait-lock 30m --out "$work/$name" >/dev/null
	mkdir -p "$here/$name"
	cp "$work/$name/calibration.md" "$work/$name/calibration.json" "$here/$name/"
}
cal suite-aa --suite self --warmup 1x5ms --measure 3x5ms --trials 40 --group 40
for p in 2 5 20 100; do
	cal "spin-plant$p" --suite self --bench '^BenchmarkSpin$' -p extra=0 --warmup 1x10ms --measure 3x10ms --trials 10 --group 30 --plant "$p%"
done
# 3. Four more comparisons of the self suite's A/A (160 rounds), so the
#    A/A counts reach 400 rows: the same settings as 1.
cal suite-aa-more --suite self --warmup 1x5ms --measure 3x5ms --trials 4 --group 40
# 4. ab --detect 5% replayed, now decided by the anytime-valid test and
#    started from 3 rounds, on 1.'s rounds (measuring nothing):
#    benchctl calibrate --from $WORK/suite-aa/aa.txt --group 3 --detect 5% --budget 1m --out DIR
#    (2026-12-04 the A/A of 1. was recorded in /tmp/ud-aa/suite/aa.txt by the same command.)
