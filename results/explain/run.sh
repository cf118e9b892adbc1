#!/bin/sh
# ab --explain on the explain fixture: ten planted slowdowns in known
# functions (histgen.ExplainPlants), each against the good end, then
# A/A commits (the good end's code again), every row explained by its
# CPU profiles and, with --prof instructions, by its instructions.
# Usage, from the repository root: results/explain/run.sh OUT [AA, default 10]
# Each comparison runs ab's default window (5x1s measured, 5 rounds), the
# explanation 5 CPU profiling forks a side of the same window.
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
# Keep the reports, the difference profiles and the flame graphs; not every fork's profile.
rm -rf "$out"/runs/*/logs "$out"/runs/*/explain/logs "$out"/runs/*/explain/profiles "$out"/runs/*/explain/*/base.pb.gz "$out"/runs/*/explain/*/experiment.pb.gz
