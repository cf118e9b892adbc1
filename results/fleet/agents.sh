# Sourced by results/fleet/*/run.sh: agents of a fleet on this machine,
# each pinned to a CPU of its own, against the database $DB, and the
# one-commit history with a planted +5 % that several scripts compare.

# start_agents BIN N CLASS DIR [NAME]: N agents (BIN agent) of CLASS,
# pinned to CPUs 0..N-1, named NAME-0.. (default agent-0..), each with
# its directory and log in DIR (agent-I, agent-I.log); their PIDs in
# $pids.
start_agents() {
	local bin=$1 n=$2 class=$3 dir=$4 name=${5:-agent}
	pids=()
	for i in $(seq 0 $((n - 1))); do
		"$bin" agent --db "$DB" --class "$class" --name "$name-$i" --cpus "$i" --ignore-lock --dir "$dir/agent-$i" 2>>"$dir/agent-$i.log" &
		pids+=($!)
	done
	sleep 2
}

# stop_agents: SIGTERM the agents of $pids (they drain) and wait for them.
stop_agents() {
	kill -TERM "${pids[@]}" 2>/dev/null || true
	wait "${pids[@]}" 2>/dev/null || true
}

# planted_history WORK ROOT: histgen's one-commit history with +5 %
# planted in $d (WORK/h), its ends in $good and $bad, its benchmark
# program built as $bc (WORK/bench), and the fleet's tables migrated.
planted_history() {
	go build -o "$1/histgen" "$2/cmd/histgen"
	d="$1/h"
	"$1/histgen" write --dir "$d" --commits 1 --change 1:1.05 --fleet >"$d.ends"
	read -r good bad <"$d.ends"
	bc="$1/bench"
	(cd "$d" && go build -o "$bc" ./cmd/bench)
	"$bc" fleet migrate --db "$DB" >/dev/null
}
