// Package counter is the code under test of the example: a counter that
// many goroutines add to, in two implementations. Mutex guards an int64
// with a sync.Mutex; Atomic adds with one atomic instruction. Both are
// safe for concurrent use; Load never blocks an Add for longer than the
// Add itself.
package counter

import (
	"sync"
	"sync/atomic"
)

// Counter is a concurrent counter.
type Counter interface {
	// Add adds n and returns the new value.
	Add(n int64) int64
	// Load returns the current value.
	Load() int64
}

// New returns the implementation named impl: "mutex" or "atomic".
func New(impl string) (Counter, bool) {
	switch impl {
	case "mutex":
		return &Mutex{}, true
	case "atomic":
		return &Atomic{}, true
	}
	return nil, false
}

// Mutex is a Counter guarded by a mutex.
type Mutex struct {
	mu sync.Mutex
	n  int64
}

func (c *Mutex) Add(n int64) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n += n
	return c.n
}

func (c *Mutex) Load() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// Atomic is a Counter on an atomic int64.
type Atomic struct{ n atomic.Int64 }

func (c *Atomic) Add(n int64) int64 { return c.n.Add(n) }
func (c *Atomic) Load() int64       { return c.n.Load() }
