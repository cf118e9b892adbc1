package location

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"strconv"

	"github.com/pierrec/lz4/v4"
)

// Layout is how a table's filter and index are laid out.
type Layout string

const (
	// Full is one filter block and one index block per table, read
	// through the block cache and not pinned (BookKeeper before PR #4909).
	Full Layout = "full"
	// Partitioned cuts the filter into partitions of about 4 KiB,
	// independently of the index, and the index into partitions of about
	// 4 KiB; the top-level filter index and top-level index are pinned in
	// the cache for the table's lifetime (the PR).
	Partitioned Layout = "partitioned"
)

// TableOptions shape the tables a store writes.
type TableOptions struct {
	Layout            Layout
	BlockSize         int  // data block target (64 KiB)
	RestartInterval   int  // keys between restart points in data blocks (16)
	BitsPerKey        int  // Bloom filter bits per key (10)
	MetadataBlockSize int  // filter and index partition target (4 KiB)
	Compress          bool // LZ4 data blocks (BookKeeper's default)
}

func (o *TableOptions) fill() error {
	if o.Layout == "" {
		o.Layout = Partitioned
	}
	if o.Layout != Full && o.Layout != Partitioned {
		return fmt.Errorf("unknown layout %q (%s, %s)", o.Layout, Full, Partitioned)
	}
	if o.BlockSize == 0 {
		o.BlockSize = 64 << 10
	}
	if o.RestartInterval == 0 {
		o.RestartInterval = 16
	}
	if o.BitsPerKey == 0 {
		o.BitsPerKey = 10
	}
	if o.MetadataBlockSize == 0 {
		o.MetadataBlockSize = 4 << 10
	}
	if o.BlockSize < 256 || o.RestartInterval < 1 || o.BitsPerKey < 1 || o.BitsPerKey > 64 || o.MetadataBlockSize < 256 {
		return fmt.Errorf("bad table options %+v", *o)
	}
	return nil
}

// On disk a table is
//
//	data blocks…, filter (full block, or partitions… and the top-level
//	filter index), index (single block, or partitions… and the top-level
//	index), properties, metaindex, footer
//
// and every block is followed by a 5-byte trailer: a compression byte
// (0 none, 1 LZ4 with the uvarint decompressed length first) and the
// CRC-32C of the block and that byte. The footer is fixed-size:
//
//	metaindex offset, size; index offset, size (uint64 LE each);
//	format version (uint32), CRC-32C of the previous 36 bytes (uint32),
//	magic (uint64).

const (
	trailerSize   = 5
	footerSize    = 48
	tableMagic    = 0x6c6f636174696f6e // "location"
	FormatVersion = 1
	compNone      = 0
	compLZ4       = 1
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

type handle struct{ offset, size uint64 } // size excludes the trailer

func (h handle) encode(b []byte) []byte {
	return binary.AppendUvarint(binary.AppendUvarint(b, h.offset), h.size)
}

func decodeHandle(b []byte) (handle, error) {
	off, n := binary.Uvarint(b)
	if n <= 0 {
		return handle{}, fmt.Errorf("%w: block handle", errBlock)
	}
	size, m := binary.Uvarint(b[n:])
	if m <= 0 || n+m != len(b) {
		return handle{}, fmt.Errorf("%w: block handle", errBlock)
	}
	return handle{off, size}, nil
}

// tableWriter writes one table; keys must be added in increasing order.
type tableWriter struct {
	o    TableOptions
	f    *os.File
	w    *bufio.Writer
	off  uint64
	err  error
	path string

	data       *blockBuilder
	dataFirst  []byte // first key of the current data block
	index      *blockBuilder
	indexParts [][]byte // finished index partitions
	indexLast  [][]byte // last key of each index partition
	lastKey    []byte
	firstKey   []byte
	keys       int
	dataBlocks int

	hashes      []uint64 // of the full filter, or of the open partition
	filterParts [][]byte
	filterLast  [][]byte
	perPart     int

	lz4c lz4.Compressor
	cbuf []byte
}

// TableInfo describes a written table.
type TableInfo struct {
	Keys             int
	Size             int64
	Smallest         []byte
	Largest          []byte
	DataBlocks       int
	FilterBytes      int64 // full filter, or all partitions
	FilterPartitions int
	IndexBytes       int64 // single index, or all partitions
	IndexPartitions  int
	TopLevelBytes    int64 // top-level filter index + top-level index (partitioned)
}

func newTableWriter(path string, o TableOptions) (*tableWriter, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	return &tableWriter{o: o, f: f, w: bufio.NewWriterSize(f, 1<<20), path: path,
		data: newBlockBuilder(o.RestartInterval), index: newBlockBuilder(1),
		perPart: keysPerPartition(o.MetadataBlockSize, o.BitsPerKey)}, nil
}

// add appends a key/value; keys must increase.
func (t *tableWriter) add(key, value []byte) error {
	if t.err != nil {
		return t.err
	}
	if t.keys > 0 && bytes.Compare(key, t.lastKey) <= 0 {
		return fmt.Errorf("table %s: key %x after %x: keys must increase", t.path, key, t.lastKey)
	}
	if !t.data.empty() && t.data.estimate(len(key)+len(value)+3*binary.MaxVarintLen32) > t.o.BlockSize {
		t.flushData()
	}
	if t.data.empty() {
		t.dataFirst = append(t.dataFirst[:0], key...)
	}
	t.data.add(key, value)
	if t.keys == 0 {
		t.firstKey = append([]byte(nil), key...)
	}
	t.lastKey = append(t.lastKey[:0], key...)
	t.keys++
	t.hashes = append(t.hashes, keyHash(key))
	if t.o.Layout == Partitioned && len(t.hashes) >= t.perPart {
		t.cutFilter()
	}
	return t.err
}

func (t *tableWriter) cutFilter() {
	t.filterParts = append(t.filterParts, buildFilter(t.hashes, t.o.BitsPerKey))
	t.filterLast = append(t.filterLast, append([]byte(nil), t.lastKey...))
	t.hashes = t.hashes[:0]
}

// writeBlock writes a block and its trailer and returns its handle.
func (t *tableWriter) writeBlock(b []byte, compress bool) handle {
	typ := byte(compNone)
	if compress {
		bound := lz4.CompressBlockBound(len(b))
		if cap(t.cbuf) < bound+binary.MaxVarintLen64 {
			t.cbuf = make([]byte, bound+binary.MaxVarintLen64)
		}
		hdr := binary.PutUvarint(t.cbuf, uint64(len(b)))
		n, err := t.lz4c.CompressBlock(b, t.cbuf[hdr:cap(t.cbuf)])
		if err == nil && n > 0 && hdr+n < len(b)-len(b)/8 { // keep it only if it saves 12.5 %
			b, typ = t.cbuf[:hdr+n], compLZ4
		}
	}
	h := handle{t.off, uint64(len(b))}
	crc := crc32.Update(crc32.Checksum(b, castagnoli), castagnoli, []byte{typ})
	var tr [trailerSize]byte
	tr[0] = typ
	binary.LittleEndian.PutUint32(tr[1:], crc)
	if t.err == nil {
		_, t.err = t.w.Write(b)
	}
	if t.err == nil {
		_, t.err = t.w.Write(tr[:])
	}
	t.off += uint64(len(b)) + trailerSize
	return h
}

func (t *tableWriter) flushData() {
	h := t.writeBlock(t.data.finish(), t.o.Compress)
	t.dataBlocks++
	// The index key of a block is its last key: a get seeks the first
	// index key ≥ the target.
	t.index.add(t.lastKey, h.encode(nil))
	if t.o.Layout == Partitioned && t.index.estimate(0) >= t.o.MetadataBlockSize {
		t.indexParts = append(t.indexParts, t.index.finish())
		t.indexLast = append(t.indexLast, append([]byte(nil), t.lastKey...))
	}
}

// finish writes the filter, index, properties, metaindex and footer,
// syncs and closes the file.
func (t *tableWriter) finish() (TableInfo, error) {
	if t.err == nil && t.keys == 0 {
		t.err = errors.New("empty table")
	}
	if t.err != nil {
		t.abort()
		return TableInfo{}, t.err
	}
	if !t.data.empty() {
		t.flushData()
	}
	info := TableInfo{Keys: t.keys, Smallest: t.firstKey, Largest: append([]byte(nil), t.lastKey...), DataBlocks: t.dataBlocks}
	meta := newBlockBuilder(1)
	var indexH handle
	if t.o.Layout == Full {
		f := buildFilter(t.hashes, t.o.BitsPerKey)
		fh := t.writeBlock(f, false)
		info.FilterBytes = int64(len(f))
		ib := t.index.finish()
		indexH = t.writeBlock(ib, false)
		info.IndexBytes = int64(len(ib))
		meta.add([]byte("filter.full"), fh.encode(nil))
	} else {
		if len(t.hashes) > 0 {
			t.cutFilter()
		}
		fh, fbytes, fTop := t.writePartitions(t.filterParts, t.filterLast)
		info.FilterBytes, info.FilterPartitions = fbytes, len(t.filterParts)
		meta.add([]byte("filter.partitioned"), fh.encode(nil))
		if !t.index.empty() {
			t.indexParts = append(t.indexParts, t.index.finish())
			t.indexLast = append(t.indexLast, append([]byte(nil), t.lastKey...))
		}
		var ibytes, iTop int64
		indexH, ibytes, iTop = t.writePartitions(t.indexParts, t.indexLast)
		info.IndexBytes, info.IndexPartitions = ibytes, len(t.indexParts)
		info.TopLevelBytes = fTop + iTop
	}
	props := newBlockBuilder(1)
	for _, kv := range [][2]string{
		{"data.blocks", strconv.Itoa(info.DataBlocks)},
		{"filter.bytes", strconv.FormatInt(info.FilterBytes, 10)},
		{"filter.partitions", strconv.Itoa(info.FilterPartitions)},
		{"index.bytes", strconv.FormatInt(info.IndexBytes, 10)},
		{"index.partitions", strconv.Itoa(info.IndexPartitions)},
		{"keys", strconv.Itoa(info.Keys)},
		{"layout", string(t.o.Layout)},
		{"toplevel.bytes", strconv.FormatInt(info.TopLevelBytes, 10)},
	} {
		props.add([]byte(kv[0]), []byte(kv[1]))
	}
	ph := t.writeBlock(props.finish(), false)
	meta.add([]byte("properties"), ph.encode(nil))
	mh := t.writeBlock(meta.finish(), false)
	var ft [footerSize]byte
	binary.LittleEndian.PutUint64(ft[0:], mh.offset)
	binary.LittleEndian.PutUint64(ft[8:], mh.size)
	binary.LittleEndian.PutUint64(ft[16:], indexH.offset)
	binary.LittleEndian.PutUint64(ft[24:], indexH.size)
	binary.LittleEndian.PutUint32(ft[32:], FormatVersion)
	binary.LittleEndian.PutUint32(ft[36:], crc32.Checksum(ft[:36], castagnoli))
	binary.LittleEndian.PutUint64(ft[40:], tableMagic)
	if t.err == nil {
		_, t.err = t.w.Write(ft[:])
	}
	t.off += footerSize
	if t.err == nil {
		t.err = t.w.Flush()
	}
	if t.err == nil {
		t.err = t.f.Sync()
	}
	if err := t.f.Close(); t.err == nil {
		t.err = err
	}
	if t.err != nil {
		os.Remove(t.path)
		return TableInfo{}, fmt.Errorf("write table %s: %w", t.path, t.err)
	}
	info.Size = int64(t.off)
	return info, nil
}

// writePartitions writes the partitions and then their top-level block
// (each partition's last key → its handle); it returns the top-level
// block's handle, the partitions' bytes and the top-level block's bytes.
func (t *tableWriter) writePartitions(parts, lasts [][]byte) (top handle, bytes, topBytes int64) {
	tb := newBlockBuilder(1)
	for i, p := range parts {
		h := t.writeBlock(p, false)
		bytes += int64(len(p))
		tb.add(lasts[i], h.encode(nil))
	}
	b := tb.finish()
	return t.writeBlock(b, false), bytes, int64(len(b))
}

func (t *tableWriter) abort() {
	t.f.Close()
	os.Remove(t.path)
}
