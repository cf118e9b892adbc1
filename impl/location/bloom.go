package location

import (
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/cespare/xxhash/v2"
)

// Filters are cache-line-blocked Bloom filters: a key's hash picks one
// 64-byte line and sets numProbes bits inside it, so a probe touches one
// cache line. The hash (xxHash64 of the user key) is part of the format.
//
//	filter: lines × 64 bytes, then 5 bytes of metadata:
//	        0xff (marker), 1 (version), numProbes, 0, 0

const (
	lineBytes    = 64
	filterMeta   = 5
	filterMarker = 0xff
	numProbes    = 6 // optimal for 10 bits per key
)

func keyHash(key []byte) uint64 { return xxhash.Sum64(key) }

// filterSize is the byte size of a filter for n keys at bitsPerKey:
// the bits rounded up to whole lines, plus the metadata.
func filterSize(n, bitsPerKey int) int {
	raw := (n*bitsPerKey + 7) / 8
	return (raw+lineBytes-1)/lineBytes*lineBytes + filterMeta
}

// keysPerPartition is how many keys a filter partition of about
// metadataBlockSize bytes holds: 90 % of the block (RocksDB's 10 %
// deviation), less the metadata, in whole lines.
func keysPerPartition(metadataBlockSize, bitsPerKey int) int {
	target := (metadataBlockSize*9 + 9) / 10
	return 8 * ((target - filterMeta) &^ (lineBytes - 1)) / bitsPerKey
}

// buildFilter makes the filter of the given key hashes.
func buildFilter(hashes []uint64, bitsPerKey int) []byte {
	f := make([]byte, filterSize(len(hashes), bitsPerKey))
	lines := uint32((len(f) - filterMeta) / lineBytes)
	for _, h := range hashes {
		if lines == 0 {
			break
		}
		line := f[lineOf(h, lines)*lineBytes:]
		a := uint32(h)
		for range numProbes {
			bit := a >> 23 // 9 bits: one of 512 in the line
			line[bit>>3] |= 1 << (bit & 7)
			a *= 0x9e3779b9
		}
	}
	m := f[len(f)-filterMeta:]
	m[0], m[1], m[2] = filterMarker, 1, numProbes
	return f
}

func lineOf(h uint64, lines uint32) uint32 {
	hi, _ := bits.Mul32(uint32(h>>32), lines)
	return hi
}

// filter is a parsed filter.
type filter struct {
	lines  []byte
	nlines uint32
	probes int
}

func parseFilter(b []byte) (*filter, error) {
	if len(b) < filterMeta || (len(b)-filterMeta)%lineBytes != 0 {
		return nil, fmt.Errorf("%w: filter of %d bytes", errBlock, len(b))
	}
	m := b[len(b)-filterMeta:]
	if m[0] != filterMarker || m[1] != 1 || m[2] == 0 || m[2] > 30 {
		return nil, fmt.Errorf("%w: filter metadata %x", errBlock, m)
	}
	return &filter{lines: b[:len(b)-filterMeta], nlines: uint32((len(b) - filterMeta) / lineBytes), probes: int(m[2])}, nil
}

// mayContain is false only if the key was not added.
func (f *filter) mayContain(h uint64) bool {
	if f.nlines == 0 {
		return false
	}
	line := f.lines[lineOf(h, f.nlines)*lineBytes:]
	a := uint32(h)
	for range f.probes {
		bit := a >> 23
		if line[bit>>3]&(1<<(bit&7)) == 0 {
			return false
		}
		a *= 0x9e3779b9
	}
	return true
}

// be64 appends v big-endian (BookKeeper's key and value encoding).
func be64(b []byte, v uint64) []byte { return binary.BigEndian.AppendUint64(b, v) }
