package dedup

import (
	"fmt"
	"testing"
)

// BenchmarkAtomicAdmit admits increasing sequences of 16 of 64 known
// producers in turn on one goroutine: the lookup and compare-and-swap of
// an accepted message without contention.
func BenchmarkAtomicAdmit(b *testing.B) {
	a := NewAtomic()
	for i := range 64 {
		a.Set(fmt.Sprintf("producer-%d", i), 0)
	}
	names := make([]string, 16)
	for i := range names {
		names[i] = fmt.Sprintf("producer-%d", i)
	}
	var seq int64
	for i := 0; b.Loop(); i++ {
		if i&15 == 0 {
			seq++
		}
		if ok, _ := a.Admit(names[i&15], seq, seq); !ok {
			b.Fatal("refused")
		}
	}
}
