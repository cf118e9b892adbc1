package cache

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Storage reads entries from where they are stored (the bookies, or an
// offloaded ledger). Each returned entry has one reference, owned by the
// caller.
type Storage interface {
	ReadEntries(ledger, first, last int64) ([]*Entry, error)
}

// Manager owns the removal queue shared by the entry caches of a broker
// and keeps their total size under a limit: when an insert takes it over
// 98 % of the limit, it evicts the least accessed entries down to the
// watermark.
type Manager struct {
	queue     *RemovalQueue
	impl      string
	maxSize   int64
	watermark float64
	size      atomic.Int64
	evictMu   sync.Mutex
}

// ManagerConfig configures a Manager.
type ManagerConfig struct {
	Impl      string  // "skiplist" or "paged"
	MaxSize   int64   // bytes (≤ 0: no limit)
	Watermark float64 // fraction of MaxSize eviction goes down to (default 0.85)
	// MaxRequeue and ExtendTTLOfAccessed configure the removal queue
	// (PIP-430 defaults: 5 and true).
	MaxRequeue          int
	ExtendTTLOfAccessed bool
	// Clock, when set, is the time in nanoseconds used to stamp entries
	// and to evict by age (a virtual clock for simulations); nil is the
	// monotonic clock.
	Clock func() int64
}

// NewManager returns a manager; an unknown implementation is an error.
func NewManager(cfg ManagerConfig) (*Manager, error) {
	if cfg.Impl != "skiplist" && cfg.Impl != "paged" {
		return nil, fmt.Errorf("unknown range cache %q (skiplist, paged)", cfg.Impl)
	}
	if cfg.Watermark <= 0 || cfg.Watermark > 1 {
		cfg.Watermark = 0.85
	}
	q := NewRemovalQueue(cfg.MaxRequeue, cfg.ExtendTTLOfAccessed).WithClock(cfg.Clock)
	return &Manager{queue: q, impl: cfg.Impl,
		maxSize: cfg.MaxSize, watermark: cfg.Watermark}, nil
}

// Size is the bytes cached by every entry cache of the manager.
func (m *Manager) Size() int64 { return m.size.Load() }

// Queue is the shared removal queue.
func (m *Manager) Queue() *RemovalQueue { return m.queue }

func (m *Manager) entryAdded(n int64) {
	if m.size.Add(n) > m.maxSize*98/100 && m.maxSize > 0 {
		m.EvictToWatermark()
	}
}

func (m *Manager) entriesRemoved(bytes int64) { m.size.Add(-bytes) }

// EvictToWatermark evicts the least accessed entries until the size is
// at the watermark; it returns the entries and bytes evicted.
func (m *Manager) EvictToWatermark() (int, int64) {
	m.evictMu.Lock()
	defer m.evictMu.Unlock()
	excess := m.size.Load() - int64(float64(m.maxSize)*m.watermark)
	if excess <= 0 {
		return 0, 0
	}
	n, b, _ := m.queue.EvictLeastAccessed(excess)
	m.size.Add(-b)
	return n, b
}

// EvictOlderThan evicts entries cached longer than age (the periodic
// eviction by time), then checks the watermark.
func (m *Manager) EvictOlderThan(age time.Duration) (int, int64) {
	n, b := m.queue.EvictBefore(m.queue.Now() - int64(age))
	m.size.Add(-b)
	if m.maxSize > 0 && m.size.Load() > m.maxSize*98/100 {
		n2, b2 := m.EvictToWatermark()
		n, b = n+n2, b+b2
	}
	return n, b
}

// EntryCache is one managed ledger's cache over a range cache: the tail
// inserter of the ledger's own adds, batch inserts of storage reads, and
// reads with partial hits.
type EntryCache struct {
	m       *Manager
	entries RangeCache
	tail    Inserter
	storage Storage
}

// NewEntryCache returns the cache of one managed ledger reading misses
// from storage.
func (m *Manager) NewEntryCache(storage Storage) *EntryCache {
	var rc RangeCache
	if m.impl == "paged" {
		rc = NewPaged(m.queue)
	} else {
		rc = NewSkipList(m.queue)
	}
	return &EntryCache{m: m, entries: rc, tail: rc.NewInserter(), storage: storage}
}

// Entries is the underlying range cache.
func (c *EntryCache) Entries() RangeCache { return c.entries }

// Insert caches an entry just added to the ledger, through the tail
// inserter. The cache takes its own copy sharing e's data and read-count
// handler; e stays the caller's.
func (c *EntryCache) Insert(e *Entry) (bool, error) {
	return c.insert(e, c.tail)
}

func (c *EntryCache) insert(e *Entry, in Inserter) (bool, error) {
	cached := e.share(false)
	ok, err := in.Put(Position{cached.LedgerID(), cached.EntryID()}, cached, int64(cached.Len()))
	if err != nil || !ok {
		cached.Release()
		return false, err
	}
	c.m.entryAdded(int64(cached.Len()))
	return true, nil
}

// InsertBatch caches the entries of one storage read (ascending) with an
// inserter of their own. An entry already cached is not copied again: the
// cached entry adopts the new entry's read-count handler, so reads of the
// returned copies count for it (the update is not an access).
func (c *EntryCache) InsertBatch(es []*Entry) error {
	in := c.entries.NewInserter()
	for _, e := range es {
		h := e.ReadCountHandler()
		if in.UpdateIfCached(Position{e.LedgerID(), e.EntryID()}, func(cached *Entry) { cached.UpdateReadCountHandler(h) }) {
			continue
		}
		if _, err := c.insert(e, in); err != nil {
			return err
		}
	}
	return nil
}

// ErrStorage wraps a storage failure that the retry of the whole range
// could not overcome.
var ErrStorage = errors.New("read from storage failed")

// MaxReadEntries bounds one ReadEntries call (a broker reads batches of a
// few hundred): a larger range is an error, not an allocation of its size.
const MaxReadEntries = 1 << 20

// ReadEntries returns entries first…last of ledger: the cached ones as
// copies sharing the cached entries' handlers, the missing runs read from
// storage (each run once). If any run fails, everything obtained is
// released and the whole range is read from storage again. Entries read
// from storage expect expectedReads reads and are cached when it is
// positive. The caller releases every returned entry.
func (c *EntryCache) ReadEntries(ledger, first, last int64, expectedReads int32) ([]*Entry, error) {
	if first < 0 || last < first {
		return nil, fmt.Errorf("bad range [%d, %d] of ledger %d", first, last, ledger)
	}
	if last-first >= MaxReadEntries {
		return nil, fmt.Errorf("range [%d, %d] of ledger %d: more than %d entries in one read", first, last, ledger, MaxReadEntries)
	}
	n := int(last - first + 1)
	out := make([]*Entry, n)
	count := 0
	c.entries.ForEachInRange(Position{ledger, first}, Position{ledger, last}, func(e *Entry) {
		out[e.EntryID()-first] = e.DispatchCopy()
		count++
	})
	if count == n {
		return out, nil
	}
	if count == 0 {
		return c.readFromStorage(ledger, first, last, expectedReads)
	}
	var failed error
	for i := 0; i < n && failed == nil; {
		if out[i] != nil {
			i++
			continue
		}
		j := i
		for j+1 < n && out[j+1] == nil {
			j++
		}
		got, err := c.readFromStorage(ledger, first+int64(i), first+int64(j), expectedReads)
		if err != nil {
			failed = err
			break
		}
		for _, e := range got {
			if idx := e.EntryID() - first; idx >= int64(i) && idx <= int64(j) && out[idx] == nil {
				out[idx] = e
			} else {
				e.Release() // outside the run: ignore it
			}
		}
		i = j + 1
	}
	if failed == nil {
		for _, e := range out {
			if e == nil {
				failed = errors.New("storage returned fewer entries than asked")
				break
			}
		}
	}
	if failed != nil {
		for _, e := range out {
			if e != nil {
				e.Release()
			}
		}
		return c.readFromStorage(ledger, first, last, expectedReads) // retry the whole range
	}
	return out, nil
}

func (c *EntryCache) readFromStorage(ledger, first, last int64, expectedReads int32) ([]*Entry, error) {
	es, err := c.storage.ReadEntries(ledger, first, last)
	if err != nil {
		return nil, fmt.Errorf("%w: ledger %d [%d, %d]: %v", ErrStorage, ledger, first, last, err)
	}
	for _, e := range es {
		e.handler.Store(NewReadCountHandler(expectedReads))
	}
	if expectedReads > 0 {
		if err := c.InsertBatch(es); err != nil {
			for _, e := range es {
				e.Release()
			}
			return nil, err
		}
	}
	return es, nil
}

// InvalidateEntries removes every entry before last (exclusive).
func (c *EntryCache) InvalidateEntries(last Position) (int, int64) {
	if (Position{-1, 0}).Compare(last.Ledger, last.Entry) > 0 {
		return 0, 0
	}
	n, b := c.entries.RemoveRange(Position{-1, 0}, last, false)
	c.m.entriesRemoved(b)
	return n, b
}

// InvalidateAllEntries removes every entry of ledger.
func (c *EntryCache) InvalidateAllEntries(ledger int64) (int, int64) {
	n, b := c.entries.RemoveRange(Position{ledger, 0}, Position{ledger + 1, 0}, false)
	c.m.entriesRemoved(b)
	return n, b
}

// Clear removes every entry.
func (c *EntryCache) Clear() (int, int64) {
	n, b := c.entries.Clear()
	c.m.entriesRemoved(b)
	return n, b
}

// Size is the bytes this cache holds.
func (c *EntryCache) Size() int64 { return c.entries.Size() }
