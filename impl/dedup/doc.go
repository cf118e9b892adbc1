// Package dedup is broker-side message deduplication for one topic, after
// Pulsar's MessageDeduplication (apache/pulsar#26763).
//
// A [Deduplicator] answers [Deduplicator.IsDuplicate] for each published
// message from two maps keyed by producer name: the highest sequence ID
// pushed (admitted, before the store acknowledged it) and the highest
// persisted (after [Deduplicator.RecordPersisted]). A sequence at or below
// the pushed one is [Dup] when it is also at or below the persisted one,
// else [Unknown] (the producer gets an error and retries). Only the last
// chunk of a chunked message is checked; the highest sequence ID of a batch
// is what is stored. Replicated messages use the original producer's name
// and sequence, or, for the v2 protocol, the source (ledger, entry)
// position, checked and updated as one pair under a lock.
//
// The pushed map is an [Admission], implemented three ways with the same
// contract, which the conformance tests check on all three:
//
//   - [NewLocked]: one mutex for the topic (Pulsar before #26763);
//   - [NewCAS]: a put-if-absent / compare-and-replace loop on a concurrent
//     map with boxed values (#26763: allocates per accepted update);
//   - [NewAtomic]: per-producer state created once, then a compare-and-swap
//     on an atomic int64; lookups read a copy-on-write map without locks or
//     allocation.
//
// Contract of every Admission: Admit is linearizable per producer name;
// for concurrent callers with the same name and sequence exactly one is
// accepted; the pushed value never moves backwards, except through Set and
// Delete, which recovery and purge use.
//
// Persisted sequences are snapshotted every SnapshotInterval persisted
// messages to a [SnapshotStore]; [FileStore] writes, fsyncs and renames, and
// keeps the previous snapshot, so a crash at any point leaves a readable
// snapshot. [Deduplicator.Recover] loads the newest valid snapshot (a
// corrupt one is detected by its CRC and reported, and the previous one or
// a rebuild from the log is used) and replays the log entries written after
// it.
//
// All methods of a Deduplicator are safe for concurrent use.
package dedup
