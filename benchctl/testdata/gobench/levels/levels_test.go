package levels

import "testing"

var sink int

func spin(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sink++
	}
}

// BenchmarkFoo has no sub-benchmarks.
func BenchmarkFoo(b *testing.B) { spin(b) }

// BenchmarkFooBar has two.
func BenchmarkFooBar(b *testing.B) {
	b.Run("x", spin)
	b.Run("y", spin)
}

// BenchmarkDeep has a level more under a.
func BenchmarkDeep(b *testing.B) {
	b.Run("a", func(b *testing.B) {
		b.Run("1", spin)
		b.Run("2", spin)
	})
	b.Run("b", spin)
}
