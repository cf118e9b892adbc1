#!/usr/bin/env bash
# The cost of one answer: the wall time of `benchctl ab` at its defaults
# against the answer a Go developer gets without it, `go test -bench
# -count 6` at each revision and benchstat, for one benchmark between two
# revisions of a third-party repository.
#
# Usage: bash results/adoption/cost.sh REPO BASE HEAD BENCH [PACKAGE]
#   REPO    a git clone of the repository (it is cloned again, not touched)
#   BENCH   go test's -bench pattern of one benchmark
# Both ways build their test binaries (the build cache warmed first with
# the standard library's packages, as a developer's is) and run on an idle
# machine one after the other. Prints each way's wall time, its answer
# (benchstat's row; ab's row) and their ratio.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
repo=$1 base=$2 head=$3 bench=$4 pkg=${5:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go build -o "$tmp/benchctl" ./tool/benchctl && go build -o "$tmp/benchstat" golang.org/x/perf/cmd/benchstat)
co() { git -c advice.detachedHead=false checkout -q "$1"; }
git -c advice.detachedHead=false clone -q "$repo" "$tmp/src"
cd "$tmp/src"
for rev in "$base" "$head"; do # the standard library's test packages, built once
  co "$rev" && go test -run '^$' -bench '^$' "$pkg" > /dev/null
done
secs() { echo "$2 - $1" | bc; }
echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) ledgerbench $(git -C "$root" describe --always --dirty), $(go version), $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg)"
echo "# $(basename "$repo") $base -> $head, -bench '$bench' $pkg"

t0=$(date +%s.%N)
co "$base" && go test -run '^$' -bench "$bench" -count 6 "$pkg" > "$tmp/old.txt"
co "$head" && go test -run '^$' -bench "$bench" -count 6 "$pkg" > "$tmp/new.txt"
"$tmp/benchstat" "$tmp/old.txt" "$tmp/new.txt" > "$tmp/benchstat.txt"
t1=$(date +%s.%N)
gotest=$(secs "$t0" "$t1")
printf 'go test -count 6 twice + benchstat: %.0f s\n' "$gotest"
grep -m1 '±' "$tmp/benchstat.txt" | sed 's/^/  benchstat: /' # the sec/op row

co "$head"
t0=$(date +%s.%N)
status=0
"$tmp/benchctl" ab --base "$base" --head "$head" --bench "$bench" --out "$tmp/ab" "$pkg" > "$tmp/ab.md" 2> "$tmp/ab.err" || status=$?
t1=$(date +%s.%N)
abtime=$(secs "$t0" "$t1")
printf 'benchctl ab (defaults): %.0f s, exit %d\n' "$abtime" "$status"
awk '/^\*\*sec\/op\*\*/ {t = 1} t && /^\| / && ++n == 2 {print "  ab: " $0; exit}' "$tmp/ab.md"
grep -o 'seed 1, [^;]*' "$tmp/ab.md" | sed 's/^/  ab: /' || true
grep -E '^benchctl: (explaining|REGRESSION|IMPROVEMENT)' "$tmp/ab.err" | sed 's/^/  ab: /' || true
printf 'ratio ab / go test: %.2f\n' "$(echo "$abtime / $gotest" | bc -l)"
