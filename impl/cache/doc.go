// Package cache is the broker entry cache of apache/pulsar#26821 (the range
// cache in pages of 64 entries) and apache/pulsar#24623 (PIP-430, expected
// read counts).
//
// An [Entry] is reference counted: it starts with one reference, Retain
// fails once the count reached zero (never a resurrection), and the
// release that reaches zero deallocates it exactly once (the read-count
// handler's MarkRead, the deallocation hook, the position cleared).
//
// A [RangeCache] maps positions to entries, in two implementations that
// share everything but the index: [SkipList] (one skip-list node per
// entry, as before the PR) and [Paged] (pages of 64 slots keyed by ledger
// and entryID >> 6 in the skip list; an [Inserter] remembers its page and
// reserves a slot by setting its bit in the page's occupancy bitmap; a
// page is made with its first slot filled, is sealed when the removal of
// its last entry clears the bitmap, and is then removed by a
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
// A range read over a sparse page visits only the slots its bitmap has,
// and sizes its result to them. A range read allocates only its result
// (nothing on a miss).
//
// The paged cache reads without the seqlock: a slot names its position,
// and a wrapper holds one position in its life (set before it is
// published) and one entry (from the insert until its removal clears it,
// after unlinking it from the slot). So a paged read loads the slot's
// wrapper and the wrapper's entry, checks the entry's own position and
// retains it; the read takes effect when it loaded the wrapper, which
// then held the entry. The retain keeps the entry only while someone else
// (the cache, or another reader) still holds it, so a reader never
// resurrects an entry whose last reference is gone, and an entry whose
// removal raced the read is either returned retained (freed only after
// the reader's release) or not at all. The reference contract is the
// same for both caches: a caller releases each entry it was given, and
// an evicted entry is freed exactly once, by the last release. The skip
// list reads through the seqlock, as before the pull request.
//
// The clock that stamps entries for eviction by age is the monotonic clock,
// or a virtual one set with [RemovalQueue.WithClock] or
// [ManagerConfig.Clock] (the hit-rate simulation runs in virtual time).
//
// The entry-cache layer sits on top: an EntryCache is one managed ledger's
// cache with the tail inserter of its own adds, batch inserts of storage
// reads (a new inserter per read; an entry already cached adopts the read's
// read-count handler), reads with partial hits over a Storage (missing runs
// read once; any failure releases everything and reads the whole range
// again) and invalidation; a Manager shares one removal queue among its
// entry caches and evicts to a watermark above 98 % of its size limit.
package cache
