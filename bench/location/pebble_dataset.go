package location

import (
	"fmt"
	"path/filepath"

	impl "github.com/ledgerbench/ledgerbench/impl/location"
	"github.com/ledgerbench/ledgerbench/impl/location/pebbleindex"
)

// pebbleDatasetVersion changes when the way Pebble datasets are built
// changes.
const pebbleDatasetVersion = 3

// EnsurePebbleDataset returns the directory of the profile's Pebble database
// under root, building it if it is not there (or was built from another
// recipe), in the profile's shape as far as Pebble lets one choose it: the
// keys of the layers below L0 are written in batches of 100,000, flushed
// and compacted into the bottom level, then each L0 layer is written and
// flushed into L0, with automatic compactions off (Pebble's flush may cut
// a layer into several L0 tables). As the store's datasets, it is built in
// a temporary directory renamed into place. The keys go through the
// index's own AddLocations.
func EnsurePebbleDataset(root string, p Profile) (dir string, built bool, err error) {
	dir = filepath.Join(root, fmt.Sprintf("%s-pebble-v%d", p.Name, pebbleDatasetVersion))
	recipe := struct {
		Profile Profile
		Version int
	}{p, pebbleDatasetVersion}
	built, err = EnsureBuilt(dir, recipe, func(tmp string) error { return buildPebble(tmp, p) })
	return dir, built, err
}

func buildPebble(dir string, p Profile) error {
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
	batch := make([]impl.Location, 0, 100_000)
	write := func(x *pebbleindex.Index, n int) error {
		for n > 0 {
			batch = batch[:0]
			for range min(n, cap(batch)) {
				k, v, ok := next()
				if !ok {
					return fmt.Errorf("profile %s: stream ended early", p.Name)
				}
				l, e, err := impl.DecodeKey(k)
				if err != nil {
					return err
				}
				loc, err := impl.DecodeValue(v)
				if err != nil {
					return err
				}
				batch = append(batch, impl.Location{Ledger: l, Entry: e, Location: loc})
				n--
			}
			if err := x.AddLocations(batch); err != nil {
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
		run func(x *pebbleindex.Index) error
	}{
		{false, func(x *pebbleindex.Index) error {
			if err := write(x, lower); err != nil {
				return err
			}
			return x.Compact()
		}},
		{true, func(x *pebbleindex.Index) error {
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
		x, err := pebbleindex.Open(pebbleindex.Options{Dir: dir, CacheSize: 64 << 20, CreateIfMissing: true, DisableAutoCompaction: phase.l0})
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
