#!/usr/bin/env bash
# benchctl bisect after pairing by round and claiming a culprit only on
# its own confirmed A/B (2026-12-03, late), on synthetic histories:
# 8 commits of comment-only changes to a benchmark whose work varies ±20 %
# from process to process (no culprit to find), 10 seeds; and 16 commits
# with a +10 % slowdown at a commit drawn from the seed, 5 seeds. Each
# bisection runs the history's own benchmark program, duet, 1 warmup and
# 3 measured iterations of 100 ms, from 5 rounds a step, --budget 2m.
#
#   bash results/bisect/20261203-onepath/run.sh
#
# writes summary.md here; histories and bisections stay in $WORK.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
work=${WORK:-/tmp/ledgerbench-histories-onepath}
mkdir -p "$work"
go build -o "$work/histgen" "$root/cmd/histgen"
cache="$work/cache"
truths=()

bisect_one() { # kind seed commits [histgen flags]
	local kind=$1 seed=$2 commits=$3
	shift 3
	local d="$work/$(echo "$kind" | tr -c 'a-z0-9\n' '-')-$seed"
	if [[ -f "$d.truth.json" && -f "$d.bisect/bisect.json" ]] && ! grep -q '"stopped"\|interrupted' "$d.bisect/bisect.json"; then
		truths+=("$d.truth.json")
		return
	fi
	rm -rf "$d" "$d.bisect" "$d.truth.json"
	"$work/histgen" write --dir "$d" --kind "$kind" --commits "$commits" "$@" >"$d.ends"
	read -r good bad <"$d.ends"
	echo "$(date -u +%T) $kind seed $seed: $* ($good..$bad)"
	(cd "$d" && go run ./cmd/bench bisect --good "$good" --bad "$bad" --cmd ./cmd/bench --bench '^BenchmarkWorkLoop$' \
		--duet --forks 5 --warmup 1x100ms --measure 3x100ms --budget 2m --min-change 1 \
		--build-cache "$cache" --out "$d.bisect" >"$d.log" 2>&1) || true
	grep -E '^## ' "$d.bisect/bisect.md" | head -1 || true
	truths+=("$d.truth.json")
}

for seed in $(seq 1 10); do
	bisect_one "8 commits, no change, ±20 % a process" "$seed" 8 --noise 0.2
done
for seed in $(seq 1 5); do
	RANDOM=$((seed + 400))
	bisect_one "16 commits, +10 %" "$seed" 16 --change "$((RANDOM % 16 + 1)):1.10"
done

{
	echo "# benchctl bisect on synthetic histories, $(date -u +%F), after pairing by round"
	echo
	echo "\`bash results/bisect/20261203-onepath/run.sh\` at $(git -C "$root" rev-parse --short HEAD) on $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))."
	echo "Right: the planted commit named as the culprit; for a history without a change, no culprit claimed."
	echo
	"$work/histgen" summarize "${truths[@]}"
} >"$here/summary.md"
cat "$here/summary.md"
