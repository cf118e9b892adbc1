package cache

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

type impl struct {
	name  string
	new   func(q *RemovalQueue) RangeCache
	paged bool
}

var impls = []impl{
	{"skiplist", func(q *RemovalQueue) RangeCache { return NewSkipList(q) }, false},
	{"paged", func(q *RemovalQueue) RangeCache { return NewPaged(q) }, true},
}

func forEach(t *testing.T, f func(t *testing.T, im impl)) {
	for _, im := range impls {
		t.Run(im.name, func(t *testing.T) { f(t, im) })
	}
}

func entry(l, e int64, s string) *Entry { return NewEntry(l, e, []byte(s), 0, nil) }

func mustPut(t *testing.T, in interface {
	Put(Position, *Entry, int64) (bool, error)
}, l, e int64, s string) *Entry {
	t.Helper()
	en := entry(l, e, s)
	ok, err := in.Put(Position{l, e}, en, int64(len(s)))
	if !ok || err != nil {
		t.Fatalf("put (%d, %d): %v %v", l, e, ok, err)
	}
	return en
}

func ids(es []*Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, fmt.Sprintf("(%d,%d)", e.LedgerID(), e.EntryID()))
		e.Release()
	}
	return out
}

func pages(t *testing.T, im impl, c RangeCache, want int) {
	t.Helper()
	if im.paged && c.NumberOfPages() != want {
		t.Fatalf("%d pages, want %d", c.NumberOfPages(), want)
	}
}

func TestRangesSpanPagesAndLedgers(t *testing.T) {
	forEach(t, func(t *testing.T, im impl) {
		c := im.new(NewRemovalQueue(5, false))
		for _, p := range []Position{{1, 62}, {1, 63}, {1, 64}, {1, 192}, {2, 0}, {2, 1}} {
			mustPut(t, c, p.Ledger, p.Entry, strconv.FormatInt(p.Entry, 10))
		}
		if c.NumberOfEntries() != 6 {
			t.Fatalf("%d entries", c.NumberOfEntries())
		}
		pages(t, im, c, 4)
		if got := ids(c.GetRange(Position{1, 63}, Position{2, 0})); fmt.Sprint(got) != "[(1,63) (1,64) (1,192) (2,0)]" {
			t.Fatalf("getRange = %v", got)
		}
		if !c.Exists(Position{1, 64}) || c.Exists(Position{1, 65}) {
			t.Fatal("exists")
		}
		if n, b := c.RemoveRange(Position{1, 0}, Position{1, 64}, false); n != 2 || b != 4 {
			t.Fatalf("removeRange exclusive at a page boundary = %d, %d; want 2, 4", n, b)
		}
		if e := c.Get(Position{1, 63}); e != nil {
			t.Fatal("removed entry still cached")
		}
		pages(t, im, c, 3)
		if n, _ := c.RemoveRange(Position{-1, 0}, Position{2, 1}, false); n != 3 {
			t.Fatalf("removeRange from (-1,0) removed %d, want 3", n)
		}
		if got := ids(c.GetRange(Position{0, 0}, Position{3, 0})); fmt.Sprint(got) != "[(2,1)]" {
			t.Fatalf("left %v", got)
		}
		pages(t, im, c, 1)
		c.Clear()
		pages(t, im, c, 0)
		if c.Size() != 0 {
			t.Fatalf("size %d after clear", c.Size())
		}
	})
}

func TestRemovesPagesWhenTheirEntriesAreEvicted(t *testing.T) {
	forEach(t, func(t *testing.T, im impl) {
		q := NewRemovalQueue(5, false)
		c := im.new(q)
		var all []*Entry
		in := c.NewInserter()
		for i := int64(0); i < 192; i++ {
			e := mustPut(t, in, 0, i, "x")
			e.Retain() // the test's own reference
			all = append(all, e)
		}
		pages(t, im, c, 3)
		if n, b, err := q.EvictLeastAccessed(65); n != 65 || b != 65 || err != nil {
			t.Fatalf("evict 65 = %d, %d, %v", n, b, err)
		}
		pages(t, im, c, 2)
		if n, _, _ := q.EvictLeastAccessed(1 << 62); n != 127 {
			t.Fatalf("evict all removed %d, want 127", n)
		}
		pages(t, im, c, 0)
		if c.NumberOfEntries() != 0 || c.Size() != 0 {
			t.Fatalf("entries %d size %d", c.NumberOfEntries(), c.Size())
		}
		for _, e := range all {
			if e.RefCnt() != 1 {
				t.Fatalf("entry %d refCnt %d, want 1: the cache released its reference exactly once", e.EntryID(), e.RefCnt())
			}
		}
		mustPut(t, c, 0, 1, "y")
		if e := c.Get(Position{0, 1}); e == nil || string(e.Data()) != "y" {
			t.Fatal("re-insert after eviction")
		} else {
			e.Release()
		}
	})
}

func TestInserterUpdatesTheCachedEntryAtAPosition(t *testing.T) {
	forEach(t, func(t *testing.T, im impl) {
		c := im.new(NewRemovalQueue(5, false))
		in := c.NewInserter()
		if in.UpdateIfCached(Position{0, 1}, func(*Entry) {}) {
			t.Fatal("update of an absent entry")
		}
		mustPut(t, in, 0, 1, "1")
		called := false
		if !in.UpdateIfCached(Position{0, 1}, func(e *Entry) {
			called = e.RefCnt() == 2 && string(e.Data()) == "1"
		}) || !called {
			t.Fatal("update of the cached entry")
		}
		if in.UpdateIfCached(Position{0, 2}, func(*Entry) {}) || in.UpdateIfCached(Position{1, 1}, func(*Entry) {}) {
			t.Fatal("update elsewhere succeeded")
		}
		c.RemoveRange(Position{0, 1}, Position{0, 1}, true)
		if in.UpdateIfCached(Position{0, 1}, func(*Entry) {}) {
			t.Fatal("update after removal")
		}
	})
}

// TestInserterUpdatesAnEntryOnAPageMadeAgain: an inserter whose page was
// emptied and removed still finds the entry another inserter cached at
// that position since, on the page made again.
func TestInserterUpdatesAnEntryOnAPageMadeAgain(t *testing.T) {
	forEach(t, func(t *testing.T, im impl) {
		c := im.new(NewRemovalQueue(0, false))
		in := c.NewInserter()
		mustPut(t, in, 0, 1, "first")
		c.RemoveRange(Position{0, 1}, Position{0, 1}, true)
		pages(t, im, c, 0)
		mustPut(t, c.NewInserter(), 0, 1, "again")
		var got string
		if !in.UpdateIfCached(Position{0, 1}, func(e *Entry) { got = string(e.Data()) }) || got != "again" {
			t.Fatalf("update through the first inserter saw %q, want the entry cached again", got)
		}
		c.Clear()
	})
}

func TestInserterAddsToANewPageAfterItsPageWasRemoved(t *testing.T) {
	forEach(t, func(t *testing.T, im impl) {
		c := im.new(NewRemovalQueue(5, false))
		in := c.NewInserter()
		mustPut(t, in, 0, 0, "0")
		if n, _ := c.RemoveRange(Position{0, 0}, Position{0, 0}, true); n != 1 {
			t.Fatal("remove")
		}
		pages(t, im, c, 0)
		mustPut(t, in, 0, 1, "1")
		pages(t, im, c, 1)
		mustPut(t, in, -1, 5, "5")
		mustPut(t, in, 0, 128, "128")
		if got := ids(c.GetRange(Position{-1, 0}, Position{0, 1000})); fmt.Sprint(got) != "[(-1,5) (0,1) (0,128)]" {
			t.Fatalf("getRange = %v", got)
		}
		c.Clear()
		pages(t, im, c, 0)
	})
}

func TestDoubleInsertAndBadInput(t *testing.T) {
	forEach(t, func(t *testing.T, im impl) {
		c := im.new(NewRemovalQueue(5, false))
		mustPut(t, c, 0, 0, "first")
		dup := entry(0, 0, "second")
		if ok, err := c.Put(Position{0, 0}, dup, 6); ok || err != nil || c.Size() != 5 || dup.RefCnt() != 1 {
			t.Fatalf("duplicate put: %v %v size %d refCnt %d", ok, err, c.Size(), dup.RefCnt())
		}
		if e := c.Get(Position{0, 0}); string(e.Data()) != "first" {
			t.Fatal("duplicate replaced the value")
		} else {
			e.Release()
		}
		if _, err := c.Put(Position{0, 9}, entry(0, 8, "x"), 1); !errors.Is(err, ErrPosition) {
			t.Fatalf("mismatched key: %v", err)
		}
		released := entry(0, 3, "x")
		released.Release()
		if _, err := c.Put(Position{0, 3}, released, 1); !errors.Is(err, ErrReleased) {
			t.Fatalf("released entry: %v", err)
		}
		if n, _ := c.RemoveRange(Position{5, 0}, Position{4, 0}, true); n != 0 {
			t.Fatal("an inverted range removed something")
		}
		if _, _, err := NewRemovalQueue(5, false).EvictLeastAccessed(0); !errors.Is(err, ErrNonPositiveSize) {
			t.Fatalf("evict 0: %v", err)
		}
	})
}

func TestEvictionByTimestampAndRequeue(t *testing.T) {
	forEach(t, func(t *testing.T, im impl) {
		q := NewRemovalQueue(2, true)
		c := im.new(q)
		for i := int64(0); i < 4; i++ {
			mustPut(t, c, 0, i, "ab")
		}
		if e := c.Get(Position{0, 1}); e != nil { // accessed: requeued once
			e.Release()
		}
		n, b := q.EvictBefore(nanotime() + 1)
		if n != 3 || b != 6 || !c.Exists(Position{0, 1}) {
			t.Fatalf("evict by time = %d, %d; accessed entry kept: %v", n, b, c.Exists(Position{0, 1}))
		}
		if n, _ := q.EvictBefore(nanotime() + 1); n != 1 || c.Size() != 0 {
			t.Fatalf("second eviction removed %d, size %d", n, c.Size())
		}
	})
}

// TestConcurrentInsertsReadsAndRemovals: one inserter, readers (range
// reads by visitor and by slice, and point reads), a range remover and an
// evictor at once; afterwards the cache is empty and every
// entry's reference was released exactly once (refCnt back to the
// test's own 1).
func TestConcurrentInsertsReadsAndRemovals(t *testing.T) {
	const n = 20000
	forEach(t, func(t *testing.T, im impl) {
		q := NewRemovalQueue(5, false)
		c := im.new(q)
		all := make([]*Entry, n)
		for i := range all {
			all[i] = entry(int64(i/5000), int64(i%5000), "v")
			all[i].Retain()
		}
		var stop atomic.Bool
		var bad atomic.Int64
		var wg sync.WaitGroup
		for r := 0; r < 3; r++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(r), 1))
				for !stop.Load() {
					first := Position{int64(rng.IntN(4)), int64(rng.IntN(5000))}
					last := Position{first.Ledger, first.Entry + 150}
					c.ForEachInRange(first, last, func(e *Entry) {
						if e.RefCnt() < 2 || e.LedgerID() != first.Ledger || e.EntryID() < first.Entry || e.EntryID() > last.Entry {
							if bad.Load() < 3 {
								t.Logf("range %v-%v got (%d,%d) refCnt %d", first, last, e.LedgerID(), e.EntryID(), e.RefCnt())
							}
							bad.Add(1)
						}
					})
					prev := int64(-1)
					for _, e := range c.GetRange(first, last) {
						// Retained, in the range, ascending, each once.
						if e.RefCnt() < 2 || e.LedgerID() != first.Ledger || e.EntryID() < first.Entry || e.EntryID() > last.Entry || e.EntryID() <= prev {
							bad.Add(1)
						}
						prev = e.EntryID()
						e.Release()
					}
					if e := c.Get(first); e != nil {
						if !e.MatchesPosition(first) {
							bad.Add(1)
						}
						e.Release()
					}
					// An insert counts its entry before a removal can
					// uncount it.
					if sz := c.Size(); sz < 0 {
						t.Logf("size %d", sz)
						bad.Add(1)
					}
				}
			}()
		}
		wg.Add(2)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(9, 1))
			for !stop.Load() {
				l, e := int64(rng.IntN(4)), int64(rng.IntN(5000))
				c.RemoveRange(Position{l, max(0, e-200)}, Position{l, e}, rng.IntN(2) == 0)
			}
		}()
		go func() {
			defer wg.Done()
			for !stop.Load() {
				q.EvictLeastAccessed(1000)
			}
		}()
		in := c.NewInserter()
		for i, e := range all {
			if ok, err := in.Put(Position{e.LedgerID(), e.EntryID()}, e, 1); err != nil {
				t.Fatal(err)
			} else if !ok {
				t.Fatalf("insert %d refused", i)
			}
		}
		stop.Store(true)
		wg.Wait()
		c.Clear()
		q.EvictLeastAccessed(1 << 62)
		if bad.Load() != 0 {
			t.Fatalf("%d bad observations", bad.Load())
		}
		if c.Size() != 0 || c.NumberOfEntries() != 0 || (im.paged && c.NumberOfPages() != 0) {
			t.Fatalf("size %d entries %d pages %d after clear", c.Size(), c.NumberOfEntries(), c.NumberOfPages())
		}
		counts := map[int32]int{}
		for _, e := range all {
			counts[e.RefCnt()]++
		}
		if counts[1] != n {
			keys := slices.Collect(func(yield func(int32) bool) {
				for k := range counts {
					if !yield(k) {
						return
					}
				}
			})
			t.Fatalf("refCnt distribution %v (keys %v): every entry must be back at 1", counts, keys)
		}
	})
}

func TestDeallocationHookRunsOnce(t *testing.T) {
	var calls atomic.Int32
	e := NewEntry(1, 2, []byte("x"), 2, func(*Entry) { calls.Add(1) })
	h := e.ReadCountHandler()
	e.Retain()
	e.Release()
	if last, err := e.Release(); !last || err != nil {
		t.Fatal("last release")
	}
	if _, err := e.Release(); err == nil {
		t.Fatal("release beyond zero")
	}
	if e.Retain() == nil {
		t.Fatal("a released entry was resurrected")
	}
	if calls.Load() != 1 || e.LedgerID() != -1 || h.ExpectedReadCount() != 1 {
		t.Fatalf("hook %d times, ledger %d, expected reads %d", calls.Load(), e.LedgerID(), h.ExpectedReadCount())
	}
}

// TestRetainReleaseRace: goroutines retain and release one entry while
// its owner drops the first reference. Exactly one release is the last
// (the hook runs once), and no retain succeeds once the entry is
// deallocated.
func TestRetainReleaseRace(t *testing.T) {
	for round := range 200 {
		var calls atomic.Int32
		var dead, resurrected atomic.Bool
		e := NewEntry(1, int64(round), nil, 0, func(*Entry) { dead.Store(true); calls.Add(1) })
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 200 {
					if e.Retain() == nil {
						if dead.Load() {
							resurrected.Store(true)
						}
						if _, err := e.Release(); err != nil {
							t.Error(err)
							return
						}
					}
				}
			}()
		}
		e.Release() // the owner's reference
		wg.Wait()
		if calls.Load() != 1 || resurrected.Load() || e.RefCnt() != 0 || e.Retain() == nil {
			t.Fatalf("round %d: hook ran %d times, resurrected %v, refCnt %d", round, calls.Load(), resurrected.Load(), e.RefCnt())
		}
		if _, err := e.Release(); err == nil {
			t.Fatalf("round %d: release beyond zero accepted", round)
		}
	}
}

// TestRangeReadReferences: the references a range read hands out are
// the readers' own, whatever the order of their releases and whatever
// the cache did meanwhile: entries held by readers outlive a Clear and
// are freed exactly once, by their last release, after it; a reader that
// never releases keeps its entries alive and unfreed; a cleared cache
// hands none of them out again.
func TestRangeReadReferences(t *testing.T) {
	forEach(t, func(t *testing.T, im impl) {
		const n = 200 // four pages and part of a fifth
		c := im.new(NewRemovalQueue(0, false))
		freed := make([]atomic.Int32, n)
		for i := range int64(n) {
			e := NewEntry(7, i, []byte("v"), 0, func(e *Entry) { freed[e.EntryID()].Add(1) })
			if ok, err := c.Put(Position{7, i}, e, 1); !ok || err != nil {
				t.Fatalf("put %d: %v %v", i, ok, err)
			}
		}
		all := c.GetRange(Position{7, 0}, Position{7, n - 1})
		firstHalf := c.GetRange(Position{7, 0}, Position{7, n/2 - 1})
		kept := c.GetRange(Position{7, 10}, Position{7, 19}) // never released
		if len(all) != n || len(firstHalf) != n/2 || len(kept) != 10 {
			t.Fatalf("read %d, %d and %d entries", len(all), len(firstHalf), len(kept))
		}
		for i := len(firstHalf) - 1; i >= 0; i-- { // released last to first
			firstHalf[i].Release()
		}
		if got, _ := c.Clear(); got != n {
			t.Fatalf("clear removed %d, want %d", got, n)
		}
		if es := c.GetRange(Position{7, 0}, Position{7, n - 1}); len(es) != 0 {
			t.Fatalf("a cleared cache read %d entries", len(es))
		}
		for i := range freed {
			if f := freed[i].Load(); f != 0 {
				t.Fatalf("entry %d freed %d times while a reader holds it", i, f)
			}
		}
		rand.New(rand.NewPCG(1, 2)).Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
		for _, e := range all {
			e.Release()
		}
		for i := range freed {
			want := int32(1)
			if i >= 10 && i < 20 {
				want = 0 // still held by the reader that never released
			}
			if f := freed[i].Load(); f != want {
				t.Errorf("entry %d freed %d times after the releases, want %d", i, f, want)
			}
		}
		for _, e := range kept {
			if e.RefCnt() != 1 || e.EntryID() < 10 || e.EntryID() >= 20 {
				t.Errorf("a kept entry: (%d, %d) refCnt %d, want refCnt 1", e.LedgerID(), e.EntryID(), e.RefCnt())
			}
			if ok, err := e.Release(); !ok || err != nil {
				t.Errorf("the last release of a kept entry: %v %v", ok, err)
			}
			if _, err := e.Release(); err == nil {
				t.Error("a release beyond the last is not an error")
			}
		}
	})
}
