#!/usr/bin/env bash
# The calibration of 2026-12-02 at ab's kind of iterations (1 warmup and
# 3 measured iterations of 100 ms) on this project's VM, for two
# benchmarks at once: the Spin loop and a real cache benchmark (ReadRange,
# paged, 1000 entries a read, all hits). A/A false positives, and a
# planted +2 % (calibrate --plant: side B's windows spin for 2 % of their
# ops' time), sequential interleaved A/B against duet at about the same
# machine time: 5 duet rounds against 3 interleaved rounds a comparison,
# 200 comparisons each. Run from the repository root on an otherwise idle
# machine:
#   bash results/calibration/20261202-100ms/run.sh
# A run whose calibration.json exists is kept. The raw results (aa.txt)
# are left out of git; `benchctl calibrate --from DIR/aa.txt --group G`
# reports on them again.
set -euo pipefail
out=results/calibration/20261202-100ms
go build -o /tmp/benchctl-cal ./cmd/benchctl
cal() {
  local name=$1; shift
  if [ -s "$out/$name/calibration.json" ]; then return; fi
  /tmp/benchctl-cal calibrate --warmup 1x100ms --measure 3x100ms --suite all \
    --bench '^BenchmarkSpin$|^BenchmarkReadRange$' -p extra=0 -p impl=paged -p batchSize=1000 -p hitPercent=100 \
    "$@" --out "$out/$name" > /dev/null
}
cal plant2-duet --plant 2% --trials 200 --group 5 --duet
cal plant2-interleaved --plant 2% --trials 200 --group 3
cal aa-duet --trials 200 --group 5 --duet
cal aa-interleaved --trials 200 --group 3
