package cache

import (
	"math/bits"
	"runtime"
	"sync/atomic"

	"github.com/ledgerbench/ledgerbench/impl/internal/skiplist"
)

// Pages hold 64 consecutive entry IDs of one ledger.
const (
	pageShift = 6
	pageSize  = 1 << pageShift
	slotMask  = pageSize - 1
)

type pageKey struct{ ledger, index int64 }

// comparePageKeys orders page keys as positions (ledger, then index).
func comparePageKeys(a, b pageKey) int { return Position{a.ledger, a.index}.Compare(b.ledger, b.index) }

func keyOf(ledger, entry int64) (pageKey, int) {
	return pageKey{ledger, entry >> pageShift}, int(entry & slotMask)
}

// page is 64 slots. occ has a bit for every slot reserved or filled: an
// insert reserves its slot's bit, then stores its wrapper; a removal
// clears the slot, then the bit. A page is made with its first slot
// filled, so occ is zero only once its last slot was freed: the page is
// then sealed for good, takes no entry and leaves the map. Range reads
// visit the slots whose bits are set instead of all 64.
type page struct {
	key   pageKey
	slots [pageSize]atomic.Pointer[wrapper]
	occ   atomic.Uint64
}

// reserve sets slot's bit and reports whether it did; when it did not,
// sealed says whether the page was sealed (or else the slot was taken).
// With the store that fills the slot, an insert takes two locked
// instructions of the page, where a count of the slots taken and a bitmap
// of those ever used took three.
func (p *page) reserve(slot int) (ok, sealed bool) {
	bit := uint64(1) << slot
	for {
		o := p.occ.Load()
		if o == 0 {
			return false, true
		}
		if o&bit != 0 {
			return false, false
		}
		if p.occ.CompareAndSwap(o, o|bit) {
			return true, false
		}
	}
}

// free clears slot's bit, whose slot the caller emptied, and reports
// whether that sealed the page.
func (p *page) free(slot int) bool {
	bit := uint64(1) << slot
	return p.occ.And(^bit) == bit
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

// pageFor returns the page of k, or makes it with e's wrapper in slot and
// returns that wrapper too, published.
func (c *Paged) pageFor(k pageKey, slot int, key Position, e *Entry, length int64) (*page, *wrapper) {
	if p, ok := c.pages.Get(k); ok {
		return p, nil
	}
	p := &page{key: k}
	w := c.place(p, slot, key, e, length)
	p.occ.Store(1 << slot)
	if got, loaded := c.pages.PutIfAbsent(k, p); loaded {
		return got, nil // p and w were never published
	}
	return p, w
}

// place makes e's wrapper and stores it in p's slot, which the caller
// reserved (or p is not published yet).
func (c *Paged) place(p *page, slot int, key Position, e *Entry, length int64) *wrapper {
	w := new(wrapper)
	c.fill(w, key, e, length)
	w.page = p // removal unlinks through it, without a skip-list lookup; set before the slot publishes w
	p.slots[slot].Store(w)
	return w
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
	return in.c.insert(key, e, length, func() *wrapper { return in.addToPage(key, e, length) })
}

// addToPage reserves key's slot, fills its wrapper and publishes it; nil
// for a duplicate, which costs neither a wrapper nor a clock reading.
func (in *pagedInserter) addToPage(key Position, e *Entry, length int64) *wrapper {
	pk, slot := keyOf(key.Ledger, key.Entry)
	for {
		cur := in.page
		if cur == nil || cur.key != pk {
			p, w := in.c.pageFor(pk, slot, key, e, length)
			in.page = p
			if w != nil {
				return w
			}
			cur = p
		}
		ok, sealed := cur.reserve(slot)
		switch {
		case ok:
			return in.c.place(cur, slot, key, e, length)
		case sealed:
			in.c.pages.RemoveIf(cur.key, cur) // help remove it, then retry on a new page
			in.page = nil
		case cur.slots[slot].Load() != nil:
			return nil // a duplicate
		default:
			// Reserved by an insert about to store its wrapper, or
			// emptied by a removal about to clear the bit: a moment.
			runtime.Gosched()
		}
	}
}

// freeSlot clears slot's bit of p, whose slot was emptied, and removes p
// from the map if that sealed it.
func (c *Paged) freeSlot(p *page, slot int) {
	if p.free(slot) {
		c.pages.RemoveIf(p.key, p)
	}
}

func (in *pagedInserter) UpdateIfCached(key Position, fn func(*Entry)) bool {
	pk, slot := keyOf(key.Ledger, key.Entry)
	p := in.page
	if p == nil || p.key != pk || p.occ.Load() == 0 { // a sealed page may have been replaced
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
// notes each page's part of the range and counts the slots taken there
// (the pages' bitmaps: a bound on the hits), the second retains
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
		if taken := bits.OnesCount64(part.p.occIn(part.from, part.to)); taken > 0 {
			noted[n] = part
			n++
			bound += taken
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
	for occ := p.occIn(from, to); occ != 0; occ &= occ - 1 {
		s := bits.TrailingZeros64(occ)
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

// occIn is the bitmap of the slots from..to reserved or filled.
func (p *page) occIn(from, to int) uint64 {
	occ := p.occ.Load() >> uint(from) << uint(from)
	if to < slotMask {
		occ &= 1<<uint(to+1) - 1
	}
	return occ
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
// the slots whose bits are set; a page whose slots are all taken is
// scanned straight through.
func (p *page) visitSlots(from, to int, visit func(w *wrapper, ledger, entry int64)) {
	base := p.key.index << pageShift
	occ := p.occIn(from, to)
	if bits.OnesCount64(occ) == to-from+1 {
		for s := from; s <= to; s++ {
			if w := p.slots[s].Load(); w != nil {
				visit(w, p.key.ledger, base+int64(s))
			}
		}
		return
	}
	for occ != 0 {
		s := bits.TrailingZeros64(occ)
		occ &= occ - 1
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
			c.freeSlot(p, slot)
		}
	}
	return c.finishRemove(key, value, w, ctr, updateSize)
}

func (c *Paged) NumberOfEntries() int {
	n := 0
	c.pages.All(func(_ pageKey, p *page) bool {
		n += bits.OnesCount64(p.occ.Load())
		return true
	})
	return n
}

func (c *Paged) NumberOfPages() int { return c.pages.Len() }
