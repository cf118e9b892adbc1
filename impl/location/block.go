package location

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// A block is a sorted run of key/value entries, keys prefix-compressed
// against the previous key and stored whole at restart points:
//
//	entry:    uvarint shared, uvarint unshared, uvarint valueLen, key[shared:], value
//	trailer:  uint32 LE restart offsets…, uint32 LE restart count
//
// Data blocks restart every 16 keys; index blocks at every key.

// blockBuilder accumulates the entries of one block.
type blockBuilder struct {
	interval int
	buf      []byte
	restarts []uint32
	last     []byte
	n        int // entries since the last restart
	count    int
}

func newBlockBuilder(interval int) *blockBuilder { return &blockBuilder{interval: interval} }

// add appends key (greater than the previous key) and value.
func (b *blockBuilder) add(key, value []byte) {
	shared := 0
	if b.n < b.interval && b.count > 0 {
		for shared < len(key) && shared < len(b.last) && key[shared] == b.last[shared] {
			shared++
		}
	} else {
		b.restarts = append(b.restarts, uint32(len(b.buf)))
		b.n = 0
	}
	b.buf = binary.AppendUvarint(b.buf, uint64(shared))
	b.buf = binary.AppendUvarint(b.buf, uint64(len(key)-shared))
	b.buf = binary.AppendUvarint(b.buf, uint64(len(value)))
	b.buf = append(b.buf, key[shared:]...)
	b.buf = append(b.buf, value...)
	b.last = append(b.last[:0], key...)
	b.n++
	b.count++
}

// estimate is the block's size if finished now, plus one more entry of
// extra bytes (and its restart, if it would start one).
func (b *blockBuilder) estimate(extra int) int {
	return len(b.buf) + 4*(len(b.restarts)+1) + 4 + extra
}

func (b *blockBuilder) empty() bool { return b.count == 0 }

// finish returns the block's bytes; the builder is reset.
func (b *blockBuilder) finish() []byte {
	out := b.buf
	if b.count == 0 {
		b.restarts = append(b.restarts[:0], 0)
	}
	for _, r := range b.restarts {
		out = binary.LittleEndian.AppendUint32(out, r)
	}
	out = binary.LittleEndian.AppendUint32(out, uint32(len(b.restarts)))
	b.buf, b.restarts, b.last, b.n, b.count = nil, b.restarts[:0], b.last[:0], 0, 0
	return out
}

// errBlock is a malformed block (the checksum matched, so a bug or a
// checksum collision); the table wraps it with the file and offset.
var errBlock = errors.New("malformed block")

// block is a parsed block: its entries and restart array.
type block struct {
	data     []byte // entries
	restarts []byte // uint32 LE each
	n        int    // restart count
}

func parseBlock(b []byte) (*block, error) {
	if len(b) < 4 {
		return nil, fmt.Errorf("%w: %d bytes", errBlock, len(b))
	}
	n := int(binary.LittleEndian.Uint32(b[len(b)-4:]))
	if n == 0 || n > (len(b)-4)/4 {
		return nil, fmt.Errorf("%w: %d restarts in %d bytes", errBlock, n, len(b))
	}
	end := len(b) - 4 - 4*n
	bl := &block{data: b[:end], restarts: b[end : len(b)-4], n: n}
	for i := 0; i < n; i++ {
		if int(bl.restart(i)) > end || (i > 0 && bl.restart(i) <= bl.restart(i-1)) {
			return nil, fmt.Errorf("%w: restart %d at %d of %d", errBlock, i, bl.restart(i), end)
		}
	}
	return bl, nil
}

func (b *block) restart(i int) uint32 { return binary.LittleEndian.Uint32(b.restarts[4*i:]) }

// blockIter walks a block's entries forward.
type blockIter struct {
	b     *block
	off   int // offset of the next entry
	key   []byte
	value []byte
	err   error
	kbuf  [24]byte // key's first backing array: no allocation for short keys
}

// iter returns an iterator by value; use it from a variable (key may point
// into the variable itself).
func (b *block) iter() blockIter { return blockIter{b: b} }

// next decodes the entry at it.off; false at the end or on an error.
func (it *blockIter) next() bool {
	d := it.b.data
	if it.off >= len(d) || it.err != nil {
		return false
	}
	if it.key == nil {
		it.key = it.kbuf[:0]
	}
	p := d[it.off:]
	shared, n1 := uvarint(p)
	unshared, n2 := uvarint(p[max(n1, 0):])
	vlen, n3 := uvarint(p[max(n1+n2, 0):])
	h := n1 + n2 + n3
	if n1 <= 0 || n2 <= 0 || n3 <= 0 || shared > uint64(len(it.key)) || uint64(h)+unshared+vlen > uint64(len(p)) {
		it.err = fmt.Errorf("%w: entry at %d", errBlock, it.off)
		return false
	}
	it.key = append(it.key[:shared], p[h:h+int(unshared)]...)
	it.value = p[h+int(unshared) : h+int(unshared)+int(vlen)]
	it.off += h + int(unshared) + int(vlen)
	return true
}

// seekRestart positions the iterator so that next decodes restart i.
func (it *blockIter) seekRestart(i int) {
	it.off = int(it.b.restart(i))
	if it.key == nil {
		it.key = it.kbuf[:0]
	}
	it.key = it.key[:0]
}

// restartKey is the whole key stored at restart i, read in place (a
// restart entry shares nothing with the key before it); false if the
// entry is malformed, with it.err set.
func (it *blockIter) restartKey(i int) ([]byte, bool) {
	off := int(it.b.restart(i))
	p := it.b.data[off:]
	shared, n1 := uvarint(p)
	unshared, n2 := uvarint(p[max(n1, 0):])
	_, n3 := uvarint(p[max(n1+n2, 0):])
	h := n1 + n2 + n3
	if n1 <= 0 || n2 <= 0 || n3 <= 0 || shared != 0 || uint64(len(p)-h) < unshared {
		it.err = fmt.Errorf("%w: restart entry at %d", errBlock, off)
		return nil, false
	}
	return p[h : h+int(unshared)], true
}

// uvarint is binary.Uvarint with the one-byte case (almost every length
// in a block) inlined.
func uvarint(p []byte) (uint64, int) {
	if len(p) > 0 && p[0] < 0x80 {
		return uint64(p[0]), 1
	}
	return binary.Uvarint(p)
}

// lastRestartAtOrBefore is the last restart whose key is ≤ target (or <
// target when !inclusive), or -1.
func (it *blockIter) lastRestartAtOrBefore(target []byte, inclusive bool) int {
	lo, hi := 0, it.b.n // find the first restart whose key is beyond target
	for lo < hi {
		mid := (lo + hi) / 2
		k, ok := it.restartKey(mid)
		if !ok {
			return -1
		}
		c := bytes.Compare(k, target)
		if c < 0 || (c == 0 && inclusive) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo - 1
}

// seekGE positions at the first entry whose key is ≥ target; false if
// there is none.
func (it *blockIter) seekGE(target []byte) bool {
	r := max(it.lastRestartAtOrBefore(target, false), 0)
	it.seekRestart(r)
	for it.next() {
		if bytes.Compare(it.key, target) >= 0 {
			return true
		}
	}
	return false
}

// seekLE finds the last entry whose key is ≤ target (< target when
// !inclusive); key and value are copies owned by the caller.
func (it *blockIter) seekLE(target []byte, inclusive bool) (key, value []byte, ok bool) {
	r := it.lastRestartAtOrBefore(target, inclusive)
	if r < 0 {
		return nil, nil, false
	}
	it.seekRestart(r)
	end := len(it.b.data)
	if r+1 < it.b.n {
		end = int(it.b.restart(r + 1))
	}
	for it.off < end && it.next() {
		c := bytes.Compare(it.key, target)
		if c > 0 || (c == 0 && !inclusive) {
			break
		}
		key, value, ok = append(key[:0], it.key...), append(value[:0], it.value...), true
	}
	return key, value, ok
}
