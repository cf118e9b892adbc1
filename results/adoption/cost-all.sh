#!/usr/bin/env bash
# The cost of one answer (cost.sh) for three third-party benchmarks, each
# measured in two passes: google/btree's Get (v1.0.1 -> v1.1.3, about
# +15 % here), cespare/xxhash's Sum64 of 4 KB (v2.1.2 -> v2.2.0, whose
# amd64 assembly was rewritten) and golang/snappy's RandomEncode (v0.0.3 ->
# v0.0.4). snappy's file benchmarks skip without their downloaded inputs
# and its word benchmarks without a system word list, so RandomEncode.
# Usage: bash results/adoption/cost-all.sh CLONES > results/adoption/cost.txt
#   CLONES  a directory with git clones named btree, xxhash and snappy of
#           github.com/google/btree, github.com/cespare/xxhash and
#           github.com/golang/snappy
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
clones=$1
for pass in 1 2; do
  echo "## pass $pass"
  bash "$here/cost.sh" "$clones/btree" v1.0.1 v1.1.3 '^BenchmarkGet$'
  bash "$here/cost.sh" "$clones/xxhash" v2.1.2 v2.2.0 '^BenchmarkSum64$/^4KB$'
  bash "$here/cost.sh" "$clones/snappy" v0.0.3 v0.0.4 '^BenchmarkRandomEncode$'
done
