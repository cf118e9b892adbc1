#!/usr/bin/env bash
# The cache suite's quick run (the README's main job) on a fleet of one
# agent (CPU 0) and of two agents (CPUs 0 and 1), each against the local
# PostgreSQL database named by DB, with the same rounds and jobs
# (--job-time JOB_TIME, default 45s: 4 jobs). Prints one line a run:
# agents, wall seconds, the time rows changed; keeps each run's output
# and bench.txt under runs/.
#
#   DB=postgres://bench@127.0.0.1:54329/runf bash results/fleet/run/run.sh
set -euo pipefail
: "${DB:?the fleet database, postgres://...}"
root=$(git rev-parse --show-toplevel)
here="$root/results/fleet/run"
work=$(mktemp -d /tmp/fleet-run.XXXXXX)
go build -o "$work/benchctl" "$root/cmd/benchctl"
bc="$work/benchctl"
"$bc" fleet migrate --db "$DB" >/dev/null
. "$root/results/fleet/agents.sh"
for n in ${AGENTS:-1 2}; do
	class="run-$n-$$" # a class of its own: the same comparison would take back the jobs before it
	mkdir -p "$work/$n"
	start_agents "$bc" "$n" "$class" "$work/$n"
	out="$work/cache-$n"
	start=$(date +%s.%N)
	code=0
	(cd "$root" && "$bc" run --suite cache --quick --fleet "$DB" --class "$class" --job-time "${JOB_TIME:-45s}" --out "$out" >"$work/cache-$n.md" 2>"$work/cache-$n.log") || code=$?
	end=$(date +%s.%N)
	stop_agents
	mkdir -p "$here/runs/$n-agents"
	cp "$work/cache-$n.md" "$work/cache-$n.log" "$here/runs/$n-agents/"
	cp "$out/bench.txt" "$here/runs/$n-agents/" 2>/dev/null || true
	printf '%d agent(s): exit %d, %.1f s, %s\n' "$n" "$code" "$(echo "$end - $start" | bc)" \
		"$(grep -o '[0-9]* of [0-9]* time comparisons changed' "$work/cache-$n.md" | head -1)"
done
