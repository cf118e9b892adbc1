package cache

import (
	"errors"
	"fmt"
	"sync"
	"testing"
)

// memStorage serves entries (ledger, i) with data "l:i"; failNext makes
// the next reads that include a given entry fail.
type memStorage struct {
	mu       sync.Mutex
	reads    [][2]int64
	failOnce map[int64]bool
}

func (s *memStorage) ReadEntries(ledger, first, last int64) ([]*Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads = append(s.reads, [2]int64{first, last})
	for i := first; i <= last; i++ {
		if s.failOnce[i] {
			delete(s.failOnce, i)
			return nil, errors.New("bookie down")
		}
	}
	var out []*Entry
	for i := first; i <= last; i++ {
		out = append(out, NewEntry(ledger, i, []byte(fmt.Sprintf("%d:%d", ledger, i)), 0, nil))
	}
	return out, nil
}

func forEachManager(t *testing.T, f func(t *testing.T, m *Manager)) {
	for _, im := range []string{"skiplist", "paged"} {
		t.Run(im, func(t *testing.T) {
			m, err := NewManager(ManagerConfig{Impl: im, MaxSize: 1 << 30, MaxRequeue: 5})
			if err != nil {
				t.Fatal(err)
			}
			f(t, m)
		})
	}
}

func release(es []*Entry) {
	for _, e := range es {
		e.Release()
	}
}

func TestReadsWithPartialHits(t *testing.T) {
	forEachManager(t, func(t *testing.T, m *Manager) {
		s := &memStorage{}
		c := m.NewEntryCache(s)
		for _, i := range []int64{0, 1, 5, 6, 7, 8, 9} {
			e := NewEntry(3, i, []byte(fmt.Sprintf("3:%d", i)), 0, nil)
			if ok, err := c.Insert(e); !ok || err != nil {
				t.Fatal(ok, err)
			}
			e.Release()
		}
		got, err := c.ReadEntries(3, 0, 9, 1)
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range got {
			if e.EntryID() != int64(i) || string(e.Data()) != fmt.Sprintf("3:%d", i) {
				t.Fatalf("entry %d = (%d,%d) %q", i, e.LedgerID(), e.EntryID(), e.Data())
			}
		}
		release(got)
		if fmt.Sprint(s.reads) != "[[2 4]]" {
			t.Fatalf("storage reads %v, want only the missing run [2 4]", s.reads)
		}
		// The missing run was cached (expected reads 1): now all hit.
		got, _ = c.ReadEntries(3, 0, 9, 1)
		release(got)
		if len(s.reads) != 1 {
			t.Fatalf("storage read again: %v", s.reads)
		}
		if _, err := c.ReadEntries(3, 5, 4, 1); err == nil {
			t.Fatal("an inverted range was read")
		}
	})
}

// TestCachedEntriesAreEvictableAfterAFailedPartialReadRetriesTheWholeRange
// is the seed review's regression: after a partial read fails and the
// whole range is read again, the cached entries adopt the retry's
// read-count handlers, so releasing the returned entries leaves no
// expected reads that would delay eviction.
func TestCachedEntriesAreEvictableAfterAFailedPartialReadRetriesTheWholeRange(t *testing.T) {
	forEachManager(t, func(t *testing.T, m *Manager) {
		s := &memStorage{failOnce: map[int64]bool{}}
		c := m.NewEntryCache(s)
		// Entry 0 is added to the ledger and cached expecting one read,
		// which has not happened (the writer's release is not a read).
		add := NewEntry(1, 0, []byte("1:0"), 1, nil)
		add.SetDecreaseReadCountOnRelease(false)
		if ok, err := c.Insert(add); !ok || err != nil {
			t.Fatal(ok, err)
		}
		add.Release()
		s.failOnce[1] = true
		got, err := c.ReadEntries(1, 0, 1, 1) // 0 hits, 1 fails, the retry reads 0..1
		if err != nil || len(got) != 2 {
			t.Fatalf("read with retry: %v, %d entries", err, len(got))
		}
		if fmt.Sprint(s.reads) != "[[1 1] [0 1]]" {
			t.Fatalf("storage reads %v", s.reads)
		}
		release(got)
		for i := int64(0); i < 2; i++ {
			e := c.Entries().Get(Position{1, i})
			if e == nil {
				t.Fatalf("entry %d not cached", i)
			}
			if e.HasExpectedReads() {
				t.Errorf("entry %d still expects reads: its eviction would be delayed", i)
			}
			e.Release()
		}
		if n, _, _ := m.Queue().EvictLeastAccessed(1 << 40); n != 2 {
			t.Fatalf("evicted %d entries, want 2", n)
		}
	})
}

func TestInvalidation(t *testing.T) {
	forEachManager(t, func(t *testing.T, m *Manager) {
		c := m.NewEntryCache(&memStorage{})
		for l := int64(1); l <= 2; l++ {
			for i := int64(0); i < 10; i++ {
				e := NewEntry(l, i, []byte("x"), 0, nil)
				c.Insert(e)
				e.Release()
			}
		}
		if n, _ := c.InvalidateEntries(Position{1, 5}); n != 5 {
			t.Fatalf("invalidate before (1,5) removed %d", n)
		}
		if n, _ := c.InvalidateAllEntries(2); n != 10 {
			t.Fatalf("invalidate ledger 2 removed %d", n)
		}
		if c.Size() != 5 || m.Size() != 5 {
			t.Fatalf("sizes %d / %d, want 5", c.Size(), m.Size())
		}
		c.Clear()
		if m.Size() != 0 {
			t.Fatalf("manager size %d after clear", m.Size())
		}
	})
}

func TestManagerEvictsToTheWatermark(t *testing.T) {
	for _, im := range []string{"skiplist", "paged"} {
		m, _ := NewManager(ManagerConfig{Impl: im, MaxSize: 1000, Watermark: 0.5})
		c := m.NewEntryCache(&memStorage{})
		for i := int64(0); i < 10; i++ {
			e := NewEntry(1, i, make([]byte, 100), 0, nil)
			c.Insert(e)
			e.Release()
		}
		// The tenth insert reached 1000 > 980: evicted down to 500.
		if m.Size() != 500 || c.Size() != 500 || c.Entries().Exists(Position{1, 0}) || !c.Entries().Exists(Position{1, 9}) {
			t.Fatalf("%s: manager %d cache %d; oldest kept %v", im, m.Size(), c.Size(), c.Entries().Exists(Position{1, 0}))
		}
	}
	if _, err := NewManager(ManagerConfig{Impl: "btree"}); err == nil {
		t.Error("an unknown implementation was accepted")
	}
}
