package cache

import (
	"slices"
	"testing"
)

// TestPagedRangeReadSizing: the paged cache's range read returns the same
// entries as the skip list's over sparse ranges, within the pages it notes
// (≤ maxNoted) and beyond them, and within them its result is sized to the
// slots used (10 % hits over 1000 positions: 100, not 1000), also after a
// removal emptied used slots of a page that stays.
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
	// 100..104 leave page 1 (64..127) with 105..109: their slots stay
	// marked used, so the bound counts them and the result holds 95.
	paged.RemoveRange(Position{3, 100}, Position{3, 105}, false)
	skip.RemoveRange(Position{3, 100}, Position{3, 105}, false)
	check("after a removal", 0, 999, 95, 100)
	if got := paged.GetRange(Position{3, 100}, Position{3, 104}); got != nil {
		t.Errorf("a range of used slots all emptied: %v, want nil", ids(got))
	}
	paged.RemoveRange(Position{3, 105}, Position{3, 110}, false)
	skip.RemoveRange(Position{3, 105}, Position{3, 110}, false)
	check("after the page emptied", 0, 999, 90, 90)
	paged.Clear()
	skip.Clear()
}
