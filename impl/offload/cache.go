package offload

import (
	"container/list"
	"sync"
	"time"
)

// OffsetCache remembers the data offset of entries already read.
type OffsetCache interface {
	Get(ledger, entry int64) (int64, bool)
	Put(ledger, entry, offset int64)
}

// NoCache is the handle without an offset cache (before #16417).
type NoCache struct{}

func (NoCache) Get(int64, int64) (int64, bool) { return 0, false }
func (NoCache) Put(int64, int64, int64)        {}

type timedOffset struct {
	offset int64
	access time.Time
}

// HandleCache is #16417's per-handle cache: entry → offset, forgotten
// after TTL without access. It is used by its handle's goroutine only.
type HandleCache struct {
	ttl time.Duration
	now func() time.Time
	m   map[int64]timedOffset
}

// DefaultHandleTTL is #16417's access TTL (raised from 10 to 30 minutes in
// review).
const DefaultHandleTTL = 30 * time.Minute

// NewHandleCache returns a per-handle cache; now is the clock (time.Now
// when nil).
func NewHandleCache(ttl time.Duration, now func() time.Time) *HandleCache {
	if now == nil {
		now = time.Now
	}
	return &HandleCache{ttl: ttl, now: now, m: map[int64]timedOffset{}}
}

func (c *HandleCache) Get(_, entry int64) (int64, bool) {
	v, ok := c.m[entry]
	if !ok {
		return 0, false
	}
	now := c.now()
	if now.Sub(v.access) > c.ttl {
		delete(c.m, entry)
		return 0, false
	}
	c.m[entry] = timedOffset{v.offset, now}
	return v.offset, true
}

func (c *HandleCache) Put(_, entry, offset int64) { c.m[entry] = timedOffset{offset, c.now()} }

// Len is the number of offsets held (expired ones included until touched).
func (c *HandleCache) Len() int { return len(c.m) }

type sharedKey struct{ ledger, entry int64 }

type sharedEntry struct {
	key    sharedKey
	offset int64
	access time.Time
}

// SharedCache is the offsets cache shared by every handle, keyed by
// (ledger, entry), with an access TTL and a size bound: beyond MaxSize the
// least recently accessed offsets go. A size of 0 or less disables it.
type SharedCache struct {
	mu      sync.Mutex
	ttl     time.Duration
	maxSize int
	now     func() time.Time
	lru     *list.List // front: most recently accessed
	m       map[sharedKey]*list.Element
}

// Pulsar's defaults: 300 s TTL, 1,000,000 offsets.
const (
	DefaultSharedTTL  = 300 * time.Second
	DefaultSharedSize = 1_000_000
)

// NewSharedCache returns a shared cache; now is the clock (time.Now when
// nil).
func NewSharedCache(ttl time.Duration, maxSize int, now func() time.Time) *SharedCache {
	if now == nil {
		now = time.Now
	}
	return &SharedCache{ttl: ttl, maxSize: maxSize, now: now, lru: list.New(), m: map[sharedKey]*list.Element{}}
}

func (c *SharedCache) Get(ledger, entry int64) (int64, bool) {
	if c.maxSize <= 0 {
		return 0, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.m[sharedKey{ledger, entry}]
	if !ok {
		return 0, false
	}
	e := el.Value.(*sharedEntry)
	now := c.now()
	if now.Sub(e.access) > c.ttl {
		c.lru.Remove(el)
		delete(c.m, e.key)
		return 0, false
	}
	e.access = now
	c.lru.MoveToFront(el)
	return e.offset, true
}

func (c *SharedCache) Put(ledger, entry, offset int64) {
	if c.maxSize <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	k := sharedKey{ledger, entry}
	now := c.now()
	if el, ok := c.m[k]; ok {
		e := el.Value.(*sharedEntry)
		e.offset, e.access = offset, now
		c.lru.MoveToFront(el)
		return
	}
	c.m[k] = c.lru.PushFront(&sharedEntry{key: k, offset: offset, access: now})
	for c.lru.Len() > c.maxSize {
		old := c.lru.Back()
		c.lru.Remove(old)
		delete(c.m, old.Value.(*sharedEntry).key)
	}
}

// CleanUp drops every expired offset (Pulsar runs it every ttl/2).
func (c *SharedCache) CleanUp() {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	for el := c.lru.Back(); el != nil; {
		e := el.Value.(*sharedEntry)
		if now.Sub(e.access) <= c.ttl {
			break // the rest were accessed later
		}
		prev := el.Prev()
		c.lru.Remove(el)
		delete(c.m, e.key)
		el = prev
	}
}

// Len is the number of offsets held.
func (c *SharedCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}
