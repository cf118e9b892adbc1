package offload

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

const (
	blockHeaderLen  = 16 // "LBOB" | dataLen u32 | firstEntry i64
	recordHeaderLen = 12 // length i32 | entryID i64
	// DefaultBlockSize is the block size of Write.
	DefaultBlockSize = 1 << 20
)

// ErrCorrupt is wrapped by every error about damaged data.
var ErrCorrupt = errors.New("corrupt offloaded ledger")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// IndexEntry is one entry of the sparse index: the first entry of a block
// and the block's offset in the data object.
type IndexEntry struct {
	EntryID int64
	Offset  int64
}

// Index is a ledger's offload index.
type Index struct {
	LedgerID  int64
	LAC       int64 // last add confirmed: the last entry of the ledger
	BlockSize int
	Entries   []IndexEntry
}

// Floor returns the index entry of the block holding entry id.
func (ix *Index) Floor(id int64) (IndexEntry, bool) {
	lo, hi := 0, len(ix.Entries)
	for lo < hi {
		m := (lo + hi) / 2
		if ix.Entries[m].EntryID <= id {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 {
		return IndexEntry{}, false
	}
	return ix.Entries[lo-1], true
}

// MarshalBinary encodes the index with its checksum.
func (ix *Index) MarshalBinary() ([]byte, error) {
	b := []byte("LBOI")
	b = binary.BigEndian.AppendUint64(b, uint64(ix.LedgerID))
	b = binary.BigEndian.AppendUint64(b, uint64(ix.LAC))
	b = binary.BigEndian.AppendUint32(b, uint32(ix.BlockSize))
	b = binary.BigEndian.AppendUint32(b, uint32(len(ix.Entries)))
	for _, e := range ix.Entries {
		b = binary.BigEndian.AppendUint64(b, uint64(e.EntryID))
		b = binary.BigEndian.AppendUint64(b, uint64(e.Offset))
	}
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli)), nil
}

// UnmarshalBinary decodes and verifies an index.
func (ix *Index) UnmarshalBinary(b []byte) error {
	const head = 4 + 8 + 8 + 4 + 4
	if len(b) < head+4 {
		return fmt.Errorf("%w: index of %d bytes", ErrCorrupt, len(b))
	}
	body := b[:len(b)-4]
	if crc32.Checksum(body, castagnoli) != binary.BigEndian.Uint32(b[len(b)-4:]) {
		return fmt.Errorf("%w: index checksum mismatch", ErrCorrupt)
	}
	if string(body[:4]) != "LBOI" {
		return fmt.Errorf("%w: bad index magic", ErrCorrupt)
	}
	out := Index{
		LedgerID:  int64(binary.BigEndian.Uint64(body[4:])),
		LAC:       int64(binary.BigEndian.Uint64(body[12:])),
		BlockSize: int(binary.BigEndian.Uint32(body[20:])),
	}
	n := int(binary.BigEndian.Uint32(body[24:]))
	if len(body) != head+16*n || out.BlockSize < blockHeaderLen+recordHeaderLen {
		return fmt.Errorf("%w: index says %d entries and block size %d in %d bytes", ErrCorrupt, n, out.BlockSize, len(body))
	}
	for i := 0; i < n; i++ {
		p := body[head+16*i:]
		out.Entries = append(out.Entries, IndexEntry{int64(binary.BigEndian.Uint64(p)), int64(binary.BigEndian.Uint64(p[8:]))})
	}
	*ix = out
	return nil
}

// Write lays out entries 0…len(entries)-1 of a ledger in blocks of
// blockSize bytes and returns the data object and its index. An entry that
// does not fit in an empty block is an error.
func Write(ledgerID int64, entries [][]byte, blockSize int) ([]byte, *Index, error) {
	if blockSize < blockHeaderLen+recordHeaderLen {
		return nil, nil, fmt.Errorf("block size %d is too small", blockSize)
	}
	ix := &Index{LedgerID: ledgerID, LAC: int64(len(entries)) - 1, BlockSize: blockSize}
	var data []byte
	blockStart, dataLen := -1, 0
	closeBlock := func() {
		if blockStart < 0 {
			return
		}
		binary.BigEndian.PutUint32(data[blockStart+4:], uint32(dataLen))
	}
	for id, payload := range entries {
		need := recordHeaderLen + len(payload)
		if blockHeaderLen+need > blockSize {
			return nil, nil, fmt.Errorf("entry %d of %d bytes does not fit in a block of %d", id, len(payload), blockSize)
		}
		if blockStart < 0 || blockHeaderLen+dataLen+need > blockSize {
			closeBlock()
			if blockStart >= 0 {
				data = append(data, make([]byte, blockSize-(len(data)-blockStart))...) // pad to the block end
			}
			blockStart, dataLen = len(data), 0
			ix.Entries = append(ix.Entries, IndexEntry{EntryID: int64(id), Offset: int64(blockStart)})
			data = append(data, "LBOB"...)
			data = binary.BigEndian.AppendUint32(data, 0)
			data = binary.BigEndian.AppendUint64(data, uint64(id))
		}
		data = binary.BigEndian.AppendUint32(data, uint32(int32(len(payload))))
		data = binary.BigEndian.AppendUint64(data, uint64(id))
		data = append(data, payload...)
		dataLen += need
	}
	closeBlock()
	return data, ix, nil
}
