package pebbleindex

import (
	"fmt"
	"path/filepath"

	"github.com/cockroachdb/pebble/v2"

	"github.com/ledgerbench/ledgerbench/impl/location"
)

// datasetVersion changes when the way datasets are built changes.
const datasetVersion = 2

// EnsureDataset returns the directory of the profile's Pebble database
// under root, building it if it is not there (or was built from another
// recipe), in the profile's shape as far as Pebble lets one choose it: the
// keys of the layers below L0 are written in batches of 100,000, flushed
// and compacted into the bottom level, then each L0 layer is written and
// flushed into L0, with automatic compactions off (Pebble's flush may cut
// a layer into several L0 tables). As impl/location's datasets, it is
// built in a temporary directory renamed into place.
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
	lower := 0
	for i, l := range p.Layers {
		if l.Level > 0 {
			if i > 0 && p.Layers[i-1].Level == 0 {
				return fmt.Errorf("profile %s: a layer below L0 after an L0 layer", p.Name)
			}
			lower += l.Keys
		}
	}
	next := p.Stream()
	// write adds the next n keys of the stream and flushes them.
	write := func(x *Index, n int) error {
		for n > 0 {
			b := x.db.NewBatch()
			for range min(n, 100_000) {
				k, v, ok := next()
				if !ok {
					b.Close()
					return fmt.Errorf("profile %s: stream ended early", p.Name)
				}
				if err := b.Set(k, v, nil); err != nil {
					b.Close()
					return err
				}
				n--
			}
			err := b.Commit(pebble.NoSync)
			b.Close()
			if err != nil {
				return err
			}
		}
		return x.Flush()
	}
	// The lower layers with compactions on (writes would stall on L0
	// otherwise), compacted into the bottom level; then the L0 layers with
	// compactions off, so that each flush stays in L0.
	for _, phase := range []struct {
		l0  bool
		run func(x *Index) error
	}{
		{false, func(x *Index) error {
			if err := write(x, lower); err != nil {
				return err
			}
			return x.Compact()
		}},
		{true, func(x *Index) error {
			for _, l := range p.Layers {
				if l.Level == 0 {
					if err := write(x, l.Keys); err != nil {
						return err
					}
				}
			}
			return nil
		}},
	} {
		x, err := Open(Options{Dir: dir, CacheSize: 64 << 20, CreateIfMissing: true, DisableAutoCompaction: phase.l0})
		if err != nil {
			return err
		}
		if err := phase.run(x); err != nil {
			x.Close()
			return err
		}
		if err := x.Close(); err != nil {
			return err
		}
	}
	return nil
}
