#!/bin/sh
# ab --explain on two real histories, each in a clone of its repository:
# google/btree's Get (v1.0.1 -> v1.1.3, the release that made the tree
# generic) and cespare/xxhash's Sum64 of 4 KB (v2.1.2 -> v2.2.0, whose
# amd64 assembly was rewritten). ab's defaults (5 rounds of 5x1s), every
# row explained (--explain all) by CPU profiles, allocations and, with
# --prof instructions, instructions.
# Usage, from the repository root: results/explain/real/run.sh CLONES OUT
#   (ONLY=btree or ONLY=xxhash runs one of them)
#   CLONES  a directory with git clones named btree and xxhash of
#           github.com/google/btree and github.com/cespare/xxhash
set -eu
clones=$(cd "$1" && pwd)
mkdir -p "$2"
out=$(cd "$2" && pwd)
bin=$(mktemp -d)/benchctl
go build -o "$bin" ./cmd/benchctl
run() { # name repo base head bench
	echo "$1: $(date -u +%H:%M:%S)" >&2
	(cd "$clones/$2" && "$bin" ab --wait-lock 30m --base "$3" --head "$4" --bench "$5" --explain all --prof instructions \
		--out "$out/$1" .) > "$out/$1.md" 2> "$out/$1.stderr" || true
	# Keep the reports, the difference profiles and the flame graphs.
	rm -rf "$out/$1/logs" "$out/$1/explain/logs" "$out/$1/explain/profiles" "$out/$1"/explain/*/base.pb.gz "$out/$1"/explain/*/experiment.pb.gz "$out/$1/profiles"
}
[ -n "${ONLY:-}" ] && [ "$ONLY" != btree ] || run btree btree v1.0.1 v1.1.3 '^BenchmarkGet$'
[ -n "${ONLY:-}" ] && [ "$ONLY" != xxhash ] || run xxhash xxhash v2.1.2 v2.2.0 '^BenchmarkSum64$/^4KB$'
