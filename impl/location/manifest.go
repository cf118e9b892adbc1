package location

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"

	"github.com/ledgerbench/ledgerbench/internal/atomicfile"
)

// The manifest is the store's commit point: the tables of each level, the
// deleted key ranges, the next file number and the write-ahead log in use.
// It is replaced atomically (written to a temporary file, synced, renamed,
// directory synced), so a crash at any moment leaves either the old or the
// new one. Its first line is the CRC-32C of the JSON that follows.
type manifest struct {
	NextFile  uint64          `json:"next_file"`
	LogNumber uint64          `json:"log_number"`
	Levels    [][]fileMeta    `json:"levels"`
	Deleted   []deletedRange  `json:"deleted,omitempty"`
	Layout    Layout          `json:"layout"`
	Extra     json.RawMessage `json:"extra,omitempty"`
}

type fileMeta struct {
	Num      uint64 `json:"num"`
	Size     int64  `json:"size"`
	Keys     int    `json:"keys"`
	Smallest hexKey `json:"smallest"`
	Largest  hexKey `json:"largest"`
}

type deletedRange struct {
	Start hexKey `json:"start"`
	End   hexKey `json:"end"` // exclusive
}

func (d deletedRange) contains(k []byte) bool {
	return bytes.Compare(k, d.Start) >= 0 && bytes.Compare(k, d.End) < 0
}

type hexKey []byte

func (k hexKey) MarshalText() ([]byte, error) { return []byte(hex.EncodeToString(k)), nil }
func (k *hexKey) UnmarshalText(b []byte) error {
	d, err := hex.DecodeString(string(b))
	*k = d
	return err
}

const numLevels = 7

func tableName(dir string, num uint64) string {
	return filepath.Join(dir, fmt.Sprintf("%06d.sst", num))
}
func logName(dir string, num uint64) string { return filepath.Join(dir, fmt.Sprintf("%06d.log", num)) }

func readManifest(dir string) (*manifest, bool, error) {
	b, err := os.ReadFile(filepath.Join(dir, "MANIFEST"))
	if os.IsNotExist(err) {
		return &manifest{NextFile: 1, Levels: make([][]fileMeta, numLevels)}, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	nl := bytes.IndexByte(b, '\n')
	if nl < 0 {
		return nil, false, fmt.Errorf("%w: %s/MANIFEST: no checksum line", ErrCorrupt, dir)
	}
	want, err := strconv.ParseUint(string(b[:nl]), 16, 32)
	if err != nil || crc32.Checksum(b[nl+1:], castagnoli) != uint32(want) {
		return nil, false, fmt.Errorf("%w: %s/MANIFEST: checksum mismatch", ErrCorrupt, dir)
	}
	var m manifest
	if err := json.Unmarshal(b[nl+1:], &m); err != nil {
		return nil, false, fmt.Errorf("%w: %s/MANIFEST: %v", ErrCorrupt, dir, err)
	}
	if len(m.Levels) != numLevels {
		return nil, false, fmt.Errorf("%w: %s/MANIFEST: %d levels", ErrCorrupt, dir, len(m.Levels))
	}
	return &m, true, nil
}

func writeManifest(dir string, m *manifest) error {
	body, err := json.Marshal(m)
	if err != nil {
		return err
	}
	out := append([]byte(fmt.Sprintf("%08x\n", crc32.Checksum(body, castagnoli))), body...)
	if err := atomicfile.Replace(filepath.Join(dir, "MANIFEST"), out); err != nil {
		return err
	}
	return atomicfile.SyncDir(dir)
}
