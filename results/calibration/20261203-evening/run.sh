#!/usr/bin/env bash
# The evening of 2026-12-03, on the same VM as 20261203-1s-idle: at ab's
# default iterations (3x1s warmup, 5x1s measured) the Spin loop with side B
# planted +5 % in a duet (40 comparisons of 5 rounds, 20 of 10, ab --duet's
# default), and planted +2 % in sequential interleaved rounds (20
# comparisons of 5, ab's interleaved default: the machine time of 10 duet
# rounds); then the planted +1 % at 100 ms of 20261203-100ms (both modes,
# 200 comparisons each); last, if there is time, an A/A duet at 1 s.
# Run from the repository root on an otherwise idle machine (about 2 h):
#   bash results/calibration/20261203-evening/run.sh
# A run whose calibration.json exists is kept. The raw results (aa.txt)
# are left out of git; `benchctl calibrate --from DIR/aa.txt --group G`
# reports on them again.
set -euo pipefail
out=results/calibration/20261203-evening
go build -o /tmp/benchctl-cal ./cmd/benchctl
spin() {
  local name=$1; shift
  if [ -s "$out/$name/calibration.json" ]; then return; fi
  /tmp/benchctl-cal calibrate --suite self --bench '^BenchmarkSpin$' -p extra=0 "$@" \
    --out "$out/$name" > /dev/null
}
spin plant5-duet-1s --duet --group 5 --plant 5% --trials 40
spin plant2-interleaved-1s --group 5 --plant 2% --trials 20
bash results/calibration/20261203-100ms/run.sh
spin aa-duet-1s --duet --group 5 --trials 40
# Every kept raw result of the day reported again, for the table of how
# much of their iterations' noise a round's two sides share (*shared*):
for d in 20261203-100ms/plant5-duet 20261203-100ms/plant5-interleaved 20261203-100ms/plant1-duet \
  20261203-100ms/plant1-interleaved 20261203-1s/plant2-duet 20261203-1s-idle/plant2-duet \
  20261203-evening/plant5-duet-1s 20261203-evening/plant2-interleaved-1s; do
  /tmp/benchctl-cal calibrate --from "results/calibration/$d/aa.txt" --group 5 \
    --out "$out/shared/${d//\//-}" > /dev/null
done
