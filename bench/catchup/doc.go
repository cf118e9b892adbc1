// Package catchup is the catch-up family of the cache suite (apache/pulsar#26821;
// JMH's RangeCacheCatchUpInsertBenchmark): a two-op group on one cache, impl=skiplist|paged. tailInsert
// inserts at the tail of ledger 2 (trimming to 10,000 entries every 100);
// catchUpInsertRun inserts a run of 100 entries of ledger 1 at a random
// earlier position with its own inserter (a read from storage) and removes
// the run again. Each op is reported on its own and the group as a whole.
// The cache is rebuilt before every iteration and cleared after it.
// CatchUpFloor is the same group with each op reduced to the unavoidable
// work (allocate the entries, store their pointers, append them to a
// queue): what no cache can go below. CatchUp reports B/entry, the heap
// each implementation takes per cached entry (bench/insert).
package catchup
