// Package offload reads entries of a ledger offloaded to a blob store,
// after Pulsar's BlobStoreBackedReadHandleImpl and its entry offset cache
// (apache/pulsar#16417, and the shared OffsetsCache that followed).
//
// An offloaded ledger is one data object and one index object:
//
//	data:  block 0 | block 1 | … (each BlockSize bytes, the last may be short)
//	block: "LBOB" | dataLen u32 | firstEntry i64 | record … | zero padding
//	record: length i32 | entryID i64 | payload[length]
//	index: "LBOI" | ledger i64 | lac i64 | blockSize u32 | n u32
//	       | n × (firstEntry i64, blockOffset i64) | crc32c u32
//
// The index is sparse: one entry per block. A [Handle] reads a range of
// entries through a buffered stream over the object. Seeking to an entry
// without an offset cache lands on the start of its block and parses
// every record before it; shared subscriptions replay older entries, so
// they seek backwards all the time. With an [OffsetCache] the handle
// records the offset of every entry it returns and seeks straight to it:
// per handle ([NewHandleCache], access TTL, one goroutine) or shared by all
// handles ([SharedCache], keyed by ledger and entry, access TTL and a size
// bound; size 0 disables it). The seek order is: the cached offset of the
// entry; an index entry for exactly it; the cached offset of the entry
// before it, skipping that record; the block holding it, parsing forward.
//
// Reads validate the range (first ≤ last, first ≥ 0, last ≤ the last add
// confirmed). An unexpected entry ID re-seeks, a bounded number of times,
// then fails. A corrupt record (negative or oversized length, truncated
// payload) or block header is an error wrapping [ErrCorrupt], never a
// panic or a wrong entry.
//
// A Handle is used by one goroutine at a time; a SharedCache is safe for
// concurrent use.
package offload
