// Package levels holds benchmarks of one, two and three levels whose
// names share prefixes, to check that --bench selects as go test -bench
// does.
package levels
