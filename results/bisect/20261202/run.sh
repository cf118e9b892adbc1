#!/usr/bin/env bash
# The accuracy of benchctl bisect on synthetic histories (cmd/histgen):
# per kind, 10 seeds, each a fresh git history of the tiny module whose
# Work is a loop of 1000 rounds; a planted change multiplies the rounds
# at a commit drawn from the seed. Every bisection runs the history's own
# benchmark program (go run ./cmd/bench bisect), duet, 1 warmup and 3
# measured iterations of 100 ms, starting from 5 rounds a step.
#
#   bash results/bisect/20261202/run.sh          # on an idle machine
#
# writes summary.md here; the histories and bisections stay in $WORK.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
work=${WORK:-/tmp/ledgerbench-histories}
mkdir -p "$work"
go build -o "$work/histgen" "$root/cmd/histgen"
cache="$work/cache"
truths=()

bisect_one() { # kind seed commits [histgen flags]
	local kind=$1 seed=$2 commits=$3
	shift 3
	local d="$work/$(echo "$kind" | tr -c 'a-z0-9\n' '-')-$seed"
	rm -rf "$d" "$d.bisect" "$d.truth.json"
	read -r good bad < <("$work/histgen" write --dir "$d" --kind "$kind" --commits "$commits" "$@")
	echo "$(date -u +%T) $kind seed $seed: $* ($good..$bad)"
	(cd "$d" && go run ./cmd/bench bisect --good "$good" --bad "$bad" --cmd ./cmd/bench --bench '^BenchmarkWorkLoop$' \
		--duet --forks 5 --warmup 1x100ms --measure 3x100ms --budget 2m --min-change 1 \
		--build-cache "$cache" --out "$d.bisect" >"$d.log" 2>&1) || true
	grep -E '^## ' "$d.bisect/bisect.md" | head -1 || true
	truths+=("$d.truth.json")
}

for seed in $(seq 1 10); do
	RANDOM=$seed
	bisect_one "64 commits, +3 %" "$seed" 64 --change "$((RANDOM % 64 + 1)):1.03"
done
for seed in $(seq 1 10); do
	RANDOM=$((seed + 100))
	bisect_one "32 commits, +10 %" "$seed" 32 --change "$((RANDOM % 32 + 1)):1.10"
done
for seed in $(seq 1 10); do
	bisect_one "32 commits, no change" "$seed" 32
done

{
	echo "# benchctl bisect on synthetic histories, $(date -u +%F)"
	echo
	echo "\`bash results/bisect/20261202/run.sh\` on $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))."
	echo "Right: the planted commit named as the culprit; for a history without a change, no culprit claimed."
	echo
	"$work/histgen" summarize "${truths[@]}"
} >"$here/summary.md"
cat "$here/summary.md"
