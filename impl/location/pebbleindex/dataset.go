package pebbleindex

import (
	"fmt"
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
	recipe := struct {
		Profile location.Profile
		Version int
	}{p, datasetVersion}
	built, err = location.EnsureBuilt(dir, recipe, func(tmp string) error { return build(tmp, p) })
	return dir, built, err
}

func build(dir string, p location.Profile) error {
	x, err := Open(Options{Dir: dir, CacheSize: 64 << 20, CreateIfMissing: true})
	if err != nil {
		return err
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
				return err
			}
		}
		err := b.Commit(pebble.NoSync)
		b.Close()
		if err != nil {
			x.Close()
			return err
		}
	}
	if err := x.Flush(); err != nil {
		x.Close()
		return err
	}
	if err := x.Compact(); err != nil {
		x.Close()
		return err
	}
	return x.Close()
}
