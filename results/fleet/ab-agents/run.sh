#!/usr/bin/env bash
# An A/A of the self suite measured three ways with the same rounds:
# on this machine (forks on CPU 0), on a fleet of one agent (CPU 0) and
# on a fleet of two agents (CPUs 0 and 1), each against the local
# PostgreSQL database named by DB. Prints one line a run: mode, seed,
# wall seconds, and the rows changed / same / unknown.
#
#   DB=postgres://bench@127.0.0.1:54329/fleetm bash results/fleet/ab-agents/run.sh SEEDS...
#
# MODES (default "one fleet1 fleet2") picks the modes. Each fleet mode
# has a class of its own: the same comparison on one class would take
# back the jobs of the mode before it and measure nothing.
set -euo pipefail
: "${DB:?the fleet database, postgres://...}"
root=$(git rev-parse --show-toplevel)
work=$(mktemp -d /tmp/fleet-ab.XXXXXX)
go build -o "$work/benchctl" "$root/cmd/benchctl"
bc="$work/benchctl"
"$bc" fleet migrate --db "$DB" >/dev/null
# SUITE (default self) and TIMING (default the 10 rounds below; "--quick"
# for the cache suite) pick the A/A.
read -r -a timing <<<"${TIMING:---forks 10 --warmup 1x300ms --measure 3x300ms}"
common=(ab --base HEAD --head HEAD --suite "${SUITE:-self}" "${timing[@]}" --explain off --json)

verdicts() { # the JSON answer's verdict counts
	python3 -c 'import json,sys
rows=json.load(open(sys.argv[1]))["rows"]
v=[r["verdict"] for r in rows if r.get("unit")=="sec/op" and "verdict" in r]
print("%d changed, %d same, %d unknown of %d" % (v.count("changed"), v.count("same"), v.count("unknown"), len(v)))' "$1"
}

. "$root/results/fleet/agents.sh"

for seed in "$@"; do
	for mode in ${MODES:-one fleet1 fleet2}; do
		class="aa-$mode-$$"
		out="$work/${SUITE:-self}-$mode-$seed"
		args=("${common[@]}" --seed "$seed" --out "$out")
		case $mode in
		one) args+=(--cpus 0) ;;
		fleet1) start_agents "$bc" 1 "$class" "$work"; args+=(--fleet "$DB" --class "$class") ;;
		fleet2) start_agents "$bc" 2 "$class" "$work"; args+=(--fleet "$DB" --class "$class") ;;
		esac
		start=$(date +%s.%N)
		"$bc" "${args[@]}" >"$out.json" 2>"$out.err" || true
		end=$(date +%s.%N)
		[ "$mode" = one ] || stop_agents
		printf '%s\t%s\tseed=%s\t%.0f s\t%s\n' "${SUITE:-self}" "$mode" "$seed" "$(python3 -c "print($end - $start)")" "$(verdicts "$out.json")"
	done
done
echo "work directory: $work"
