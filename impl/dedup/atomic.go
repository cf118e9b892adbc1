package dedup

import (
	"math"
	"sync"
	"sync/atomic"
)

const (
	// absent marks a producer state created but never admitted.
	absent = math.MinInt64
	// dead marks a state removed from the map: callers holding it reload.
	dead = math.MinInt64 + 1
)

// producer is the per-producer state of Atomic: created once, then only
// compare-and-swapped.
type producer struct {
	pushed atomic.Int64
	_      [56]byte // one cache line per producer
}

// Atomic creates each producer's state once and then admits with a
// compare-and-swap on its atomic int64. Lookups read an immutable map
// through an atomic pointer (copy on write when a producer is added or
// removed, which is rare), so an accepted message takes no lock and
// allocates nothing, and callers sharing a producer only retry when the
// pushed sequence moved under them.
type Atomic struct {
	mu    sync.Mutex // serializes writers of the map
	state atomic.Pointer[map[string]*producer]
}

// NewAtomic returns an empty Atomic admission map.
func NewAtomic() *Atomic {
	a := &Atomic{}
	m := map[string]*producer{}
	a.state.Store(&m)
	return a
}

func (a *Atomic) lookup(name string) *producer { return (*a.state.Load())[name] }

// getOrCreate returns name's state, creating it under the writers' lock. A
// state marked dead is only ever seen while Delete, which holds the lock,
// swaps the map; waiting for the lock waits that out.
func (a *Atomic) getOrCreate(name string) *producer {
	if p := a.lookup(name); p != nil && p.pushed.Load() != dead {
		return p
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	old := *a.state.Load()
	if p := old[name]; p != nil && p.pushed.Load() != dead {
		return p
	}
	p := &producer{}
	p.pushed.Store(absent)
	next := make(map[string]*producer, len(old)+1)
	for k, v := range old {
		next[k] = v
	}
	next[name] = p
	a.state.Store(&next)
	return p
}

func (a *Atomic) Admit(name string, seq, highest int64) (bool, int64) {
	for {
		p := a.getOrCreate(name)
		for {
			cur := p.pushed.Load()
			if cur == dead {
				break // deleted under us: look it up again
			}
			if cur != absent && seq <= cur {
				return false, cur
			}
			if p.pushed.CompareAndSwap(cur, highest) {
				return true, 0
			}
		}
	}
}

func (a *Atomic) Pushed(name string) (int64, bool) {
	p := a.lookup(name)
	if p == nil {
		return 0, false
	}
	v := p.pushed.Load()
	if v == absent || v == dead {
		return 0, false
	}
	return v, true
}

func (a *Atomic) Set(name string, seq int64) {
	for {
		p := a.getOrCreate(name)
		cur := p.pushed.Load()
		if cur != dead && p.pushed.CompareAndSwap(cur, seq) {
			return
		}
	}
}

func (a *Atomic) Delete(name string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	old := *a.state.Load()
	p := old[name]
	if p == nil {
		return
	}
	// Mark the state dead first: an Admit racing with us then fails its
	// compare-and-swap, sees dead, and retries on the new map.
	p.pushed.Store(dead)
	next := make(map[string]*producer, len(old))
	for k, v := range old {
		if k != name {
			next[k] = v
		}
	}
	a.state.Store(&next)
}

func (a *Atomic) Len() int {
	n := 0
	for _, p := range *a.state.Load() {
		if v := p.pushed.Load(); v != absent && v != dead {
			n++
		}
	}
	return n
}

func (a *Atomic) Range(fn func(string, int64) bool) {
	for k, p := range *a.state.Load() {
		v := p.pushed.Load()
		if v == absent || v == dead {
			continue
		}
		if !fn(k, v) {
			return
		}
	}
}
