package cache

import (
	"sync"
	"sync/atomic"
	"testing"
)

// TestConcurrentPutsAndRemovalsOfTheSamePositions races inserts of the
// same few positions (two pages' worth) from four inserters, which also
// remove single positions, against range removals, evictions and reads of
// them, so that an insert meets its slot
// reserved by another insert, or emptied by a removal that has not freed
// it yet, and pages are sealed and made again under it. Every insert the
// cache accepted must be removed exactly once (what the removals count
// adds up to the accepted inserts), and every entry must end with only the
// test's own reference: an entry accepted twice, or removed twice, or
// lost, breaks one or the other.
func TestConcurrentPutsAndRemovalsOfTheSamePositions(t *testing.T) {
	const (
		positions = 128
		rounds    = 3000
		inserters = 4
	)
	forEach(t, func(t *testing.T, im impl) {
		q := NewRemovalQueue(0, false)
		c := im.new(q)
		var accepted, removed, bad atomic.Int64
		var stop atomic.Bool
		var wg sync.WaitGroup
		entries := make([][]*Entry, inserters)
		for g := range inserters {
			wg.Add(1)
			go func() {
				defer wg.Done()
				in := c.NewInserter()
				for r := range rounds {
					p := int64((r*7 + g*31) % positions)
					e := entry(1, p, "x")
					e.Retain() // the test's own reference, checked at the end
					entries[g] = append(entries[g], e)
					ok, err := in.Put(Position{1, p}, e, 1)
					switch {
					case err != nil:
						t.Error(err)
						return
					case ok:
						accepted.Add(1)
					default:
						e.Release() // refused: the caller's reference is still its own
					}
					if r%2 == 1 { // empty a slot another inserter is about to fill
						q := int64((r*5 + g*17) % positions)
						n, _ := c.RemoveRange(Position{1, q}, Position{1, q}, true)
						removed.Add(int64(n))
					}
				}
			}()
		}
		var others sync.WaitGroup
		others.Add(2)
		go func() {
			defer others.Done()
			for i := int64(0); !stop.Load(); i++ {
				first := i * 13 % positions
				n, _ := c.RemoveRange(Position{1, first}, Position{1, first + 40}, i%2 == 0)
				removed.Add(int64(n))
				n, _, _ = q.EvictLeastAccessed(3)
				removed.Add(int64(n))
			}
		}()
		go func() {
			defer others.Done()
			for i := int64(0); !stop.Load(); i++ {
				prev := int64(-1)
				for _, e := range c.GetRange(Position{1, 0}, Position{1, positions - 1}) {
					if e.LedgerID() != 1 || e.EntryID() <= prev || e.RefCnt() < 2 {
						bad.Add(1)
					}
					prev = e.EntryID()
					e.Release()
				}
				if n := c.NumberOfEntries(); n < 0 || n > positions {
					bad.Add(1)
				}
			}
		}()
		wg.Wait()
		stop.Store(true)
		others.Wait()
		n, _ := c.Clear()
		removed.Add(int64(n))
		q.EvictLeastAccessed(1 << 62)
		if bad.Load() != 0 {
			t.Errorf("%d bad reads (out of order, elsewhere, or not retained)", bad.Load())
		}
		if accepted.Load() != removed.Load() {
			t.Errorf("%d inserts accepted, %d entries removed", accepted.Load(), removed.Load())
		}
		if c.Size() != 0 || c.NumberOfEntries() != 0 || (im.paged && c.NumberOfPages() != 0) {
			t.Errorf("size %d entries %d pages %d after clear", c.Size(), c.NumberOfEntries(), c.NumberOfPages())
		}
		for _, es := range entries {
			for _, e := range es {
				if e.RefCnt() != 1 {
					t.Fatalf("entry (%d,%d) ends with %d references, want the test's 1", e.LedgerID(), e.EntryID(), e.RefCnt())
				}
			}
		}
		t.Logf("%d inserts, %d accepted", inserters*rounds, accepted.Load())
	})
}
