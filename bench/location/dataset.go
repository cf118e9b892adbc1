package location

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	impl "github.com/ledgerbench/ledgerbench/impl/location"

	"github.com/ledgerbench/ledgerbench/internal/atomicfile"
)

// Profile is a dataset of the location benchmarks (the ci, mid and
// nightly profiles scale apache/bookkeeper#4909's dataset): Ledgers × EntriesPerLedger keys written in rounds of
// BatchPerLedger entries per ledger (the order a bookie's write cache
// flushes them), laid out by impl.Build in the given LSM shape. The shapes keep
// the ratio of the largest full filter to a cache shard of the seed's
// setup: tables are cut by key count (MaxKeysPerFile) so that filter sizes
// are those of the PR's 64 MiB tables scaled to the profile.
type Profile struct {
	Name             string
	Ledgers          int
	EntriesPerLedger int
	BatchPerLedger   int
	Layers           []impl.Layer
	Caches           []string // the cache sizes its benchmarks default to
}

// Profiles by name: ci (2M keys, the default), mid (12.5M, the seed's
// reproduction shape: 2 L0 + 2 L6 with a 9 MB full filter), nightly
// (50M: 2 L0 + 2 L5 + 6 L6), and smoke (100k keys, for tests of the
// benchmarks themselves; too small to show the pathology).
var Profiles = map[string]Profile{
	"smoke": {Name: "smoke", Ledgers: 10, EntriesPerLedger: 10000, BatchPerLedger: 1000,
		Layers: []impl.Layer{{Level: 6, Keys: 80_000, MaxKeysPerFile: 55_000}, {Level: 0, Keys: 10_000}, {Level: 0, Keys: 10_000}},
		Caches: []string{"1MiB"}},
	"ci": {Name: "ci", Ledgers: 100, EntriesPerLedger: 20000, BatchPerLedger: 1000,
		Layers: []impl.Layer{{Level: 6, Keys: 1_600_000, MaxKeysPerFile: 1_100_000}, {Level: 0, Keys: 200_000}, {Level: 0, Keys: 200_000}},
		Caches: []string{"8MiB", "32MiB", "128MiB"}},
	"mid": {Name: "mid", Ledgers: 1000, EntriesPerLedger: 12500, BatchPerLedger: 1000,
		Layers: []impl.Layer{{Level: 6, Keys: 9_900_000, MaxKeysPerFile: 7_270_000}, {Level: 0, Keys: 1_300_000}, {Level: 0, Keys: 1_300_000}},
		Caches: []string{"64MiB", "256MiB", "1GiB"}},
	"nightly": {Name: "nightly", Ledgers: 1000, EntriesPerLedger: 50000, BatchPerLedger: 1000,
		Layers: []impl.Layer{{Level: 6, Keys: 40_000_000, MaxKeysPerFile: 7_270_000}, {Level: 5, Keys: 7_400_000, MaxKeysPerFile: 7_270_000},
			{Level: 0, Keys: 1_300_000}, {Level: 0, Keys: 1_300_000}},
		Caches: []string{"64MiB", "256MiB", "1GiB"}},
}

// Keys is the number of keys of the profile.
func (p Profile) Keys() int { return p.Ledgers * p.EntriesPerLedger }

// LocationOf is the location the dataset stores for an entry.
func LocationOf(ledger, entry int64) uint64 {
	seq := uint64(ledger)*1_000_003 + uint64(entry)
	return (seq/65536)<<32 | (seq%65536)*128
}

// Stream returns the profile's keys and values in write order.
func (p Profile) Stream() func() (key, value []byte, ok bool) {
	ledger, entry, round := 0, 0, 0
	key, value := make([]byte, impl.KeySize), make([]byte, 8)
	return func() ([]byte, []byte, bool) {
		if round*p.BatchPerLedger >= p.EntriesPerLedger {
			return nil, nil, false
		}
		e := round*p.BatchPerLedger + entry
		copy(key, impl.EncodeKey(int64(ledger), int64(e)))
		copy(value, impl.EncodeValue(LocationOf(int64(ledger), int64(e))))
		if entry++; entry == p.BatchPerLedger || round*p.BatchPerLedger+entry == p.EntriesPerLedger {
			entry = 0
			if ledger++; ledger == p.Ledgers {
				ledger, round = 0, round+1
			}
		}
		return key, value, true
	}
}

// BookieTable is BookKeeper's table options in the given layout: 64 KiB
// data blocks, 10 bits per key, 4 KiB metadata blocks, and LZ4 data
// blocks when compress is set (BookKeeper's default; see EnsureDataset).
func BookieTable(layout impl.Layout, compress bool) impl.TableOptions {
	return impl.TableOptions{Layout: layout, BlockSize: 64 << 10, RestartInterval: 16, BitsPerKey: 10, MetadataBlockSize: 4 << 10, Compress: compress}
}

// DatasetDir is where the datasets are built and reused:
// $LEDGERBENCH_DATA, else the user cache directory's ledgerbench/location.
func DatasetDir() (string, error) {
	if d := os.Getenv("LEDGERBENCH_DATA"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no dataset directory: set LEDGERBENCH_DATA (%v)", err)
	}
	return filepath.Join(d, "ledgerbench", "location"), nil
}

// EnsureDataset returns the directory of the profile's store in the given
// layout, with LZ4 data blocks or not, under root, building it first if it
// is not there. A build goes to a temporary directory renamed into place
// when complete, so an interrupted build is never reused; its DATASET file
// holds the recipe (profile, table options, format version), and a dataset
// built from another recipe is rebuilt.
//
// The benchmarks default to uncompressed data blocks: the Go LZ4 decoder
// (pierrec/lz4) decompresses a 64 KiB block at about 1.4 GB/s here, some
// 3× slower than liblz4 in RocksDB, so with LZ4 the data-block misses, not
// the filter and index layout, would dominate a get's cost. Tables are cut
// by key count, so the filter sizes are the same either way.
func EnsureDataset(root string, p Profile, layout impl.Layout, compress bool) (dir string, built bool, err error) {
	name := p.Name + "-" + string(layout) + "-raw"
	if compress {
		name = p.Name + "-" + string(layout) + "-lz4"
	}
	dir = filepath.Join(root, name+"-v"+strconv.Itoa(impl.FormatVersion))
	recipe := struct {
		Profile Profile
		Table   impl.TableOptions
		Format  int
	}{p, BookieTable(layout, compress), impl.FormatVersion}
	built, err = EnsureBuilt(dir, recipe, func(tmp string) error {
		c, err := impl.NewBlockCache(impl.CacheOptions{Capacity: 64 << 20, ShardBits: -1})
		if err != nil {
			return err
		}
		if err := impl.Build(impl.Options{Dir: tmp, Cache: c, Table: BookieTable(layout, compress)}, p.Layers, p.Stream()); err != nil {
			return fmt.Errorf("build dataset %s/%s: %w", p.Name, layout, err)
		}
		return nil
	})
	return dir, built, err
}

// EnsureBuilt makes dir hold what build writes for recipe: it returns at
// once if dir's DATASET file holds the recipe (as JSON); otherwise it
// removes dir, runs build on a temporary directory beside it, writes the
// recipe there and renames it into place, so an interrupted build is
// never taken for a dataset. A concurrent builder of the same recipe that
// renames first wins.
func EnsureBuilt(dir string, recipe any, build func(tmp string) error) (built bool, err error) {
	want, err := json.Marshal(recipe)
	if err != nil {
		return false, err
	}
	if have, err := os.ReadFile(filepath.Join(dir, "DATASET")); err == nil {
		if bytes.Equal(have, want) {
			return false, nil
		}
		// built from another recipe (an older version of this code)
		if err := os.RemoveAll(dir); err != nil {
			return false, err
		}
	}
	root := filepath.Dir(dir)
	if err := os.MkdirAll(root, 0o755); err != nil {
		return false, err
	}
	tmp, err := os.MkdirTemp(root, filepath.Base(dir)+".build-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(tmp)
	if err := build(tmp); err != nil {
		return false, err
	}
	if err := atomicfile.WriteSync(filepath.Join(tmp, "DATASET"), want); err != nil {
		return false, err
	}
	if err := os.Rename(tmp, dir); err != nil {
		if have, rerr := os.ReadFile(filepath.Join(dir, "DATASET")); rerr == nil && bytes.Equal(have, want) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// ParseSize parses a byte size such as 8MiB, 1GiB, 512KiB or 1048576.
func ParseSize(s string) (int64, error) {
	mult := int64(1)
	num := s
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if len(s) > len(u.suffix) && s[len(s)-len(u.suffix):] == u.suffix {
			mult, num = u.m, s[:len(s)-len(u.suffix)]
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 {
		return 0, errors.New("size must be a positive number of bytes, KiB, MiB or GiB: " + strconv.Quote(s))
	}
	return n * mult, nil
}
