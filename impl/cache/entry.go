package cache

import (
	"errors"
	"fmt"
	"sync/atomic"
	"unsafe"
)

// Position is a (ledger, entry) position; positions order by ledger, then
// entry.
type Position struct {
	Ledger, Entry int64
}

// Compare orders p and (ledger, entry).
func (p Position) Compare(ledger, entry int64) int {
	switch {
	case p.Ledger < ledger:
		return -1
	case p.Ledger > ledger:
		return 1
	case p.Entry < entry:
		return -1
	case p.Entry > entry:
		return 1
	}
	return 0
}

// ComparePositions orders two positions.
func ComparePositions(a, b Position) int { return a.Compare(b.Ledger, b.Entry) }

// ErrReleased is returned by Retain on an entry whose count reached zero:
// a released entry is never resurrected.
var ErrReleased = errors.New("entry already released")

// ReadCountHandler counts the reads still expected of an entry (PIP-430).
// MarkRead may take it below zero.
type ReadCountHandler struct{ expected atomic.Int32 }

// NewReadCountHandler returns a handler expecting n reads, or nil when
// n <= 0.
func NewReadCountHandler(n int32) *ReadCountHandler {
	if n <= 0 {
		return nil
	}
	h := &ReadCountHandler{}
	h.expected.Store(n)
	return h
}

func (h *ReadCountHandler) ExpectedReadCount() int32    { return h.expected.Load() }
func (h *ReadCountHandler) IncrementExpectedReadCount() { h.expected.Add(1) }
func (h *ReadCountHandler) MarkRead()                   { h.expected.Add(-1) }
func (h *ReadCountHandler) HasExpectedReads() bool      { return h.expected.Load() >= 1 }

// Entry is a reference-counted entry: it starts with one reference;
// Release at zero deallocates it exactly once (running the handler's
// MarkRead and the deallocation hook), and from then on its position reads
// as (-1, -1).
type Entry struct {
	// ledger and entry are its position, set by NewEntry and never
	// changed: an entry is never reused for another position (the
	// garbage collector frees it), so they need no atomic access. The
	// cache's reads check a released entry by its count; flagGone is set
	// once the deallocation ran (the hook still sees the position), and
	// from then on LedgerID and EntryID read -1.
	//
	// The fields are ordered, and the two flags share a word, so that an
	// entry takes 64 bytes, one cache line of the allocator's 64-byte
	// class, with the position and the count (all a range read touches)
	// side by side; TestEntryIsOneCacheLine keeps it so.
	ledger, entry int64
	refCnt        atomic.Int32 // see "The reference count" below
	flags         atomic.Uint32
	data          []byte
	handler       atomic.Pointer[ReadCountHandler]
	onDeallocate  func(*Entry)
}

// An entry's flags.
const (
	flagGone uint32 = 1 << iota // deallocated
	// flagNoReadOnRelease: releasing the last reference is not a read
	// (the cache's own copies, and entries the writer hands to the cache).
	flagNoReadOnRelease
)

// NewEntry returns an entry with one reference, expecting expectedReads
// reads (none when ≤ 0). onDeallocate, when not nil, runs once when the
// last reference is released.
func NewEntry(ledger, entry int64, data []byte, expectedReads int32, onDeallocate func(*Entry)) *Entry {
	// refCnt's zero value is one reference: a new entry needs no atomic
	// store (each is a locked instruction, and an insert makes an entry).
	e := &Entry{ledger: ledger, entry: entry, data: data, onDeallocate: onDeallocate}
	if h := NewReadCountHandler(expectedReads); h != nil {
		initPointer(&e.handler, h)
	}
	return e
}

// LedgerID and EntryID are the entry's position (-1 once deallocated).
func (e *Entry) LedgerID() int64 {
	if e.flags.Load()&flagGone != 0 {
		return -1
	}
	return e.ledger
}

func (e *Entry) EntryID() int64 {
	if e.flags.Load()&flagGone != 0 {
		return -1
	}
	return e.entry
}

// Data is the entry's payload; Len its length.
func (e *Entry) Data() []byte { return e.data }
func (e *Entry) Len() int     { return len(e.data) }

// The reference count: refCnt holds 2(n-1) for n references, so its zero
// value is the one reference a new entry has, and an odd value marks the
// entry released for good. A retain is then a single atomic add of 2 (no
// compare-and-swap loop): on an odd value it stays odd, so a released
// entry is never resurrected. The last release moves 0 to -1 with a
// compare-and-swap, so it cannot race with a retain into a count of zero.

// RefCnt is the current reference count (0 once released).
func (e *Entry) RefCnt() int32 {
	r := e.refCnt.Load()
	if r&1 != 0 {
		return 0
	}
	return r>>1 + 1
}

// Retain adds a reference; it fails on a released entry.
func (e *Entry) Retain() error {
	if e.refCnt.Add(2)&1 != 0 {
		return ErrReleased
	}
	return nil
}

// Release drops a reference and reports whether it was the last; a
// release beyond zero is an error.
func (e *Entry) Release() (bool, error) {
	for {
		r := e.refCnt.Load()
		if r&1 != 0 {
			return false, e.overReleased()
		}
		next := r - 2
		if r == 0 {
			next = -1 // released
		}
		if e.refCnt.CompareAndSwap(r, next) {
			if r == 0 {
				e.deallocate()
				return true, nil
			}
			return false, nil
		}
	}
}

// overReleased is the error of a release beyond zero, out of Release's
// common path.
//
//go:noinline
func (e *Entry) overReleased() error {
	return fmt.Errorf("release of %w (refCnt %d)", ErrReleased, e.RefCnt())
}

func (e *Entry) deallocate() {
	if h := e.handler.Load(); h != nil && e.flags.Load()&flagNoReadOnRelease == 0 {
		h.MarkRead()
	}
	if e.onDeallocate != nil {
		e.onDeallocate(e)
	}
	if e.handler.Load() != nil { // a store is a locked instruction: only when needed
		e.handler.Store(nil)
	}
	e.flags.Or(flagGone)
}

// MatchesPosition reports whether the entry is at key.
func (e *Entry) MatchesPosition(key Position) bool {
	return e.flags.Load()&flagGone == 0 && key.Ledger == e.ledger && key.Entry == e.entry
}

// ReadCountHandler returns the entry's handler (nil without expected
// reads); UpdateReadCountHandler makes the entry take over h (the cached
// entry adopts the newest read's handler).
func (e *Entry) ReadCountHandler() *ReadCountHandler        { return e.handler.Load() }
func (e *Entry) UpdateReadCountHandler(h *ReadCountHandler) { e.handler.Store(h) }

// HasExpectedReads reports whether reads of the entry are still expected.
func (e *Entry) HasExpectedReads() bool {
	h := e.handler.Load()
	return h != nil && h.HasExpectedReads()
}

// SetDecreaseReadCountOnRelease says whether releasing the last reference
// counts as a read (the default); call it before sharing the entry.
func (e *Entry) SetDecreaseReadCountOnRelease(v bool) {
	f := e.flags.Load() &^ flagNoReadOnRelease
	if !v {
		f |= flagNoReadOnRelease
	}
	initFlags(&e.flags, f)
}

// share returns a new entry with one reference at e's position sharing
// e's data and read-count handler (a dispatch copy, or the cache's copy
// when asRead is false).
func (e *Entry) share(asRead bool) *Entry {
	c := NewEntry(e.LedgerID(), e.EntryID(), e.data, 0, nil)
	initPointer(&c.handler, e.handler.Load())
	if !asRead {
		initFlags(&c.flags, flagNoReadOnRelease)
	}
	return c
}

// initFlags sets the flags of an entry no other goroutine can see yet with
// a plain store, as initPointer sets its handler: Store (or Or) is a
// locked instruction, and the entry cache makes its copy with a flag on
// every insert, as a writer that hands its entries to the cache sets one
// on each. It relies on atomic.Uint32 holding nothing but its value,
// which TestInitPointer checks.
func initFlags(p *atomic.Uint32, v uint32) {
	*(*uint32)(unsafe.Pointer(p)) = v
}

// DispatchCopy returns a new entry with one reference at e's position,
// sharing e's data and read-count handler: what a read hands to a
// consumer (releasing it counts as a read).
func (e *Entry) DispatchCopy() *Entry { return e.share(true) }
