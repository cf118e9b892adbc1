package dedup

import (
	"fmt"
	"hash/maphash"
	"testing"
)

// TestTableHoldsWhatItWasGiven: every name added is found with its own
// producer, absent names (empty, prefixes, longer) are not, through
// growth past several sizes and removals in between; all yields each
// entry once.
func TestTableHoldsWhatItWasGiven(t *testing.T) {
	tb := newTable(maphash.MakeSeed(), 0)
	want := map[string]*producer{}
	for i := range 300 {
		name := fmt.Sprintf("producer-%d", i)
		p := &producer{}
		tb = tb.with(name, p)
		want[name] = p
		if i%7 == 3 {
			gone := fmt.Sprintf("producer-%d", i/2)
			tb = tb.without(gone)
			delete(want, gone)
		}
	}
	if tb.n != len(want) || len(tb.slots) < 2*tb.n {
		t.Fatalf("table holds %d in %d slots, want %d at most half full", tb.n, len(tb.slots), len(want))
	}
	for name, p := range want {
		if got := tb.get(name); got != p {
			t.Errorf("get(%q) = %p, want %p", name, got, p)
		}
	}
	for _, name := range []string{"", "producer-", "producer-3000", "producer-10", "x"} {
		if _, in := want[name]; !in && tb.get(name) != nil {
			t.Errorf("get(%q) found a producer it was never given (or lost on removal)", name)
		}
	}
	seen := map[string]int{}
	for name, p := range tb.all {
		seen[name]++
		if want[name] != p {
			t.Errorf("all yields %q with another producer", name)
		}
	}
	if len(seen) != len(want) {
		t.Errorf("all yields %d names, want %d", len(seen), len(want))
	}
	for name, n := range seen {
		if n != 1 {
			t.Errorf("all yields %q %d times", name, n)
		}
	}
}

// TestTableOldVersionsStay: a table a reader holds does not change when
// a writer derives another from it.
func TestTableOldVersionsStay(t *testing.T) {
	a, b := &producer{}, &producer{}
	t0 := newTable(maphash.MakeSeed(), 0).with("a", a)
	t1 := t0.with("b", b)
	t2 := t1.without("a")
	if t0.get("b") != nil || t0.get("a") != a || t1.get("a") != a || t1.get("b") != b || t2.get("a") != nil || t2.get("b") != b {
		t.Errorf("versions: t0 a=%p b=%p, t1 a=%p b=%p, t2 a=%p b=%p", t0.get("a"), t0.get("b"), t1.get("a"), t1.get("b"), t2.get("a"), t2.get("b"))
	}
}
