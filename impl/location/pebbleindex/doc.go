// Package pebbleindex is the entry location index (location.Index) on
// Pebble v2, the store a Go user would pick, for comparison with
// impl/location's own store in the location family.
//
// Configuration mirrors BookKeeper's where Pebble has the knob: a block
// cache of the given size (Pebble's own sharding: 4 × GOMAXPROCS shards,
// Clock-PRO, blocks larger than a shard are not cached), 64 KiB data
// blocks, a 10-bit Bloom filter on every level, 64 MiB memtables, level
// base 256 MiB, 64 MiB target files, no compression (as the location
// benchmarks' datasets). Pebble has no partitioned filters; it uses a
// two-level index when an index block outgrows the block size; and its
// point gets do not consult L6 filters.
//
// Deleted ledgers: DeleteLedger writes a range deletion of the ledger's
// keys and a marker key (0xff 'D' ledger, above every location key since
// ledger IDs are not negative); the markers are loaded at open, so a get
// on a deleted ledger fails with location.ErrLedgerDeleted as in the
// other implementation. Writes are synced.
package pebbleindex
