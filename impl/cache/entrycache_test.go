package cache

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"
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
		for _, r := range [][2]int64{{0, math.MaxInt64}, {1, math.MaxInt64}, {0, MaxReadEntries}} {
			if _, err := c.ReadEntries(3, r[0], r[1], 1); err == nil || !strings.Contains(err.Error(), "more than") {
				t.Errorf("ReadEntries(3, %d, %d): %v, want a range error", r[0], r[1], err)
			}
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

// TestVirtualClock drives eviction by age with a manager clock: entries are
// stamped with the clock at insertion and at requeue, and EvictOlderThan
// compares with the clock, not wall time.
func TestVirtualClock(t *testing.T) {
	for _, im := range []string{"skiplist", "paged"} {
		t.Run(im, func(t *testing.T) {
			var now int64
			m, err := NewManager(ManagerConfig{Impl: im, MaxRequeue: 1, ExtendTTLOfAccessed: true,
				Clock: func() int64 { return now }})
			if err != nil {
				t.Fatal(err)
			}
			c := m.NewEntryCache(&memStorage{})
			insert := func(i int64, expected int32) {
				e := NewEntry(0, i, []byte("x"), expected, nil)
				e.SetDecreaseReadCountOnRelease(false)
				if ok, err := c.Insert(e); !ok || err != nil {
					t.Fatal(ok, err)
				}
				e.Release()
			}
			insert(0, 0) // t=0
			insert(1, 1) // t=0, one expected read: requeued once
			now = 500e6
			insert(2, 0) // t=0.5s
			now = 999e6
			if n, _ := m.EvictOlderThan(time.Second); n != 0 {
				t.Fatalf("evicted %d entries before any is a second old", n)
			}
			now = 1200e6 // entries 0 and 1 are 1.2 s old, entry 2 0.7 s
			if n, _ := m.EvictOlderThan(time.Second); n != 1 {
				t.Fatalf("evicted %d entries at 1.2 s, want 1 (entry 0; entry 1 is requeued)", n)
			}
			if c.Entries().Exists(Position{0, 0}) || !c.Entries().Exists(Position{0, 1}) || !c.Entries().Exists(Position{0, 2}) {
				t.Fatal("want entry 0 evicted, 1 requeued and 2 kept")
			}
			now = 1600e6 // entry 2 is 1.1 s old; entry 1 was requeued at 1.2 s
			if n, _ := m.EvictOlderThan(time.Second); n != 1 || c.Entries().Exists(Position{0, 2}) {
				t.Fatalf("evicted %d at 1.6 s, want entry 2 only", n)
			}
			now = 2300e6 // entry 1's requeue stamp is 1.1 s old; its one requeue is spent
			if n, _ := m.EvictOlderThan(time.Second); n != 1 || c.Size() != 0 || m.Size() != 0 {
				t.Fatalf("evicted %d at 2.3 s, size %d/%d; want the requeued entry gone", n, c.Size(), m.Size())
			}
		})
	}
}
