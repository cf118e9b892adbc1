#!/usr/bin/env bash
# One bisection over a real module's history: the released versions of
# github.com/cespare/xxhash/v2 (v2.1.0 … v2.3.0, from the Go module proxy)
# committed in order as a git history, bisected for the speed-up of
# Sum64String on short strings that cespare/xxhash#50 ("Allow Sum64String
# and (*Digest).WriteString to be inlined", merged 2020-11, released in
# v2.1.2) made. The benchmark is the module's own testing.B
# BenchmarkSum64String/4B, which the package itself has from v2.1.2 on:
# older versions are measured with v2.2.0's test files overlaid (v2.3.0's
# use NewWithSeed, which v2.1.x lacks, so the range ends at v2.2.0).
#
#   bash results/bisect/20261202/xxhash.sh        # on an idle machine
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
work=${WORK:-/tmp/ledgerbench-histories}
mkdir -p "$work"
(cd "$root" && go build -o "$work/benchctl" ./cmd/benchctl)
d="$work/xxhash"
rm -rf "$d" "$d.bisect"
mkdir -p "$d"
cd "$d"
git init -q
for v in v2.1.0 v2.1.1 v2.1.2 v2.2.0 v2.3.0; do
	src=$(cd "$work" && GOFLAGS=-mod=mod go mod download -json "github.com/cespare/xxhash/v2@$v" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	find . -mindepth 1 -maxdepth 1 ! -name .git -exec rm -rf {} +
	cp -r "$src/." .
	chmod -R u+w .
	git add -A
	git -c user.name=histgen -c user.email=histgen@example.com commit -qm "github.com/cespare/xxhash/v2 $v"
	git tag "$v"
done
git log --oneline
"$work/benchctl" bisect --good v2.1.0 --bad v2.2.0 --direction better . --bench '^BenchmarkSum64String$/^4B$' \
	--duet --forks 5 --warmup 1x100ms --measure 3x100ms --budget 2m --min-change 1 --out "$d.bisect" >"$d.log" 2>&1 || true
cp "$d.bisect/bisect.md" "$here/xxhash.md"
cat "$here/xxhash.md"
