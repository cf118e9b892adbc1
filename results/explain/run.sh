#!/bin/sh
# ab --explain on the explain fixture: ten planted slowdowns in known
# functions (histgen.ExplainPlants), each against the good end, then
# A/A commits (the good end's code again), every row explained by its
# CPU profiles and, with --prof instructions, by its instructions.
# Usage, from the repository root: results/explain/run.sh OUT [AA, default 10]
# Each comparison runs 5 rounds of 1x500ms warmup and 5x1s measured; the
# explanation 5 CPU profiling forks a side (sampled by perf where it can,
# in a window of at most 0.8 s of the measured speed), one allocation fork a side, and callgrind.
# The fixture (a git repository with the harness vendored) is written to
# $FIXTURE, outside the results.
set -eu
out=$1
aa=${2:-10}
fix=${FIXTURE:-/tmp/ledgerbench-explain-fixture}
mkdir -p "$out/runs"
out=$(cd "$out" && pwd)
[ -d "$fix" ] || go run ./cmd/histgen explain --dir "$fix" --aa "$aa" > "$out/commits.txt"
cp "$fix.truth.json" "$out/fixture.truth.json"
good=$(git -C "$fix" rev-list --max-parents=0 HEAD)
# The fixture's own program runs ab, as a user's would: its registry plans the cases.
(cd "$fix" && git checkout -q "$good" && go build -o "$fix.bench" ./cmd/bench)
while read -r n commit fn; do
	[ -d "$out/runs/$n" ] && continue
	echo "commit $n ($fn): $(date -u +%H:%M:%S)" >&2
	(cd "$fix" && "$fix.bench" ab --wait-lock 30m --base "$good" --head "$commit" --cmd ./cmd/bench \
		--bench '^BenchmarkWorkLoop$' --forks 5 --warmup 1x500ms --measure 5x1s --explain all --prof instructions \
		--out "$out/runs/$n") > "$out/runs/$n.md" 2> "$out/runs/$n.stderr" || true
done < "$out/commits.txt"
go run ./cmd/histgen explain-summary "$out/fixture.truth.json" "$out/runs" | tee "$out/summary.md"
# Machine time: every fork's own time (ab's progress lines), summed by kind over the comparisons.
for f in "$out"/runs/*.stderr; do
	sed -n 's/.*BenchmarkWorkLoop [a-z]* \(fork\|profile [a-z]*\)[ 0-9]*: ok (\([0-9.]*\)\(m\?s\))$/\1|\2|\3/p' "$f"
done | awk -F'|' '{ t[$1] += ($3 == "ms") ? $2 / 1000 : $2 } END { for (k in t) printf "%s\t%.1f s\n", k, t[k] }' | sort | tee "$out/machine-time.tsv"
# Keep the reports, the difference profiles and the flame graphs; not every fork's profile.
rm -rf "$out"/runs/*/logs "$out"/runs/*/explain/logs "$out"/runs/*/explain/profiles "$out"/runs/*/explain/*/base.pb.gz "$out"/runs/*/explain/*/experiment.pb.gz
