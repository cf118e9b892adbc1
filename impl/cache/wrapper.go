package cache

import (
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"
)

// owner is the range cache a wrapper belongs to.
type owner interface {
	// removeEntry removes the wrapper's entry; the caller holds the
	// wrapper's write lock.
	removeEntry(key *Position, value *Entry, w *wrapper, c *counters, updateSize bool) bool
}

// wrapper holds one cached entry: the cache's slot (or skip-list node)
// points at it, and so does the removal queue. Its key and value are set
// before it is published and change after only under its write lock;
// readers take them optimistically with a seqlock: an even version is
// stable, an odd one is being written.
type wrapper struct {
	version atomic.Uint32
	// key points at pos while the wrapper holds an entry, and is nil
	// before and after. A wrapper holds one position in its life (each
	// insert makes a new one), so pos is written once, before the wrapper
	// is published, and the pointer needs no allocation of its own.
	key   atomic.Pointer[Position] // identity matters: markRemoved compares instances
	pos   Position
	value atomic.Pointer[Entry]
	// cache, page, size and stamp are written before the wrapper is
	// published (insert), then only under the write lock.
	cache   owner
	page    *page // the paged cache's page holding the wrapper
	size    int64
	stamp   int64 // the queue's clock at insertion or requeue
	requeue int
	// accessed is set by readers (only when unset, to spare the cache
	// line) and cleared by a requeue.
	accessed atomic.Bool
}

var clockBase = time.Now()

// initPointer sets an atomic pointer of a wrapper or entry no other
// goroutine can see yet with a plain store: Store is a locked instruction
// (two of them were 10 % of an insert's profile here), and none is needed
// before the value is published, as the publishing compare-and-swap (or
// store) orders these stores before any load that finds it. It relies
// on atomic.Pointer holding nothing but its pointer, which
// TestInitPointer checks.
func initPointer[T any](p *atomic.Pointer[T], v *T) {
	*(**T)(unsafe.Pointer(p)) = v
}

func nanotime() int64 { return int64(time.Since(clockBase)) }

func (w *wrapper) lock() {
	for {
		v := w.version.Load()
		if v&1 == 0 && w.version.CompareAndSwap(v, v+1) {
			return
		}
		runtime.Gosched()
	}
}

func (w *wrapper) unlock() { w.version.Add(1) }

// withWriteLock runs f under the write lock.
func (w *wrapper) withWriteLock(f func(*wrapper) bool) bool {
	w.lock()
	defer w.unlock()
	return f(w)
}

// readSlow returns key and value as one consistent pair, waiting out a
// writer.
func (w *wrapper) readSlow() (*Position, *Entry) {
	for {
		v1 := w.version.Load()
		if v1&1 == 1 {
			runtime.Gosched()
			continue
		}
		k, e := w.key.Load(), w.value.Load()
		if w.version.Load() == v1 {
			return k, e
		}
	}
}

// markRemoved clears the wrapper if it still holds exactly these key and
// value instances, and returns its size (-1 when it did not).
func (w *wrapper) markRemoved(key *Position, value *Entry) int64 {
	if w.key.Load() != key || w.value.Load() != value {
		return -1
	}
	size := w.size
	w.cache, w.page = nil, nil
	w.key.Store(nil)
	w.value.Store(nil)
	w.size, w.stamp, w.requeue = 0, 0, 0
	return size
}

func (w *wrapper) markRequeued(now int64) {
	w.stamp = now
	w.accessed.Store(false)
	w.requeue++
}

// counters count removals: (entries, bytes).
type counters struct {
	entries int
	bytes   int64
}

func (c *counters) removed(size int64) {
	c.entries++
	c.bytes += size
}

// retained returns the wrapper's entry, retained (the caller releases
// it), if the wrapper still holds (ledger, entry) and the cache still
// holds a reference to the entry; a read marks the wrapper accessed. It is
// one function, not a read, a check and a retain, because a range read
// calls it for every cached position.
func (w *wrapper) retained(ledger, entry int64, markAccessed bool) *Entry {
	// The seqlock read: key and value as one consistent pair.
	v := w.version.Load()
	k, e := w.key.Load(), w.value.Load()
	if v&1 != 0 || w.version.Load() != v {
		k, e = w.readSlow()
	}
	if k == nil || k.Ledger != ledger || k.Entry != entry || e == nil {
		return nil
	}
	if markAccessed && !w.accessed.Load() {
		w.accessed.Store(true)
	}
	// Retain, and read the count it left (see Entry.Retain): odd is
	// released (the add left it so, and took nothing).
	if e.refCnt.Add(2)&1 != 0 {
		return nil
	}
	if e.ledger == ledger && e.entry == entry {
		return e
	}
	e.Release()
	return nil
}

// entryInSlot is retained's read for a wrapper read from the paged
// cache's slot of (ledger, entry): the entry it holds, if it is at that
// position, marked accessed, not yet retained. The slot names the
// position, and a wrapper holds one position in its life, set before it
// is published, so its key needs no check and its value no seqlock read:
// the value is the entry from the insert until the removal
// clears it, and the removal unlinks the wrapper from its slot first. A
// wrapper loaded from its slot held its entry at that instant, which is
// where such a read takes effect; retainedHere then keeps the entry only
// if it was not released meanwhile.
func (w *wrapper) entryInSlot(ledger, entry int64) *Entry {
	e := w.value.Load()
	if e == nil || e.ledger != ledger || e.entry != entry {
		return nil
	}
	if !w.accessed.Load() {
		w.accessed.Store(true)
	}
	return e
}

// retainedHere is retained's retain: it retains e and reports whether it
// did, which it does only while someone (the cache, or another reader)
// still holds a reference: a released entry's count is odd and the add
// leaves it odd, taking nothing. An entry's position never changes, so
// the position entryInSlot checked holds. It is retained's retain again
// rather than called from it: a call per entry in the skip list's read
// would change the baseline.
func (e *Entry) retainedHere() bool {
	return e.refCnt.Add(2)&1 == 0
}

// updateCached is Inserter.UpdateIfCached on the wrapper found at key (nil:
// none): fn gets the entry, retained for the call, if it is still there;
// it does not count as an access.
func updateCached(w *wrapper, key Position, fn func(*Entry)) bool {
	if w == nil {
		return false
	}
	v := w.retained(key.Ledger, key.Entry, false)
	if v == nil {
		return false
	}
	defer v.Release()
	fn(v)
	return true
}
