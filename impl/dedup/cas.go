package dedup

import "sync"

// CAS is #26763's admission: a put-if-absent / compare-and-replace loop on
// a concurrent map whose values are boxed (here: int64 in an interface, as
// Java's Long). Distinct producers do not serialize; an accepted update
// allocates its boxed value, and callers sharing one producer retry.
type CAS struct {
	m sync.Map // string → int64
}

// NewCAS returns an empty CAS admission map.
func NewCAS() *CAS { return &CAS{} }

func (c *CAS) Admit(name string, seq, highest int64) (bool, int64) {
	for {
		v, ok := c.m.Load(name)
		if ok && seq <= v.(int64) {
			return false, v.(int64)
		}
		if !ok {
			if _, loaded := c.m.LoadOrStore(name, highest); !loaded {
				return true, 0
			}
			continue // lost a race with the same producer name: re-read
		}
		if c.m.CompareAndSwap(name, v, highest) {
			return true, 0
		}
	}
}

func (c *CAS) Pushed(name string) (int64, bool) {
	v, ok := c.m.Load(name)
	if !ok {
		return 0, false
	}
	return v.(int64), true
}

func (c *CAS) Set(name string, seq int64) { c.m.Store(name, seq) }

func (c *CAS) Delete(name string) { c.m.Delete(name) }

func (c *CAS) Len() int {
	n := 0
	c.m.Range(func(any, any) bool { n++; return true })
	return n
}

func (c *CAS) Range(fn func(string, int64) bool) {
	c.m.Range(func(k, v any) bool { return fn(k.(string), v.(int64)) })
}
