// Package self is the harness measuring itself: an empty op (the
// harness's cost per op), a fixed-cost arithmetic kernel (the accuracy
// check against go test -bench), a contended mutex, an allocating op (B/op
// and allocs/op), and an asymmetric two-op group with a custom metric.
//
// Importing the package registers the benchmarks in harness.Default under
// the family "self" and the suite "self".
package self
