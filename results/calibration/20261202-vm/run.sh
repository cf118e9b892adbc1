#!/usr/bin/env bash
# The calibration of 2026-12-02 on this project's VM: A/A false positives,
# detection of planted changes of 1, 2 and 5 % (Spin extra=0 against
# extra=N), sequential interleaved A/B against duet at the same machine
# time (a duet round runs both forks at once: twice the rounds), and the
# false alarms of a whole suite's A/A row by row and under FDR control.
# Run from the repository root: bash results/calibration/20261202-vm/run.sh
set -euo pipefail
out=results/calibration/20261202-vm
go build -o /tmp/benchctl-cal ./cmd/benchctl
cal() { /tmp/benchctl-cal calibrate --warmup 1x10ms --measure 3x10ms "$@"; }
spin=(--suite self --bench '^BenchmarkSpin$')
cal "${spin[@]}" -p extra=0 --trials 200 --group 5 --out "$out/aa-interleaved" > /dev/null
cal "${spin[@]}" -p extra=0 --trials 200 --group 10 --duet --out "$out/aa-duet" > /dev/null
for pct in 2 5 1; do
  cal "${spin[@]}" -p extra=0,$pct --pair extra=0,$pct --trials 200 --group 5 --out "$out/pct$pct-interleaved" > /dev/null
  cal "${spin[@]}" -p extra=0,$pct --pair extra=0,$pct --trials 200 --group 10 --duet --out "$out/pct$pct-duet" > /dev/null
done
cal --suite self --trials 100 --group 3 --out "$out/suite-interleaved" > /dev/null
cal --suite self --trials 100 --group 6 --duet --out "$out/suite-duet" > /dev/null
rm -f "$out"/*/aa.txt # 1000s of forks: rerun to get them
