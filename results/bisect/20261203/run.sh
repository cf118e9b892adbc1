#!/usr/bin/env bash
# The accuracy of benchctl bisect on the histories the 2026-12-02 runs did
# not cover, at the current code (the ends measured again when the
# confirmation is wide): a history without a change, one with two
# slowdowns (+3 % and +6 % at two commits drawn from the seed; the one
# that crosses half of the whole change, the +6 %, is the right answer,
# and the culprit's share of the whole change is reported), one with
# three commits that do not compile (+10 %, none of them the culprit or
# its parent). 10 seeds each; every bisection
# runs the history's own benchmark program, duet, 1 warmup and 3
# measured iterations of 100 ms, starting from 5 rounds a step.
#
#   bash results/bisect/20261203/run.sh
#
# writes summary.md here; the histories and bisections stay in $WORK, and
# a bisection that ended is not made again when the script is run again.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
work=${WORK:-/tmp/ledgerbench-histories-20261203}
mkdir -p "$work"
go build -o "$work/histgen" "$root/cmd/histgen"
cache="$work/cache"
truths=()

bisect_one() { # kind seed commits [histgen flags]
	local kind=$1 seed=$2 commits=$3
	shift 3
	local d="$work/$(echo "$kind" | tr -c 'a-z0-9\n' '-')-$seed"
	# A bisection that ended before (the script run again) is kept.
	if [[ -f "$d.truth.json" && -f "$d.bisect/bisect.json" ]] && ! grep -q '"stopped"\|interrupted' "$d.bisect/bisect.json"; then
		echo "$kind seed $seed: ended before"
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

# distinct N LO HI [EXCLUDED...]: N distinct numbers in [LO, HI] drawn
# with RANDOM, none of them among EXCLUDED.
distinct() {
	local n=$1 lo=$2 hi=$3
	shift 3
	local out=() x
	while ((${#out[@]} < n)); do
		x=$((RANDOM % (hi - lo + 1) + lo))
		[[ " ${out[*]} $* " == *" $x "* ]] && continue
		out+=("$x")
	done
	echo "${out[@]}"
}

for seed in $(seq 1 10); do
	bisect_one "32 commits, no change" "$seed" 32
done
for seed in $(seq 1 10); do
	RANDOM=$((seed + 200))
	read -r a b <<<"$(distinct 2 1 64)"
	bisect_one "64 commits, +3 % and +6 %" "$seed" 64 --change "$a:1.03" --change "$b:1.06"
done
for seed in $(seq 1 10); do
	RANDOM=$((seed + 300))
	c=$((RANDOM % 31 + 2))
	read -r x y z <<<"$(distinct 3 1 32 "$c" "$((c - 1))")"
	bisect_one "32 commits, +10 %, 3 unbuildable" "$seed" 32 --change "$c:1.10" --broken "$x" --broken "$y" --broken "$z"
done

{
	echo "# benchctl bisect on synthetic histories, $(date -u +%F)"
	echo
	echo "\`bash results/bisect/20261203/run.sh\` at $(git -C "$root" rev-parse --short HEAD) on $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))."
	echo "Right: the planted commit named as the culprit (with two, the one that crosses half of the whole change); for a history without a change, no culprit claimed."
	echo
	"$work/histgen" summarize "${truths[@]}"
} >"$here/summary.md"
cat "$here/summary.md"
