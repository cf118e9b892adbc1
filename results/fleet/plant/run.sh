#!/usr/bin/env bash
# A known change through the fleet: a synthetic history of one commit
# that makes its benchmark's work 5 % larger (histgen write --change
# 1:1.05), compared by ab on this machine (forks on CPU 0) and on two
# agents (CPUs 0 and 1), and the good end against itself (an A/A) both
# ways. The agents and the coordinator are the history's own program
# (histgen write --fleet), against the PostgreSQL database DB. Each A/B:
# 10 rounds of 1 warmup and 3 measured iterations of 100 ms a side,
# --min-change 1; on the agents --job-time 5s, so that each agent measures
# 5 of the 10 rounds (two strata of 5 pairs). Prints one line an A/B:
# seed, what, mode, wall seconds, the verdict, the change and its
# interval.
#
#   DB=postgres://bench@127.0.0.1:54329/fleetm bash results/fleet/plant/run.sh SEEDS...
#
# MODES (default "one fleet2") and WHAT (default "plant aa") pick them.
set -euo pipefail
: "${DB:?the fleet database, postgres://...}"
root=$(git rev-parse --show-toplevel)
work=$(mktemp -d /tmp/fleet-plant.XXXXXX)
. "$root/results/fleet/agents.sh"
planted_history "$work" "$root"

for seed in "$@"; do
	for what in ${WHAT:-plant aa}; do
		head=$bad
		[ "$what" = aa ] && head=$good
		for mode in ${MODES:-one fleet2}; do
			class="plant-$mode-$$"
			out="$work/$what-$mode-$seed"
			args=(ab --base "$good" --head "$head" --cmd ./cmd/bench --bench '^BenchmarkWorkLoop$' --forks 10
				--warmup 1x100ms --measure 3x100ms --min-change 1 --seed "$seed" --explain off --json --out "$out")
			case $mode in
			one) args+=(--cpus 0) ;;
			fleet2) start_agents "$bc" 2 "$class" "$work"; args+=(--fleet "$DB" --class "$class" --job-time 5s) ;;
			esac
			start=$(date +%s.%N)
			(cd "$d" && "$bc" "${args[@]}" >"$out.json" 2>"$out.err") || true
			end=$(date +%s.%N)
			[ "$mode" = one ] || stop_agents
			python3 - "$out.json" "$seed" "$what" "$mode" "$(python3 -c "print($end - $start)")" <<'PY'
import json, sys
path, seed, what, mode, wall = sys.argv[1:]
try:
    r = [r for r in json.load(open(path))["rows"] if r.get("unit") == "sec/op" and "verdict" in r][0]
    c = r["change"]
    v = f"{r['verdict']}\t{100*(c['ratio']-1):+.2f} % [{100*(c['lo']-1):+.2f}, {100*(c['hi']-1):+.2f}] {c['test']} n={c['n']}"
except Exception as e:
    v = f"FAILED ({e})"
print(f"seed={seed}\t{what}\t{mode}\t{float(wall):.0f} s\t{v}")
PY
		done
	done
done
echo "work directory: $work"
