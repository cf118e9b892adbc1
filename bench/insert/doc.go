// Package insert is the insert family of the cache suite: the broker entry
// cache's tail insert (apache/pulsar#26821; JMH's RangeCacheInsertBenchmark) on impl=skiplist (one skip-list
// node per entry, inserted with Put as master does) and impl=paged (pages
// of 64 entries through one Inserter), with cachedEntries=1000|100000.
//
//   - InsertAtTail: one op inserts the next entry at the tail; every 100th
//     op trims the head to keep cachedEntries entries (removeRange) and
//     drains the removed wrappers from the removal queue. Ledgers roll
//     over every 50,000 entries. B/entry is the heap the cache takes per
//     cached entry beyond the entry itself (wrapper, queue slot, index),
//     measured at setup on 16,384 entries (the queue's ring and the pages
//     exactly full).
//   - InsertFloor: the unavoidable work of an insert: allocate the entry,
//     store one pointer in a preallocated ring, append to a queue.
//   - InsertNoop: the harness's cost.
package insert
