package dedup

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/ledgerbench/ledgerbench/internal/atomicfile"
)

// Snapshot is the persisted state of a topic's deduplication as of a log
// position: recovery replays the entries after Position.
type Snapshot struct {
	Position      Position
	Sequences     map[string]int64
	ReplPositions map[string]Position
}

// SnapshotStore keeps the latest snapshot.
type SnapshotStore interface {
	Save(*Snapshot) error
	// Load returns the newest valid snapshot. It returns ErrNoSnapshot
	// (wrapped, with the reasons) when none is usable; corruption of a
	// newer snapshot that was skipped is reported in Skipped.
	Load() (s *Snapshot, skipped []error, err error)
}

// ErrNoSnapshot means no usable snapshot exists: recovery rebuilds from the
// start of the log.
var ErrNoSnapshot = errors.New("no usable snapshot")

// ErrCorrupt is wrapped by every error about a damaged snapshot.
var ErrCorrupt = errors.New("corrupt snapshot")

// Encoding (all integers big-endian):
//
//	"LBDS" | version u8 | ledger i64 | entry i64
//	| n u32 | n × (len u16 | name | seq i64)
//	| m u32 | m × (len u16 | name | ledger i64 | entry i64)
//	| crc32c u32 of everything before it
const snapshotVersion = 1

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// MarshalBinary encodes s with its checksum. Names are written in sorted
// order, so equal snapshots encode equally.
func (s *Snapshot) MarshalBinary() ([]byte, error) {
	b := []byte("LBDS")
	b = append(b, snapshotVersion)
	b = binary.BigEndian.AppendUint64(b, uint64(s.Position.Ledger))
	b = binary.BigEndian.AppendUint64(b, uint64(s.Position.Entry))
	names := slices.Sorted(maps.Keys(s.Sequences))
	b = binary.BigEndian.AppendUint32(b, uint32(len(names)))
	for _, n := range names {
		var err error
		if b, err = appendName(b, n); err != nil {
			return nil, err
		}
		b = binary.BigEndian.AppendUint64(b, uint64(s.Sequences[n]))
	}
	repl := slices.Sorted(maps.Keys(s.ReplPositions))
	b = binary.BigEndian.AppendUint32(b, uint32(len(repl)))
	for _, n := range repl {
		var err error
		if b, err = appendName(b, n); err != nil {
			return nil, err
		}
		b = binary.BigEndian.AppendUint64(b, uint64(s.ReplPositions[n].Ledger))
		b = binary.BigEndian.AppendUint64(b, uint64(s.ReplPositions[n].Entry))
	}
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli)), nil
}

// appendName appends a producer name with its 16-bit length.
func appendName(b []byte, n string) ([]byte, error) {
	if len(n) > 0xffff {
		return nil, fmt.Errorf("producer name of %d bytes is too long", len(n))
	}
	b = binary.BigEndian.AppendUint16(b, uint16(len(n)))
	return append(b, n...), nil
}

// UnmarshalBinary decodes and verifies an encoded snapshot. Any damage is
// an error wrapping ErrCorrupt, never a panic.
func (s *Snapshot) UnmarshalBinary(b []byte) error {
	if len(b) < 4+1+16+4+4+4 {
		return fmt.Errorf("%w: %d bytes is too short", ErrCorrupt, len(b))
	}
	body, sum := b[:len(b)-4], binary.BigEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return fmt.Errorf("%w: checksum mismatch", ErrCorrupt)
	}
	if string(body[:4]) != "LBDS" || body[4] != snapshotVersion {
		return fmt.Errorf("%w: bad magic or version %d", ErrCorrupt, body[4])
	}
	r := reader{b: body[5:]}
	out := Snapshot{Sequences: map[string]int64{}, ReplPositions: map[string]Position{}}
	out.Position = Position{int64(r.u64()), int64(r.u64())}
	for n := r.u32(); n > 0 && r.err == nil; n-- {
		name := r.str()
		out.Sequences[name] = int64(r.u64())
	}
	for n := r.u32(); n > 0 && r.err == nil; n-- {
		name := r.str()
		out.ReplPositions[name] = Position{int64(r.u64()), int64(r.u64())}
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%d trailing bytes", len(r.b))
	}
	if r.err != nil {
		return fmt.Errorf("%w: %v", ErrCorrupt, r.err)
	}
	*s = out
	return nil
}

type reader struct {
	b   []byte
	err error
}

func (r *reader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if len(r.b) < n {
		r.err = fmt.Errorf("truncated: need %d bytes, have %d", n, len(r.b))
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) u64() uint64 {
	if v := r.take(8); v != nil {
		return binary.BigEndian.Uint64(v)
	}
	return 0
}

func (r *reader) u32() uint32 {
	if v := r.take(4); v != nil {
		return binary.BigEndian.Uint32(v)
	}
	return 0
}

func (r *reader) str() string {
	v := r.take(2)
	if v == nil {
		return ""
	}
	return string(r.take(int(binary.BigEndian.Uint16(v))))
}

// FileStore keeps snapshots in a directory: "snapshot" (the newest) and
// "snapshot.prev" (the one before). Save writes "snapshot.tmp", fsyncs it,
// renames the current snapshot to snapshot.prev, renames the new one into
// place and fsyncs the directory: a crash at any step leaves at least one
// valid snapshot, which Load finds.
type FileStore struct {
	Dir string
	// beforeRename, when set (tests), runs between the fsync of the new
	// file and the renames; an error stops Save there, as a crash would.
	beforeRename func() error
}

const (
	snapName = "snapshot"
	prevName = "snapshot.prev"
	tmpName  = "snapshot.tmp"
)

func (f *FileStore) Save(s *Snapshot) error {
	b, err := s.MarshalBinary()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(f.Dir, 0o755); err != nil {
		return err
	}
	tmp := filepath.Join(f.Dir, tmpName)
	if err := atomicfile.WriteSync(tmp, b); err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if f.beforeRename != nil {
		if err := f.beforeRename(); err != nil {
			return err
		}
	}
	cur := filepath.Join(f.Dir, snapName)
	if _, err := os.Stat(cur); err == nil {
		if err := os.Rename(cur, filepath.Join(f.Dir, prevName)); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp, cur); err != nil {
		return err
	}
	return atomicfile.SyncDir(f.Dir)
}

func (f *FileStore) Load() (*Snapshot, []error, error) {
	var skipped []error
	for _, name := range []string{snapName, prevName} {
		path := filepath.Join(f.Dir, name)
		b, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			skipped = append(skipped, fmt.Errorf("%s: %w", path, err))
			continue
		}
		var s Snapshot
		if err := s.UnmarshalBinary(b); err != nil {
			skipped = append(skipped, fmt.Errorf("%s: %w", path, err))
			continue
		}
		return &s, skipped, nil
	}
	return nil, skipped, fmt.Errorf("%w in %s", ErrNoSnapshot, f.Dir)
}
