#!/usr/bin/env bash
# The calibration of 2026-12-03 at ab's default iterations (3 warmup and 5
# measured iterations of 1 s a fork) on this project's VM: how often the
# duet ab of one benchmark finds a planted +2 % of the Spin loop
# (calibrate --plant: side B's windows spin for 2 % of their ops' time).
# A comparison is 5 duet rounds (ab --duet ran 5 by default until this
# run, 10 since), about 44 s of machine time; the report splits the same
# rounds into comparisons of 3 to 40 rounds too. Run from the repository
# root on an otherwise idle machine:
#   bash results/calibration/20261203-1s/run.sh
# A run whose calibration.json exists is kept. The raw results (aa.txt)
# are left out of git; `benchctl calibrate --from DIR/aa.txt --group G
# --pair x` reports on them again.
set -euo pipefail
out=results/calibration/20261203-1s
go build -o /tmp/benchctl-cal ./cmd/benchctl
cal() {
  local name=$1; shift
  if [ -s "$out/$name/calibration.json" ]; then return; fi
  /tmp/benchctl-cal calibrate --suite self --bench '^BenchmarkSpin$' -p extra=0 \
    --duet --group 5 "$@" --out "$out/$name" > /dev/null
}
cal plant2-duet --plant 2% --trials 40
# The same rounds replayed as ab --duet --detect 2% (default --budget 10m)
# would take them:
/tmp/benchctl-cal calibrate --from "$out/plant2-duet/aa.txt" --group 5 --detect 2% > /dev/null
