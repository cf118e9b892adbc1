package location

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Location is where an entry is stored: BookKeeper's entry log ID << 32 |
// offset in the log.
type Location struct {
	Ledger, Entry int64
	Location      uint64
}

// Index is BookKeeper's entry location index: (ledger, entry) → location.
// Implementations: *EntryLocationIndex (this package's store) and the
// Pebble-backed one in impl/location/pebbleindex.
type Index interface {
	// AddLocations writes a batch durably (BookKeeper writes the
	// locations of a flushed write cache, sorted, with sync).
	AddLocations(batch []Location) error
	// GetLocation returns the location of an entry; ErrNotFound if the
	// entry was never added, ErrLedgerDeleted if its ledger was deleted.
	GetLocation(ledger, entry int64) (uint64, error)
	// LastEntry returns the greatest entry ID of the ledger
	// (getLastEntryInLedger); ErrNotFound for an unknown ledger.
	LastEntry(ledger int64) (int64, error)
	// DeleteLedger removes every entry of the ledger.
	DeleteLedger(ledger int64) error
	Flush() error
	Compact() error
	Close() error
}

// Errors of the index.
var (
	ErrLedgerDeleted = errors.New("ledger deleted")
	ErrBadID         = errors.New("ledger and entry IDs must not be negative")
)

// EncodeKey is BookKeeper's LongPairWrapper: ledger and entry as two
// big-endian uint64s.
func EncodeKey(ledger, entry int64) []byte {
	return be64(be64(make([]byte, 0, KeySize), uint64(ledger)), uint64(entry))
}

// DecodeKey is EncodeKey's inverse.
func DecodeKey(k []byte) (ledger, entry int64, err error) {
	if len(k) != KeySize {
		return 0, 0, fmt.Errorf("%w (got %d bytes)", ErrKeySize, len(k))
	}
	return int64(binary.BigEndian.Uint64(k)), int64(binary.BigEndian.Uint64(k[8:])), nil
}

// EncodeValue is BookKeeper's LongWrapper: a big-endian uint64.
func EncodeValue(loc uint64) []byte { return be64(make([]byte, 0, 8), loc) }

// DecodeValue is EncodeValue's inverse.
func DecodeValue(v []byte) (uint64, error) {
	if len(v) != 8 {
		return 0, fmt.Errorf("%w: location of %d bytes", ErrCorrupt, len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}

// CheckIDs refuses negative ledger and entry IDs.
func CheckIDs(ledger, entry int64) error {
	if ledger < 0 || entry < 0 {
		return fmt.Errorf("%w: (%d, %d)", ErrBadID, ledger, entry)
	}
	return nil
}

// EntryLocationIndex is the Index on this package's Store.
type EntryLocationIndex struct{ s *Store }

// OpenIndex opens the index's store.
func OpenIndex(o Options) (*EntryLocationIndex, error) {
	s, err := Open(o)
	if err != nil {
		return nil, err
	}
	return &EntryLocationIndex{s: s}, nil
}

// Store is the underlying store.
func (x *EntryLocationIndex) Store() *Store { return x.s }

func (x *EntryLocationIndex) AddLocations(batch []Location) error {
	keys, values := make([][]byte, len(batch)), make([][]byte, len(batch))
	for i, l := range batch {
		if err := CheckIDs(l.Ledger, l.Entry); err != nil {
			return err
		}
		keys[i], values[i] = EncodeKey(l.Ledger, l.Entry), EncodeValue(l.Location)
	}
	err := x.s.Apply(keys, values)
	if errors.Is(err, ErrDeleted) {
		return fmt.Errorf("%w: %w", ErrLedgerDeleted, err)
	}
	return err
}

func (x *EntryLocationIndex) GetLocation(ledger, entry int64) (uint64, error) {
	return x.GetLocationPerf(ledger, entry, nil)
}

// GetLocationPerf is GetLocation accumulating the get's counters in p.
func (x *EntryLocationIndex) GetLocationPerf(ledger, entry int64, p *Perf) (uint64, error) {
	if err := CheckIDs(ledger, entry); err != nil {
		return 0, err
	}
	v, err := x.s.Get(EncodeKey(ledger, entry), p)
	if errors.Is(err, ErrDeleted) {
		return 0, fmt.Errorf("ledger %d: %w", ledger, ErrLedgerDeleted)
	}
	if err != nil {
		return 0, err
	}
	return DecodeValue(v)
}

func (x *EntryLocationIndex) LastEntry(ledger int64) (int64, error) {
	return x.LastEntryPerf(ledger, nil)
}

// LastEntryPerf is LastEntry accumulating counters in p.
func (x *EntryLocationIndex) LastEntryPerf(ledger int64, p *Perf) (int64, error) {
	if err := CheckIDs(ledger, 0); err != nil {
		return 0, err
	}
	if _, del := x.s.deletedRangeLocked(EncodeKey(ledger, 0)); del {
		return 0, fmt.Errorf("ledger %d: %w", ledger, ErrLedgerDeleted)
	}
	k, _, err := x.s.Floor(EncodeKey(ledger, math.MaxInt64), p)
	if err != nil {
		return 0, err
	}
	l, e, err := DecodeKey(k)
	if err != nil {
		return 0, err
	}
	if l != ledger {
		return 0, fmt.Errorf("ledger %d: %w", ledger, ErrNotFound)
	}
	return e, nil
}

func (x *EntryLocationIndex) DeleteLedger(ledger int64) error {
	if err := CheckIDs(ledger, 0); err != nil {
		return err
	}
	return x.s.DeleteRange(EncodeKey(ledger, 0), EncodeKey(ledger+1, 0))
}

func (x *EntryLocationIndex) Flush() error   { return x.s.Flush() }
func (x *EntryLocationIndex) Compact() error { return x.s.Compact() }
func (x *EntryLocationIndex) Close() error   { return x.s.Close() }
