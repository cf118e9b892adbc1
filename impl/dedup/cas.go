package dedup

import (
	"sync/atomic"

	"github.com/puzpuzpuz/xsync/v4"
)

// CAS is #26763's admission: a put-if-absent / compare-and-replace loop on
// a concurrent map (Java's ConcurrentHashMap.putIfAbsent and
// replace(key, old, new)). The values are boxed, as Java's Long is, so an
// accepted update allocates its box; replace compares by value, as Java's
// equals does. Distinct producers do not serialize; callers sharing one
// producer re-read and retry when they lose.
//
// The map is xsync.Map (lock-free reads with string keys, no boxing of the
// key as sync.Map would); its entries are cells whose boxed value is
// replaced with a compare-and-swap, which is what replace does to a
// ConcurrentHashMap node under its bin lock.
type CAS struct {
	m *xsync.Map[string, *casCell]
}

type casCell struct{ v atomic.Pointer[int64] }

// removed marks a cell taken out of the map: callers holding it retry.
var removed = new(int64)

// NewCAS returns an empty CAS admission map.
func NewCAS() *CAS { return &CAS{m: xsync.NewMap[string, *casCell]()} }

func (c *CAS) Admit(name string, seq, highest int64) (bool, int64) {
	for {
		cell, ok := c.m.Load(name)
		if !ok {
			n, box := &casCell{}, new(int64)
			*box = highest
			n.v.Store(box)
			if _, loaded := c.m.LoadOrStore(name, n); !loaded {
				return true, 0 // putIfAbsent won
			}
			continue // lost a race with the same producer name: re-read
		}
		cur := cell.v.Load()
		if cur == removed {
			continue // purged under us: look it up again
		}
		if seq <= *cur {
			return false, *cur
		}
		box := new(int64)
		*box = highest
		if cell.v.CompareAndSwap(cur, box) { // replace(name, *cur, box)
			return true, 0
		}
	}
}

func (c *CAS) Pushed(name string) (int64, bool) {
	cell, ok := c.m.Load(name)
	if !ok {
		return 0, false
	}
	v := cell.v.Load()
	if v == removed {
		return 0, false
	}
	return *v, true
}

func (c *CAS) Set(name string, seq int64) {
	n, box := &casCell{}, new(int64)
	*box = seq
	n.v.Store(box)
	if old, loaded := c.m.LoadAndStore(name, n); loaded {
		old.v.Store(removed)
	}
}

func (c *CAS) Delete(name string) {
	if old, loaded := c.m.LoadAndDelete(name); loaded {
		old.v.Store(removed)
	}
}

func (c *CAS) Len() int { return c.m.Size() }

func (c *CAS) Range(fn func(string, int64) bool) {
	c.m.Range(func(k string, cell *casCell) bool {
		v := cell.v.Load()
		if v == removed {
			return true
		}
		return fn(k, *v)
	})
}
