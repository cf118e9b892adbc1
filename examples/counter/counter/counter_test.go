package counter

import (
	"sync"
	"testing"
)

// TestConcurrentAdds: every add is counted exactly once under contention,
// and the values Add returns are distinct (each add is linearized).
func TestConcurrentAdds(t *testing.T) {
	for _, impl := range []string{"mutex", "atomic"} {
		c, ok := New(impl)
		if !ok {
			t.Fatalf("no %s counter", impl)
		}
		const workers, adds = 8, 1000
		seen := make([]map[int64]bool, workers)
		var wg sync.WaitGroup
		for w := range workers {
			seen[w] = map[int64]bool{}
			wg.Go(func() {
				for range adds {
					seen[w][c.Add(1)] = true
				}
			})
		}
		wg.Wait()
		if got := c.Load(); got != workers*adds {
			t.Errorf("%s: %d after %d adds", impl, got, workers*adds)
		}
		all := map[int64]bool{}
		for _, s := range seen {
			for v := range s {
				if all[v] {
					t.Fatalf("%s: Add returned %d twice", impl, v)
				}
				all[v] = true
			}
		}
	}
	if _, ok := New("btree"); ok {
		t.Error("New accepted an unknown implementation")
	}
}
