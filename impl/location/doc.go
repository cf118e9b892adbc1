// Package location is BookKeeper's entry location index — (ledger ID,
// entry ID) → the entry's location in the entry logs — on a pure-Go LSM
// store written for it, with the table layouts of apache/bookkeeper#4909:
// a full filter and single index per table against partitioned
// filters and a two-level index.
//
// Store: 16-byte keys. Writes go to a write-ahead log and a memtable
// (the concurrent skip list), flushed to level 0 at MemtableSize; leveled
// compaction merges level 0 into level 1 at L0Trigger tables and level n
// into n+1 when it outgrows L1MaxBytes·10^(n−1); Compact merges all into
// the bottom level; Build lays out an exact LSM shape from a key stream
// (the benchmarks' way to give both layouts the same shape). The MANIFEST
// (CRC-checked, replaced by rename) is the commit point: a crash during a
// flush or compaction leaves the previous state readable, and the files it
// does not list are removed on open; a torn log tail is dropped. Deleting a
// key range (a ledger) is recorded in the manifest: gets in it fail with
// ErrDeleted, puts into it are refused, compactions drop its keys.
//
// Tables: prefix-compressed data blocks (64 KiB, restart every 16 keys,
// optionally LZ4), each block with a trailer holding its compression type
// and CRC-32C; a full filter block or filter partitions of about 4 KiB cut
// every keysPerPartition keys independently of the index, with a top-level
// filter index; a single index block or index partitions of about 4 KiB
// with a top-level index; properties, metaindex and a fixed footer. Filters
// are cache-line-blocked Bloom filters, 10 bits and 6 probes per key, on
// xxHash64. Blocks are copied out of a read-only memory map of the table
// file (ReadAt of the file where the OS has none; the OS page cache serves
// repeats either way), checksummed and parsed, through the BlockCache; a
// fault on the mapping is an error. In the partitioned layout
// the two top-level blocks are pinned (held) in the cache for the table's
// lifetime. A checksum mismatch or a malformed block is an error wrapping
// ErrCorrupt naming the file, the block kind and its offset; never a
// panic.
//
// BlockCache models RocksDB's LRUCache as rocksdbjni creates it: 2^bits
// shards with bits = min(6, floor(log2(capacity / 512 KiB))); an insert
// evicts unreferenced blocks from its shard's LRU end until it fits, and a
// block larger than the shard empties the shard, is inserted anyway and is
// erased at its last release (PolicyRocksDB); PolicyPebble instead does not
// cache such a block and leaves the shard alone. Stats reports the cache
// counters (oversized inserts, shard flushes, evictions, usage); Perf accumulates a get's counters
// (PerfContext).
//
// Index is the entry location index API (batches of locations, get,
// last entry of a ledger, delete a ledger, flush, compact, close) with
// BookKeeper's big-endian key and value encoding; EntryLocationIndex is it
// on Store, and impl/location/pebbleindex on Pebble. Reads are safe for
// concurrent use with each other and with writes; writes are serialized.
package location
