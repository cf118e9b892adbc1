#!/usr/bin/env bash
# PostgreSQL restarted in the middle of an A/B on a fleet: a synthetic
# history of one commit that makes its benchmark 5 % slower (histgen),
# compared by ab --fleet on two agents (CPUs 0 and 1; 20 rounds cut into
# 4 jobs of 5 by --job-time 5s). DELAY seconds (default 0) after a job
# starts running, RESTART (a command that restarts the database, e.g.
# pg_ctl restart -m fast) is run: at 0 it hits the agents fetching the
# programs, at 3 or so their measuring or the recording of a result. Prints one line a seed: ab's exit status, its verdict, the jobs,
# their attempts and the results recorded, from the database.
#
#   DB=postgres://bench@127.0.0.1:54329/fleetm RESTART='...' bash results/fleet/restart/run.sh SEEDS...
set -euo pipefail
: "${DB:?the fleet database, postgres://...}" "${RESTART:?a command that restarts PostgreSQL}"
root=$(git rev-parse --show-toplevel)
work=$(mktemp -d /tmp/fleet-restart.XXXXXX)
. "$root/results/fleet/agents.sh"
planted_history "$work" "$root"
q() { psql "$DB" -Atc "$1"; }

for seed in "$@"; do
	class="restart-$seed-$$"
	start_agents "$bc" 2 "$class" "$work" "$class"
	out="$work/ab-$seed"
	(cd "$d" && exec "$bc" ab --base "$good" --head "$bad" --cmd ./cmd/bench --bench '^BenchmarkWorkLoop$' --forks 20 \
		--warmup 1x100ms --measure 3x100ms --min-change 1 --seed "$seed" --explain off --json --out "$out" \
		--fleet "$DB" --class "$class" --job-time 5s >"$out.json" 2>"$out.err") &
	abpid=$!
	until [ "$(q "SELECT count(*) FROM river_job WHERE queue LIKE '%$class%' AND state = 'running'" 2>/dev/null || echo 0)" -gt 0 ]; do sleep 0.2; done
	sleep "${DELAY:-0}"
	eval "$RESTART" >/dev/null
	code=0
	wait "$abpid" || code=$?
	stop_agents
	jobs=$(q "SELECT count(*) || ' jobs, attempts ' || string_agg(attempt::text, ',' ORDER BY id) || ', states ' || string_agg(DISTINCT state::text, ',') FROM river_job WHERE queue LIKE '%$class%'")
	results=$(q "SELECT count(*) FROM benchctl_fleet_result r JOIN river_job j ON j.id = r.job_id WHERE j.queue LIKE '%$class%'")
	verdict=$(python3 -c 'import json,sys
try:
    r=[r for r in json.load(open(sys.argv[1]))["rows"] if r.get("unit")=="sec/op" and "verdict" in r][0]; c=r["change"]
    print("%s %+.2f %% n=%d" % (r["verdict"], 100*(c["ratio"]-1), c["n"]))
except Exception as e: print("no verdict (%s)" % e)' "$out.json")
	unreachable=$(grep -c "database is unreachable" "$out.err" || true)
	printf 'seed=%s\tdelay %ss\texit %s\t%s\t%s\t%s results\t%s progress lines said unreachable\n' "$seed" "${DELAY:-0}" "$code" "$verdict" "$jobs" "$results" "$unreachable"
done
echo "work directory: $work"
