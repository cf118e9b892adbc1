#!/usr/bin/env bash
# The calibration of 2026-12-03, completing that of 2026-12-02 at 100 ms
# iterations: planted slowdowns of 5 % and 1 % (calibrate --plant) of
# the Spin loop and of a real cache benchmark (ReadRange, paged, 1000
# entries a read, all hits) measured at once, sequential interleaved A/B
# against duet at about the same machine time (5 duet rounds against 3
# interleaved rounds a comparison, 200 comparisons each); and, first, the
# A/A of a whole suite (self, 8 benchmarks) at 10 ms iterations, 200
# comparisons of 3 interleaved rounds, row by row and under the
# false-discovery-rate control of ab's exit status. Run from the
# repository root on an otherwise idle machine:
#   bash results/calibration/20261203-100ms/run.sh
# A run whose calibration.json exists is kept. The raw results (aa.txt)
# are left out of git; `benchctl calibrate --from DIR/aa.txt --group G
# [--pair x]` reports on them again.
set -euo pipefail
out=results/calibration/20261203-100ms
go build -o /tmp/benchctl-cal ./cmd/benchctl
run() {
  local name=$1; shift
  if [ -s "$out/$name/calibration.json" ]; then return; fi
  /tmp/benchctl-cal calibrate "$@" --out "$out/$name" > /dev/null
}
cal() {
  local name=$1; shift
  run "$name" --warmup 1x100ms --measure 3x100ms --suite all \
    --bench '^BenchmarkSpin$|^BenchmarkReadRange$' -p extra=0 -p impl=paged -p batchSize=1000 -p hitPercent=100 "$@"
}
run suite-aa-10ms --warmup 1x10ms --measure 3x10ms --suite self --trials 200 --group 3
for pct in 5 1; do
  cal plant$pct-duet --plant $pct% --trials 200 --group 5 --duet
  cal plant$pct-interleaved --plant $pct% --trials 200 --group 3
done
# The adaptive rule of ab --detect 2% replayed on the suite's A/A rounds,
# from 3 first rounds (5 and 10 are --group 5 and --group 10):
/tmp/benchctl-cal calibrate --from "$out/suite-aa-10ms/aa.txt" --group 3 --detect 2% \
  --out "$out/suite-aa-10ms-detect2" > /dev/null
