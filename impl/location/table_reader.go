package location

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"strconv"

	"github.com/pierrec/lz4/v4"
)

// ErrCorrupt marks a table or block that fails its checksum or does not
// parse; the error names the file and the block.
var ErrCorrupt = errors.New("corrupt table")

// table reads one table file through a block cache.
type table struct {
	num uint64
	// cacheID keys the table's blocks in its cache (see BlockCache.newID).
	cacheID uint64
	path    string
	f       io.ReaderAt
	closer  io.Closer
	size    int64
	cache   *BlockCache
	layout  Layout
	info    TableInfo

	filterH handle // full filter (Full) or top-level filter index (Partitioned)
	indexH  handle // single index (Full) or top-level index (Partitioned)
	// r finds a key's filter and index blocks in the table's layout:
	// chosen once at open (full_reader.go, partitioned_reader.go).
	r layoutReader
}

// layoutReader is what differs between the table layouts on the read
// path: where a key's filter and index block are, and the index blocks
// that list every data block.
type layoutReader interface {
	// filterFor is the handle of the filter that covers key; false when
	// key is beyond the table's last key.
	filterFor(key []byte) (handle, bool)
	// indexFor is the index block (with a cache reference) whose entries
	// cover key; false when key is beyond the table's last key.
	indexFor(key []byte, p *Perf) (*cached, bool, error)
	// prevDataHandle is the handle of the data block whose index key
	// (its last key) is the greatest below key.
	prevDataHandle(key []byte, p *Perf) (handle, bool, error)
	// indexParts are the index blocks that list every data block.
	indexParts() []handle
	// close releases what the reader pins.
	close()
}

// fences are a pinned top-level block's entries decoded once: the last
// key of every partition (KeySize bytes each, back to back) and its
// handle. A get binary-searches them instead of the block.
type fences struct {
	keys    []byte
	handles []handle
}

func decodeFences(b *block) (*fences, error) {
	f := &fences{}
	it := b.iter()
	for it.next() {
		if len(it.key) != KeySize {
			return nil, fmt.Errorf("%w: top-level key of %d bytes", errBlock, len(it.key))
		}
		h, err := decodeHandle(it.value)
		if err != nil {
			return nil, err
		}
		f.keys = append(f.keys, it.key...)
		f.handles = append(f.handles, h)
	}
	return f, it.err
}

// search is the index of the first partition whose last key is ≥ key
// (len(handles) if none).
func (f *fences) search(key []byte) int {
	lo, hi := 0, len(f.handles)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if bytes.Compare(f.keys[mid*KeySize:(mid+1)*KeySize], key) < 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// seekGE is the handle of the first partition whose last key is ≥ key.
func (f *fences) seekGE(key []byte) (handle, bool) {
	i := f.search(key)
	if i == len(f.handles) {
		return handle{}, false
	}
	return f.handles[i], true
}

func openTable(path string, num uint64, cache *BlockCache) (*table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	var r interface {
		io.ReaderAt
		io.Closer
	} = f
	if st.Size() >= footerSize {
		if m, err := mapTable(f, st.Size()); err == nil {
			f.Close() // the mapping stays valid
			r = m
		}
	}
	t, err := newTable(r, r, st.Size(), path, num, cache)
	if err != nil {
		r.Close()
		return nil, err
	}
	return t, nil
}

func newTable(r io.ReaderAt, c io.Closer, size int64, path string, num uint64, cache *BlockCache) (*table, error) {
	t := &table{num: num, path: path, f: r, closer: c, size: size, cache: cache}
	if cache != nil {
		t.cacheID = cache.newID()
	}
	metaH, err := t.readFooter()
	if err != nil {
		return nil, err
	}
	meta, err := t.readBlock(metaH, kindIndex, nil)
	if err != nil {
		return nil, err
	}
	it := meta.iter()
	var propsH handle
	var haveProps, haveFilter bool
	for it.next() {
		h, err := decodeHandle(it.value)
		if err != nil {
			return nil, t.corrupt("metaindex", metaH.offset, err)
		}
		switch string(it.key) {
		case "filter.full":
			t.layout, t.filterH, haveFilter = Full, h, true
		case "filter.partitioned":
			t.layout, t.filterH, haveFilter = Partitioned, h, true
		case "properties":
			propsH, haveProps = h, true
		}
	}
	if it.err != nil || !haveProps || !haveFilter {
		return nil, t.corrupt("metaindex", metaH.offset, fmt.Errorf("entries missing (%v)", it.err))
	}
	props, err := t.readBlock(propsH, kindIndex, nil)
	if err != nil {
		return nil, err
	}
	if err := t.parseProps(props); err != nil {
		return nil, t.corrupt("properties", propsH.offset, err)
	}
	if t.layout == Partitioned {
		t.r, err = openPartitioned(t)
	} else {
		t.r = fullReader{t}
	}
	if err != nil {
		return nil, err
	}
	return t, nil
}

// readFooter checks the table's footer, sets its index handle and returns
// its metaindex handle.
func (t *table) readFooter() (handle, error) {
	if t.size < footerSize {
		return handle{}, t.corrupt("footer", 0, fmt.Errorf("file of %d bytes", t.size))
	}
	at := uint64(t.size - footerSize)
	var ft [footerSize]byte
	if _, err := t.f.ReadAt(ft[:], int64(at)); err != nil {
		return handle{}, t.corrupt("footer", at, err)
	}
	if binary.LittleEndian.Uint64(ft[40:]) != tableMagic {
		return handle{}, t.corrupt("footer", at, errors.New("bad magic"))
	}
	if crc32.Checksum(ft[:36], castagnoli) != binary.LittleEndian.Uint32(ft[36:]) {
		return handle{}, t.corrupt("footer", at, errors.New("checksum mismatch"))
	}
	if v := binary.LittleEndian.Uint32(ft[32:]); v != FormatVersion {
		return handle{}, t.corrupt("footer", at, fmt.Errorf("format version %d", v))
	}
	t.indexH = handle{binary.LittleEndian.Uint64(ft[16:]), binary.LittleEndian.Uint64(ft[24:])}
	return handle{binary.LittleEndian.Uint64(ft[0:]), binary.LittleEndian.Uint64(ft[8:])}, nil
}

func (t *table) parseProps(b *block) error {
	it := b.iter()
	for it.next() {
		v := string(it.value)
		n, err := strconv.ParseInt(v, 10, 64)
		switch string(it.key) {
		case "keys":
			t.info.Keys = int(n)
		case "data.blocks":
			t.info.DataBlocks = int(n)
		case "filter.bytes":
			t.info.FilterBytes = n
		case "filter.partitions":
			t.info.FilterPartitions = int(n)
		case "index.bytes":
			t.info.IndexBytes = n
		case "index.partitions":
			t.info.IndexPartitions = int(n)
		case "toplevel.bytes":
			t.info.TopLevelBytes = n
		case "layout":
			if Layout(v) != t.layout {
				return fmt.Errorf("layout %q with a %s filter", v, t.layout)
			}
			err = nil
		}
		if err != nil {
			return fmt.Errorf("property %s=%q: %v", it.key, v, err)
		}
	}
	t.info.Size = t.size
	return it.err
}

func (t *table) corrupt(what string, off uint64, err error) error {
	return fmt.Errorf("%w: %s: %s block at offset %d: %v", ErrCorrupt, t.path, what, off, err)
}

func (t *table) close() error {
	if t.r != nil {
		t.r.close()
		t.r = nil
	}
	if t.closer != nil {
		return t.closer.Close()
	}
	return nil
}

// readRaw reads a block and its trailer, checks the checksum and
// decompresses it; the bytes may come from the big-buffer pool.
func (t *table) readRaw(h handle, k blockKind, p *Perf) ([]byte, bool, error) {
	if h.size > uint64(t.size) || h.offset > uint64(t.size)-h.size || h.offset+h.size+trailerSize > uint64(t.size) {
		return nil, false, t.corrupt(k.String(), h.offset, fmt.Errorf("handle of %d bytes beyond the file's %d", h.size, t.size))
	}
	n := int(h.size) + trailerSize
	buf, pooled := getBuf(n)
	if _, err := t.f.ReadAt(buf, int64(h.offset)); err != nil {
		putBuf(buf, pooled)
		return nil, false, t.corrupt(k.String(), h.offset, err)
	}
	p.read(k, int64(n))
	body, typ := buf[:h.size], buf[h.size]
	want := binary.LittleEndian.Uint32(buf[h.size+1:])
	if crc32.Update(crc32.Checksum(body, castagnoli), castagnoli, []byte{typ}) != want {
		putBuf(buf, pooled)
		return nil, false, t.corrupt(k.String(), h.offset, errors.New("checksum mismatch"))
	}
	switch typ {
	case compNone:
		return body, pooled, nil
	case compLZ4:
		defer putBuf(buf, pooled)
		size, m := binary.Uvarint(body)
		if m <= 0 || size > 64<<20 {
			return nil, false, t.corrupt(k.String(), h.offset, errors.New("bad decompressed length"))
		}
		out, outPooled := getBuf(int(size))
		got, err := lz4.UncompressBlock(body[m:], out)
		if err != nil || got != int(size) {
			putBuf(out, outPooled)
			return nil, false, t.corrupt(k.String(), h.offset, fmt.Errorf("lz4: %d of %d bytes, %v", got, size, err))
		}
		return out, outPooled, nil
	default:
		putBuf(buf, pooled)
		return nil, false, t.corrupt(k.String(), h.offset, fmt.Errorf("compression type %d", typ))
	}
}

// parseInto parses raw as a block of kind k into e.
func parseInto(e *cached, raw []byte, k blockKind) (err error) {
	if k == kindFilter {
		e.flt, err = parseFilter(raw)
	} else {
		e.blk, err = parseBlock(raw)
	}
	return err
}

// readBlock reads and parses an index or data block without the cache.
func (t *table) readBlock(h handle, k blockKind, p *Perf) (*block, error) {
	raw, _, err := t.readRaw(h, k, p)
	if err != nil {
		return nil, err
	}
	b, err := parseBlock(raw)
	if err != nil {
		return nil, t.corrupt(k.String(), h.offset, err)
	}
	return b, nil
}

// get returns the block at h with a cache reference (release it).
func (t *table) get(h handle, k blockKind, p *Perf) (*cached, error) {
	key := cacheKey{t.cacheID, h.offset}
	if e := t.cache.lookup(key); e != nil {
		p.hit(k)
		return e, nil
	}
	raw, pooled, err := t.readRaw(h, k, p)
	if err != nil {
		return nil, err
	}
	e := &cached{key: key, kind: k, charge: int64(len(raw)) + EntryOverhead, raw: raw, pooled: pooled}
	if err := parseInto(e, raw, k); err != nil {
		putBuf(raw, pooled)
		return nil, t.corrupt(k.String(), h.offset, err)
	}
	return t.cache.insert(e), nil
}

// mayContain consults the table's filter for key (hash h).
func (t *table) mayContain(key []byte, h uint64, p *Perf) (bool, error) {
	fh, ok := t.r.filterFor(key)
	if !ok {
		return false, nil // beyond the table's last key
	}
	e, err := t.get(fh, kindFilter, p)
	if err != nil {
		return false, err
	}
	ok = e.flt.mayContain(h)
	t.cache.release(e)
	return ok, nil
}

// indexSeek finds the handle of the data block whose last key is the
// first ≥ key: the block that holds key if the table does, and where a
// floor lookup starts.
func (t *table) indexSeek(key []byte, p *Perf) (h handle, found bool, err error) {
	ix, ok, err := t.r.indexFor(key, p)
	if err != nil || !ok {
		return handle{}, false, err
	}
	defer t.cache.release(ix)
	it := ix.blk.iter()
	if !it.seekGE(key) {
		if it.err != nil {
			return handle{}, false, t.corrupt("index", ix.key.offset, it.err)
		}
		return handle{}, false, nil
	}
	h, err = decodeHandle(it.value)
	if err != nil {
		return handle{}, false, t.corrupt("index", ix.key.offset, err)
	}
	return h, true, nil
}

// lookup is a point get in this table: filter, index, data block.
func (t *table) lookup(key []byte, h uint64, p *Perf, useFilter bool) (value []byte, found bool, err error) {
	if p != nil {
		p.SSTProbes++
	}
	if useFilter {
		ok, err := t.mayContain(key, h, p)
		if err != nil {
			return nil, false, err
		}
		if p != nil {
			if ok {
				p.BloomHits++
			} else {
				p.BloomMisses++
			}
		}
		if !ok {
			return nil, false, nil
		}
	}
	dh, ok, err := t.indexSeek(key, p)
	if err != nil || !ok {
		return nil, false, err
	}
	d, err := t.get(dh, kindData, p)
	if err != nil {
		return nil, false, err
	}
	defer t.cache.release(d)
	it := d.blk.iter()
	if it.seekGE(key) && bytes.Equal(it.key, key) {
		return append([]byte(nil), it.value...), true, nil
	}
	if it.err != nil {
		return nil, false, t.corrupt("data", dh.offset, it.err)
	}
	return nil, false, nil
}

// floor returns the last key ≤ key (< key when !inclusive) in the table.
// It does not use the filter.
func (t *table) floor(key []byte, inclusive bool, p *Perf) (k, v []byte, found bool, err error) {
	if p != nil {
		p.SSTProbes++
	}
	if bytes.Compare(key, t.info.Smallest) < 0 || (!inclusive && bytes.Equal(key, t.info.Smallest)) {
		return nil, nil, false, nil
	}
	if c := bytes.Compare(key, t.info.Largest); c > 0 {
		key, inclusive = t.info.Largest, true
	}
	// The block holding the floor is the one whose last key is the first
	// ≥ key, unless all its keys are beyond key: then it is the last
	// key of the block before, which is the predecessor of that block's
	// first key.
	dh, ok, err := t.indexSeek(key, p)
	if err != nil || !ok {
		return nil, nil, false, err
	}
	d, err := t.get(dh, kindData, p)
	if err != nil {
		return nil, nil, false, err
	}
	it := d.blk.iter()
	k, v, found = it.seekLE(key, inclusive)
	t.cache.release(d)
	if it.err != nil {
		return nil, nil, false, t.corrupt("data", dh.offset, it.err)
	}
	if found {
		return k, v, true, nil
	}
	// Every key of that block is beyond key: the floor is the last key of
	// the block before, the greatest index key below key.
	ph, ok, err := t.r.prevDataHandle(key, p)
	if err != nil || !ok {
		return nil, nil, false, err
	}
	d, err = t.get(ph, kindData, p)
	if err != nil {
		return nil, nil, false, err
	}
	it = d.blk.iter()
	k, v, found = it.seekLE(key, true)
	t.cache.release(d)
	if it.err != nil {
		return nil, nil, false, t.corrupt("data", ph.offset, it.err)
	}
	return k, v, found, nil
}

// searchPrev is the handle of the last entry of index block ix (at
// offset off) whose key is below key.
func (t *table) searchPrev(ix *block, off uint64, key []byte) (handle, bool, error) {
	it := ix.iter()
	_, hv, ok := it.seekLE(key, false)
	if it.err != nil {
		return handle{}, false, t.corrupt("index", off, it.err)
	}
	if !ok {
		return handle{}, false, nil
	}
	h, err := decodeHandle(hv)
	if err != nil {
		return handle{}, false, t.corrupt("index", off, err)
	}
	return h, true, nil
}

// tableIter walks every entry of a table in order, reading blocks
// directly (not through the cache): compaction's input.
type tableIter struct {
	t     *table
	index []handle // data block handles
	next_ int
	blk   *blockIter
	err   error
}

func (t *table) iter() (*tableIter, error) {
	ti := &tableIter{t: t}
	for _, ph := range t.r.indexParts() {
		b, err := t.readBlock(ph, kindIndex, nil)
		if err != nil {
			return nil, err
		}
		it := b.iter()
		for it.next() {
			h, err := decodeHandle(it.value)
			if err != nil {
				return nil, t.corrupt("index", ph.offset, err)
			}
			ti.index = append(ti.index, h)
		}
		if it.err != nil {
			return nil, t.corrupt("index", ph.offset, it.err)
		}
	}
	return ti, nil
}

// next advances; key and value are valid until the following call.
func (ti *tableIter) next() (key, value []byte, ok bool) {
	for ti.err == nil {
		if ti.blk != nil && ti.blk.next() {
			return ti.blk.key, ti.blk.value, true
		}
		if ti.blk != nil && ti.blk.err != nil {
			ti.err = ti.t.corrupt("data", ti.index[ti.next_-1].offset, ti.blk.err)
			break
		}
		if ti.next_ == len(ti.index) {
			return nil, nil, false
		}
		h := ti.index[ti.next_]
		ti.next_++
		raw, pooled, err := ti.t.readRaw(h, kindData, nil)
		if err != nil {
			ti.err = err
			break
		}
		if pooled {
			raw = append([]byte(nil), raw...)
		}
		b, err := parseBlock(raw)
		if err != nil {
			ti.err = ti.t.corrupt("data", h.offset, err)
			break
		}
		bi := b.iter()
		ti.blk = &bi
	}
	return nil, nil, false
}
