package location

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/cespare/xxhash/v2"
)

// Oversize policies: what the cache does with a block larger than its
// shard.
const (
	// PolicyRocksDB is RocksDB's LRUCache (strict_capacity_limit=false):
	// evict every unreferenced entry of the shard, insert the block anyway
	// (the shard goes over capacity) and erase it when its last reference
	// is released.
	PolicyRocksDB = "rocksdb"
	// PolicyPebble is Pebble's: a block larger than the shard is not
	// cached (the reader keeps its own copy) and the shard is left alone.
	PolicyPebble = "pebble"
)

// CacheOptions configure a BlockCache.
type CacheOptions struct {
	Capacity int64 // bytes; must be positive
	// ShardBits is log2 of the shard count; negative picks RocksDB's
	// default, min(6, floor(log2(capacity / 512 KiB))).
	ShardBits int
	// Strict refuses an insert that cannot fit (RocksDB's
	// strict_capacity_limit); the reader then uses the block uncached.
	Strict bool
	Policy string // PolicyRocksDB (default) or PolicyPebble
}

// ErrCacheSize is returned for a cache capacity that is not positive.
var ErrCacheSize = errors.New("block cache capacity must be positive")

// defaultShardBits is RocksDB's GetDefaultCacheShardBits with a 512 KiB
// minimum shard.
func defaultShardBits(capacity int64) int {
	n := capacity / (512 << 10)
	if n <= 1 {
		return 0
	}
	return min(6, bits.Len64(uint64(n))-1)
}

// EntryOverhead is the fixed metadata charged per cached block besides
// its bytes (RocksDB charges the handle).
const EntryOverhead = 64 + 16

type cacheKey struct{ file, offset uint64 }

// cached is a block in (or once in) the cache.
type cached struct {
	key     cacheKey
	kind    blockKind
	charge  int64
	refs    int
	inCache bool
	onLRU   bool
	prev    *cached
	next    *cached

	raw []byte // the block's bytes (decompressed)
	// The parsed block: blk for an index or data block, flt for a filter
	// (the kind says which is set).
	blk    *block
	flt    *filter
	pooled bool // raw came from the big-buffer pool
}

type shard struct {
	mu       sync.Mutex
	capacity int64
	usage    int64
	lruUsage int64
	high     int64 // usage high-water mark
	table    map[cacheKey]*cached
	lru      cached // sentinel: lru.next is the least recently used
	_        [40]byte
}

// BlockCache is a sharded LRU cache of parsed blocks modelled on RocksDB's
// LRUCache as rocksdbjni's new LRUCache(capacity) creates it, shared by
// the tables of a store (or of several stores). Safe for concurrent use.
type BlockCache struct {
	opts   CacheOptions
	shards []shard
	mask   uint64

	inserts, oversize, flushes, evictions, evictedBytes, eraseOnRelease, rejected atomic.Int64
	// ids numbers the table readers that use the cache: a block's key is
	// (reader ID, offset), unique across every store sharing the cache,
	// where file numbers are unique only within one store.
	ids atomic.Uint64
}

// newID returns a cache-unique ID for a table reader.
func (c *BlockCache) newID() uint64 { return c.ids.Add(1) }

// NewBlockCache returns a cache with the given options.
func NewBlockCache(o CacheOptions) (*BlockCache, error) {
	if o.Capacity <= 0 {
		return nil, fmt.Errorf("%w (got %d)", ErrCacheSize, o.Capacity)
	}
	switch o.Policy {
	case "":
		o.Policy = PolicyRocksDB
	case PolicyRocksDB, PolicyPebble:
	default:
		return nil, fmt.Errorf("unknown oversize policy %q (%s, %s)", o.Policy, PolicyRocksDB, PolicyPebble)
	}
	if o.ShardBits < 0 {
		o.ShardBits = defaultShardBits(o.Capacity)
	}
	if o.ShardBits > 20 {
		return nil, fmt.Errorf("shard bits %d > 20", o.ShardBits)
	}
	n := 1 << o.ShardBits
	c := &BlockCache{opts: o, shards: make([]shard, n), mask: uint64(n - 1)}
	per := (o.Capacity + int64(n) - 1) / int64(n)
	for i := range c.shards {
		s := &c.shards[i]
		s.capacity, s.table = per, map[cacheKey]*cached{}
		s.lru.next, s.lru.prev = &s.lru, &s.lru
	}
	return c, nil
}

// Shards is the number of shards; ShardCapacity the capacity of each.
func (c *BlockCache) Shards() int          { return len(c.shards) }
func (c *BlockCache) ShardCapacity() int64 { return c.shards[0].capacity }
func (c *BlockCache) Capacity() int64      { return c.opts.Capacity }

func (c *BlockCache) shardOf(k cacheKey) *shard {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:], k.file)
	binary.LittleEndian.PutUint64(b[8:], k.offset)
	return &c.shards[xxhash.Sum64(b[:])&c.mask]
}

func (s *shard) lruRemove(e *cached) {
	e.prev.next, e.next.prev = e.next, e.prev
	e.prev, e.next, e.onLRU = nil, nil, false
	s.lruUsage -= e.charge
}

func (s *shard) lruPush(e *cached) { // at the most recently used end
	e.prev, e.next = s.lru.prev, &s.lru
	e.prev.next, s.lru.prev = e, e
	e.onLRU = true
	s.lruUsage += e.charge
}

// lookup returns the block with a reference, or nil.
func (c *BlockCache) lookup(k cacheKey) *cached {
	s := c.shardOf(k)
	s.mu.Lock()
	e := s.table[k]
	if e != nil {
		if e.onLRU {
			s.lruRemove(e)
		}
		e.refs++
	}
	s.mu.Unlock()
	return e
}

// insert caches e (refs must be 0) and returns it with one reference.
// Whether it stays cached depends on the policy: the returned entry may be
// detached (not in the cache), in which case its release frees it.
func (c *BlockCache) insert(e *cached) *cached {
	s := c.shardOf(e.key)
	c.inserts.Add(1)
	e.refs = 1
	var freed []*cached
	s.mu.Lock()
	if e.charge > s.capacity {
		c.oversize.Add(1)
	}
	if c.opts.Policy == PolicyPebble && e.charge > s.capacity {
		s.mu.Unlock()
		c.rejected.Add(1)
		return e // not cached; the shard is left alone
	}
	// Evict from the LRU end until it fits or nothing unreferenced is left.
	evicted := 0
	for s.usage+e.charge > s.capacity && s.lru.next != &s.lru {
		old := s.lru.next
		s.lruRemove(old)
		delete(s.table, old.key)
		old.inCache = false
		s.usage -= old.charge
		c.evictions.Add(1)
		c.evictedBytes.Add(old.charge)
		freed = append(freed, old)
		evicted++
	}
	if s.usage+e.charge > s.capacity && evicted > 0 {
		c.flushes.Add(1) // the shard was emptied of everything it could drop
	}
	if s.usage+e.charge > s.capacity && c.opts.Strict {
		s.mu.Unlock()
		c.rejected.Add(1)
		release(freed)
		return e
	}
	if old := s.table[e.key]; old != nil { // a concurrent reader inserted it first
		old.inCache = false
		s.usage -= old.charge
		if old.onLRU {
			s.lruRemove(old)
			freed = append(freed, old)
		}
	}
	s.table[e.key] = e
	e.inCache = true
	s.usage += e.charge
	s.high = max(s.high, s.usage)
	s.mu.Unlock()
	release(freed)
	return e
}

// release drops a reference; the last one of a cached block puts it on the
// LRU list, or erases it when the shard is over capacity.
func (c *BlockCache) release(e *cached) {
	s := c.shardOf(e.key)
	s.mu.Lock()
	e.refs--
	if e.refs > 0 {
		s.mu.Unlock()
		return
	}
	if !e.inCache {
		s.mu.Unlock()
		freeBlock(e)
		return
	}
	if s.usage > s.capacity {
		delete(s.table, e.key)
		e.inCache = false
		s.usage -= e.charge
		s.mu.Unlock()
		c.eraseOnRelease.Add(1)
		freeBlock(e)
		return
	}
	s.lruPush(e)
	s.mu.Unlock()
}

func release(es []*cached) {
	for _, e := range es {
		freeBlock(e)
	}
}

// CacheStats are the cache's counters and current state.
type CacheStats struct {
	Capacity, ShardCapacity int64
	Shards                  int
	Inserts                 int64
	OversizeInserts         int64 // blocks larger than their shard
	ShardFlushes            int64 // inserts that emptied a shard's LRU list and still did not fit
	Evictions, EvictedBytes int64
	EraseOnRelease          int64 // blocks erased at their last release because the shard was over capacity
	Rejected                int64 // inserts not cached (Pebble policy or strict)
	Usage, PinnedUsage      int64 // pinned: blocks referenced right now
	// ShardHighWater is the highest usage any shard reached (above its
	// capacity after an oversized insert).
	ShardHighWater int64
	// Content is the number of blocks and bytes cached, by role
	// (DataBlock, FilterBlock, FilterMetaBlock, IndexBlock, IndexMetaBlock).
	Content map[string][2]int64
}

// Stats snapshots the counters and the content.
func (c *BlockCache) Stats() CacheStats {
	st := CacheStats{Capacity: c.opts.Capacity, ShardCapacity: c.ShardCapacity(), Shards: len(c.shards),
		Inserts: c.inserts.Load(), OversizeInserts: c.oversize.Load(), ShardFlushes: c.flushes.Load(),
		Evictions: c.evictions.Load(), EvictedBytes: c.evictedBytes.Load(), EraseOnRelease: c.eraseOnRelease.Load(),
		Rejected: c.rejected.Load(), Content: map[string][2]int64{}}
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		st.Usage += s.usage
		st.PinnedUsage += s.usage - s.lruUsage
		st.ShardHighWater = max(st.ShardHighWater, s.high)
		for _, e := range s.table {
			v := st.Content[e.kind.String()]
			st.Content[e.kind.String()] = [2]int64{v[0] + 1, v[1] + e.charge}
		}
		s.mu.Unlock()
	}
	return st
}

// bigPool recycles the buffers of blocks of 2 KiB and more, by
// power-of-two size class: data blocks and multi-MiB full filters re-read
// on every get would otherwise be allocated, zeroed and collected each
// time (RocksDB mallocs them, which does not zero).
var bigPool [40]sync.Pool

const bigBlock = 2 << 10

func getBuf(n int) ([]byte, bool) {
	if n < bigBlock {
		return make([]byte, n), false
	}
	class := bits.Len(uint(n - 1))
	if b, ok := bigPool[class].Get().(*[]byte); ok {
		return (*b)[:n], true
	}
	return make([]byte, n, 1<<class), true
}

func putBuf(b []byte, pooled bool) {
	if pooled && b != nil {
		b = b[:cap(b)]
		bigPool[bits.Len(uint(cap(b)-1))].Put(&b)
	}
}

func freeBlock(e *cached) {
	if e.pooled && e.raw != nil {
		putBuf(e.raw, true)
		e.raw, e.blk, e.flt = nil, nil, nil
	}
}

// Counters returns the cache's event counters only (no content scan).
func (c *BlockCache) Counters() (oversize, flushes int64) {
	return c.oversize.Load(), c.flushes.Load()
}
