package dedup

import "hash/maphash"

// table is Atomic's immutable producer index: an open-addressed hash
// table with linear probing, at most half full, built once and then only
// read. A writer builds a new table and publishes it; readers of the old
// one keep a consistent view. It exists because the admission's lookup is
// half the cost of an accepted message under the Go map (hashing, probing
// its groups, the generic access path): here a lookup is one hash, a
// masked index and, almost always, one comparison of the stored hash and
// the name.
type table struct {
	seed  maphash.Seed
	mask  uint64
	slots []tableSlot // a power of two, at least twice the entries
	n     int
}

type tableSlot struct {
	hash uint64
	name string
	p    *producer // nil: an empty slot
}

// newTable returns an empty table sized for n entries.
func newTable(seed maphash.Seed, n int) *table {
	size := 8
	for size < 2*n {
		size *= 2
	}
	return &table{seed: seed, mask: uint64(size - 1), slots: make([]tableSlot, size)}
}

// insert adds name, which the table lacks; a table under construction
// only.
func (t *table) insert(name string, p *producer) {
	h := maphash.String(t.seed, name)
	i := h & t.mask
	for t.slots[i].p != nil {
		i = (i + 1) & t.mask
	}
	t.slots[i] = tableSlot{hash: h, name: name, p: p}
	t.n++
}

// get returns name's producer, or nil.
func (t *table) get(name string) *producer {
	h := maphash.String(t.seed, name)
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		s := &t.slots[i]
		if s.p == nil {
			return nil
		}
		if s.hash == h && s.name == name {
			return s.p
		}
	}
}

// all yields every entry, in slot order.
func (t *table) all(yield func(string, *producer) bool) {
	for i := range t.slots {
		if s := &t.slots[i]; s.p != nil && !yield(s.name, s.p) {
			return
		}
	}
}

// with returns a copy of t with name added.
func (t *table) with(name string, p *producer) *table {
	next := newTable(t.seed, t.n+1)
	for k, q := range t.all {
		next.insert(k, q)
	}
	next.insert(name, p)
	return next
}

// without returns a copy of t lacking name.
func (t *table) without(name string) *table {
	next := newTable(t.seed, t.n)
	for k, q := range t.all {
		if k != name {
			next.insert(k, q)
		}
	}
	return next
}
