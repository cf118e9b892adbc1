package pebbleindex

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ledgerbench/ledgerbench/impl/location"
)

// TestGetDuringDeleteLedger: a get racing with DeleteLedger reads the
// entry's location or ErrLedgerDeleted, never ErrNotFound (the range
// deletion was once committed before the ledger was marked deleted).
func TestGetDuringDeleteLedger(t *testing.T) {
	x, err := Open(Options{Dir: t.TempDir(), CacheSize: 1 << 20, CreateIfMissing: true})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	const ledgers = 200
	var batch []location.Location
	for l := int64(1); l <= ledgers; l++ {
		batch = append(batch, location.Location{Ledger: l, Entry: 5, Location: uint64(l)})
	}
	if err := x.AddLocations(batch); err != nil {
		t.Fatal(err)
	}
	var notFound atomic.Int64
	for l := int64(1); l <= ledgers; l++ {
		var stop atomic.Bool
		var wg sync.WaitGroup
		wg.Go(func() {
			for !stop.Load() {
				v, err := x.GetLocation(l, 5)
				switch {
				case errors.Is(err, location.ErrNotFound):
					notFound.Add(1)
				case err == nil && v != uint64(l):
					t.Errorf("ledger %d: location %d", l, v)
				case err != nil && !errors.Is(err, location.ErrLedgerDeleted):
					t.Errorf("ledger %d: %v", l, err)
				}
			}
		})
		if err := x.DeleteLedger(l); err != nil {
			t.Fatal(err)
		}
		stop.Store(true)
		wg.Wait()
	}
	if n := notFound.Load(); n > 0 {
		t.Errorf("%d gets during DeleteLedger read ErrNotFound for an entry neither deleted nor absent", n)
	}
}
