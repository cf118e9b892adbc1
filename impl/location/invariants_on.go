//go:build race

package location

// invariants enables the store's invariant checks: on in race builds,
// which the tests use, off (and free) in the builds that benchmark.
const invariants = true
