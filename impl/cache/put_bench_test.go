package cache

import "testing"

// BenchmarkPutCached puts positions already cached: every put is refused
// (a second reader inserting entries the first one cached), and the
// caller keeps its entry, so the same 1,000 serve every round.
func BenchmarkPutCached(b *testing.B) {
	const n = 1000
	for _, im := range impls {
		b.Run("impl="+im.name, func(b *testing.B) {
			c := im.new(NewRemovalQueue(0, false))
			in := c.NewInserter()
			again := make([]*Entry, n)
			for i := range int64(n) {
				if ok, err := in.Put(Position{1, i}, NewEntry(1, i, nil, 0, nil), 0); !ok || err != nil {
					b.Fatalf("put %d: %v %v", i, ok, err)
				}
				again[i] = NewEntry(1, i, nil, 0, nil)
			}
			i := 0
			for b.Loop() {
				if ok, _ := in.Put(Position{1, int64(i)}, again[i], 0); ok {
					b.Fatalf("a put of cached position %d was accepted", i)
				}
				if i++; i == n {
					i = 0
				}
			}
			b.StopTimer()
			c.Clear()
		})
	}
}
