#!/usr/bin/env bash
# 20261203-1s again with nothing else on the VM: 200 duet rounds of the
# Spin loop at ab's default iterations (3x1s warmup, 5x1s measured), side
# B planted +2 %, split into 40 comparisons of 5 rounds (and 20 of 10,
# ab --duet's default since), then replayed as ab --duet --detect 2%.
# Run from the repository root on an otherwise idle machine (29 min):
#   bash results/calibration/20261203-1s-idle/run.sh
set -euo pipefail
out=results/calibration/20261203-1s-idle
go build -o /tmp/benchctl-cal ./cmd/benchctl
if [ ! -s "$out/plant2-duet/calibration.json" ]; then
  /tmp/benchctl-cal calibrate --suite self --bench '^BenchmarkSpin$' -p extra=0 --duet --group 5 \
    --plant 2% --trials 40 --out "$out/plant2-duet" > /dev/null
fi
/tmp/benchctl-cal calibrate --from "$out/plant2-duet/aa.txt" --group 5 --detect 2% > /dev/null
