package names

import "testing"

var sink int

// BenchmarkNames has sub-benchmarks whose names climb out of a
// directory, are a directory's own name, or differ only in a character a
// file name cannot hold as it is.
func BenchmarkNames(b *testing.B) {
	for _, name := range []string{"../../../../x", "..", "a/b", "a_b", "a#b", "x+y", "x*y"} {
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				sink++
			}
		})
	}
}
