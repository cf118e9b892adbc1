package offload

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Entry is one entry read from an offloaded ledger.
type Entry struct {
	ID   int64
	Data []byte
}

// ErrBadRange is wrapped by errors about a requested range.
var ErrBadRange = errors.New("bad entry range")

// Stats counts what a handle did.
type Stats struct {
	Entries     int64 // entries returned
	BytesParsed int64 // bytes the stream moved through: headers read and payloads read or skipped
	Seeks       int64
	BlockReads  int64 // buffer refills from the blob
}

// bufSize is the stream's read buffer (the BackedInputStream's).
const bufSize = 64 << 10

// Handle reads ranges of entries of one offloaded ledger.
type Handle struct {
	ix      *Index
	blob    Blob
	offsets OffsetCache
	Stats   Stats

	pos              int64 // stream position
	buf              []byte
	bufStart, bufEnd int64
	blockEnds        map[int64]int64 // block offset → end of its records
}

// Open opens the ledger stored under key with an offset cache (NoCache{}
// for none).
func Open(store BlobStore, key string, offsets OffsetCache) (*Handle, error) {
	ib, err := store.Open(key + ".index")
	if err != nil {
		return nil, err
	}
	raw := make([]byte, ib.Size())
	_, err = ib.ReadAt(raw, 0)
	ib.Close()
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	ix := &Index{}
	if err := ix.UnmarshalBinary(raw); err != nil {
		return nil, fmt.Errorf("%s.index: %w", key, err)
	}
	blob, err := store.Open(key)
	if err != nil {
		return nil, err
	}
	if offsets == nil {
		offsets = NoCache{}
	}
	return &Handle{ix: ix, blob: blob, offsets: offsets, buf: make([]byte, bufSize), bufStart: -1, blockEnds: map[int64]int64{}}, nil
}

// Close releases the data object.
func (h *Handle) Close() error { return h.blob.Close() }

// Index returns the ledger's index.
func (h *Handle) Index() *Index { return h.ix }

// read copies n bytes at the stream position into dst (or skips them when
// dst is nil) and advances.
func (h *Handle) read(dst []byte, n int) error {
	if n < 0 || h.pos+int64(n) > h.blob.Size() {
		return fmt.Errorf("%w: %d bytes at offset %d run past the object's %d bytes", ErrCorrupt, n, h.pos, h.blob.Size())
	}
	h.Stats.BytesParsed += int64(n)
	for n > 0 {
		if h.pos < h.bufStart || h.pos >= h.bufEnd {
			if dst == nil && int64(n) > bufSize { // skip without reading
				h.pos += int64(n)
				return nil
			}
			m, err := h.blob.ReadAt(h.buf, h.pos)
			if m == 0 && err != nil {
				return fmt.Errorf("read at %d: %w", h.pos, err)
			}
			h.bufStart, h.bufEnd = h.pos, h.pos+int64(m)
			h.Stats.BlockReads++
		}
		c := min(int64(n), h.bufEnd-h.pos)
		if dst != nil {
			off := h.pos - h.bufStart
			copy(dst, h.buf[off:off+c])
			dst = dst[c:]
		}
		h.pos += c
		n -= int(c)
	}
	return nil
}

func (h *Handle) seek(off int64) {
	h.pos = off
	h.Stats.Seeks++
}

// blockEnd returns where the records of the block holding pos end,
// parsing (once) that block's header.
func (h *Handle) blockEnd(pos int64) (int64, error) {
	start := pos - pos%int64(h.ix.BlockSize)
	if end, ok := h.blockEnds[start]; ok {
		return end, nil
	}
	save := h.pos
	h.pos = start
	var hdr [blockHeaderLen]byte
	if err := h.read(hdr[:], blockHeaderLen); err != nil {
		return 0, err
	}
	h.pos = save
	if string(hdr[:4]) != "LBOB" {
		return 0, fmt.Errorf("%w: no block header at offset %d", ErrCorrupt, start)
	}
	end := start + blockHeaderLen + int64(binary.BigEndian.Uint32(hdr[4:]))
	if end > start+int64(h.ix.BlockSize) || end > h.blob.Size() {
		return 0, fmt.Errorf("%w: block at %d claims %d bytes of records", ErrCorrupt, start, end-start-blockHeaderLen)
	}
	h.blockEnds[start] = end
	return end, nil
}

// nextRecord positions the stream at the next record, moving to the next
// block at a block's end; it returns false at the end of the object.
func (h *Handle) nextRecord() (bool, error) {
	for {
		if h.pos%int64(h.ix.BlockSize) == 0 {
			h.pos += blockHeaderLen // the block header is not a record
		}
		end, err := h.blockEnd(h.pos)
		if err != nil {
			return false, err
		}
		if h.pos < end {
			return true, nil
		}
		next := h.pos - h.pos%int64(h.ix.BlockSize) + int64(h.ix.BlockSize)
		if next >= h.blob.Size() {
			return false, nil
		}
		h.pos = next
	}
}

// recordHeader reads the record at the stream position.
func (h *Handle) recordHeader() (length int, id int64, err error) {
	ok, err := h.nextRecord()
	if err != nil {
		return 0, 0, err
	}
	if !ok {
		return 0, 0, fmt.Errorf("%w: the object ends before the expected entry", ErrCorrupt)
	}
	end, _ := h.blockEnd(h.pos)
	var hdr [recordHeaderLen]byte
	if err := h.read(hdr[:], recordHeaderLen); err != nil {
		return 0, 0, err
	}
	length = int(int32(binary.BigEndian.Uint32(hdr[:4])))
	id = int64(binary.BigEndian.Uint64(hdr[4:]))
	if length < 0 || h.pos+int64(length) > end {
		return 0, 0, fmt.Errorf("%w: record at %d has length %d (block records end at %d)", ErrCorrupt, h.pos-recordHeaderLen, length, end)
	}
	return length, id, nil
}

// seekToEntry positions the stream at entry id (or at a record before it
// in its block, from which reading parses forward).
func (h *Handle) seekToEntry(id int64) error {
	if off, ok := h.offsets.Get(h.ix.LedgerID, id); ok {
		h.seek(off)
		return nil
	}
	fl, ok := h.ix.Floor(id)
	if ok && fl.EntryID == id {
		h.seek(fl.Offset)
		return nil
	}
	if off, found := h.offsets.Get(h.ix.LedgerID, id-1); found {
		h.seek(off)
		length, prev, err := h.recordHeader()
		if err != nil {
			return err
		}
		if prev == id-1 {
			return h.read(nil, length)
		}
		h.seek(off) // a stale offset: parse from there
		return nil
	}
	if !ok {
		return fmt.Errorf("%w: no index entry at or before entry %d", ErrCorrupt, id)
	}
	h.seek(fl.Offset)
	return nil
}

// Read returns entries first…last.
func (h *Handle) Read(first, last int64) ([]Entry, error) {
	if first < 0 || first > last || last > h.ix.LAC {
		return nil, fmt.Errorf("%w: [%d, %d] of ledger %d with last add confirmed %d", ErrBadRange, first, last, h.ix.LedgerID, h.ix.LAC)
	}
	out := make([]Entry, 0, last-first+1)
	expected := first
	if err := h.seekToEntry(expected); err != nil {
		return nil, err
	}
	retries, maxRetries := 0, max(3, int((last-first+1)>>2))
	inSequence := false // an entry was read: the next record must be the next entry
	for expected <= last {
		if ok, err := h.nextRecord(); err != nil {
			return nil, err
		} else if !ok {
			return nil, fmt.Errorf("%w: the object ends before entry %d", ErrCorrupt, expected)
		}
		pos := h.pos
		length, id, err := h.recordHeader()
		if err != nil {
			return nil, err
		}
		switch {
		case inSequence && id != expected:
			// Entries are contiguous in the object: after entry n comes
			// n+1. Anything else is a damaged length before it.
			return nil, fmt.Errorf("%w: entry %d is followed at offset %d by a record of entry %d: a damaged length", ErrCorrupt, expected-1, pos, id)
		case id == expected:
			data := make([]byte, length)
			if err := h.read(data, length); err != nil {
				return nil, err
			}
			h.offsets.Put(h.ix.LedgerID, id, pos)
			out = append(out, Entry{ID: id, Data: data})
			h.Stats.Entries++
			expected++
			inSequence = true
		case id < expected:
			// An earlier entry of the block: parse forward past it.
			if err := h.read(nil, length); err != nil {
				return nil, err
			}
		default:
			// Past the expected entry (a stale offset, or a gap): re-seek
			// through the index, a bounded number of times.
			retries++
			if retries > maxRetries {
				return nil, fmt.Errorf("%w: expected entry %d at offset %d, found %d (gave up after %d seeks)", ErrCorrupt, expected, pos, id, retries-1)
			}
			fl, ok := h.ix.Floor(expected)
			if !ok {
				return nil, fmt.Errorf("%w: no index entry at or before entry %d", ErrCorrupt, expected)
			}
			h.seek(fl.Offset)
		}
	}
	if err := h.followedBy(last + 1); err != nil {
		return nil, err
	}
	return out, nil
}

// followedBy checks that the record at the stream position is entry next,
// or that the object ends there when next is past the last entry: a
// damaged length of the entry just read ends it elsewhere. The position
// is left where it was.
func (h *Handle) followedBy(next int64) error {
	save := h.pos
	defer func() { h.pos = save }()
	ok, err := h.nextRecord()
	switch {
	case err != nil:
		return err
	case !ok && next == h.ix.LAC+1:
		return nil
	case !ok:
		return fmt.Errorf("%w: the object ends before entry %d", ErrCorrupt, next)
	}
	_, id, err := h.recordHeader()
	if err != nil {
		return fmt.Errorf("%w: entry %d does not end where a record begins: a damaged length", ErrCorrupt, next-1)
	}
	if id != next {
		return fmt.Errorf("%w: entry %d is followed by a record of entry %d: a damaged length", ErrCorrupt, next-1, id)
	}
	return nil
}
