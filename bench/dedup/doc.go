// Package dedup is the benchmark family of message deduplication (apache/pulsar#26763;
// JMH's MessageDeduplicationSequenceCheckBenchmark).
//
// Every benchmark takes impl=locked|cas|atomic (the topic-wide lock of
// master, the PR's CAS loop, this project's per-producer atomic) and
// path=admit|full: admit measures the pushed-sequence update alone, as the
// Java benchmark does; full measures IsDuplicate with a whole message. The
// maps start with producer-0…producer-63 at sequence 0, as in Java.
//
//   - DedupSingle: one goroutine on its own producer.
//   - DedupDistinct: 16 goroutines, each on its own producer.
//   - DedupShared: 16 goroutines sharing producer-0, each publishing its own
//     increasing stream of sequence IDs (goroutine g sends g+1, g+17, …), so
//     callers overlap as in a reconnect; accepted/op reports the fraction of
//     calls admitted.
//   - DedupNoop and DedupFloor: the harness's cost, and the unavoidable
//     work of an admission (one compare-and-swap on a word owned by the
//     caller).
//
// Importing the package registers the family in harness.Default, suite
// "dedup".
package dedup
