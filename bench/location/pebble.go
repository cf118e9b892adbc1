package location

import (
	"github.com/ledgerbench/ledgerbench/harness"
	impl "github.com/ledgerbench/ledgerbench/impl/location"
	"github.com/ledgerbench/ledgerbench/impl/location/pebbleindex"
)

func init() {
	openPebble = func(t *harness.Trial, root string, p Profile, capacity int64) (*opened, error) {
		datasets.Lock()
		dir, _, err := EnsurePebbleDataset(root, p)
		datasets.Unlock()
		if err != nil {
			return nil, err
		}
		x, err := pebbleindex.Open(pebbleindex.Options{Dir: dir, CacheSize: capacity, ReadOnly: true})
		if err != nil {
			return nil, err
		}
		// Pebble has no per-get counters: only the throughput is reported.
		return &opened{
			get:   func(l, e int64, _ *impl.Perf) (uint64, error) { return x.GetLocation(l, e) },
			last:  func(l int64, _ *impl.Perf) (int64, error) { return x.LastEntry(l) },
			close: x.Close, noPerf: true,
		}, nil
	}
}
