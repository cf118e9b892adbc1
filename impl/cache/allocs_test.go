package cache

import "testing"

// TestRangeReadAllocations: a range read allocates its result and nothing
// else (the visitor must not escape), a miss allocates nothing, and an
// insert allocates the wrapper and, in the skip list, its node.
func TestRangeReadAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's runtime changes allocation counts")
	}
	forEach(t, func(t *testing.T, im impl) {
		c := im.new(NewRemovalQueue(0, false))
		in := c.NewInserter()
		for i := int64(0); i < 100; i++ {
			if ok, err := in.Put(Position{1, i}, NewEntry(1, i, nil, 0, nil), 0); !ok || err != nil {
				t.Fatalf("put %d: %v %v", i, ok, err)
			}
		}
		hits := 0
		count := func(*Entry) { hits++ }
		for _, tc := range []struct {
			name string
			want float64
			read func()
		}{
			{"GetRange of 100 cached", 1, func() {
				for _, e := range c.GetRange(Position{1, 0}, Position{1, 99}) {
					e.Release()
				}
			}},
			{"GetRange of a missing ledger", 0, func() { c.GetRange(Position{2, 0}, Position{2, 99}) }},
			{"GetRange before the first entry", 0, func() { c.GetRange(Position{0, 0}, Position{0, 99}) }},
			{"ForEachInRange of 100 cached", 0, func() { c.ForEachInRange(Position{1, 0}, Position{1, 99}, count) }},
			{"Get", 0, func() { c.Get(Position{1, 5}).Release() }},
		} {
			if got := testing.AllocsPerRun(100, tc.read); got != tc.want {
				t.Errorf("%s: %v allocs, want %v", tc.name, got, tc.want)
			}
		}
		if hits != 101*100 {
			t.Errorf("ForEachInRange visited %d entries, want %d", hits, 101*100)
		}
		next := int64(100)
		want := 2.0 // the entry and its wrapper
		if !im.paged {
			want = 4 // and the skip-list node with its tower
		}
		got := testing.AllocsPerRun(100, func() {
			in.Put(Position{1, next}, NewEntry(1, next, nil, 0, nil), 0)
			next++
		})
		// (a paged insert also allocates a page once every 64 entries,
		// which AllocsPerRun's integer average leaves out)
		if got != want {
			t.Errorf("Put: %v allocs, want %v", got, want)
		}
		c.Clear()
	})
}
