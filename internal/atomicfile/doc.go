// Package atomicfile writes files so that a crash at any moment leaves
// either the old content or the new one: WriteSync writes and fsyncs a
// file, Replace writes a temporary file beside the target, fsyncs it and
// renames it over the target, and SyncDir makes renames and creations in a
// directory durable. The harness's result files, the dedup snapshots and
// the location store's manifest and datasets use it.
package atomicfile
