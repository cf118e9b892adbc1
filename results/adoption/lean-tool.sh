#!/usr/bin/env bash
# The tool's footprint in a user's module: a new module requires this one
# (a replace to this checkout, as the README says until it is published),
# adds the tool's line to its go.mod and tidies, as the README says (`go
# get -tool` of an unpublished module asks the proxy for it and fails). Prints, for the lean tool
# (tool/benchctl) and for this repository's program (cmd/benchctl), the
# indirect requirements its go.mod gained (besides this module) and the
# tool's cold build time (an empty build cache; the module cache warm).
# Usage: bash results/adoption/lean-tool.sh > results/adoption/lean-tool.txt
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) commit $(git -C "$root" rev-parse --short HEAD), $(go version), $(nproc) CPUs"
for tool in tool/benchctl cmd/benchctl; do
  mod=$(mktemp -d)
  cache=$(mktemp -d)
  cd "$mod"
  printf 'module example.com/adopter\n\ngo 1.26.0\n\nrequire github.com/ledgerbench/ledgerbench v0.0.0\n\nreplace github.com/ledgerbench/ledgerbench => %s\n\ntool github.com/ledgerbench/ledgerbench/%s\n' "$root" "$tool" > go.mod
  cp "$root/go.sum" go.sum
  go mod tidy
  n=$(grep '// indirect' go.mod | grep -vc 'github.com/ledgerbench/ledgerbench ' || true)
  start=$(date +%s.%N)
  GOCACHE="$cache" go build -o /dev/null "github.com/ledgerbench/ledgerbench/$tool"
  end=$(date +%s.%N)
  printf '%s\tindirect requirements %d\tcold build %.0f s\n' "$tool" "$n" "$(echo "$end - $start" | bc)"
  grep '// indirect' go.mod | awk '{print "  " $1}'
  cd / && rm -rf "$mod" "$cache"
done
