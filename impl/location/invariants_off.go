//go:build !race

package location

const invariants = false
