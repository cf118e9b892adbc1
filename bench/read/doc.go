// Package read is the read benchmark family of the cache suite.
//
// ReadRange is JMH's RangeCacheReadBenchmark.readRange (apache/pulsar#26821) on impl=skiplist|paged: 16 ranges
// of batchSize=100|1000 positions, one per ledger, of which the first
// hitPercent=0|10|100 of every 100 entry IDs are cached; one op reads one
// range with GetRange and releases every entry (hits/op counts them).
// ReadAndCopyRange reads the same ranges through ForEachInRange into
// dispatch copies and releases the copies. Both report B/entry, the heap
// each implementation takes per cached entry (bench/insert).
//
// It also holds the offloaded-ledger replay of apache/pulsar#16417: a shared
// subscription re-reads older entries of an offloaded ledger, and every
// backward seek without an entry offset cache lands at the start of a block
// of the sparse index and re-parses forward.
//
//   - OffloadReplay (offsets=none|handle|shared, entrySize=100|1024): each
//     invocation reads the next 10 entries at the cursor, then replays 10
//     older entries starting a random 10…256 entries back (the redeliveries
//     of a shared subscription), and moves the cursor on (wrapping at the
//     ledger's end). One op is one entry returned, so throughput mode
//     reports entries/s; bytes-parsed/op is what the stream moved through
//     per entry (headers, payloads read or skipped).
//   - ReadFloor: the unavoidable work of returning an entry, copying its
//     bytes from memory.
//   - ReadNoop: the harness's cost.
//
// The ledger (8 MiB of entries in 1 MiB blocks) is written to a temporary
// directory at trial setup and removed at teardown; inputs come from the
// run's seed. Importing the package registers the family in harness.Default,
// suite "cache".
package read
