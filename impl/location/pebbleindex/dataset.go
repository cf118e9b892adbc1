package pebbleindex

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cockroachdb/pebble/v2"

	"github.com/ledgerbench/ledgerbench/impl/location"
)

// datasetVersion changes when the way datasets are built changes.
const datasetVersion = 1

// EnsureDataset returns the directory of the profile's Pebble database
// under root, building it if it is not there (or was built from another
// recipe): the profile's stream written in batches of 100,000, flushed,
// then compacted into the bottom level (Pebble lays out its own shape; a
// full compaction is the deterministic one). As impl/location's datasets,
// it is built in a temporary directory renamed into place.
func EnsureDataset(root string, p location.Profile) (dir string, built bool, err error) {
	dir = filepath.Join(root, fmt.Sprintf("%s-pebble-v%d", p.Name, datasetVersion))
	recipe, err := json.Marshal(struct {
		Profile location.Profile
		Version int
	}{p, datasetVersion})
	if err != nil {
		return "", false, err
	}
	if have, err := os.ReadFile(filepath.Join(dir, "DATASET")); err == nil {
		if bytes.Equal(have, recipe) {
			return dir, false, nil
		}
		if err := os.RemoveAll(dir); err != nil {
			return "", false, err
		}
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", false, err
	}
	tmp, err := os.MkdirTemp(root, filepath.Base(dir)+".build-")
	if err != nil {
		return "", false, err
	}
	defer os.RemoveAll(tmp)
	x, err := Open(Options{Dir: tmp, CacheSize: 64 << 20, CreateIfMissing: true})
	if err != nil {
		return "", false, err
	}
	next := p.Stream()
	for done := false; !done; {
		b := x.db.NewBatch()
		for range 100_000 {
			k, v, ok := next()
			if !ok {
				done = true
				break
			}
			if err := b.Set(k, v, nil); err != nil {
				b.Close()
				x.Close()
				return "", false, err
			}
		}
		if err := b.Commit(pebble.NoSync); err != nil {
			b.Close()
			x.Close()
			return "", false, err
		}
		b.Close()
	}
	if err := x.Flush(); err != nil {
		x.Close()
		return "", false, err
	}
	if err := x.Compact(); err != nil {
		x.Close()
		return "", false, err
	}
	if err := x.Close(); err != nil {
		return "", false, err
	}
	if err := os.WriteFile(filepath.Join(tmp, "DATASET"), recipe, 0o644); err != nil {
		return "", false, err
	}
	if err := os.Rename(tmp, dir); err != nil {
		if have, rerr := os.ReadFile(filepath.Join(dir, "DATASET")); rerr == nil && bytes.Equal(have, recipe) {
			return dir, false, nil
		}
		return "", false, err
	}
	return dir, true, nil
}
