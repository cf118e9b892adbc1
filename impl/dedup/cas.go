package dedup

import "github.com/puzpuzpuz/xsync/v4"

// CAS is #26763's admission: a put-if-absent / compare-and-replace loop on
// a concurrent hash map (Java's ConcurrentHashMap: lock-free reads, a
// short per-bucket lock inside replace). Values are boxed, as Java's Long
// is, and replace compares them by value, so an accepted update allocates
// one box; distinct producers do not serialize, and callers sharing one
// producer re-read and retry when they lose.
//
// xsync.Map plays ConcurrentHashMap: its Load is lock-free and its
// Compute locks one bucket, as replaceNode does; sync.Map would box the
// string key on every call, a cost Java does not pay.
type CAS struct {
	m *xsync.Map[string, *int64]
}

// NewCAS returns an empty CAS admission map.
func NewCAS() *CAS { return &CAS{m: xsync.NewMap[string, *int64]()} }

func (c *CAS) Admit(name string, seq, highest int64) (bool, int64) {
	for {
		v, ok := c.m.Load(name)
		if ok && seq <= *v {
			return false, *v
		}
		box := &highest
		if !ok {
			if _, loaded := c.m.LoadOrStore(name, box); !loaded {
				return true, 0
			}
			continue // lost a race with the same producer name: re-read
		}
		if c.replace(name, *v, box) {
			return true, 0
		}
	}
}

// replace stores box if name still maps to the value old (Java's
// ConcurrentMap.replace(key, oldValue, newValue)).
func (c *CAS) replace(name string, old int64, box *int64) bool {
	replaced := false
	c.m.Compute(name, func(cur *int64, loaded bool) (*int64, xsync.ComputeOp) {
		if loaded && *cur == old {
			replaced = true
			return box, xsync.UpdateOp
		}
		return cur, xsync.CancelOp
	})
	return replaced
}

func (c *CAS) Pushed(name string) (int64, bool) {
	v, ok := c.m.Load(name)
	if !ok {
		return 0, false
	}
	return *v, true
}

func (c *CAS) Set(name string, seq int64) { c.m.Store(name, &seq) }

func (c *CAS) Delete(name string) { c.m.Delete(name) }

func (c *CAS) Len() int { return c.m.Size() }

func (c *CAS) Range(fn func(string, int64) bool) {
	c.m.Range(func(k string, v *int64) bool { return fn(k, *v) })
}
