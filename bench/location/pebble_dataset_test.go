package location

import (
	"testing"

	"github.com/ledgerbench/ledgerbench/impl/location/pebbleindex"
)

// TestDatasetShape: the smoke profile's Pebble dataset has its lower
// layers in the bottom level and its two L0 layers as L0 tables, and every
// key reads back with its location.
func TestDatasetShape(t *testing.T) {
	p := Profiles["smoke"]
	dir, built, err := EnsurePebbleDataset(t.TempDir(), p)
	if err != nil || !built {
		t.Fatalf("built %v: %v", built, err)
	}
	x, err := pebbleindex.Open(pebbleindex.Options{Dir: dir, CacheSize: 1 << 20, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	m := x.Metrics()
	if m.Levels[0].TablesCount < 2 || m.Levels[6].TablesCount < 1 {
		t.Fatalf("L0 %d tables, L6 %d: want at least 2 and 1", m.Levels[0].TablesCount, m.Levels[6].TablesCount)
	}
	for l := int64(0); l < int64(p.Ledgers); l++ {
		for e := int64(0); e < int64(p.EntriesPerLedger); e += 97 {
			if got, err := x.GetLocation(l, e); err != nil || got != LocationOf(l, e) {
				t.Fatalf("(%d, %d) = %d, %v", l, e, got, err)
			}
		}
		if last, err := x.LastEntry(l); err != nil || last != int64(p.EntriesPerLedger-1) {
			t.Fatalf("last entry of %d = %d, %v", l, last, err)
		}
	}
}
