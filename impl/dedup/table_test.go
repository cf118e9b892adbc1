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

// TestTableTellsNamesApartAtEveryLength: names of every length from 0 to
// 24 bytes (both sides of the two-word names of 8 to 16), each differing
// from a base name in one byte at one position, including the middle
// bytes that a long name's first and last words do not cover, are
// distinct entries; a zero byte differs from a missing one.
func TestTableTellsNamesApartAtEveryLength(t *testing.T) {
	tb := newTable(maphash.MakeSeed(), 0)
	want := map[string]*producer{}
	add := func(name string) {
		if _, in := want[name]; in {
			return
		}
		p := &producer{}
		tb = tb.with(name, p)
		want[name] = p
	}
	for n := 0; n <= 24; n++ {
		base := []byte("abcdefghijklmnopqrstuvwxyz"[:n])
		add(string(base))
		add(string(make([]byte, n))) // all zero bytes
		for i := range base {
			v := append([]byte(nil), base...)
			v[i] ^= 0x20
			add(string(v))
		}
	}
	if tb.n != len(want) {
		t.Fatalf("table holds %d names, want %d", tb.n, len(want))
	}
	for name, p := range want {
		if got := tb.get(name); got != p {
			t.Errorf("get(%q) = %p, want %p", name, got, p)
		}
	}
	for _, name := range []string{"abcdefgh\x00", "\x00abcdefgh", "ABCDEFGHIJKLMNOPQ", "abcdefghijklmnopqrstuvwxyz"} {
		if tb.get(name) != nil {
			t.Errorf("get(%q) found a producer it was never given", name)
		}
	}
}

// TestTableZeroNamesOfEveryLength: names of only zero bytes have the same
// words at every length from 8 to 16, so only their lengths tell them
// apart; under 200 seeds their probe sequences cross, and each is still
// found as itself.
func TestTableZeroNamesOfEveryLength(t *testing.T) {
	for range 200 {
		tb := newTable(maphash.MakeSeed(), 0)
		var ps []*producer
		for n := range 25 {
			p := &producer{}
			tb = tb.with(string(make([]byte, n)), p)
			ps = append(ps, p)
		}
		for n, p := range ps {
			if got := tb.get(string(make([]byte, n))); got != p {
				t.Fatalf("get of %d zero bytes = %p, want %p", n, got, p)
			}
		}
	}
}
