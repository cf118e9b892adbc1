package cache

import (
	"errors"
	"fmt"
	"sync/atomic"
)

// RangeCache caches entries by position. Both implementations share
// everything but the index: the wrappers, the removal queue, reference
// counting and size accounting.
type RangeCache interface {
	// NewInserter returns an inserter for one goroutine (it remembers its
	// page in the paged cache).
	NewInserter() Inserter
	// Put is NewInserter().Put.
	Put(key Position, e *Entry, length int64) (bool, error)
	// Get returns the entry at key, retained (the caller releases it).
	Get(key Position) *Entry
	// Exists reports whether key has a cached entry.
	Exists(key Position) bool
	// GetRange returns the entries in [first, last], retained, ascending.
	GetRange(first, last Position) []*Entry
	// ForEachInRange calls fn with each entry of [first, last], retained
	// only during the call.
	ForEachInRange(first, last Position, fn func(*Entry))
	// RemoveRange removes the entries in [first, last] (last exclusive
	// unless lastInclusive), returning (entries, bytes) removed.
	RemoveRange(first, last Position, lastInclusive bool) (int, int64)
	// Clear removes every entry.
	Clear() (int, int64)
	// Size is the bytes cached; NumberOfEntries counts entries (and, in
	// the paged cache, reserved slots); NumberOfPages counts pages (0 for
	// the skip list).
	Size() int64
	NumberOfEntries() int
	NumberOfPages() int
}

// Inserter inserts entries; one goroutine uses it at a time.
type Inserter interface {
	// Put caches e at key. On true the cache owns the caller's reference;
	// on false (key already cached) the caller still owns it. An entry
	// that is not at key, or is released, is an error.
	Put(key Position, e *Entry, length int64) (bool, error)
	// UpdateIfCached calls fn with the cached entry at key, retained
	// during the call, without marking it accessed; false when not cached.
	UpdateIfCached(key Position, fn func(*Entry)) bool
}

// ErrPosition is returned by Put for an entry that is not at its key.
var ErrPosition = errors.New("entry position does not match its key")

// core is what the implementations share. self is the implementation
// (the owner its wrappers point to).
type core struct {
	queue *RemovalQueue
	size  atomic.Int64
	self  owner
}

// each visits the filled positions of a range in order: the only part of
// a range read that differs between the implementations. It calls them
// directly rather than through an interface or a function value, so the
// visitor does not escape and a range read allocates only its result.
func (c *core) each(first, last Position, lastInclusive bool, visit func(w *wrapper, ledger, entry int64)) {
	switch x := c.self.(type) {
	case *Paged:
		x.forEachWrapper(first, last, lastInclusive, visit)
	case *SkipList:
		x.forEachWrapper(first, last, lastInclusive, visit)
	default:
		panic(fmt.Sprintf("cache: unknown range cache %T", c.self))
	}
}

func (c *core) GetRange(first, last Position) []*Entry {
	var out []*Entry
	c.each(first, last, true, func(w *wrapper, l, e int64) {
		if v := w.retained(l, e, true); v != nil {
			if out == nil {
				out = rangeResult(first, last, e)
			}
			out = append(out, v)
		}
	})
	return out
}

// rangeResult is the result of a range read of [first, last] whose first
// hit is at entry e.
func rangeResult(first, last Position, e int64) []*Entry {
	if first.Ledger != last.Ledger {
		return nil
	}
	// One ledger: at most the span, which reads are sized to. last.Entry
	// ≥ e, so the difference fits in a uint64 at every extreme of int64
	// (it wraps to 0 only for the whole int64 range, which the cap
	// covers).
	span := uint64(last.Entry-e) + 1
	return make([]*Entry, 0, min(span-1, 1023)+1)
}

func (c *core) ForEachInRange(first, last Position, fn func(*Entry)) {
	c.each(first, last, true, func(w *wrapper, l, e int64) {
		if v := w.retained(l, e, true); v != nil {
			func() {
				defer v.Release()
				fn(v)
			}()
		}
	})
}

func (c *core) RemoveRange(first, last Position, lastInclusive bool) (int, int64) {
	var ctr counters
	c.each(first, last, lastInclusive, func(w *wrapper, l, e int64) { removeLocked(c.self, w, l, e, &ctr) })
	c.size.Add(-ctr.bytes)
	return ctr.entries, ctr.bytes
}

// insert counts e's size and links it at key with link, which makes its
// wrapper (with fill), publishes it and returns it, or returns nil for a
// duplicate; on success it queues the wrapper. The caller's reference
// keeps e alive until link (on success it becomes the cache's, which
// only a removal releases, and insert does not touch e after link), so
// insert takes none of its own; it only refuses an entry already
// released.
func (c *core) insert(key Position, e *Entry, length int64, link func() *wrapper) (bool, error) {
	if e.refCnt.Load()&1 != 0 {
		return false, fmt.Errorf("put at %v: %w", key, ErrReleased)
	}
	if !e.MatchesPosition(key) {
		return false, fmt.Errorf("put at %v of the entry at (%d, %d): %w", key, e.LedgerID(), e.EntryID(), ErrPosition)
	}
	// Counted before it can be removed, so the size is never below what
	// the cache holds.
	c.size.Add(length)
	w := link()
	if w == nil {
		c.size.Add(-length)
		return false, nil // a duplicate
	}
	c.queue.add(w)
	return true, nil
}

// fill makes w, which no other goroutine can see yet, the wrapper of e at
// key. No lock: no reader or remover can see the wrapper before link's
// atomic store publishes it whole, and insert writes nothing of it
// after. A removal that finds it at once (before it is queued) removes
// it as any other, and the queue drops a removed wrapper.
func (c *core) fill(w *wrapper, key Position, e *Entry, length int64) {
	w.pos, w.cache, w.size, w.stamp = key, c.self, length, c.queue.Now()
	initPointer(&w.key, &w.pos)
	initPointer(&w.value, e)
}

// finishRemove releases the cache's reference to value once the wrapper
// was unlinked; the caller holds the wrapper's write lock. The wrapper
// holds value, and with it the cache's reference, until markRemoved
// clears it under that lock, so value stays alive without a reference of
// removal's own; an entry already released (a caller released the
// cache's reference too) is left alone.
func (c *core) finishRemove(key *Position, value *Entry, w *wrapper, ctr *counters, updateSize bool) bool {
	if value == nil || value.refCnt.Load()&1 != 0 {
		return false
	}
	if key == nil || !value.MatchesPosition(*key) {
		return false
	}
	removed := w.markRemoved(key, value)
	if removed < 0 {
		return false
	}
	ctr.removed(removed)
	if updateSize {
		c.size.Add(-removed)
	}
	value.Release() // the cache's reference
	return true
}

// removeLocked removes w's entry if w still holds (ledger, entry) for o.
func removeLocked(o owner, w *wrapper, ledger, entry int64, ctr *counters) bool {
	return w.withWriteLock(func(x *wrapper) bool {
		k := x.key.Load()
		if k == nil || x.cache != o || k.Compare(ledger, entry) != 0 {
			return false
		}
		return o.removeEntry(k, x.value.Load(), x, ctr, false)
	})
}

func (c *core) Size() int64 { return c.size.Load() }

// rangeOf normalizes a range: it returns the last entry included and
// whether the range is empty.
func rangeOf(first, last Position, lastInclusive bool) (Position, bool) {
	le := last
	if !lastInclusive {
		le.Entry--
	}
	return le, first.Ledger > le.Ledger || (first.Ledger == le.Ledger && first.Entry > le.Entry)
}
