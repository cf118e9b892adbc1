// Package location is the benchmark family of the entry location index
// (apache/bookkeeper#4909), suite "location".
//
// Get is random getLocation over every (ledger, entry) of a dataset
// profile, GetFloor getLastEntryInLedger of a random ledger; both in
// throughput mode (gets/s) with 2 goroutines, and params:
//
//   - profile: ci (2M keys, default), mid (12.5M), nightly (50M); see
//     Profiles for their LSM shapes;
//   - layout: full (one filter and index block per table, the baseline),
//     partitioned (the PR), pebble (Pebble v2, the store a Go user would
//     pick; its own table format with a full filter);
//   - cache: block cache capacity (8MiB, 32MiB, 128MiB for ci; pass
//     -p cache=64MiB,256MiB,1GiB with the larger profiles);
//   - shardBits: 6 (64 shards; the default, which is also RocksDB's rule
//     from 32 MiB up and this project's CI setting at 8 MiB,
//     128 KiB shards), or -1 for RocksDB's rule (16 shards of 512 KiB at
//     8 MiB);
//   - lz4: LZ4 data blocks (BookKeeper's default) or not (the default
//     here; see EnsureDataset for why).
//
// shardBits and lz4 apply to this package's store only: Pebble shards its
// cache its own way and its datasets are uncompressed.
//
// Datasets are built once per profile and layout, on first use, into
// $LEDGERBENCH_DATA or the user cache directory's ledgerbench/location
// (~/.cache/ledgerbench/location), and opened read-only by every fork:
// never rebuilt per fork. The ci profile takes about 2 s per layout to
// build, mid about 15 s, nightly about a minute.
//
// Metrics per get (op): filter-reads, filter-bytes-read, bytes-read
// (every block read from the files), cache-hits, sst-probes, bloom-useful
// (tables a filter ruled out) and, for this package's store, the cache's
// oversize-inserts and shard-flushes; per trial: largest-filter-B,
// shard-B and pinned-B. Each fork writes the dataset's LSM shape (level,
// keys, size, filter and index bytes and partitions, top-level bytes per
// table) to its log, DIR/logs.
package location
