// Package cache is the broker entry cache of seeds 000 (Pulsar PR #26821,
// pages of 64 entries) and 004 (PIP-430, expected read counts), after
// reference/pulsar-structures.md §1–4.
//
// An [Entry] is reference counted: it starts with one reference, Retain
// fails once the count reached zero (never a resurrection), and the
// release that reaches zero deallocates it exactly once (the read-count
// handler's MarkRead, the deallocation hook, the position cleared).
//
// A [RangeCache] maps positions to entries, in two implementations that
// share everything but the index: [SkipList] (one skip-list node per
// entry, as before the PR) and [Paged] (pages of 64 slots keyed by ledger
// and entryID >> 6 in the skip list; an [Inserter] remembers its page,
// reserves a slot with the page's count and seals the page at -1 when its
// last slot is released, and the sealed page is removed by a
// value-conditional remove). Each cached entry sits in a wrapper with a
// seqlock (optimistic reads of its key and value) and a write lock, under
// which insertion, removal and eviction change it; removal matches the
// key and value instances, so an entry is removed and released exactly
// once whatever races with it.
//
// Ownership: Put transfers the caller's reference to the cache on true and
// leaves it with the caller on false; Get and GetRange return retained
// entries the caller releases; ForEachInRange retains only around the
// callback.
//
// A [RemovalQueue] shared by the caches holds every inserted wrapper in
// insertion order and evicts from the head, by timestamp or by size,
// requeueing entries read since they were queued and entries with
// remaining expected reads (a bounded number of times); evictions return
// (entries, bytes).
//
// Not yet here (issue 3 continues): the entry-cache layer with the tail
// inserter, batch inserts of storage reads, partial-hit reads over a
// storage interface with retries, invalidation, the manager's size limit,
// the occupancy bitmap, and the benchmark families.
package cache
