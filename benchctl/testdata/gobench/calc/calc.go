// Package calc is a fixture: a module of ordinary testing.B benchmarks.
package calc

// Sum adds the bytes of b.
func Sum(b []byte) (s uint64) {
	for _, c := range b {
		s += uint64(c)
	}
	return s
}
