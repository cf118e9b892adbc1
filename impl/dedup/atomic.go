package dedup

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
)

// producer is the per-producer state of Atomic: created with its first
// sequence, then only compare-and-swapped. Every int64 is a valid
// sequence (no value is reserved as a marker): a producer exists in the
// map only once it has one, and deleted says it has been removed.
type producer struct {
	pushed  atomic.Int64
	deleted atomic.Bool
	_       [52]byte // one cache line per producer
}

// Atomic creates each producer's state once and then admits with a
// compare-and-swap on its atomic int64. Lookups read an immutable table
// (see table) through an atomic pointer (copy on write when a producer is added or
// removed, which is rare), so an accepted message takes no lock and
// allocates nothing, and callers sharing a producer only retry when the
// pushed sequence moved under them.
type Atomic struct {
	mu    sync.Mutex // serializes writers of the table
	state atomic.Pointer[table]
}

// NewAtomic returns an empty Atomic admission map.
func NewAtomic() *Atomic {
	a := &Atomic{}
	a.state.Store(newTable(maphash.MakeSeed(), 0))
	return a
}

func (a *Atomic) lookup(name string) *producer { return a.state.Load().get(name) }

// getOrCreate returns name's live state, or creates it holding seq under
// the writers' lock and reports created. A deleted state is only ever seen
// while Delete, which holds the lock, swaps the map; waiting for the lock
// waits that out.
func (a *Atomic) getOrCreate(name string, seq int64) (p *producer, created bool) {
	if p := a.lookup(name); p != nil && !p.deleted.Load() {
		return p, false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	old := a.state.Load()
	if p := old.get(name); p != nil && !p.deleted.Load() {
		return p, false
	}
	p = &producer{}
	p.pushed.Store(seq)
	a.state.Store(old.with(name, p))
	return p, true
}

// Admit accepts seq when it is above the producer's pushed sequence (or
// the producer has none) and then records highest. A compare-and-swap
// that lands on a state Delete is removing linearizes before the Delete.
func (a *Atomic) Admit(name string, seq, highest int64) (bool, int64) {
	p := a.lookup(name)
	for {
		if p == nil { // a deleted p leaves the loop below at once and comes back nil
			var created bool
			if p, created = a.getOrCreate(name, highest); created {
				return true, 0
			}
		}
		for !p.deleted.Load() {
			cur := p.pushed.Load()
			if seq <= cur {
				return false, cur
			}
			if p.pushed.CompareAndSwap(cur, highest) {
				return true, 0
			}
		}
		p = nil // deleted under us: look it up again
	}
}

func (a *Atomic) Pushed(name string) (int64, bool) {
	p := a.lookup(name)
	if p == nil || p.deleted.Load() {
		return 0, false
	}
	return p.pushed.Load(), true
}

func (a *Atomic) Set(name string, seq int64) {
	for {
		p, created := a.getOrCreate(name, seq)
		if created {
			return
		}
		if !p.deleted.Load() {
			p.pushed.Store(seq)
			return
		}
	}
}

func (a *Atomic) Delete(name string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	old := a.state.Load()
	p := old.get(name)
	if p == nil {
		return
	}
	// Mark the state deleted first: an Admit holding it then retries on
	// the new table.
	p.deleted.Store(true)
	a.state.Store(old.without(name))
}

func (a *Atomic) Len() int {
	n := 0
	for _, p := range a.state.Load().all {
		if !p.deleted.Load() {
			n++
		}
	}
	return n
}

func (a *Atomic) Range(fn func(string, int64) bool) {
	for k, p := range a.state.Load().all {
		if p.deleted.Load() {
			continue
		}
		if !fn(k, p.pushed.Load()) {
			return
		}
	}
}
