// Package eviction is the eviction family of the cache suite (apache/pulsar#26821;
// JMH's CacheEvictionCycleBenchmark):
// insertAndEvict inserts batchSize entries (the same entries, retained
// again each op) and evicts them all by size through the removal queue;
// with requeue=true every entry expects one read, so the queue requeues it
// once before removing it. evictAll is JMH's RangeCacheEvictionBenchmark.
// impl=skiplist|paged. InsertAndEvictFloor is insertAndEvict
// reduced to the unavoidable work (retain, store a pointer, queue; then
// release each): what no cache can go below. InsertAndEvict reports
// B/entry, the heap each implementation takes per cached entry
// (bench/insert).
//
// HitRate is PIP-430's cache hit-rate experiment (apache/pulsar#24623, the
// rolling-restart test) as a deterministic simulation in virtual time
// (Simulate): a producer, ten consumers with their own subscriptions
// reading in batches of 100 through the real EntryCache, a broker restart
// three times in 30 s (new cache, new ledger, consumers reconnect after a
// random delay at their persisted mark-delete positions), eviction by
// age every 10 ms with a 1 s TTL and by size at 16 MiB; run under the
// three policies of the seed: expected reads (PIP-430 defaults),
// accessed-TTL only, and time only. Workloads: rolling (consumers at
// 0.9–1.1× the producer's rate, as the seed's test whose consumers did
// not quite keep up) and mixed (five tailing, three slow, two catching up
// from a 5 s backlog). Metrics per run: hit-%/op and storage reads and
// entries per 1,000 dispatched messages.
package eviction
