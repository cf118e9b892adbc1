// Package eviction is the eviction family of the cache suite (seed 000;
// JMH's CacheEvictionCycleBenchmark, reference/pulsar-structures.md §7.3):
// insertAndEvict inserts batchSize entries (the same entries, retained
// again each op) and evicts them all by size through the removal queue;
// with requeue=true every entry expects one read, so the queue requeues it
// once before removing it. impl=skiplist|paged.
package eviction
