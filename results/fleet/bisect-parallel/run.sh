#!/usr/bin/env bash
# Parallel bisection on a fleet: synthetic histories of N commits (64 by
# default) with a +10 % slowdown at a commit drawn from the seed, each
# bisected twice on this machine's fleet: one agent probing one commit a
# step (CPU 0), and two agents probing two at once (CPUs 0 and 1). The
# agents and the coordinator are the history's own benchmark program
# (built with the fleet: histgen write --fleet), against the PostgreSQL
# database DB. Each bisection: 1 warmup and 3 measured iterations of
# 100 ms, from 5 rounds a step, --budget 2m, --min-change 1, a build
# cache of its own (each bisection builds what it probes, the commits of
# a step before any is measured). Prints a
# line a bisection: seed, culprit planted, culprit named, search steps,
# A/B runs, wall seconds.
#
#   DB=postgres://bench@127.0.0.1:54329/fleetm bash results/fleet/bisect-parallel/run.sh SEEDS...
set -euo pipefail
: "${DB:?the fleet database, postgres://...}"
root=$(git rev-parse --show-toplevel)
n=${COMMITS:-64}
work=$(mktemp -d /tmp/fleet-bisect.XXXXXX)
go build -o "$work/histgen" "$root/cmd/histgen"

. "$root/results/fleet/agents.sh"

for seed in "$@"; do
	RANDOM=$((seed + 700))
	at=$((RANDOM % n + 1))
	d="$work/h$seed"
	"$work/histgen" write --dir "$d" --commits "$n" --change "$at:1.10" --fleet >"$d.ends"
	read -r good bad <"$d.ends"
	(cd "$d" && go build -o "$work/bench-$seed" ./cmd/bench)
	"$work/bench-$seed" fleet migrate --db "$DB" >/dev/null
	for k in 1 2; do
		start_agents "$work/bench-$seed" "$k" h "$work"
		out="$d.bisect-k$k"
		start=$(date +%s.%N)
		(cd "$d" && "$work/bench-$seed" bisect --good "$good" --bad "$bad" --cmd ./cmd/bench --bench '^BenchmarkWorkLoop$' \
			--forks 5 --warmup 1x100ms --measure 3x100ms --budget 2m --min-change 1 --build-cache "$out.cache" \
			--fleet "$DB" --class h --parallel "$k" --seed "$seed" --explain off --out "$out" >"$out.md" 2>"$out.log") || true
		end=$(date +%s.%N)
		stop_agents
		python3 - "$out/bisect.json" "$d.truth.json" "$k" "$seed" "$at" "$(python3 -c "print($end - $start)")" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); truth = json.load(open(sys.argv[2]))
k, seed, at, wall = sys.argv[3], sys.argv[4], int(sys.argv[5]), float(sys.argv[6])
named = r.get("culprit", {}).get("hash", "")
right = named == truth["commits"][at]
steps = len({s.get("batch", i) for i, s in enumerate(r.get("steps", []))}) if k != "1" else len(r.get("steps", []))
print(f"seed={seed}\tk={k}\tplanted at {at}\tculprit {'right' if right else 'WRONG ' + named[:12]}\t{steps} search steps\t{r.get('abRuns')} A/B runs\t{wall:.0f} s")
PY
	done
done
echo "work directory: $work"
