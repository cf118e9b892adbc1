#!/usr/bin/env bash
# The seed ratios on this VM kind, three consecutive idle runs of each
# command (issue: the seed ratios on every VM). Each run's pull-request
# tables are in runs/N/*.md; the ratios are their Change columns
# (paged against skiplist, by rounds) and, for the location index,
# compare's table with the layout as its columns.
#
#   bash results/seed-ratios-amd/run.sh   # about 10 min, on an idle VM
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# A fresh directory unless WORK names one: each run refuses an --out
# that holds an earlier run's results.
work=${WORK:-$(mktemp -d /tmp/ledgerbench-seed-ratios.XXXXXX)}
mkdir -p "$work"
cd "$root"
go build -o "$work/benchctl" ./cmd/benchctl
bc="$work/benchctl"
for n in 1 2 3; do
	out="$here/runs/$n"
	mkdir -p "$out"
	"$bc" run --suite cache --bench '^BenchmarkInsertAtTail/' --forks 3 --warmup 1x500ms --measure 3x500ms \
		--wait-lock 30m --out "$work/$n/insert" > "$out/insert.md" 2>&1
	"$bc" run --suite cache --bench '^BenchmarkReadRange/' --forks 3 --warmup 1x500ms --measure 3x500ms \
		--wait-lock 30m --out "$work/$n/read" > "$out/read.md" 2>&1
	"$bc" run --suite location --bench '^BenchmarkGet/' -p cache=8MiB -p layout=full,partitioned,pebble \
		--forks 2 --warmup 1x1s --measure 3x1s --wait-lock 30m --out "$work/$n/location" > "$out/location.md" 2>&1
	"$bc" compare --col /layout --format md --filter '.unit:ops/s' \
		"$work/$n/location/bench.txt" > "$out/location-compare.md"
	cp "$work/$n/insert/bench.txt" "$out/insert.txt"
	cp "$work/$n/read/bench.txt" "$out/read.txt"
	cp "$work/$n/location/bench.txt" "$out/location.txt"
done
