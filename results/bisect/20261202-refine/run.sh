#!/usr/bin/env bash
# The +3 % in 64 commits kind of results/bisect/20261202/run.sh again,
# after the ends are measured a second time when their interval of the
# whole change is wide (the cause of both misses there). Same seed numbers
# (the positions differ: RANDOM is reseeded in the subshell), same
# settings; summary.md is rewritten after every bisection, so it always
# holds the bisections finished so far.
#
#   bash results/bisect/20261202-refine/run.sh    # on an idle machine
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
work=${WORK:-/tmp/ledgerbench-histories-refine}
mkdir -p "$work"
go build -o "$work/histgen" "$root/cmd/histgen"
cache="$work/cache"
truths=()
for seed in $(seq 1 10); do
	RANDOM=$seed
	kind="64 commits, +3 %"
	d="$work/64-3-$seed"
	rm -rf "$d" "$d.bisect" "$d.truth.json"
	read -r good bad < <("$work/histgen" write --dir "$d" --kind "$kind" --commits 64 --change "$((RANDOM % 64 + 1)):1.03")
	echo "$(date -u +%T) seed $seed ($good..$bad)"
	(cd "$d" && go run ./cmd/bench bisect --good "$good" --bad "$bad" --cmd ./cmd/bench --bench '^BenchmarkWorkLoop$' \
		--duet --forks 5 --warmup 1x100ms --measure 3x100ms --budget 2m --min-change 1 \
		--build-cache "$cache" --out "$d.bisect" >"$d.log" 2>&1) || true
	grep -E '^## ' "$d.bisect/bisect.md" | head -1 || true
	truths+=("$d.truth.json")
	{
		echo "# benchctl bisect, +3 % in 64 commits, with the ends measured again when wide ($(date -u +%F))"
		echo
		echo "\`bash results/bisect/20261202-refine/run.sh\` at $(cd "$root" && git rev-parse --short HEAD) on $(nproc) CPUs."
		echo
		"$work/histgen" summarize "${truths[@]}"
	} >"$here/summary.md"
done
cat "$here/summary.md"
