#!/usr/bin/env bash
# The calibration of 2026-12-02 on this project's VM: A/A false positives,
# detection of planted changes of 1, 2 and 5 % (Spin extra=0 against
# extra=N), sequential interleaved A/B against duet at the same machine
# time, and the false alarms of a whole suite's A/A row by row and under
# FDR control. Run from the repository root on an otherwise idle machine:
#   bash results/calibration/20261202-vm/run.sh
# A run whose calibration.json exists is kept. Each run's raw results
# (aa.txt, thousands of forks) are left out of git; `benchctl calibrate
# --from DIR/aa.txt [--pair x] --group G` reports on them again.
set -euo pipefail
out=results/calibration/20261202-vm
go build -o /tmp/benchctl-cal ./cmd/benchctl
cal() {
  local name=$1; shift
  if [ -s "$out/$name/calibration.json" ]; then return; fi
  /tmp/benchctl-cal calibrate --warmup 1x10ms --measure 3x10ms "$@" --out "$out/$name" > /dev/null
}
spin=(--suite self --bench '^BenchmarkSpin$')
cal aa-interleaved "${spin[@]}" -p extra=0 --trials 200 --group 5
cal aa-duet "${spin[@]}" -p extra=0 --trials 200 --group 10 --duet
for pct in 2 5 1; do
  cal pct$pct-interleaved "${spin[@]}" -p extra=0,$pct --pair extra=0,$pct --trials 200 --group 5
  cal pct$pct-duet "${spin[@]}" -p extra=0,$pct --pair extra=0,$pct --trials 200 --group 10 --duet
done
cal suite-interleaved --suite self --trials 60 --group 3
