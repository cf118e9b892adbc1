#!/usr/bin/env bash
# How far ab --until-decided is from the best test it could be: Spin
# planted +2 %, +5 % and +20 %, 300 interleaved rounds each at 1x10ms and
# 3x10ms (the settings of 20261204-untildecided), replayed as ab
# --until-decided takes them, beside the fixed design's rounds at the same
# power and the oracle's rounds (calibrate's known-change table: the
# right-Haar Bayes factor told the change in hindsight). On this
# project's AMD EPYC VM, otherwise idle.
#
#   bash results/calibration/20261206-oracle/run.sh   # about 3 min
#
# Raw files (aa.txt) stay out of git, in $WORK; `calibrate --from
# $WORK/NAME/aa.txt --until-decided 40` reports on them again.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
work=${WORK:-/tmp/ledgerbench-oracle}
mkdir -p "$work"
cd "$root"
go build -o "$work/benchctl" ./cmd/benchctl
for p in 5 2 20; do
	name=spin-plant$p
	[ -s "$here/$name/calibration.json" ] && continue
	rm -rf "${work:?}/$name"
	mkdir -p "$work/$name"
	"$work/benchctl" calibrate --suite self --bench '^BenchmarkSpin$' -p extra=0 --warmup 1x10ms --measure 3x10ms \
		--trials 10 --group 30 --plant "$p%" --until-decided 40 --wait-lock 30m --out "$work/$name" >/dev/null
	mkdir -p "$here/$name"
	cp "$work/$name/calibration.md" "$work/$name/calibration.json" "$here/$name/"
done
