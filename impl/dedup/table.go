package dedup

import (
	"encoding/binary"
	"hash/maphash"
	"math/bits"
	"unsafe"
)

// table is Atomic's immutable producer index: an open-addressed hash
// table with linear probing, at most half full, built once and then only
// read. A writer builds a new table and publishes it; readers of the old
// one keep a consistent view. It exists because the admission's lookup is
// half the cost of an accepted message under the Go map (hashing, probing
// its groups, the generic access path): here a lookup is one hash, a
// masked index and, almost always, one comparison.
//
// Names of 8 to 16 bytes (Pulsar's generated producer names, such as
// standalone-0-42, are of this size) are read as two overlapping 64-bit
// words, which cover every byte: their hash is a seeded multiply of the
// two words, and a slot matches when its length and words are the same,
// so neither the runtime's hash nor a byte comparison is called (both
// were a quarter of an accepted admission each). Other names use
// maphash and a string comparison. The seed is random per Atomic, so
// names chosen to collide cannot be precomputed.
type table struct {
	seed   maphash.Seed
	k0, k1 uint64 // the seed of the short names' hash
	mask   uint64
	slots  []tableSlot // a power of two, at least twice the entries
	n      int
}

type tableSlot struct {
	hash   uint64
	w0, w1 uint64 // a short name's words; zero otherwise
	name   string
	p      *producer // nil: an empty slot
}

// newTable returns an empty table sized for n entries.
func newTable(seed maphash.Seed, n int) *table {
	size := 8
	for size < 2*n {
		size *= 2
	}
	return &table{
		seed: seed, mask: uint64(size - 1), slots: make([]tableSlot, size),
		k0: maphash.String(seed, "k0") | 1, k1: maphash.String(seed, "k1"),
	}
}

// shortName reports whether name is read as two words.
func shortName(name string) bool { return len(name) >= 8 && len(name) <= 16 }

// words returns the first and the last eight bytes of a short name.
func words(name string) (w0, w1 uint64) {
	b := unsafe.Slice(unsafe.StringData(name), len(name))
	return binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[len(b)-8:])
}

// shortHash hashes a short name's words and length with the table's seed.
func (t *table) shortHash(w0, w1 uint64, n int) uint64 {
	hi, lo := bits.Mul64(w0^t.k0, w1^t.k1^uint64(n))
	return hi ^ lo
}

// keyOf returns name's hash and, for a short name, its words.
func (t *table) keyOf(name string) (h, w0, w1 uint64) {
	if !shortName(name) {
		return maphash.String(t.seed, name), 0, 0
	}
	w0, w1 = words(name)
	return t.shortHash(w0, w1, len(name)), w0, w1
}

// insert adds name, which the table lacks; a table under construction
// only.
func (t *table) insert(name string, p *producer) {
	h, w0, w1 := t.keyOf(name)
	i := h & t.mask
	for t.slots[i].p != nil {
		i = (i + 1) & t.mask
	}
	t.slots[i] = tableSlot{hash: h, w0: w0, w1: w1, name: name, p: p}
	t.n++
}

// get returns name's producer, or nil.
func (t *table) get(name string) *producer {
	if !shortName(name) {
		return t.getLong(name)
	}
	w0, w1 := words(name)
	for i := t.shortHash(w0, w1, len(name)) & t.mask; ; i = (i + 1) & t.mask {
		s := &t.slots[i]
		if s.p == nil {
			return nil
		}
		if s.w0 == w0 && s.w1 == w1 && len(s.name) == len(name) {
			return s.p
		}
	}
}

// getLong is get of a name that is not short.
func (t *table) getLong(name string) *producer {
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
