package pebbleindex

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"

	"github.com/ledgerbench/ledgerbench/impl/location"
)

// Index is location.Index on Pebble.
type Index struct {
	db      *pebble.DB
	cache   interface{ Unref() }
	mu      sync.RWMutex
	deleted map[int64]bool
}

var _ location.Index = (*Index)(nil)

// Options configure Open.
type Options struct {
	Dir             string
	CacheSize       int64
	CreateIfMissing bool
	ReadOnly        bool
	// DisableAutoCompaction keeps flushed tables in L0 (dataset builds);
	// writes then never stall on the number of L0 tables.
	DisableAutoCompaction bool
}

func pebbleOptions(o Options) (*pebble.Options, func()) {
	c := pebble.NewCache(o.CacheSize)
	po := &pebble.Options{
		Cache:            c,
		MemTableSize:     64 << 20,
		LBaseMaxBytes:    256 << 20,
		ErrorIfNotExists: !o.CreateIfMissing,
		ReadOnly:         o.ReadOnly,

		DisableAutomaticCompactions: o.DisableAutoCompaction,
		Logger:                      quietLogger{},
	}
	if o.DisableAutoCompaction {
		po.L0StopWritesThreshold = 1 << 20 // nothing would ever bring L0 down
	}
	for i := range po.Levels {
		po.Levels[i].BlockSize = 64 << 10
		po.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
		po.TargetFileSizes[i] = 64 << 20
	}
	po.ApplyCompressionSettings(func() pebble.DBCompressionSettings { return pebble.DBCompressionNone })
	po.EnsureDefaults()
	return po, c.Unref
}

// quietLogger drops Pebble's informational messages (every open logs its
// log replay) and keeps its errors.
type quietLogger struct{}

func (quietLogger) Infof(string, ...any)      {}
func (quietLogger) Errorf(f string, a ...any) { pebble.DefaultLogger.Errorf(f, a...) }
func (quietLogger) Fatalf(f string, a ...any) { pebble.DefaultLogger.Fatalf(f, a...) }

// Open opens (or creates) the index in o.Dir.
func Open(o Options) (*Index, error) {
	if o.CacheSize <= 0 {
		return nil, fmt.Errorf("%w (got %d)", location.ErrCacheSize, o.CacheSize)
	}
	po, unref := pebbleOptions(o)
	db, err := pebble.Open(o.Dir, po)
	unref() // the DB holds its own reference
	if err != nil {
		return nil, fmt.Errorf("pebble %s: %w", o.Dir, err)
	}
	x := &Index{db: db, deleted: map[int64]bool{}}
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: []byte{0xff, 'D'}, UpperBound: []byte{0xff, 'E'}})
	if err != nil {
		db.Close()
		return nil, err
	}
	for ok := it.First(); ok; ok = it.Next() {
		if k := it.Key(); len(k) == 10 {
			x.deleted[int64(binary.BigEndian.Uint64(k[2:]))] = true
		}
	}
	if err := it.Close(); err != nil {
		db.Close()
		return nil, err
	}
	return x, nil
}

func marker(ledger int64) []byte {
	return binary.BigEndian.AppendUint64([]byte{0xff, 'D'}, uint64(ledger))
}

func (x *Index) isDeleted(ledger int64) bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.deleted[ledger]
}

// AddLocations writes the batch with sync.
func (x *Index) AddLocations(batch []location.Location) error {
	b := x.db.NewBatch()
	defer b.Close()
	for _, l := range batch {
		if err := location.CheckIDs(l.Ledger, l.Entry); err != nil {
			return err
		}
		if x.isDeleted(l.Ledger) {
			return fmt.Errorf("put (%d, %d): %w", l.Ledger, l.Entry, location.ErrLedgerDeleted)
		}
		if err := b.Set(location.EncodeKey(l.Ledger, l.Entry), location.EncodeValue(l.Location), nil); err != nil {
			return err
		}
	}
	return b.Commit(pebble.Sync)
}

// GetLocation returns an entry's location.
func (x *Index) GetLocation(ledger, entry int64) (uint64, error) {
	if err := location.CheckIDs(ledger, entry); err != nil {
		return 0, err
	}
	if x.isDeleted(ledger) {
		return 0, fmt.Errorf("ledger %d: %w", ledger, location.ErrLedgerDeleted)
	}
	v, closer, err := x.db.Get(location.EncodeKey(ledger, entry))
	if errors.Is(err, pebble.ErrNotFound) {
		// DeleteLedger marks the ledger before its range deletion is
		// visible: a not-found that the deletion caused sees the mark.
		if x.isDeleted(ledger) {
			return 0, fmt.Errorf("ledger %d: %w", ledger, location.ErrLedgerDeleted)
		}
		return 0, location.ErrNotFound
	}
	if err != nil {
		return 0, err
	}
	defer closer.Close()
	return location.DecodeValue(v)
}

// LastEntry is a reverse seek below the next ledger's first key.
func (x *Index) LastEntry(ledger int64) (int64, error) {
	if err := location.CheckIDs(ledger, 0); err != nil {
		return 0, err
	}
	if x.isDeleted(ledger) {
		return 0, fmt.Errorf("ledger %d: %w", ledger, location.ErrLedgerDeleted)
	}
	upper := location.EncodeKey(ledger+1, 0)
	if ledger == math.MaxInt64 {
		upper = []byte{0x80}
	}
	it, err := x.db.NewIter(&pebble.IterOptions{LowerBound: location.EncodeKey(ledger, 0), UpperBound: upper})
	if err != nil {
		return 0, err
	}
	defer it.Close()
	if !it.Last() {
		if err := it.Error(); err != nil {
			return 0, err
		}
		if x.isDeleted(ledger) { // deleted while we looked (see GetLocation)
			return 0, fmt.Errorf("ledger %d: %w", ledger, location.ErrLedgerDeleted)
		}
		return 0, fmt.Errorf("ledger %d: %w", ledger, location.ErrNotFound)
	}
	_, e, err := location.DecodeKey(it.Key())
	return e, err
}

// DeleteLedger removes the ledger's entries and records it as deleted.
func (x *Index) DeleteLedger(ledger int64) error {
	if err := location.CheckIDs(ledger, 0); err != nil {
		return err
	}
	b := x.db.NewBatch()
	defer b.Close()
	if err := b.DeleteRange(location.EncodeKey(ledger, 0), location.EncodeKey(ledger+1, 0), nil); err != nil {
		return err
	}
	if err := b.Set(marker(ledger), nil, nil); err != nil {
		return err
	}
	// Marked deleted before the range deletion becomes visible: a get in
	// between reads ErrLedgerDeleted, never ErrNotFound for an entry that
	// is neither deleted nor absent. A failed commit unmarks it.
	x.mu.Lock()
	was := x.deleted[ledger]
	x.deleted[ledger] = true
	x.mu.Unlock()
	if err := b.Commit(pebble.Sync); err != nil {
		x.mu.Lock()
		x.deleted[ledger] = was
		x.mu.Unlock()
		return err
	}
	return nil
}

// Flush flushes the memtable.
func (x *Index) Flush() error { return x.db.Flush() }

// Compact compacts every location key.
func (x *Index) Compact() error {
	return x.db.Compact(context.Background(), location.EncodeKey(0, 0), []byte{0x80}, true)
}

// Close closes the database.
func (x *Index) Close() error { return x.db.Close() }

// Metrics is Pebble's metrics (block cache hits and misses, levels).
func (x *Index) Metrics() *pebble.Metrics { return x.db.Metrics() }
