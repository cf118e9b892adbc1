package location

import (
	"testing"
)

func TestShardRule(t *testing.T) {
	for _, c := range []struct {
		capacity int64
		shards   int
		shard    int64
	}{
		{512 << 10, 1, 512 << 10},
		{1<<20 - 1, 1, 1<<20 - 1},
		{1 << 20, 2, 512 << 10},
		{8 << 20, 16, 512 << 10},
		{16 << 20, 32, 512 << 10},
		{32 << 20, 64, 512 << 10},
		{64 << 20, 64, 1 << 20},
		{256 << 20, 64, 4 << 20},
		{1 << 30, 64, 16 << 20},
		{205 << 20, 64, (205<<20 + 63) / 64},
	} {
		bc, err := NewBlockCache(CacheOptions{Capacity: c.capacity, ShardBits: -1})
		if err != nil {
			t.Fatal(err)
		}
		if bc.Shards() != c.shards || bc.ShardCapacity() != c.shard {
			t.Errorf("capacity %d: %d shards of %d, want %d of %d", c.capacity, bc.Shards(), bc.ShardCapacity(), c.shards, c.shard)
		}
	}
	if bc, _ := NewBlockCache(CacheOptions{Capacity: 8 << 20, ShardBits: 6}); bc.ShardCapacity() != 128<<10 {
		t.Errorf("explicit 6 bits at 8 MiB: shard %d", bc.ShardCapacity())
	}
	for _, bad := range []CacheOptions{{Capacity: 0}, {Capacity: -1}, {Capacity: 1 << 20, Policy: "arc"}} {
		if _, err := NewBlockCache(bad); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

// block makes a cache entry of the given total charge, keyed in shard 0
// of a one-shard cache.
func cblock(off uint64, charge int64) *cached {
	return &cached{key: cacheKey{1, off}, charge: charge, raw: make([]byte, 1)}
}

// TestOversizedInsert walks RocksDB's LRUCache through an insert larger
// than the shard: every unreferenced entry is evicted, the block is
// inserted anyway (usage over capacity), referenced entries survive, and
// the release of the oversized block erases it; Pebble's policy instead
// leaves the shard alone and does not cache the block.
func TestOversizedInsert(t *testing.T) {
	c, _ := NewBlockCache(CacheOptions{Capacity: 1000, ShardBits: 0})
	a := c.insert(cblock(1, 300))
	b := c.insert(cblock(2, 300))
	pinned := c.insert(cblock(3, 200)) // kept referenced
	c.release(a)
	c.release(b)
	st := c.Stats()
	if st.Usage != 800 || st.PinnedUsage != 200 {
		t.Fatalf("usage %d pinned %d, want 800 and 200", st.Usage, st.PinnedUsage)
	}
	big := c.insert(cblock(4, 1500))
	st = c.Stats()
	if st.OversizeInserts != 1 || st.ShardFlushes != 1 || st.Evictions != 2 {
		t.Fatalf("after the oversized insert: %+v", st)
	}
	if st.ShardHighWater != 1700 {
		t.Fatalf("shard high-water %d, want 1700 (over capacity)", st.ShardHighWater)
	}
	if st.Usage != 1700 || c.lookup(cacheKey{1, 1}) != nil || c.lookup(cacheKey{1, 2}) != nil {
		t.Fatalf("usage %d; want the two unreferenced blocks evicted and the big one in (1700)", st.Usage)
	}
	if e := c.lookup(cacheKey{1, 4}); e == nil {
		t.Fatal("the oversized block is not in the cache while referenced")
	} else {
		c.release(e)
	}
	c.release(big)
	st = c.Stats()
	if st.Usage != 200 || st.EraseOnRelease != 1 || c.lookup(cacheKey{1, 4}) != nil {
		t.Fatalf("after its release: usage %d, erased %d; want the oversized block gone", st.Usage, st.EraseOnRelease)
	}
	c.release(pinned)
	if st := c.Stats(); st.PinnedUsage != 0 || st.Usage != 200 {
		t.Fatalf("after releasing the pinned block: %+v", st)
	}

	// A block that fits evicts from the LRU end only as much as needed.
	x := c.insert(cblock(5, 500))
	c.release(x)
	y := c.insert(cblock(6, 400)) // 200 + 500 + 400 > 1000: evict the LRU (block 3)
	c.release(y)
	if c.lookup(cacheKey{1, 3}) != nil {
		t.Fatal("LRU block 3 not evicted")
	}
	if e := c.lookup(cacheKey{1, 5}); e == nil {
		t.Fatal("block 5 evicted though there was room once block 3 left")
	} else {
		c.release(e)
	}

	p, _ := NewBlockCache(CacheOptions{Capacity: 1000, ShardBits: 0, Policy: PolicyPebble})
	keep := p.insert(cblock(1, 300))
	p.release(keep)
	huge := p.insert(cblock(2, 1500))
	if st := p.Stats(); st.OversizeInserts != 1 || st.Rejected != 1 || st.Evictions != 0 || st.Usage != 300 {
		t.Fatalf("pebble policy: %+v", st)
	}
	if p.lookup(cacheKey{1, 2}) != nil {
		t.Fatal("pebble policy cached an oversized block")
	}
	p.release(huge)
	if e := p.lookup(cacheKey{1, 1}); e == nil {
		t.Fatal("pebble policy flushed the shard")
	}
}
