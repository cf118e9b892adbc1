package cache

import (
	"math/bits"
	"sync/atomic"

	"github.com/ledgerbench/ledgerbench/impl/internal/skiplist"
)

// Pages hold 64 consecutive entry IDs of one ledger.
const (
	pageShift = 6
	pageSize  = 1 << pageShift
	slotMask  = pageSize - 1
	sealed    = -1
)

type pageKey struct{ ledger, index int64 }

// comparePageKeys orders page keys as positions (ledger, then index).
func comparePageKeys(a, b pageKey) int { return Position{a.ledger, a.index}.Compare(b.ledger, b.index) }

func keyOf(ledger, entry int64) (pageKey, int) {
	return pageKey{ledger, entry >> pageShift}, int(entry & slotMask)
}

// page is 64 slots; count is the slots filled or reserved, or sealed (-1)
// once it drops to zero: a sealed page takes no entry and leaves the map.
type page struct {
	key   pageKey
	slots [pageSize]atomic.Pointer[wrapper]
	count atomic.Int32
	// used has a bit for every slot ever filled: a superset of the filled
	// slots (bits are never cleared; an emptied page is sealed and
	// replaced), so range reads skip the slots that were never used
	// instead of scanning all 64.
	used atomic.Uint64
}

func (p *page) reserveSlot() bool {
	for {
		c := p.count.Load()
		if c == sealed {
			return false
		}
		if p.count.CompareAndSwap(c, c+1) {
			return true
		}
	}
}

// releaseSlot returns true when it sealed the page.
func (p *page) releaseSlot() bool {
	for {
		c := p.count.Load()
		next := c - 1
		if c == 1 {
			next = sealed
		}
		if p.count.CompareAndSwap(c, next) {
			return next == sealed
		}
	}
}

// Paged is the range cache of PR #26821: pages of 64 slots in a
// concurrent skip list keyed by (ledger, entryID >> 6), so an in-order
// insert touches the skip list once per 64 entries.
type Paged struct {
	core
	pages *skiplist.Map[pageKey, *page]
}

// NewPaged returns an empty paged cache evicted through q.
func NewPaged(q *RemovalQueue) *Paged {
	c := &Paged{core: core{queue: q}, pages: skiplist.New[pageKey, *page](comparePageKeys)}
	c.self = c
	return c
}

func (c *Paged) getOrCreatePage(k pageKey) *page {
	if p, ok := c.pages.Get(k); ok {
		return p
	}
	p, _ := c.pages.PutIfAbsent(k, &page{key: k})
	return p
}

type pagedInserter struct {
	c    *Paged
	page *page
}

func (c *Paged) NewInserter() Inserter { return &pagedInserter{c: c} }

func (c *Paged) Put(key Position, e *Entry, length int64) (bool, error) {
	return c.NewInserter().Put(key, e, length)
}

func (in *pagedInserter) Put(key Position, e *Entry, length int64) (bool, error) {
	return in.c.insert(in.c, key, e, length, in.addToPage)
}

func (in *pagedInserter) addToPage(w *wrapper) bool {
	k := w.key.Load()
	pk, slot := keyOf(k.Ledger, k.Entry)
	for {
		cur := in.page
		if cur == nil || cur.key != pk {
			cur = in.c.getOrCreatePage(pk)
			in.page = cur
		}
		if !cur.reserveSlot() {
			in.c.pages.RemoveIf(cur.key, cur) // sealed: help remove it, then retry on a new page
			in.page = nil
			continue
		}
		w.page = cur // removal unlinks through it, without a skip-list lookup; set before the slot publishes w
		if cur.slots[slot].CompareAndSwap(nil, w) {
			cur.used.Or(1 << slot)
			return true
		}
		in.c.releaseSlot(cur) // occupied: a duplicate
		return false
	}
}

func (c *Paged) releaseSlot(p *page) {
	if p.releaseSlot() {
		c.pages.RemoveIf(p.key, p)
	}
}

func (in *pagedInserter) UpdateIfCached(key Position, fn func(*Entry)) bool {
	pk, slot := keyOf(key.Ledger, key.Entry)
	p := in.page
	if p == nil || p.key != pk {
		var ok bool
		if p, ok = in.c.pages.Get(pk); !ok {
			return false
		}
		in.page = p
	}
	return updateCached(p.slots[slot].Load(), key, fn)
}

func (c *Paged) wrapperAt(key Position) *wrapper {
	pk, slot := keyOf(key.Ledger, key.Entry)
	p, ok := c.pages.Get(pk)
	if !ok {
		return nil
	}
	return p.slots[slot].Load()
}

func (c *Paged) Get(key Position) *Entry {
	w := c.wrapperAt(key)
	if w == nil {
		return nil
	}
	if e := w.entryInSlot(key.Ledger, key.Entry); e != nil && e.retainedHere() {
		return e
	}
	return nil
}

// GetRange reads [first, last] in two walks over its pages: the first
// notes each page's part of the range and counts the slots ever used
// there (the pages' bitmaps: a bound on the hits), the second retains
// their entries into a result of that size. A result sized to the span
// instead, as the skip list's read must, cost a sparse read (10 % hits
// over 1000 positions) most of its time in clearing and scanning the
// unused part. A range over more than maxNoted pages is read in one walk
// into a result sized to the span. The walks are written out, not shared
// with forEachWrapper: a walk shared through a closure cost a miss 21
// more instructions (120 → 141), through an iterator value 109 more.
func (c *Paged) GetRange(first, last Position) []*Entry {
	fp, fs := keyOf(first.Ledger, first.Entry)
	it := c.pages.Seek(fp)
	if !it.Valid() { // no page from the first position on: a miss costs one search
		return nil
	}
	le, empty := rangeOf(first, last, true)
	if empty {
		return nil
	}
	lp, ls := keyOf(le.Ledger, le.Entry)
	var noted [maxNoted]pagePart
	n, bound := 0, 0
	for walk := it; walk.Valid(); walk.Next() {
		k := walk.Key()
		if comparePageKeys(k, lp) > 0 {
			break
		}
		if n == maxNoted {
			return c.getRangeOnce(it, fp, fs, lp, ls, first, last)
		}
		part := pagePart{p: walk.Value(), from: 0, to: slotMask}
		if k == fp {
			part.from = fs
		}
		if k == lp {
			part.to = ls
		}
		if used := bits.OnesCount64(part.p.usedIn(part.from, part.to)); used > 0 {
			noted[n] = part
			n++
			bound += used
		}
	}
	if bound == 0 {
		return nil
	}
	out := make([]*Entry, 0, bound)
	for _, part := range noted[:n] {
		out = part.p.retainSlots(part.from, part.to, first, last, out)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// maxNoted is how many pages GetRange notes for its second walk: 32 pages
// are ranges of up to 2048 positions.
const maxNoted = 32

// pagePart is a page's slots from..to within a range.
type pagePart struct {
	p        *page
	from, to int
}

// getRangeOnce is GetRange in one walk from it, for ranges over more than
// maxNoted pages: the result is sized to the span at the first hit.
func (c *Paged) getRangeOnce(it skiplist.Iter[pageKey, *page], fp pageKey, fs int, lp pageKey, ls int, first, last Position) []*Entry {
	var out []*Entry
	for ; it.Valid(); it.Next() {
		k := it.Key()
		if comparePageKeys(k, lp) > 0 {
			break
		}
		from, to := 0, slotMask
		if k == fp {
			from = fs
		}
		if k == lp {
			to = ls
		}
		out = it.Value().retainSlots(from, to, first, last, out)
	}
	return out
}

// retainSlots appends to out the entries of the slots from..to, retained,
// in slot order. (Loading a page's entries first and retaining them in a
// second pass, to overlap their cache misses, measured 14–17 % slower:
// more instructions, and no misses to overlap in entries allocated in
// order.)
func (p *page) retainSlots(from, to int, first, last Position, out []*Entry) []*Entry {
	base := p.key.index << pageShift
	for used := p.usedIn(from, to); used != 0; used &= used - 1 {
		s := bits.TrailingZeros64(used)
		w := p.slots[s].Load()
		if w == nil {
			continue
		}
		if e := w.entryInSlot(p.key.ledger, base+int64(s)); e != nil && e.retainedHere() {
			if out == nil {
				out = rangeResult(first, last, base+int64(s))
			}
			out = append(out, e)
		}
	}
	return out
}

// usedIn is the bitmap of the slots from..to ever used.
func (p *page) usedIn(from, to int) uint64 {
	used := p.used.Load() >> uint(from) << uint(from)
	if to < slotMask {
		used &= 1<<uint(to+1) - 1
	}
	return used
}

func (c *Paged) Exists(key Position) bool { return c.wrapperAt(key) != nil }

// forEachWrapper visits the filled slots of [first, last] in order.
func (c *Paged) forEachWrapper(first, last Position, lastInclusive bool, visit func(w *wrapper, ledger, entry int64)) {
	fp, fs := keyOf(first.Ledger, first.Entry)
	it := c.pages.Seek(fp)
	if !it.Valid() { // no page from the first position on: a miss costs one search
		return
	}
	le, empty := rangeOf(first, last, lastInclusive)
	if empty {
		return
	}
	lp, ls := keyOf(le.Ledger, le.Entry)
	for ; it.Valid(); it.Next() {
		k := it.Key()
		if comparePageKeys(k, lp) > 0 {
			return
		}
		from, to := 0, slotMask
		if k == fp {
			from = fs
		}
		if k == lp {
			to = ls
		}
		it.Value().visitSlots(from, to, visit)
	}
}

// visitSlots visits the filled slots from..to in order. It looks only at
// the slots ever used; a page whose slots were all used is scanned
// straight through.
func (p *page) visitSlots(from, to int, visit func(w *wrapper, ledger, entry int64)) {
	base := p.key.index << pageShift
	used := p.usedIn(from, to)
	if bits.OnesCount64(used) == to-from+1 {
		for s := from; s <= to; s++ {
			if w := p.slots[s].Load(); w != nil {
				visit(w, p.key.ledger, base+int64(s))
			}
		}
		return
	}
	for used != 0 {
		s := bits.TrailingZeros64(used)
		used &= used - 1
		if w := p.slots[s].Load(); w != nil {
			visit(w, p.key.ledger, base+int64(s))
		}
	}
}

func (c *Paged) Clear() (int, int64) {
	var ctr counters
	for found := true; found; {
		found = false
		c.pages.All(func(k pageKey, p *page) bool {
			base := k.index << pageShift
			for s := range p.slots {
				if w := p.slots[s].Load(); w != nil {
					found = true
					removeLocked(c, w, k.ledger, base+int64(s), &ctr)
				}
			}
			return true
		})
	}
	c.size.Add(-ctr.bytes)
	return ctr.entries, ctr.bytes
}

func (c *Paged) removeEntry(key *Position, value *Entry, w *wrapper, ctr *counters, updateSize bool) bool {
	if key != nil && w.page != nil {
		_, slot := keyOf(key.Ledger, key.Entry)
		if p := w.page; p.slots[slot].CompareAndSwap(w, nil) {
			c.releaseSlot(p)
		}
	}
	return c.finishRemove(key, value, w, ctr, updateSize)
}

func (c *Paged) NumberOfEntries() int {
	n := 0
	c.pages.All(func(_ pageKey, p *page) bool {
		n += int(max(p.count.Load(), 0))
		return true
	})
	return n
}

func (c *Paged) NumberOfPages() int { return c.pages.Len() }
