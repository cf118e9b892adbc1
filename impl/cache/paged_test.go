package cache

import (
	"slices"
	"testing"
	"time"
)

// TestPagedRangeReadSizing: the paged cache's range read returns the same
// entries as the skip list's over sparse ranges, within the pages it notes
// (≤ maxNoted) and beyond them, and within them its result is sized to the
// slots taken (10 % hits over 1000 positions: 100, not 1000), also after a
// removal emptied slots of a page that stays.
func TestPagedRangeReadSizing(t *testing.T) {
	q := NewRemovalQueue(0, false)
	paged, skip := NewPaged(q), NewSkipList(q)
	const span = 5000 // 79 pages: more than maxNoted
	for i := int64(0); i < span; i++ {
		if i%100 < 10 {
			mustPut(t, paged, 3, i, "p")
			mustPut(t, skip, 3, i, "s")
		}
	}
	check := func(step string, first, last int64, wantLen, wantCap int) {
		t.Helper()
		got := paged.GetRange(Position{3, first}, Position{3, last})
		want := skip.GetRange(Position{3, first}, Position{3, last})
		n, c := len(got), cap(got)
		if g, w := ids(got), ids(want); !slices.Equal(g, w) { // ids releases them
			t.Fatalf("%s [%d, %d]: paged %v, skip list %v", step, first, last, g, w)
		}
		if n != wantLen || (wantCap >= 0 && c != wantCap) {
			t.Errorf("%s [%d, %d]: %d entries in a result of capacity %d, want %d in %d", step, first, last, n, c, wantLen, wantCap)
		}
	}
	check("sparse, noted pages", 0, 999, 100, 100)
	check("from inside pages", 5, 1004, 100, 100) // 5..9 and 1000..1004 are cut from their pages
	check("beyond the noted pages", 0, span-1, span/10, -1)
	check("empty pages only", 10, 99, 0, 0)
	// 100..104 leave page 1 (64..127) with 105..109: their bits are
	// cleared with their slots, so the result is sized to the 95 left.
	paged.RemoveRange(Position{3, 100}, Position{3, 105}, false)
	skip.RemoveRange(Position{3, 100}, Position{3, 105}, false)
	check("after a removal", 0, 999, 95, 95)
	if got := paged.GetRange(Position{3, 100}, Position{3, 104}); got != nil {
		t.Errorf("a range of emptied slots: %v, want nil", ids(got))
	}
	if n := paged.NumberOfEntries(); n != span/10-5 {
		t.Errorf("NumberOfEntries = %d after removing 5 of %d, want %d", n, span/10, span/10-5)
	}
	paged.RemoveRange(Position{3, 105}, Position{3, 110}, false)
	skip.RemoveRange(Position{3, 105}, Position{3, 110}, false)
	check("after the page emptied", 0, 999, 90, 90)
	paged.Clear()
	skip.Clear()
}

// TestPagedInsertWaitsOutAHalfDoneSlot puts into a slot caught between
// the two steps of another insert (its bit reserved, its wrapper not yet
// stored) and of a removal (its slot emptied, its bit not yet cleared):
// the put waits for the other to finish, then refuses a duplicate or
// fills the freed slot. The states are made by hand; racing goroutines
// on two CPUs rarely land in a window of two instructions.
func TestPagedInsertWaitsOutAHalfDoneSlot(t *testing.T) {
	q := NewRemovalQueue(0, false)
	c := NewPaged(q)
	mustPut(t, c, 1, 0, "0") // makes the page of entries 0..63
	p, ok := c.pages.Get(pageKey{1, 0})
	if !ok {
		t.Fatal("no page after a put")
	}
	put := func() <-chan bool {
		done := make(chan bool, 1)
		go func() {
			ok, err := c.NewInserter().Put(Position{1, 5}, entry(1, 5, "new"), 3)
			if err != nil {
				t.Error(err)
			}
			done <- ok
		}()
		return done
	}
	waits := func(step string, done <-chan bool) {
		t.Helper()
		select {
		case ok := <-done:
			t.Fatalf("%s: the put returned %v at once, want it to wait", step, ok)
		case <-time.After(20 * time.Millisecond):
		}
	}

	p.occ.Or(1 << 5) // another insert reserved slot 5 …
	done := put()
	waits("slot reserved, wrapper not stored", done)
	other := new(wrapper)
	c.fill(other, Position{1, 5}, entry(1, 5, "other"), 0)
	other.page = p
	p.slots[5].Store(other) // … and stored its wrapper
	if ok := <-done; ok {
		t.Fatal("a put into a filled slot was accepted")
	}

	p.slots[5].CompareAndSwap(other, nil) // a removal emptied the slot …
	done = put()
	waits("slot emptied, bit not cleared", done)
	if p.free(5) { // … and freed it
		t.Fatal("freeing slot 5 sealed a page that holds entry 0")
	}
	if ok := <-done; !ok {
		t.Fatal("a put into a freed slot was refused")
	}
	got := c.Get(Position{1, 5})
	if got == nil || string(got.Data()) != "new" {
		t.Fatalf("entry 5 after the puts: %v, want the new one", got)
	}
	got.Release()
	c.Clear()
	if c.NumberOfPages() != 0 || c.Size() != 0 {
		t.Fatalf("%d pages, size %d after clear", c.NumberOfPages(), c.Size())
	}
}
